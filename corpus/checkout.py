"""Plain work trees of ``<owner>/<name>@<commit>`` in a cache folder, for the corpus bench.

Layout (shared by the intent corpus and the trajectories)::

    <cache>/<owner>__<name>@<commit>/      the tracked files of that commit (no .git)
    <cache>/.git/<owner>__<name>.git        bare clone used when the source is a URL

A work tree is written to ``<dir>.tmp-<pid>`` and renamed into place when complete, so an
existing ``<owner>__<name>@<commit>/`` is always whole and is reused as it is.

The source is a git URL (default ``https://github.com/<owner>/<name>.git``; only the pinned
commit is fetched, depth 1) or a local git directory (bare or not) that already holds the
commit. The files are written from ``git ls-tree``/``git cat-file`` output, not by a checkout:
nothing of the repository's own configuration runs (no hooks, no fsmonitor, no filters, no
``.gitattributes`` export rules, no submodules); symlinks and submodule entries are skipped
(listed on stderr); a path that is absolute, has ``..`` or ``.git`` parts is refused. Every
git command runs with ``GIT_CONFIG_NOSYSTEM=1``, an empty global config, no prompts and
``-c core.fsmonitor=false -c core.hooksPath=/dev/null``. A blob the local git dir lacks fails the
checkout, or with ``--missing-empty`` is written as an empty file and listed on stderr (this
workplace's snapshots leave out files of 4 MiB and more).

    python corpus/checkout.py --cache DIR [--local '/mirrors/{owner}+{name}/repo'] [--missing-empty] \
        [--manifest corpus/intents/manifest.yaml] [--trajectories corpus/trajectories/index.jsonl] \
        [owner/name@commit ...]

Without explicit ``owner/name@commit`` arguments it checks out every repository of the
manifest and of the trajectory index that exist. Exit code 0 when all are present, 1 when one
failed (the others are still made).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

import yaml

ROOT = Path(__file__).resolve().parent
MANIFEST = ROOT / "intents" / "manifest.yaml"
TRAJECTORIES = ROOT / "trajectories" / "index.jsonl"
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
#: git options that keep the repository's own configuration from running anything.
HARDENED = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "protocol.ext.allow=never"]


class CheckoutError(RuntimeError):
    """A checkout that could not be made; the message says which and why."""


def tree_name(repo: str, commit: str) -> str:
    """``<owner>__<name>@<commit>``: the cache folder of one checkout. Raises ``ValueError``."""
    if not _REPO.match(repo) or ".." in repo:
        raise ValueError(f"not an owner/name: {repo!r}")
    if not _COMMIT.match(commit):
        raise ValueError(f"not a 40-hex commit: {commit!r}")
    owner, name = repo.split("/")
    return f"{owner}__{name}@{commit}"


def tree_path(cache: Path, repo: str, commit: str) -> Path:
    """The work tree of ``repo@commit`` in ``cache`` (it may not exist yet)."""
    return cache / tree_name(repo, commit)


def git_env() -> dict[str, str]:
    """The environment of every git command: no system/global config, no prompts."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_ASKPASS="/bin/false",
        SSH_ASKPASS="/bin/false",
        GIT_SSH_COMMAND="ssh -o BatchMode=yes",
    )
    return env


def git(git_dir: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """Run ``git --git-dir=<git_dir> <hardened options> <args>``; stdout bytes. Raises CheckoutError."""
    cmd = ["git", f"--git-dir={git_dir}", "-c", f"safe.directory={git_dir}", *HARDENED, *args]
    if stdin is None:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, env=git_env())
    else:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, env=git_env())
    if proc.returncode != 0:
        raise CheckoutError(f"git {' '.join(args[:2])} failed: {proc.stderr.decode('utf-8', 'replace').strip()[:500]}")
    return proc.stdout


def _git_dir(local: Path) -> Path:
    """The git directory of a local repository (``local`` itself when bare)."""
    return local / ".git" if (local / ".git").is_dir() else local


def fetch_url(cache: Path, repo: str, commit: str, url: str) -> Path:
    """A bare clone under ``<cache>/.git/`` holding ``commit`` fetched from ``url`` (depth 1)."""
    owner, name = repo.split("/")
    bare = cache / ".git" / f"{owner}__{name}.git"
    if not bare.is_dir():
        bare.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True, env=git_env(), capture_output=True)
    try:
        git(bare, "cat-file", "-e", f"{commit}^{{commit}}")
    except CheckoutError:
        git(bare, "fetch", "-q", "--depth", "1", "--no-tags", url, commit)
    return bare


def _entries(git_dir: Path, commit: str) -> Iterator[tuple[str, str, str, str]]:
    out = git(git_dir, "ls-tree", "-r", "-z", "--full-tree", commit)
    for rec in out.split(b"\0"):
        if not rec:
            continue
        meta, _, path = rec.partition(b"\t")
        mode, kind, sha = meta.decode().split()
        yield mode, kind, sha, path.decode("utf-8", "surrogateescape")


def safe_relpath(path: str) -> bool:
    """A repository path that may be written under the work tree."""
    p = PurePosixPath(path)
    return bool(path) and not p.is_absolute() and all(part not in ("..", ".git", "") for part in p.parts)


