// Drive the real VS Code workbench (code-server) with the system Chromium through playwright-core:
// install the built .vsix, open a workspace, run "DSH: Show sidecar status" and
// "DSH: What would the suggester say?", and report what the workbench rendered as one JSON line on
// stdout (the pytest side, tests/editors/test_editor_vscode_workbench.py, asserts on it).
//
// Environment: VSIX (the packed extension), WORKSPACE (folder to open), DSH_COMMAND (the sidecar's
// console script), ARTIFACTS (folder for screenshots and the code-server log), CHROMIUM (default
// /usr/bin/chromium). Every step is reported in `steps` so a failure says how far it got.

import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const codeServer = path.join(here, 'node_modules', '.bin', 'code-server');
const { VSIX, WORKSPACE, DSH_COMMAND, ARTIFACTS } = process.env;
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const root = fs.mkdtempSync(path.join(ARTIFACTS, 'profile-'));
const userData = path.join(root, 'user-data');
const extensions = path.join(root, 'extensions');
const report = { steps: [], screenshots: [] };

function step(name, detail = '') {
  report.steps.push(detail ? `${name}: ${detail}` : name);
}

function finish(code, error) {
  if (error) {
    report.error = String(error && error.stack ? error.stack : error);
  }
  process.stdout.write(JSON.stringify(report) + '\n');
  process.exit(code);
}

const timeout = (ms, what) =>
  new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms));

