/**
 * Every command's request and its rendering, against the REAL sidecar over stdio
 * (vscode-jsonrpc) with a loopback SearXNG replaying tests/data/providers/searxng.
 */

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { ResponseError } from 'vscode-jsonrpc/node';

import {
  ALL_PROVIDERS_FAILED,
  INVALID_PARAMS,
  SILENCE,
  dismiss,
  errorText,
  formatLogLine,
  posteriors,
  renderDismiss,
  renderStatusHtml,
  renderSuggestion,
  search,
  searchItems,
  searchSummary,
  status,
  suggest,
} from '../src/core';
import { MockProvider, Sidecar, copyWorkspace, startSidecar } from './harness';

/** tests/data/providers/searxng/cases.yaml, case `ok`: the usable sources in order. */
const OK_URLS = [
  'https://www.example.com/maintenance/clean-bike-chain',
  'https://en.wikipedia.org/wiki/Bicycle_chain',
  'https://forum.example.net/t/degreaser-or-dish-soap-for-chains/3318',
  'https://www.example.org/guides/when-to-replace-a-chain',
  'https://video.example.com/watch/chain-cleaning-tool-review',
  'https://www.example.net/blog/wax-vs-wet-lube',
];

/** The bandit seed's log line (sidecar tests/test_e2e_stdio.py BANDIT_LINE). */
const BANDIT_LINE =
  /^\[bandit-search\] arm=(quick|thorough) reward=\d\.\d{3} durationMs=\d+ resultCount=\d+ stats=\{"quick":\{"alpha":[\d.]+,"beta":[\d.]+\},"thorough":\{"alpha":[\d.]+,"beta":[\d.]+\}\}$/;

function searxng(mock: MockProvider): Record<string, unknown> {
  return { router: { provider: 'searxng', timeoutMs: 5000, providers: { searxng: { baseUrl: mock.url } } }, bandit: { seed: 7 } };
}

