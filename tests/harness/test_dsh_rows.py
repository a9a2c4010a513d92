"""The DSH plugins' rows, layers and host resolution, run by Node 22 on the bundle's own modules
(no harness process): the seeds' row shapes read as written, every unknown key reported with the
key it most likely meant, the retired all-in-one row mapped onto the rows that replaced it (its
suggester still runs), the "Search router" card's layering (the user layer wins per field, a
reset re-inherits the row's value, the chain's mode taken whole), and the harness's packages
resolved from the running harness before the plugin's own folder."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import harnesses as h

pytestmark = pytest.mark.skipif(h.dsh_missing() is not None, reason=h.dsh_missing() or "")

BUNDLE = Path(__file__).resolve().parents[2] / "harness-adapters" / "dsh"


def node(tmp_path: Path, script: str, env: dict[str, str] | None = None) -> dict:
    work = tmp_path / "bundle"
    if not work.exists():
        shutil.copytree(BUNDLE / "lib", work / "lib")
        shutil.copy(BUNDLE / "package.json", work / "package.json")
    (work / "run.mjs").write_text(script)
    proc = subprocess.run(
        [str(h.NODE22_BIN / "node"), "run.mjs"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


ROWS = """
import { routerRow, banditRow, suggesterRow, retiredRow } from './lib/rows.js';
const out = {};
for (const [name, read, raw] of JSON.parse(process.env.CASES)) {
  const problems = [];
  const value = { routerRow, banditRow, suggesterRow, retiredRow }[read](raw, (m) => problems.push(m));
  out[name] = { value, problems };
}
console.log(JSON.stringify(out));
"""

SEED_FULL = {
    "order": ["exa", "tavily", "searxng"],
    "timeoutMs": 10000,
    "emptyResultsFallback": True,
    "providers": {
        "exa": {"apiKey": "k", "apiKeyEnv": "EXA_API_KEY", "baseURL": "https://api.exa.ai"},
        "perplexity": {"apiKeyEnv": "PPLX_API_KEY", "model": "sonar"},
        "searxng": {"baseUrl": "http://127.0.0.1:8888", "baseUrlEnv": "SEARXNG_BASE_URL"},
        "duckduckgo": {"baseURL": "https://html.duckduckgo.com"},
    },
}


def rows(tmp_path: Path, cases: list) -> dict:
    return node(tmp_path, ROWS, {"CASES": json.dumps(cases)})


def test_the_router_seeds_full_schema_is_read_as_written_and_the_cache_is_off(tmp_path):
    out = rows(tmp_path, [["full", "routerRow", SEED_FULL], ["single", "routerRow", {"provider": "searxng"}]])
    assert out["full"] == {"value": {"router": {**SEED_FULL, "cache": False}, "fanOut": False}, "problems": []}
    assert out["single"]["value"]["router"] == {"provider": "searxng", "cache": False}


def test_our_extensions_are_opt_in_keys_of_the_same_row(tmp_path):
    raw = {
        "provider": "searxng",
        "cache": {"ttlSeconds": 60},
        "fanOut": True,
        "deadlineMs": 20000,
        "maxConcurrentSearches": 4,
        "maxQueuedSearches": 0,
    }
    out = rows(tmp_path, [["ext", "routerRow", raw]])
    assert out["ext"]["problems"] == []  # before: the cap's two keys were "unknown", dropped
    assert out["ext"]["value"] == {
        "router": {
            "provider": "searxng",
            "cache": {"ttlSeconds": 60},
            "deadlineMs": 20000,
            "maxConcurrentSearches": 4,
            "maxQueuedSearches": 0,
        },
        "fanOut": True,
    }


KEYS = r"""
import { readFileSync } from 'node:fs';
import { routerSettingsSchema, SCALAR_KEYS } from './lib/settings.js';
import { ROUTER_SEED_KEYS, ROUTER_BLOCK_EXTENSIONS } from './lib/rows.js';
// schemastery's builders as far as the schema uses them: an object's keys are what is read
const leaf = () => ({ role: () => leaf() });
const z = { object: (shape) => ({ keys: Object.keys(shape) }), string: leaf, number: leaf, boolean: leaf, array: leaf, dict: leaf };
const client = readFileSync(process.env.CLIENT, 'utf8');
const defaults = Object.fromEntries([...client.matchAll(/const (DEFAULT_\w+) = (\d+);/g)].map((m) => [m[1], Number(m[2])]));
console.log(JSON.stringify({
  card: routerSettingsSchema(z).keys, scalars: SCALAR_KEYS, seed: ROUTER_SEED_KEYS, passed: ROUTER_BLOCK_EXTENSIONS, defaults,
}));
"""
#: Keys of the sidecar's router block the DSH bundle does not offer, and why.
NOT_IN_DSH = {"localFallback": "the plugin keeps the router seed's chain (docs/SCHEME.md, the offline docs index)"}


def test_every_key_of_the_sidecars_router_block_is_the_cards_or_passed_from_the_row(tmp_path):
    """The card (its schema) or the row's pass-through carries each key of the router block the
    sidecar validates (``RouterConfig``), so the next key cannot be forgotten. Before, nothing
    compared them (the VS Code schema is generated from the models and compared to them, which is
    why it had ``maxConcurrentSearches``/``maxQueuedSearches``): the card and the row lacked both."""
    from dsh_sidecar.router.config import RouterConfig

    out = node(tmp_path, KEYS, {"CLIENT": str(BUNDLE / "client" / "client.js")})
    sidecar = {f.alias or n for n, f in RouterConfig.model_fields.items()}
    card, passed = set(out["card"]), set(out["passed"])
    assert card & passed == set(out["scalars"]) & passed  # a key the card carries is layered, not passed
    assert card | passed | set(NOT_IN_DSH) == sidecar
    assert set(out["seed"]) <= card  # every seed field is on the card
    assert {"maxConcurrentSearches", "maxQueuedSearches"} <= set(out["scalars"])
    fields = RouterConfig.model_fields
    assert out["defaults"] == {  # the card's placeholders are the sidecar's defaults
        "DEFAULT_TIMEOUT_MS": fields["timeout_ms"].default,
        "DEFAULT_MAX_CONCURRENT": fields["max_concurrent_searches"].default,
        "DEFAULT_MAX_QUEUED": fields["max_queued_searches"].default,
    }


BOUNDS = """
import { validateSection } from './lib/settings.js';
const out = {};
for (const [key, value] of JSON.parse(process.env.CASES)) {
  try { validateSection({ [key]: value }); out[`${key}=${value}`] = 'ok'; } catch (error) { out[`${key}=${value}`] = error.message; }
}
console.log(JSON.stringify(out));
"""


@pytest.mark.parametrize(
    ("key", "field"),
    [
        ("timeoutMs", "timeout_ms"),
        ("maxConcurrentSearches", "max_concurrent_searches"),
        ("maxQueuedSearches", "max_queued_searches"),
    ],
)
def test_the_cards_whole_number_fields_take_the_sidecars_range(tmp_path, key, field):
    from annotated_types import Ge, Le
    from dsh_sidecar.router.config import RouterConfig

    meta = RouterConfig.model_fields[field].metadata
    low = next(m.ge for m in meta if isinstance(m, Ge))
    high = next(m.le for m in meta if isinstance(m, Le))
    cases = [[key, low - 1], [key, low], [key, high], [key, high + 1], [key, low + 0.5]]
    out = node(tmp_path, BOUNDS, {"CASES": json.dumps(cases)})
    refused = f"{key}: not a valid value"
    assert out == {
        f"{key}={low - 1}": refused,
        f"{key}={low}": "ok",
        f"{key}={high}": "ok",
        f"{key}={high + 1}": refused,
        f"{key}={low + 0.5}": refused,
    }


@pytest.mark.parametrize(
    ("read", "raw", "problem"),
    [
        (
            "routerRow",
            {"emptyResultFallback": True},
            'search-router row: unknown key "emptyResultFallback" (did you mean "emptyResultsFallback"?); it is ignored',
        ),
        (
            "routerRow",
            {"timeoutMS": 5},
            'search-router row: unknown key "timeoutMS" (did you mean "timeoutMs"?); it is ignored',
        ),
        (
            "routerRow",
            {"providers": {"exa": {"apikey": "k"}}},
            'search-router row, providers.exa: unknown key "apikey" (did you mean "apiKey"?); it is ignored',
        ),
        (
            "routerRow",
            {"providers": {"searxng": {"apiKey": "k"}}},
            'search-router row, providers.searxng: unknown key "apiKey"; it is ignored',
        ),
        (
            "routerRow",
            {"providers": {"bravo": {}}},
            'search-router row, providers: unknown key "bravo" (did you mean "brave"?); it is ignored',
        ),
        (
            "routerRow",
            {"order": ["exa", "tavilly"]},
            'search-router row, order: unknown provider "tavilly" (did you mean "tavily"?); it is left out',
        ),
        (
            "routerRow",
            {"provider": "exa", "order": ["exa"]},
            "search-router row: give either provider (single) or order (chain), not both; order is used",
        ),
        (
            "routerRow",
            {"sidecar": {"comand": ["x"]}},
            'search-router row, sidecar: unknown key "comand" (did you mean "command"?); it is ignored',
        ),
        (
            "suggesterRow",
            {"sectionmode": "sticky"},
            'search-suggester row: unknown key "sectionmode" (did you mean "sectionMode"?); it is ignored',
        ),
        (
            "suggesterRow",
            {"enabled": False},
            "search-suggester row: enabled: false keeps it silent although the row is active (disabled: true is the way to turn it off)",
        ),
        (
            "banditRow",
            {"discont": 0.9},
            'bandit-search row: unknown key "discont" (did you mean "discount"?); it is ignored',
        ),
        ("banditRow", {"frobnicate": 1}, 'bandit-search row: unknown key "frobnicate"; it is ignored'),
    ],
)
def test_an_unknown_or_contradictory_key_is_reported_never_silent(tmp_path, read, raw, problem):
    assert rows(tmp_path, [["x", read, raw]])["x"]["problems"] == [problem]


def test_the_bandit_rows_defaults_are_the_seeds_learning_rule(tmp_path):
    out = rows(tmp_path, [["seed", "banditRow", {}], ["ext", "banditRow", {"contextual": True, "discount": 0.99}]])
    assert out["seed"]["value"] == {
        "bandit": {"contextual": False, "discount": 1, "evidenceScale": 1},
        "answerFeedback": True,
    }
    assert out["ext"]["value"]["bandit"] == {"contextual": True, "discount": 0.99, "evidenceScale": 1}


def test_an_active_suggester_row_is_an_enabled_suggester(tmp_path):
    out = rows(tmp_path, [["on", "suggesterRow", {"sectionMode": "sticky", "cooldownCalls": 5}]])
    assert out["on"]["value"] == {
        "suggester": {"enabled": True, "builtinPacks": False, "sectionMode": "sticky", "cooldownCalls": 5}
    }


SUGGESTER_ROW_KEYS = """
import { SUGGESTER_KEYS } from './lib/rows.js';
console.log(JSON.stringify(SUGGESTER_KEYS));
"""


def test_every_key_of_the_sidecars_suggester_block_is_a_key_of_the_row(tmp_path):
    """The search-suggester row passes each key of the suggester block the sidecar validates
    (``SuggesterConfig``), so a knob set where its siblings live is never dropped as unknown
    (``firstCallWaitMs`` and ``minConfidence`` were: "unknown key …; it is ignored", and the
    first call waited 500 ms whatever the row said)."""
    from dsh_sidecar.suggester.config import SuggesterConfig

    keys = node(tmp_path, SUGGESTER_ROW_KEYS)
    assert sorted(keys) == sorted(f.alias or n for n, f in SuggesterConfig.model_fields.items())
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(("wait_ms", "refused"), [(-1, True), (0, False), (60_000, False), (60_001, True), (0.5, True)])
def test_the_rows_first_call_wait_reaches_the_sidecar_and_its_range_is_the_sidecars(tmp_path, wait_ms, refused):
    """``firstCallWaitMs`` of the row goes to the sidecar's suggester block as written, and the
    sidecar checks its range as it checks its siblings' (a refused block is the bundle's visible
    warning, ``sidecar.js`` ``refusedBlock``, and runs on its defaults)."""
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.errors import ConfigError

    out = rows(tmp_path, [["row", "suggesterRow", {"firstCallWaitMs": wait_ms, "cooldownCalls": 5}]])["row"]
    assert out["problems"] == []
    block = out["value"]["suggester"]
    assert block == {"enabled": True, "builtinPacks": False, "firstCallWaitMs": wait_ms, "cooldownCalls": 5}
    if refused:
        with pytest.raises(ConfigError) as error:
            parse_config({"suggester": block})
        assert error.value.key == "suggester.firstCallWaitMs"
    else:
        assert parse_config({"suggester": block}).suggester.first_call_wait_ms == wait_ms


def test_the_retired_rows_shapes_are_mapped_with_where_each_moved(tmp_path):
    raw = {
        "command": ["dsh-search", "serve"],
        "sidecar": {
            "router": {"order": ["searxng"]},
            "suggester": {"builtinPacks": True, "enabled": True, "sectionMode": "sticky"},
            "logMessages": "none",
        },
    }
    out = rows(tmp_path, [["old", "retiredRow", raw], ["empty", "retiredRow", {}]])
    assert out["old"]["value"] == {
        "moves": [
            "sidecar.router → the search-router row's config",
            "sidecar.suggester → the search-suggester row's config (and disabled: false to activate it)",
            "command → sidecar.command in each row",
            "sidecar.logMessages has no row of its own any more; it is not applied",
        ],
        "router": {"order": ["searxng"], "cache": False},
        "suggester": {"builtinPacks": True, "enabled": True, "sectionMode": "sticky"},
        "sidecar": {"command": ["dsh-search", "serve"]},
    }
    assert out["empty"] == {"value": {"moves": []}, "problems": []}


COMPAT = """
import * as compat from './lib/compat.js';
const warnings = [];
const mounted = [];
const ctx = {
  logger: () => ({ warn: (f, m) => warnings.push(f === '%s' ? m : f) }),
  effect: () => {},
  on: () => {},
  plugin: (plugin, config) => mounted.push({ name: plugin.name, config }),
  subprocess: { spawn: () => { throw new Error('no child in this test'); } },
};
compat.apply(ctx, JSON.parse(process.env.ROW));
await new Promise((r) => setTimeout(r, 50));
console.log(JSON.stringify({ warnings, mounted }));
process.exit(0);
"""


def test_the_retired_row_warns_and_still_runs_the_suggester_it_enabled(tmp_path):
    """A profile restating the retired row with the suggester on: the upgrade tells where the
    settings moved, and does not silently turn the suggester off (the search-suggester row is
    not active here: the shim mounts it with the old row's knobs)."""
    row = {"sidecar": {"suggester": {"enabled": True, "sectionMode": "sticky"}}}
    out = node(tmp_path, COMPAT, {"ROW": json.dumps(row)})
    assert out["mounted"] == [{"name": "search-suggester", "config": {"builtinPacks": True, "sectionMode": "sticky"}}]
    assert out["warnings"][0] == (
        "the search-sidecar row is retired (each seed is a plugin with its own row now: search-router, "
        "bandit-search, search-suggester); its settings apply meanwhile, move them: sidecar.suggester → the "
        "search-suggester row's config (and disabled: false to activate it)"
    )


LAYERS = """
import { compositionLayer, effectiveRouter, validateSection } from './lib/settings.js';
const cases = JSON.parse(process.env.CASES);
const out = cases.map(([row, user]) => {
  const problems = [];
  const base = compositionLayer(row, (m) => problems.push(m));
  return { block: effectiveRouter(base, user, row), problems };
});
const refused = [];
for (const bad of [{ timeoutMs: 5 }, { order: ['exa', 'nope'] }, { providers: { searxng: { apiKey: 'k' } } }, { providers: { nope: {} } }]) {
  try { validateSection(bad); refused.push(null); } catch (error) { refused.push(error.message); }
}
console.log(JSON.stringify({ out, refused }));
"""


def test_the_cards_layers_user_wins_per_field_and_a_reset_reinherits(tmp_path):
    row = {
        "order": ["exa", "searxng"],
        "timeoutMs": 8000,
        "providers": {
            "exa": {"apiKeyEnv": "EXA_API_KEY", "baseURL": "https://row.example"},
            "searxng": {"baseUrl": "http://s"},
        },
        "cache": False,
    }
    cases = [
        [row, None],  # no user layer: the row
        [row, {"timeoutMs": 3000, "providers": {"exa": {"apiKey": "gui-key"}}}],  # the GUI wins per field
        [row, {"providers": {"exa": {}}}],  # the GUI's key cleared (reset): the row's apiKeyEnv again
        [row, {"provider": "searxng"}],  # the GUI's single mode replaces the row's chain whole
        [{"provider": "tavily"}, {"order": ["searxng", "exa"]}],  # and a GUI chain the row's single
        [{"timeoutMs": "fast", "order": "exa"}, None],  # a row value of the wrong type: reported, left out
        # the searches' cap: the row's, the GUI's over it per key, a row value out of range left out
        [{"maxConcurrentSearches": 4, "maxQueuedSearches": 64}, {"maxQueuedSearches": 0}],
        [{"maxConcurrentSearches": 0, "maxQueuedSearches": 100001}, None],
    ]
    result = node(tmp_path, LAYERS, {"CASES": json.dumps(cases)})
    blocks = [r["block"] for r in result["out"]]
    assert blocks[0] == {"timeoutMs": 8000, "order": ["exa", "searxng"], "providers": row["providers"], "cache": False}
    assert blocks[1]["timeoutMs"] == 3000 and blocks[1]["order"] == ["exa", "searxng"]
    assert blocks[1]["providers"]["exa"] == {
        "apiKey": "gui-key",
        "apiKeyEnv": "EXA_API_KEY",
        "baseURL": "https://row.example",
    }
    assert blocks[2]["providers"]["exa"] == {"apiKeyEnv": "EXA_API_KEY", "baseURL": "https://row.example"}
    assert blocks[3]["provider"] == "searxng" and "order" not in blocks[3]
    assert blocks[4] == {"order": ["searxng", "exa"]}
    assert blocks[5] == {} and result["out"][5]["problems"] == [
        "search-router row, order: must be a list of provider ids; it is ignored",
        "search-router row, timeoutMs: must be a whole number of milliseconds from 100 to 600000; it is ignored",
    ]
    assert blocks[6] == {"maxConcurrentSearches": 4, "maxQueuedSearches": 0}
    assert blocks[7] == {} and result["out"][7]["problems"] == [
        "search-router row, maxConcurrentSearches: must be a whole number from 1 to 1024; it is ignored",
        "search-router row, maxQueuedSearches: must be a whole number from 0 to 100000; it is ignored",
    ]
    assert result["refused"] == [
        "timeoutMs: not a valid value",
        "order: not a valid value",
        "providers.searxng.apiKey: not a key of searxng",
        "providers.nope: unknown provider",
    ]


HOST = """
import { hostAnchors, hostPackageDir } from './lib/host.js';
const anchors = hostAnchors(process.env, process.env.ARGV1, process.env.SELF);
console.log(JSON.stringify({ anchors, found: hostPackageDir('@deepseek-ai/schemastery', anchors) }));
"""


def test_the_harness_packages_come_from_the_host_before_the_plugins_own_folder(tmp_path):
    """A linked plugin's checkout with its own copy of a harness package (a developer's
    node_modules) must not shadow the running harness's: the profiles fallback of $DSH_HOME
    is asked first, the launcher next, the plugin's own folder last."""
    home = tmp_path / "dsh-home"
    host_pkg = home / "profiles" / "node_modules" / "@deepseek-ai" / "schemastery"
    own_pkg = tmp_path / "checkout" / "node_modules" / "@deepseek-ai" / "schemastery"
    for pkg in (host_pkg, own_pkg):
        pkg.mkdir(parents=True)
        (pkg / "package.json").write_text(
            '{"name": "@deepseek-ai/schemastery", "exports": {"./package.json": "./package.json"}}'
        )
    self_file = tmp_path / "checkout" / "lib" / "host.js"
    env = {"DSH_HOME": str(home), "ARGV1": "", "SELF": str(self_file)}
    out = node(tmp_path, HOST, env)
    assert out["anchors"] == [str(home / "profiles" / "noop.js"), str(self_file)]
    assert out["found"] == str(host_pkg)
    shutil.rmtree(host_pkg)
    assert node(tmp_path, HOST, env)["found"] == str(own_pkg)  # no host copy: the plugin's own


CLIENT = """
import { readFileSync } from 'node:fs';
const registrations = [];
globalThis.window = { __ModuleLoader__: { load: (r) => registrations.push(r) } };
globalThis.location = { href: 'http://127.0.0.1:1/' };
globalThis.document = {
  currentScript: { src: 'http://127.0.0.1:1/plugins/' + process.env.PACKAGE + '/client.js?rev=abc' },
  querySelector: () => null,
  createElement: () => ({ dataset: {} }),
  head: { appendChild: () => {} },
};
new Function(readFileSync(process.env.CLIENT, 'utf8'))();
const exports = registrations[0].factory((name) => {
  if (name !== 'react') throw new Error('unexpected require ' + name);
  return { createElement: () => null, useState: () => [], useRef: () => ({}), useEffect: () => {} };
});
const view = exports.viewOf(JSON.parse(process.env.SNAPSHOT));
console.log(JSON.stringify({
  ids: registrations.map((r) => r.id),
  inject: exports.inject,
  view: { chain: view.chain, kind: view.kind, userMode: view.userMode, timeout: view.timeout, concurrent: view.concurrent, queued: view.queued, key: view.field('exa', 'apiKeyEnv'), url: view.field('exa', 'baseURL') },
}));
"""


@pytest.mark.parametrize("package", ["dsh-search-sidecar-bundle", "dsh-search-sidecar-router"])
def test_the_browser_half_registers_as_the_package_it_is_served_for(tmp_path, package):
    """The same client.js is the browser half of the combined bundle and of the router package:
    it registers its factory under the id of the package whose `/plugins/<package>/client.js`
    the shell loaded (the shell matches registrations to its boot graph's rows by id), and its
    card reads the layers as the host does (the user layer's chain taken whole)."""
    snapshot = {
        "status": "ready",
        "base": {
            "order": ["exa", "searxng"],
            "maxConcurrentSearches": 4,
            "maxQueuedSearches": 64,
            "providers": {"exa": {"apiKeyEnv": "EXA_API_KEY", "baseURL": "https://b"}},
        },
        "user": {
            "provider": "searxng",
            "timeoutMs": 2500,
            "maxQueuedSearches": 0,
            "providers": {"exa": {"baseUrl": "https://u"}},
        },
    }
    env = {"PACKAGE": package, "CLIENT": str(BUNDLE / "client" / "client.js"), "SNAPSHOT": json.dumps(snapshot)}
    out = node(tmp_path, CLIENT, env)
    assert out["ids"] == [package]
    assert out["inject"] == ["slots", "locale", "connection", "settingsScope"]
    assert out["view"] == {
        "chain": ["searxng"],
        "kind": "single",
        "userMode": True,
        "timeout": {"value": 2500, "overridden": True},
        "concurrent": {"value": 4, "overridden": False},
        "queued": {"value": 0, "overridden": True},
        "key": {"value": "EXA_API_KEY", "overridden": False},
        "url": {"value": "https://u", "overridden": True, "key": "baseUrl"},
    }
