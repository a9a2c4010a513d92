"""The DSH bundle's start handling (``SidecarProcess`` in harness-adapters/dsh/lib/index.js), run
by Node 22 with the bundle's own dependencies from the installed DeepSeek Harness and a ``ctx``
whose ``subprocess.spawn`` throws, as DSH's local subprocess service does for an argv it cannot
run (an empty program name) or an aborted spawn: no child exists, so nothing will ever exit and
restart it. The web seam's search must then go to the harness's own provider at once (as before
the start handling ended abandoned starts), not wait for a restart that never comes."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from harness import harnesses as h

pytestmark = pytest.mark.skipif(h.dsh_missing() is not None, reason=h.dsh_missing() or "")

BUNDLE = Path(__file__).resolve().parents[2] / "harness-adapters" / "dsh"

SCRIPT = textwrap.dedent(
    """
    import { apply } from './lib/index.js';
    const providers = new Map();
    const warnings = [];
    const ctx = {
      logger: () => ({ warn: (m) => warnings.push(m) }),
      effect: () => {},
      on: () => {},
      systemPrompt: { section: () => {} },
      tools: { register: () => {} },
      web: { registerSearchProvider: (p) => providers.set(p.id, p), searchProviders: providers },
      subprocess: {
        spawn: () => {
          throw new Error('invalid argv: expected a non-empty program name at argv[0]');
        },
      },
    };
    providers.set('other', {
      id: 'other',
      available: () => true,
      search: async () => ({ sources: [{ url: 'https://other.example/' }], truncated: false }),
    });
    apply(ctx, {});
    const bundle = [...providers.values()].find((p) => p.id !== 'other');
    await new Promise((r) => setTimeout(r, 50)); // the failed start has settled
    const result = await Promise.race([
      bundle.search({ query: 'q' }, undefined),
      new Promise((r) => setTimeout(() => r('no answer within 5 s'), 5000)),
    ]);
    console.log(JSON.stringify({ result, warnings }));
    process.exit(0);
    """
)


def _module_dir(name: str) -> Path:
    """``@deepseek-ai/<name>`` as pnpm installed it for the harness."""
    found = sorted((h.HARNESS_DIR / "dsh" / "node_modules" / ".pnpm").glob(f"@deepseek-ai+{name}@*"))
    if not found:
        pytest.skip(f"@deepseek-ai/{name} is not installed under {h.HARNESS_DIR}")
    return found[-1] / "node_modules" / "@deepseek-ai" / name


def test_a_start_whose_spawn_throws_leaves_web_search_to_the_harness(tmp_path: Path):
    work = tmp_path / "bundle"
    shutil.copytree(BUNDLE / "lib", work / "lib")
    shutil.copy(BUNDLE / "package.json", work / "package.json")
    scope = work / "node_modules" / "@deepseek-ai"
    scope.mkdir(parents=True)
    for name in ("schemastery", "dsh-tools"):
        (scope / name).symlink_to(_module_dir(name))
    (work / "run.mjs").write_text(SCRIPT)
    proc = subprocess.run([str(h.NODE22_BIN / "node"), "run.mjs"], cwd=work, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {
        "result": {"sources": [{"url": "https://other.example/"}], "truncated": False},
        "warnings": [
            "sidecar did not start; the harness runs as without it:"
            " invalid argv: expected a non-empty program name at argv[0]",
            "sidecar unavailable; this web search goes to the harness's own provider",
        ],
    }