describe('search, status, suggest and dismiss against the real sidecar', () => {
  let mock: MockProvider;
  let sidecar: Sidecar;
  let workspace: string;

  before(async () => {
    mock = await MockProvider.start();
    mock.route('GET', '/search', 200, 'application/json', 'searxng', 'ok.200.json');
    workspace = copyWorkspace();
    sidecar = await startSidecar({ initializationOptions: searxng(mock) }, workspace);
  });

  after(async () => {
    await sidecar?.stop();
    await mock?.close();
    fs.rmSync(workspace, { recursive: true, force: true });
  });

  test('DSH: Search the web — quick pick rows, title line and the bandit log line', async () => {
    const result = await search(sidecar.connection, '  bike chain cleaning ', { strategy: 'quick', maxResults: null });
    // the request the sidecar made for the typed query (trimmed)
    const seen = mock.requests.filter((r) => r.path === '/search');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].query.get('q'), 'bike chain cleaning');
    assert.equal(seen[0].query.get('format'), 'json');

    const items = searchItems(result);
    assert.deepEqual(items.map((i) => i.url), OK_URLS.slice(0, 5));
    assert.deepEqual(items[0], {
      label: 'How to Clean a Bike Chain in 10 Minutes',
      description: 'www.example.com',
      detail:
        '2024-04-09 · Shift to the smallest cog, backpedal the chain through a rag soaked in degreaser, scrub with a stiff brush & rinse. Dry it fully before you re-lube.',
      url: OK_URLS[0],
    });
    assert.equal(items[1].label, 'Bicycle chain - Wikipedia');
    assert.equal(items[1].description, 'en.wikipedia.org');

    const summary = searchSummary(result);
    assert.match(summary, /^quick · 5 results \(truncated\) · \d+ ms · reward [01]\.\d{3} · searxng=ok \(\d+ ms\)$/);
    assert.ok(summary.includes(`reward ${result.reward.toFixed(3)}`));

    const line = await sidecar.waitForLog(/^\[bandit-search\]/);
    assert.match(line.message, BANDIT_LINE);
    assert.ok(line.message.includes(' arm=quick ') && line.message.includes(' resultCount=5 '));
    // the Output channel gets the seed line byte-exact
    assert.equal(formatLogLine(line), line.message);
  });

  test('DSH: Search the web — maxResults setting caps the rows', async () => {
    const result = await search(sidecar.connection, 'bike chain cleaning', { strategy: 'thorough', maxResults: 2 });
    assert.equal(result.strategy, 'thorough');
    assert.deepEqual(searchItems(result).map((i) => i.url), OK_URLS.slice(0, 2));
    assert.match(searchSummary(result), /^thorough · 2 results \(truncated\) · /);
  });

  test('DSH: Search the web — a bad param is the sidecar\'s -32602 naming the field', async () => {
    await assert.rejects(
      sidecar.connection.sendRequest('dsh/search', { query: 'x', maxResults: '5' }),
      (e: unknown) => {
        assert.ok(e instanceof ResponseError);
        assert.equal(e.code, INVALID_PARAMS);
        assert.equal(errorText(e), 'maxResults: Input should be a valid integer (JSON-RPC error -32602)');
        return true;
      },
    );
  });

  test('DSH: Show sidecar status — readable page with chain, posteriors and counters', async () => {
    const s = await status(sidecar.connection);
    const html = renderStatusHtml(s);
    assert.ok(html.startsWith('<!DOCTYPE html>'));
    // the chain: provider and its endpoint in a table row
    assert.ok(html.includes(`<td>searxng</td><td>${mock.url}</td>`), html);
    assert.ok(html.includes('<dt>timeoutMs</dt><dd>5000</dd>'));
    // provider health joins the chain table (state after two answered searches: ok)
    assert.ok(Array.isArray((s.router as { health?: unknown }).health), 'the sidecar reports router.health');
    assert.ok(html.includes(`<td>searxng</td><td>${mock.url}</td><td>ok</td>`), html);
    assert.ok(!html.includes('<dt>health</dt>'));
    // both arms' posteriors; two searches so far (quick then thorough) moved both off Beta(1,1)
    const rows = posteriors(s.bandit);
    const global = rows.filter((r) => r.cls === '');
    assert.deepEqual(global.map((r) => r.arm), ['quick', 'thorough']);
    for (const r of global) {
      assert.ok(r.alpha + r.beta > 2, JSON.stringify(r));
    }
    const f = (n: number): string => (Number.isInteger(n) ? String(n) : n.toFixed(3));
    for (const r of rows) {
      const cells = `<td>${r.arm}</td><td class="n">${f(r.alpha)}</td><td class="n">${f(r.beta)}</td><td class="n">${r.mean.toFixed(3)}</td>`;
      assert.ok(html.includes(cells), cells);
    }
    // per-class posteriors (the bandit's query classes), when the sidecar reports them
    const classes = (s.bandit as { classes?: Record<string, unknown> }).classes ?? {};
    for (const cls of Object.keys(classes)) {
      assert.deepEqual(rows.filter((r) => r.cls === cls).map((r) => r.arm), ['quick', 'thorough'], cls);
      assert.ok(html.includes(`<tr><td>${cls}</td><td>quick</td>`), cls);
    }
    // suggester: enabled by the extension's default setting, counters as a table
    assert.ok(html.includes('<h2>Suggester</h2>\n<p>Enabled</p>'));
    assert.ok(html.includes('<th>calls</th>'));
    assert.ok(html.includes(`<dt>dshHome</dt><dd>${sidecar.home}</dd>`));
    // not raw JSON
    assert.ok(!html.includes('{"'));
  });

  test('DSH: What would the suggester say? — the note for grep __version__, and its ledger line', async () => {
    const result = await suggest(sidecar.connection, 'grep', '__version__', 'test');
    const view = renderSuggestion(result);
    assert.equal(view.said, true);
    assert.equal(view.title, 'The suggester would say (Version): ' + result.additionalContexts[0].source.summary);
    assert.deepEqual(view.targets, ['src/demo_pkg/__init__.py']);
    assert.deepEqual(view.labels, ['src/demo_pkg/__init__.py']); // the sidecar's displayTargets
    assert.ok(view.text.startsWith('search-suggester: in this repository, look here for the package version:\n'), view.text);
    assert.ok(view.text.includes('src/demo_pkg/__init__.py — defines __version__'));
    const ledger = await sidecar.waitForLog(/\] suggest /);
    assert.match(ledger.message, /^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] suggest Version 0\.99 1 targets src\/demo_pkg\/__init__\.py$/);
    assert.equal(formatLogLine(ledger), ledger.message);
  });

  test('DSH: What would the suggester say? — a JSON input object and an unrelated call', async () => {
    const json = renderSuggestion(await suggest(sidecar.connection, 'Grep', '{"pattern": "__version__", "path": "src"}', 'test'));
    assert.deepEqual(json.targets, ['src/demo_pkg/__init__.py']);
    const silent = renderSuggestion(await suggest(sidecar.connection, 'grep', 'frobnicate', 'test'));
    assert.deepEqual(silent, { said: false, title: 'The suggester would say nothing.', text: SILENCE, targets: [], labels: [] });
  });

  test('DSH: Dismiss suggestion family — record, expiry, and the suggester goes silent', async () => {
    const result = await dismiss(sidecar.connection, 'Version', '');
    assert.equal(result.record, 'dismissed Version *');
    assert.match(renderDismiss(result), /^Dismissed until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(dismissed Version \*\)\.$/);
    const after = renderSuggestion(await suggest(sidecar.connection, 'grep', '__version__', 'test'));
    assert.equal(after.said, false);
    const s = await status(sidecar.connection);
    assert.ok(renderStatusHtml(s).includes('<th>suppressed</th>'));
  });

  test('DSH: Dismiss suggestion family — one path only', async () => {
    const result = await dismiss(sidecar.connection, ' Version ', ' src/demo_pkg/__init__.py ');
    assert.equal(result.record, 'dismissed Version src/demo_pkg/__init__.py');
  });
});