async function main() {
  // 1. the extension, installed the way a user installs a .vsix
  const inst = spawnSync(codeServer, ['--extensions-dir', extensions, '--user-data-dir', userData, '--install-extension', VSIX], {
    encoding: 'utf8',
    timeout: 120000,
  });
  if (inst.status !== 0) {
    throw new Error(`--install-extension failed (${inst.status}): ${inst.stdout}${inst.stderr}`);
  }
  step('installed', fs.readdirSync(extensions).filter((n) => n.startsWith('dsh-search')).join(','));

  // 2. user settings: our sidecar, no trust prompt, no welcome page, nothing phoning home
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.writeFileSync(
    path.join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'dsh.sidecar.command': DSH_COMMAND,
      'security.workspace.trust.enabled': false,
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'update.mode': 'none',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'window.commandCenter': false,
      // the settings.json edit below is typed: no auto-closing or auto-indent may change it
      'editor.autoClosingBrackets': 'never',
      'editor.autoClosingQuotes': 'never',
      'editor.autoIndent': 'none',
      'editor.formatOnType': false,
    }),
  );
  fs.writeFileSync(path.join(root, 'config.yaml'), 'auth: none\ncert: false\n');

  // 3. code-server on a loopback port the kernel picks
  const log = fs.openSync(path.join(ARTIFACTS, 'code-server.log'), 'w');
  const server = spawn(
    codeServer,
    [
      '--config', path.join(root, 'config.yaml'),
      '--bind-addr', '127.0.0.1:0',
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--user-data-dir', userData,
      '--extensions-dir', extensions,
      WORKSPACE,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, XDG_CONFIG_HOME: root, XDG_DATA_HOME: root } },
  );
  process.on('exit', () => server.kill('SIGTERM'));
  const url = await Promise.race([
    new Promise((resolve, reject) => {
      let seen = '';
      const onData = (chunk) => {
        fs.writeSync(log, chunk);
        seen += chunk.toString();
        const m = seen.match(/HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/);
        if (m) {
          resolve(m[1]);
        }
      };
      server.stdout.on('data', onData);
      server.stderr.on('data', onData);
      server.on('exit', (code) => reject(new Error(`code-server exited (${code}) before listening: ${seen}`)));
    }),
    timeout(60000, 'code-server listening'),
  ]);
  step('code-server', url);

  // 4. the workbench in Chromium
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const consoleLog = fs.openSync(path.join(ARTIFACTS, 'browser-console.log'), 'w');
  page.on('console', (msg) => fs.writeSync(consoleLog, `[${msg.type()}] ${msg.text()}\n`));
  page.on('pageerror', (err) => fs.writeSync(consoleLog, `[pageerror] ${err}\n`));
  const shot = async (name) => {
    const file = path.join(ARTIFACTS, `${name}.png`);
    await page.screenshot({ path: file });
    report.screenshots.push(file);
  };
  try {
    await page.goto(`${url}/?folder=${encodeURIComponent(WORKSPACE)}`, { waitUntil: 'domcontentloaded', timeout: 60000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 120000 });
    await page.locator('.statusbar').waitFor({ timeout: 60000 });
    step('workbench', await page.title());
    await shot('01-workbench');

    const readStatus = (ready) =>
      Promise.race([
        (async () => {
          for (;;) {
            for (const frame of page.frames()) {
              const text = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
              if (text.includes('DSH sidecar status') && ready(text)) {
                return text;
              }
            }
            await page.waitForTimeout(250);
          }
        })(),
        timeout(90000, 'status webview'),
      ]);

    // The palette lists an extension's commands once the extension host has scanned it, a few
    // seconds after the workbench is up: look for the command, and ask again until it is there.
    // On a loaded machine the workbench can also close the palette between opening it and typing
    // (focus moves to a late view): that is asked again too, until the same deadline.
    const runCommand = async (title) => {
      const deadline = Date.now() + 120000;
      let last = null;
      for (let attempt = 1; ; attempt++) {
        try {
          await page.keyboard.press('Escape');
          await page.keyboard.press('F1');
          const input = page.locator('.quick-input-widget input');
          await input.waitFor({ state: 'visible', timeout: 30000 });
          await input.fill('>', { timeout: 5000 });
          await page.keyboard.type(title);
          const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
          await row.waitFor({ timeout: 5000 });
          await row.click({ timeout: 5000 });
          return attempt;
        } catch (e) {
          last = e;
        }
        if (Date.now() > deadline) {
          throw new Error(`command palette never ran "${title}" (${attempt} tries): ${last}`);
        }
      }
    };

    // 5. DSH: Show sidecar status → a webview (two nested iframes) with the status page
    step('ran', `DSH: Show sidecar status (palette try ${await runCommand('DSH: Show sidecar status')})`);
    const statusText = await readStatus((t) => t.includes('Router'));
    report.statusText = statusText;
    report.statusTab = await page.locator('.tabs-container .tab', { hasText: 'DSH sidecar status' }).count();
    step('status webview', `${statusText.length} characters`);
    await shot('02-status-webview');

    // 6. DSH: What would the suggester say? → pick grep, type the pattern, read the dialog
    // The quick pick can be dismissed under it when the workbench moves focus while it opens
    // (a late webview load on a loaded machine): the whole question is asked again then.
    const box = page.locator('.quick-input-widget input');
    for (let attempt = 1; ; attempt++) {
      try {
        await runCommand('DSH: What would the suggester say?');
        const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: /^grep/ }).first();
        await pick.waitFor({ timeout: 30000 });
        await box.fill('grep', { timeout: 10000 });
        await page.keyboard.press('Enter');
        await page.locator('.quick-input-widget', { hasText: 'grep called with' }).waitFor({ timeout: 30000 });
        await box.fill('__version__', { timeout: 10000 });
        await page.keyboard.press('Enter');
        step('ran', `DSH: What would the suggester say? (grep __version__, try ${attempt})`);
        break;
      } catch (e) {
        if (attempt >= 3) {
          throw e;
        }
      }
    }
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 90000 });
    report.suggestDialog = await dialog.innerText();
    step('suggester dialog', report.suggestDialog.split('\n')[0]);
    await shot('03-suggester-dialog');
    await page.keyboard.press('Escape');

    // 7. the DSH Sidecar output channel: the ledger lines of that question
    await runCommand('Output: Show Output Channels...');
    const channel = page.locator('.quick-input-list .monaco-list-row', { hasText: 'DSH Sidecar' }).first();
    await channel.waitFor({ timeout: 30000 });
    await channel.click();
    const lines = page.locator('.panel .monaco-editor .view-lines').first();
    await lines.waitFor({ timeout: 30000 });
    report.outputText = await Promise.race([
      (async () => {
        for (;;) {
          const text = (await lines.innerText()).replace(/\u00a0/g, ' '); // Monaco renders spaces as NBSP
          if (text.includes('suggest Version')) {
            return text;
          }
          await page.waitForTimeout(250);
        }
      })(),
      timeout(30000, 'ledger line in the output channel'),
    ]);
    step('output channel', `${report.outputText.split('\n').length} lines`);
    await shot('04-output-channel');

    // 8. a settings change reaches the running sidecar as workspace/didChangeConfiguration
    // (edited in the workbench's own settings.json editor, as a user does, and saved)
    const settingsFile = path.join(userData, 'User', 'settings.json');
    const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8'));
    settings['dsh.initializationOptions'] = { bandit: { discount: 0.9 } };
    report.wantedSettings = settings;
    await runCommand('Preferences: Open User Settings (JSON)');
    await page.locator('.tabs-container .tab', { hasText: 'settings.json' }).waitFor({ timeout: 30000 });
    await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(JSON.stringify(settings, null, 2));
    await page.keyboard.press('Control+S');
    report.savedSettings = await Promise.race([
      (async () => {
        for (;;) {
          const text = fs.readFileSync(settingsFile, 'utf8');
          if (text.includes('dsh.initializationOptions')) {
            return text;
          }
          await page.waitForTimeout(100);
        }
      })(),
      timeout(30000, 'settings.json saved'),
    ]);
    await runCommand('Output: Show Output Channels...');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'DSH Sidecar' }).first().click();
    report.configText = await Promise.race([
      (async () => {
        for (;;) {
          const text = (await lines.innerText()).replace(/\u00a0/g, ' ');
          if (text.includes('[config] sent workspace/didChangeConfiguration')) {
            return text;
          }
          await page.waitForTimeout(250);
        }
      })(),
      timeout(60000, 'settings change sent'),
    ]);
    step('ran', `DSH: Show sidecar status again (palette try ${await runCommand('DSH: Show sidecar status')})`);
    report.statusAfterChange = await readStatus((t) => /discount\s+0\.9\b/.test(t));
    step('status after the settings change', 'discount 0.9');
    await shot('05-status-after-settings-change');
  } catch (e) {
    await shot('99-failure').catch(() => {});
    throw e;
  } finally {
    await browser.close();
    server.kill('SIGTERM');
  }
}

main().then(
  () => finish(0),
  (e) => finish(1, e),
);
