// Drive `dsh web` in Debian's Chromium through playwright-core, one command at a time: the test
// runner (tests/harness/webcard.py) writes one JSON command per line on stdin and reads one
// JSON answer per line on stdout (`{ok, ...}` or `{error}`), so it can check the loopback
// providers between two browser steps. Screenshots go to $ARTIFACTS.
//
// Commands: boot · prompt {text} · openCard · rows · drag {from, to} · key {provider, key} ·
// storeKey {provider, value} · clearKey {provider} · setTimeout {ms} · resetTimeout ·
// limits · setLimit {id, value} · resetLimit {id} · addProvider {provider} ·
// removeProvider {provider} · resetChain · closeSettings · shot {name} · quit.
//
// Environment: URL (dsh web's), ARTIFACTS, CHROMIUM (default /usr/bin/chromium), PROFILE (a
// fresh user-data folder), WORKSPACE (the folder name to pick under the picker's Home).

import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';

const { chromium } = await import(process.env.PLAYWRIGHT);
const { URL: BASE, ARTIFACTS, PROFILE, WORKSPACE } = process.env;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

const context = await chromium.launchPersistentContext(PROFILE, {
  executablePath: CHROMIUM,
  viewport: { width: 1400, height: 1000 },
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(20000);
const consoleLog = fs.openSync(path.join(ARTIFACTS, 'browser-console.log'), 'w');
page.on('console', (msg) => fs.writeSync(consoleLog, `[${msg.type()}] ${msg.text()}\n`));
page.on('pageerror', (err) => fs.writeSync(consoleLog, `[pageerror] ${err}\n`));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let workspacePicked = false; // the first session picks the workspace folder; later ones keep it

/** Whether `locator` is enabled within `ms` (polled: typing lands in the composer a frame later). */
async function enabledWithin(locator, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await locator.isEnabled()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
}
const card = () => page.locator('li[data-card="search-router"]');

/** Close the first-run dialogs (the API-key prompt, the testing notice): they open on their own
 * schedule, so every command first clears whatever is showing. */
async function dismissDialogs(settleMs = 0) {
  const deadline = Date.now() + settleMs;
  for (;;) {
    let clicked = false;
    for (const name of ['Configure later', 'Continue']) {
      const button = page.getByRole('button', { name, exact: true });
      if ((await button.count()) && (await button.first().isVisible())) {
        await button.first().click();
        clicked = true;
        await sleep(300);
      }
    }
    if (!clicked && Date.now() >= deadline) return;
    if (!clicked) await sleep(200);
  }
}

async function rows() {
  return card().locator('li[data-provider]').evaluateAll((els) => els.map((el) => el.getAttribute('data-provider')));
}

async function status() {
  return (await card().locator('p[role=status][aria-live]').textContent())?.trim() ?? '';
}

/** Run a card action and wait for the write it makes to land: the card counts its finished
 * writes on its status line (`data-writes`); the status then says whether it applied. */
async function write(action) {
  const line = card().locator('p[role=status][aria-live]');
  const before = Number((await line.getAttribute('data-writes')) ?? 0);
  await action();
  const deadline = Date.now() + 15000;
  while (Number((await line.getAttribute('data-writes')) ?? 0) <= before) {
    if (Date.now() > deadline) throw new Error(`no write landed (status: ${await status()})`);
    await sleep(100);
  }
  const text = await status();
  if (!text.startsWith('Applied')) throw new Error(text);
  await sleep(150);
  return { rows: await rows() };
}

async function shot(name) {
  const file = path.join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** The Advanced fold, opened. */
async function advanced() {
  const details = card().locator('details.dshsr-advanced');
  if (!(await details.evaluate((el) => el.open))) await details.locator('summary').click();
  return details;
}

/** One text field of the Advanced fold as the card renders it: its label, its value, the
 * default it shows when empty (placeholder) and whether it is marked overridden. */
async function field(id) {
  const box = card().locator('.dshsr-field', { has: page.locator(`#${id}`) });
  const input = card().locator(`#${id}`);
  return {
    label: ((await box.locator(`label[for="${id}"]`).textContent()) ?? '').trim(),
    value: await input.inputValue(),
    placeholder: await input.getAttribute('placeholder'),
    overridden: (await box.getByText('Overridden', { exact: true }).count()) > 0,
  };
}

async function limits() {
  await advanced();
  await card().locator('#dshsr-queued').scrollIntoViewIfNeeded(); // in the screenshot too
  return { concurrent: await field('dshsr-concurrent'), queued: await field('dshsr-queued') };
}

async function openEditor(provider) {
  const row = card().locator(`li[data-provider="${provider}"]`);
  if ((await row.locator('[data-editor]').count()) === 0) await row.getByRole('button', { name: 'Edit', exact: true }).click();
  return row;
}

const commands = {
  async boot() {
    await page.goto(BASE, { waitUntil: 'domcontentloaded' });
    await dismissDialogs(4000);
    return { title: await page.title() };
  },
  async prompt({ text }) {
    await dismissDialogs();
    await commands.closeSettings();
    const fresh = page.getByRole('button', { name: 'New Session' });
    if (await fresh.count()) await fresh.first().click();
    const composer = page.locator('[contenteditable=true], textarea').first();
    await composer.waitFor();
    await composer.click();
    const picker = page.getByText('Select Workspace Directory');
    // the first session: the picker opens on the composer's click (waited for); a later one that
    // shows it too is answered the same way
    if (!workspacePicked) await picker.first().waitFor();
    if (await picker.count()) {
      // pick the workspace folder under the picker's Home, and wait for the picker to close
      await page.getByText(WORKSPACE, { exact: true }).last().click();
      await page.getByRole('button', { name: 'Open', exact: true }).click();
      await picker.first().waitFor({ state: 'hidden' });
    }
    workspacePicked = true;
    const send = page.getByRole('button', { name: 'Send message' });
    // the workspace menu may open late on a loaded machine and take the keys typed meanwhile
    // (Send stays disabled): close it and type again, until the composer holds the text
    for (let attempt = 0; ; attempt++) {
      await page.keyboard.press('Escape');
      if (attempt) await sleep(500 * attempt);
      await composer.click();
      await page.keyboard.press('Control+A');
      await page.keyboard.press('Backspace');
      await page.keyboard.type(text);
      if (await enabledWithin(send, 1000)) break;
      if (attempt === 5) throw new Error('the composer never took the prompt (Send stayed disabled)');
    }
    await send.click();
    return {};
  },
  async openCard() {
    await dismissDialogs();
    const settings = page.getByRole('button', { name: 'Settings', exact: true });
    if (await settings.count()) await settings.first().click();
    await page.getByText('Plugins', { exact: true }).first().click();
    await page.getByText('Plugin configuration', { exact: true }).first().click();
    const header = page.getByRole('button', { name: 'Edit: Search router' });
    await header.waitFor();
    await header.click();
    await card().locator('li[data-provider]').first().waitFor();
    return { rows: await rows(), hint: await card().locator('.dshsr-hint').textContent() };
  },
  async rows() {
    const reset = card().getByRole('button', { name: "Use the profile's order" });
    return { rows: await rows(), resetChain: (await reset.count()) > 0 };
  },
  async drag({ from, to }) {
    return write(() => card().locator(`li[data-provider="${from}"]`).dragTo(card().locator(`li[data-provider="${to}"]`)));
  },
  async key({ provider, key }) {
    return write(async () => {
      await card().locator(`li[data-provider="${provider}"] .dshsr-handle`).focus();
      await page.keyboard.press(key);
    });
  },
  async storeKey({ provider, value }) {
    const row = await openEditor(provider);
    const out = await write(async () => {
      await row.locator('input[type=password]').fill(value);
      await row.getByRole('button', { name: 'Store key' }).click();
    });
    return { ...out, keyState: await row.locator('[data-key-state]').textContent() };
  },
  async clearKey({ provider }) {
    const row = await openEditor(provider);
    const out = await write(() => row.getByRole('button', { name: 'Clear stored key' }).click());
    return { ...out, keyState: await row.locator('[data-key-state]').textContent() };
  },
  async setTimeout({ ms }) {
    const details = card().locator('details.dshsr-advanced');
    if (!(await details.evaluate((el) => el.open))) await details.locator('summary').click();
    const out = await write(async () => {
      await card().locator('#dshsr-timeout').fill(String(ms));
      await card().locator('#dshsr-timeout').press('Enter');
    });
    return { ...out, overridden: (await details.getByText('Overridden', { exact: true }).count()) > 0 };
  },
  async resetTimeout() {
    const details = card().locator('details.dshsr-advanced');
    if (!(await details.evaluate((el) => el.open))) await details.locator('summary').click();
    const out = await write(() => details.getByRole('button', { name: /^Reset to default: Timeout/ }).click());
    return {
      ...out,
      value: await card().locator('#dshsr-timeout').inputValue(),
      overridden: (await details.getByText('Overridden', { exact: true }).count()) > 0,
    };
  },
  async setEmpty({ value }) {
    const details = card().locator('details.dshsr-advanced');
    if (!(await details.evaluate((el) => el.open))) await details.locator('summary').click();
    const out = await write(() => card().locator('#dshsr-empty').selectOption(value));
    return {
      ...out,
      value: await card().locator('#dshsr-empty').inputValue(),
      overridden: (await details.getByText('Overridden', { exact: true }).count()) > 0,
    };
  },
  async resetEmpty() {
    const details = card().locator('details.dshsr-advanced');
    if (!(await details.evaluate((el) => el.open))) await details.locator('summary').click();
    const out = await write(() => details.getByRole('button', { name: /^Reset to default: Empty results/ }).click());
    return {
      ...out,
      value: await card().locator('#dshsr-empty').inputValue(),
      overridden: (await details.getByText('Overridden', { exact: true }).count()) > 0,
    };
  },
  async limits() {
    return limits();
  },
  async setLimit({ id, value }) {
    await advanced();
    const out = await write(async () => {
      await card().locator(`#${id}`).fill(String(value));
      await card().locator(`#${id}`).press('Enter');
    });
    return { ...out, ...(await limits()) };
  },
  async resetLimit({ id }) {
    const details = await advanced();
    const { label } = await field(id);
    const out = await write(() => details.getByRole('button', { name: `Reset to default: ${label}`, exact: true }).click());
    return { ...out, ...(await limits()) };
  },
  async addProvider({ provider }) {
    await card().getByRole('button', { name: 'Add provider' }).click();
    await card().getByRole('combobox', { name: 'Provider to add' }).selectOption(provider);
    const out = await write(() => card().getByRole('button', { name: 'Add', exact: true }).click());
    return { ...out, editorOpen: (await card().locator(`[data-editor="${provider}"]`).count()) > 0 };
  },
  async removeProvider({ provider }) {
    return write(() => card().locator(`li[data-provider="${provider}"]`).getByRole('button', { name: 'Remove' }).click());
  },
  async resetChain() {
    return write(() => card().getByRole('button', { name: "Use the profile's order" }).click());
  },
  async closeSettings() {
    const close = page.getByRole('button', { name: 'Close', exact: true });
    if ((await close.count()) && (await close.first().isVisible())) {
      await close.first().click();
      await close.first().waitFor({ state: 'hidden' });
    } else await page.keyboard.press('Escape');
    return {};
  },
  async shot({ name }) {
    return { file: await shot(name) };
  },
  async quit() {
    await context.close();
    return {};
  },
};

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  let answer;
  let command;
  try {
    command = JSON.parse(line);
    const run = commands[command.do];
    if (!run) throw new Error(`unknown command ${command.do}`);
    answer = { ok: true, ...(await run(command)) };
  } catch (error) {
    answer = { error: String(error?.stack ?? error).slice(0, 3000) };
    try {
      answer.shot = await shot(`failed-${command?.do ?? 'command'}`);
    } catch {
      // no page to shoot
    }
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
  if (command?.do === 'quit') break;
}
process.exit(0);