describe('failures reach the user as readable text', () => {
  test('all providers failing: the sidecar\'s aggregated -32001 text, unchanged', async () => {
    const mock = await MockProvider.start();
    mock.route('GET', '/search', 403, 'text/html; charset=utf-8', 'searxng', 'forbidden.403.html');
    const sidecar = await startSidecar({ initializationOptions: searxng(mock) });
    try {
      await assert.rejects(search(sidecar.connection, 'bike chain cleaning', { strategy: 'quick' }), (e: unknown) => {
        assert.ok(e instanceof ResponseError);
        assert.equal(e.code, ALL_PROVIDERS_FAILED);
        assert.equal(
          errorText(e),
          'search-router: all configured search providers failed:\n' +
            "- searxng: HTTP 403 (is `json` enabled in search.formats of the instance's settings.yml?)",
        );
        return true;
      });
    } finally {
      await sidecar.stop();
      await mock.close();
    }
  });

  test('dsh.suggester.enabled = false: the suggester ships disabled and says nothing', async () => {
    const workspace = copyWorkspace();
    const sidecar = await startSidecar({ suggesterEnabled: false }, workspace);
    try {
      const s = await status(sidecar.connection);
      assert.ok(renderStatusHtml(s).includes('<span class="warn">Disabled</span>'));
      assert.equal(renderSuggestion(await suggest(sidecar.connection, 'grep', '__version__')).said, false);
    } finally {
      await sidecar.stop();
      fs.rmSync(workspace, { recursive: true, force: true });
    }
  });

  test('invalid initialization options: the sidecar names the key', async () => {
    await assert.rejects(
      startSidecar({ initializationOptions: { router: { timeoutMs: 50 } } }),
      /invalid initializationOptions: router\.timeoutMs: /,
    );
  });
});
