"""``corpus/checkout.py`` (plain work trees from a git dir, nothing of the repository's
configuration run) and ``corpus/materialize.py`` (corpus data → stub workspace)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from corpus import checkout, materialize

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    env = {**checkout.git_env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid"}
    env.update(GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def origin(tmp_path):
    """A small repository: a module, an executable script, a symlink out of the tree, export
    rules and a hook that would leave a marker if anything ran it."""
    src = tmp_path / "origin"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "__init__.py").write_text('__version__ = "1.2.3"\n')
    (src / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (src / "run.sh").chmod(0o755)
    (src / ".gitattributes").write_text("pkg/__init__.py export-ignore\n*.sh filter=evil\n")
    os.symlink("/etc/passwd", src / "leak")
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-q", "-m", "one")
    marker = tmp_path / "hook-ran"
    hook = src / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    _git(src, "config", "filter.evil.smudge", f"touch {marker}; cat")
    _git(src, "config", "core.fsmonitor", f"touch {marker}")
    return src, _git(src, "rev-parse", "HEAD").strip(), marker


def test_checkout_writes_the_tracked_regular_files_and_runs_nothing(tmp_path, origin, capsys):
    src, commit, marker = origin
    cache = tmp_path / "cache"
    dest = checkout.checkout(cache, "acme/demo", commit, local=src)
    assert dest == cache / f"acme__demo@{commit}"
    files = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file() or p.is_symlink())
    assert files == [".gitattributes", "pkg/__init__.py", "run.sh"]  # export-ignore ignored, symlink skipped
    assert (dest / "pkg" / "__init__.py").read_text() == '__version__ = "1.2.3"\n'
    assert os.access(dest / "run.sh", os.X_OK)
    assert not marker.exists()  # no hook, no filter, no fsmonitor ran
    assert not (dest / ".git").exists()
    assert "skipped leak" in capsys.readouterr().err
    # a second call reuses the tree as it is
    (dest / "extra").write_text("x")
    assert checkout.checkout(cache, "acme/demo", commit, local=src) == dest and (dest / "extra").exists()


def test_checkout_refuses_bad_names_and_unknown_commits(tmp_path, origin):
    src, commit, _ = origin
    with pytest.raises(ValueError, match="owner/name"):
        checkout.tree_name("../x", commit)
    with pytest.raises(ValueError, match="40-hex"):
        checkout.tree_name("a/b", "HEAD")
    with pytest.raises(checkout.CheckoutError, match="cat-file"):
        checkout.checkout(tmp_path / "c", "acme/demo", "0" * 40, local=src)
    assert not (tmp_path / "c" / f"acme__demo@{'0' * 40}").exists()
    assert (
        checkout.safe_relpath("a/b.py") and not checkout.safe_relpath("a/../b") and not checkout.safe_relpath(".git/x")
    )


def test_a_blob_the_git_dir_lacks_fails_or_is_written_empty(tmp_path, origin, capsys):
    """A snapshot without its largest files: the checkout fails, or with ``missing_empty``
    writes the file empty and says so."""
    src, commit, _ = origin
    blob = _git(src, "rev-parse", f"{commit}:pkg/__init__.py").strip()
    (src / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(checkout.CheckoutError, match="no blob for pkg/__init__.py"):
        checkout.checkout(tmp_path / "c", "acme/demo", commit, local=src)
    assert not (tmp_path / "c" / f"acme__demo@{commit}").exists()
    dest = checkout.checkout(tmp_path / "c", "acme/demo", commit, local=src, missing_empty=True)
    assert (dest / "pkg" / "__init__.py").read_bytes() == b"" and (
        dest / "run.sh"
    ).read_text() == "#!/bin/sh\necho hi\n"
    assert f"acme/demo@{commit[:12]}: pkg/__init__.py written empty" in capsys.readouterr().err


def test_checkout_cli_reads_the_manifest(tmp_path, origin):
    src, commit, _ = origin
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(f"repositories:\n  - {{repo: acme/demo, commit: {commit}, dir: demo}}\n")
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "corpus" / "checkout.py"),
            "--cache",
            str(tmp_path / "k"),
            "--local",
            str(src),
            "--manifest",
            str(manifest),
            "--trajectories",
            "/dev/null",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == f"acme/demo@{commit} {tmp_path / 'k' / f'acme__demo@{commit}'}\n"


def test_materialize_writes_stubs_from_paths_symbols_and_facts(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "paths.txt").write_text(
        "pkg/__init__.py\npkg/core.py\nsrc/lib.rs\nCHANGELOG.md\npackage.json\nlogo.png\nmain.go\n"
    )
    (data / "symbols.tsv").write_text(
        "name\tkind\tpath\tline\nSession\tclass\tpkg/core.py\t3\nmerge\tfunction\tpkg/core.py\t5\n"
        "merge\tref\tpkg/__init__.py\t2\nparse\tfunction\tsrc/lib.rs\t2\nServe\tfunc\tmain.go\t4\n"
    )
    (data / "facts.yaml").write_text(
        "version:\n- {path: pkg/__init__.py, line: 1, value: 0.9.1}\n"
        "changelog:\n- {path: CHANGELOG.md, headings: [[1, '# Changelog'], [3, '## 0.9.1']]}\n"
        'skeletons:\n  package.json:\n  - [1, "{\\n  \\"name\\": \\"demo\\",\\n  \\"version\\": \\"0.9.1\\"\\n}"]\n'
    )
    n = materialize.materialize(data, tmp_path / "ws")
    ws = tmp_path / "ws"
    assert n == 7
    assert (ws / "pkg" / "__init__.py").read_text() == '__version__ = "0.9.1"\n# uses merge\n'
    assert (ws / "pkg" / "core.py").read_text() == "\n\nclass Session: ...\n\ndef merge(): ...\n"
    assert (ws / "src" / "lib.rs").read_text() == "\npub fn parse() {}\n"
    assert (ws / "main.go").read_text() == "package main\n\n\nfunc Serve() {}\n"
    assert (ws / "CHANGELOG.md").read_text() == "# Changelog\n\n## 0.9.1\n"
    assert json.loads((ws / "package.json").read_text()) == {"name": "demo", "version": "0.9.1"}
    assert (ws / "logo.png").read_bytes() == b""
    assert {int(p.stat().st_mtime) for p in ws.rglob("*") if p.is_file()} == {materialize.MTIME}
    again = tmp_path / "ws2"
    materialize.materialize(data, again)
    assert all((ws / p).read_bytes() == (again / p).read_bytes() for p in (data / "paths.txt").read_text().split())
    (data / "paths.txt").write_text("../escape.py\n")
    with pytest.raises(ValueError, match="unsafe path"):
        materialize.materialize(data, tmp_path / "ws3")


def test_materialize_trajectory_reads_escaped_symbol_cells(tmp_path):
    tdir = tmp_path / "trajectories"
    (tdir / "paths").mkdir(parents=True)
    (tdir / "symbols").mkdir()
    key = materialize.trajectory_key("o/n", "a" * 40)
    (tdir / "paths" / f"{key}.txt").write_text("m.py\ndocs/x.rst\n")
    (tdir / "symbols" / f"{key}.tsv").write_text("run\tfunction\tm.py\t2\nodd\\tname\tvariable\tm.py\t3\n")
    assert materialize.materialize_trajectory(tdir, "o/n", "a" * 40, tmp_path / "w") == 2
    assert (tmp_path / "w" / "m.py").read_text() == "\ndef run(): ...\nodd\tname = None\n"
    assert (tmp_path / "w" / "docs" / "x.rst").read_text() == "x\n===\n"


def test_checkout_from_a_url_fetches_only_the_pinned_commit(tmp_path, origin):
    src, commit, marker = origin
    cache = tmp_path / "cache"
    dest = checkout.checkout(cache, "acme/demo", commit, url=src.as_uri())
    assert (dest / "pkg" / "__init__.py").read_text() == '__version__ = "1.2.3"\n'
    bare = cache / ".git" / "acme__demo.git"
    assert checkout.git(bare, "rev-parse", "--is-shallow-repository").strip() == b"true"
    assert not marker.exists()
