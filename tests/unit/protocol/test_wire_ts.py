"""The one TypeScript client's wire types (editor-clients/vscode/src/core/wire.ts, compiled
into the DSH bundle) are exactly what ``python -m dsh_protocol.typescript`` generates from the
pydantic models, so Python and TypeScript cannot drift; and the generator maps the models'
JSON Schema to the right TypeScript."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_protocol.typescript import render

REPO = Path(__file__).resolve().parents[3]
WIRE = REPO / "editor-clients" / "vscode" / "src" / "core" / "wire.ts"


def test_committed_wire_ts_is_the_generated_one():
    assert WIRE.read_text("utf-8") == render(), (
        "wire.ts is stale: run `python -m dsh_protocol.typescript > editor-clients/vscode/src/core/wire.ts`"
    )


def test_generated_shapes():
    text = render()
    assert (
        "export interface SearchParams {\n  query: string;\n  maxResults?: number | null;\n"
        '  strategy?: "auto" | "quick" | "thorough";\n  deadlineMs?: number | null;\n}'
    ) in text
    # results: a field that cannot be None is always sent, so it is not optional
    assert "export interface PostExecuteResult {\n  additionalContexts: AdditionalContext[];\n}" in text
    assert '  kind: "search-suggester";\n  form: "notice";\n  summary: string;' in text
    assert "export interface AssembleSectionResult {\n  section?: Section | null;\n}" in text
    assert '  POST_EXECUTE: "dsh/postExecute",' in text and "  SEARCH_FAILED: -32001," in text
    assert "export const MAX_QUERY_CHARS = 2000;" in text


@pytest.mark.slow
def test_dsh_bundle_carries_the_current_client(tmp_path):
    """harness-adapters/dsh/lib/core is the compiled one client, not a fork of it."""
    import json
    import shutil
    import subprocess

    import pytest

    tsc = REPO / "editor-clients" / "vscode" / "node_modules" / ".bin" / "tsc"
    if not tsc.exists() or shutil.which("node") is None:
        pytest.skip("tsc is not installed (.ci/run: npm ci in editor-clients/vscode)")
    bundle = REPO / "harness-adapters" / "dsh"
    config = json.loads((bundle / "tsconfig.client.json").read_text())
    config["compilerOptions"]["outDir"] = str(tmp_path)
    for key in ("rootDir", "typeRoots"):
        value = config["compilerOptions"][key]
        config["compilerOptions"][key] = (
            [str((bundle / v).resolve()) for v in value] if isinstance(value, list) else str((bundle / value).resolve())
        )
    config["files"] = [str((bundle / f).resolve()) for f in config["files"]]
    tmp_config = tmp_path / "tsconfig.json"
    tmp_config.write_text(json.dumps(config))
    done = subprocess.run([str(tsc), "-p", str(tmp_config)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    built = sorted(p.name for p in tmp_path.glob("*.js"))
    assert built == sorted(p.name for p in (bundle / "lib" / "core").glob("*.js"))
    for name in built:
        assert (bundle / "lib" / "core" / name).read_text() == (tmp_path / name).read_text(), (
            f"harness-adapters/dsh/lib/core/{name} is stale: run `npm run build:client` in harness-adapters/dsh"
        )