def write_tree(git_dir: Path, commit: str, dest: Path, missing: list[str] | None = None) -> list[str]:
    """Write the regular files of ``commit`` under ``dest`` (which must not exist); return the
    skipped paths (symlinks, submodules, refused names). A blob the git dir lacks raises
    :class:`CheckoutError`, unless ``missing`` is a list: then the file is written empty and its
    path appended (a fetched snapshot leaves out files of 4 MiB and more)."""
    skipped: list[str] = []
    files: list[tuple[str, str, str]] = []
    for mode, kind, sha, path in _entries(git_dir, commit):
        if kind != "blob" or mode not in ("100644", "100755") or not safe_relpath(path):
            skipped.append(path)
            continue
        files.append((mode, sha, path))
    dest.mkdir(parents=True)
    proc = subprocess.Popen(
        ["git", f"--git-dir={git_dir}", "-c", f"safe.directory={git_dir}", *HARDENED, "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=git_env(),
    )
    assert proc.stdin and proc.stdout
    try:
        for mode, sha, path in files:
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().split()
            if len(header) == 2 and header[1] == b"missing" and missing is not None:
                missing.append(path)
                data = b""
            elif len(header) != 3:
                raise CheckoutError(f"cat-file gave no blob for {path}")
            else:
                data = proc.stdout.read(int(header[2]))
                proc.stdout.read(1)
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            target.chmod(0o755 if mode == "100755" else 0o644)
    finally:
        proc.stdin.close()
        proc.wait()
    return skipped


def checkout(
    cache: Path,
    repo: str,
    commit: str,
    local: Path | None = None,
    url: str | None = None,
    missing_empty: bool = False,
) -> Path:
    """Make (or reuse) ``<cache>/<owner>__<name>@<commit>/``; return its path.

    ``local``: a git directory holding the commit; else ``url`` (default the GitHub URL) is
    fetched. ``missing_empty``: a blob the git dir lacks is written as an empty file (listed on
    stderr) instead of failing the checkout. Raises :class:`CheckoutError` or ``ValueError``."""
    dest = tree_path(cache, repo, commit)
    if dest.is_dir():
        return dest
    cache.mkdir(parents=True, exist_ok=True)
    if local is not None:
        git_dir = _git_dir(local)
    else:
        git_dir = fetch_url(cache, repo, commit, url or f"https://github.com/{repo}.git")
    git(git_dir, "cat-file", "-e", f"{commit}^{{commit}}")
    tmp = dest.with_name(f"{dest.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    missing: list[str] | None = [] if missing_empty else None
    try:
        skipped = write_tree(git_dir, commit, tmp, missing)
        tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for path in skipped:
        sys.stderr.write(f"checkout: {repo}@{commit[:12]}: skipped {path} (not a regular file)\n")
    for path in missing or []:
        sys.stderr.write(f"checkout: {repo}@{commit[:12]}: {path} written empty (its blob is not in the git dir)\n")
    return dest


def pinned(manifest: Path = MANIFEST, trajectories: Path = TRAJECTORIES) -> list[tuple[str, str]]:
    """``(repo, commit)`` pairs of the intent manifest and the trajectory index (deduplicated, in order)."""
    pairs: list[tuple[str, str]] = []
    if manifest.is_file():
        for row in yaml.safe_load(manifest.read_text("utf-8"))["repositories"]:
            pairs.append((row["repo"], row["commit"]))
    if trajectories.is_file():
        for raw in trajectories.read_text("utf-8").splitlines():
            if raw.strip():
                row = json.loads(raw)
                pairs.append((row["repo"], row["commit"]))
    return list(dict.fromkeys(pairs))


def _parse(specs: Iterable[str]) -> list[tuple[str, str]]:
    out = []
    for spec in specs:
        repo, _, commit = spec.partition("@")
        tree_name(repo, commit)
        out.append((repo, commit))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("specs", nargs="*", help="owner/name@commit (default: the manifest and the trajectory index)")
    p.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"), help="cache folder")
    p.add_argument("--local", help="local git dir pattern with {owner} and {name}, e.g. '/mirrors/{owner}+{name}/repo'")
    p.add_argument("--url", default="https://github.com/{owner}/{name}.git", help="git URL pattern")
    p.add_argument("--manifest", type=Path, default=MANIFEST)
    p.add_argument("--trajectories", type=Path, default=TRAJECTORIES)
    p.add_argument(
        "--missing-empty",
        action="store_true",
        help="write a blob the git dir lacks (a snapshot leaves out files of 4 MiB and more) as an empty file",
    )
    args = p.parse_args(argv)
    if args.cache is None:
        p.error("--cache DIR (or DSH_CORPUS_CACHE) is required")
    try:
        pairs = _parse(args.specs) if args.specs else pinned(args.manifest, args.trajectories)
    except ValueError as exc:
        p.error(str(exc))
    failed = 0
    for repo, commit in pairs:
        owner, name = repo.split("/")
        local = Path(args.local.format(owner=owner, name=name)) if args.local else None
        try:
            if local is not None and not local.is_dir():
                raise CheckoutError(f"no local git dir {local}")
            url = args.url.format(owner=owner, name=name)
            dest = checkout(args.cache, repo, commit, local, url, missing_empty=args.missing_empty)
            sys.stdout.write(f"{repo}@{commit} {dest}\n")
        except (CheckoutError, ValueError, OSError) as exc:
            failed += 1
            sys.stderr.write(f"checkout: {repo}@{commit}: {exc}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
