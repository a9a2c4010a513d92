"""The task lead names and reads only workspace files (docs/SECURITY.md, class 2): a file symlink
the listing names (the walk and git list a link to a file) that resolves out of the tree, or into
``.git``, is neither read by its ranking (the content index, the symbol pass and the error
feature's reads refuse it: ``fsguard``'s ``outside`` and ``git-folder``) nor named in its note,
its ``dsh/taskLead`` answer or a free-text ``where_is`` (the ranking filtered by
``fsguard.resolves_inside``, the rule the suggester's own targets keep: ``FileIndex.inside``). A
folder link is never listed. Before, a task text naming the link's path, or the names its target
defines, got it as the first target, and a link into ``.git`` was read as a workspace file."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from dsh_sidecar.suggester.fileindex import FileIndex
from dsh_sidecar.suggester.lead.mentions import mentions
from dsh_sidecar.suggester.lead.offer import TaskLeads
from dsh_sidecar.suggester.lead.ranker import rank
from dsh_sidecar.workspace import WorkspaceGraph, fsguard
from dsh_sidecar.workspace.content import ContentIndexer
from support.rawrpc import RawServer

#: The code the links lead to: a name only it defines and a message only it holds.
LINKED = (
    "class LedgerSecretHolder:\n    def settle(self):\n"
    '        raise KeyError("ledger secret holder refused the settlement")\n'
)
FILES = {
    "src/shop/cart.py": "class Cart:\n    def total(self):\n        return 0\n",
    "src/shop/pricing.py": "def apply_discount(amount):\n    return amount\n",
}
#: A task naming each link's path, the class their target defines and the message it raises.
TASK = (
    "LedgerSecretHolder.settle fails in src/shop/holder.py and src/shop/githeld.py\n\n"
    "`LedgerSecretHolder().settle()` raises `KeyError: 'ledger secret holder refused the settlement'`; "
    "see also src/vendor/holder.py and Cart.total in src/shop/cart.py.\n"
)
#: What is named: the workspace's own files (the one the text names first); never a link.
NAMED = ["src/shop/cart.py", "src/shop/pricing.py"]
OFFERED = "lead offered 2 targets src/shop/cart.py,src/shop/pricing.py"


def linked_workspace(tmp_path: Path) -> Path:
    """The shop with ``src/shop/holder.py`` linking out of the tree, ``src/shop/githeld.py``
    into ``.git``, and ``src/vendor`` a folder link out, all three to :data:`LINKED`."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (outside / "vendor").mkdir(parents=True)
    (outside / "holder.py").write_text(LINKED)
    (outside / "vendor" / "holder.py").write_text(LINKED)
    (root / ".git").mkdir(exist_ok=True)
    (root / ".git" / "held.py").write_text(LINKED)
    (root / "src/shop/holder.py").symlink_to(outside / "holder.py")
    (root / "src/shop/githeld.py").symlink_to("../../.git/held.py")
    (root / "src/vendor").symlink_to(outside / "vendor", target_is_directory=True)
    return root


def built(root: Path, cache: Path) -> tuple[WorkspaceGraph, ContentIndexer]:
    graph = WorkspaceGraph.build(root)
    graph.index_symbols()
    content = ContentIndexer(root, cache)
    content.start(list(graph.files))
    assert content.wait(60)
    return graph, content


def test_the_links_are_listed_and_read_by_no_pass(tmp_path):
    root = linked_workspace(tmp_path)
    graph, content = built(root, tmp_path / "cache")
    try:
        assert sorted(graph.files) == [
            "src/shop/cart.py",
            "src/shop/githeld.py",
            "src/shop/holder.py",
            "src/shop/pricing.py",
        ]
        assert graph.symbols is not None
        assert dict(graph.symbols.defs).get("LedgerSecretHolder", ()) == ()  # neither link parsed
        assert content.search(["settlement"], 10) == []  # neither link's words indexed
        assert content.files_containing(["src/shop/githeld.py", "src/shop/holder.py"], "refused the settlement") == []
    finally:
        content.close()
    with pytest.raises(fsguard.Refused) as into_git:
        fsguard.read_bytes(root, "src/shop/githeld.py")
    with pytest.raises(fsguard.Refused) as out:
        fsguard.read_bytes(root, "src/shop/holder.py")
    assert (into_git.value.reason, out.value.reason) == ("git-folder", "outside")
    assert fsguard.read_bytes(root, ".git/held.py") == LINKED.encode()  # git's own file, named as such
    index = FileIndex(root.resolve(), graph.files)
    assert [rel for rel in graph.files if index.inside(rel)] == ["src/shop/cart.py", "src/shop/pricing.py"]
    assert index.refused == ["src/shop/githeld.py", "src/shop/holder.py"]


def test_the_task_lead_names_no_link(tmp_path):
    root = linked_workspace(tmp_path)
    graph, content = built(root, tmp_path / "cache")
    try:
        assert [lead.path for lead in rank(mentions(TASK), graph, content)] == NAMED
        lines: list[str] = []
        leads = TaskLeads(lines.append)
        answer = leads.offer("s1", TASK, graph, content, ready=True, keep=20)
        assert answer.note is not None and answer.note.source.targets == NAMED
        assert [lead.path for lead in answer.ranked] == NAMED
        assert lines == [OFFERED]
        assert [lead.path for lead in leads.rank_only(TASK, graph, content)] == NAMED  # where_is, free text
    finally:
        content.close()


def test_a_git_checkouts_tracked_links_are_not_named(tmp_path):
    """git lists a tracked symlink to a file (mode 120000) as a file: the same rule holds."""
    root = linked_workspace(tmp_path)
    (root / ".git" / "held.py").rename(tmp_path / "held.py")
    (root / ".git").rmdir()
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for argv in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(root), *argv], check=True, env=env)
    (tmp_path / "held.py").rename(root / ".git" / "held.py")
    graph, content = built(root, tmp_path / "cache")
    try:
        assert "src/shop/githeld.py" in graph.files and "src/shop/holder.py" in graph.files
        assert [lead.path for lead in rank(mentions(TASK), graph, content)] == NAMED
    finally:
        content.close()


@pytest.mark.slow  # spawns a sidecar
def test_dsh_task_lead_over_stdio_names_no_link(dsh_home, tmp_path):
    root = linked_workspace(tmp_path)
    srv = RawServer(dsh_home, forked=True)
    try:
        srv.initialize({"suggester": {"enabled": True, "taskLead": True, "firstCallWaitMs": 60_000}}, root=root)
        answer = srv.request("dsh/taskLead", {"sessionId": "s1", "task": TASK}, timeout=90)["result"]
        srv.barrier()
        lines = [line.split("] ", 1)[1] for line in srv.log_lines() if "lead " in line]
        assert srv.shutdown(30) == 0
    finally:
        srv.close()
    assert [c["source"]["targets"] for c in answer["additionalContexts"]] == [NAMED]
    assert lines == [OFFERED]


def test_a_link_into_git_from_a_folder_spelt_git_in_capitals_is_read_by_no_pass(tmp_path):
    """On a case-sensitive file system ``.GIT`` is a folder like any other: the walk lists it, and
    git lists its files as untracked (git refuses to track a ``.GIT`` path, not to list one). A
    link in it into ``.git`` (``.GIT/held.py -> ../.git/held.py``; ``.git/config`` may hold a
    remote's token) is a link into git's folder. Before, its path was taken for one that names
    ``.git`` itself (git's own reads, matched in any case): every pass read ``.git/held.py``
    through it and the task lead named it first."""
    root = linked_workspace(tmp_path)
    (root / ".GIT").mkdir()
    (root / ".GIT" / "held.py").symlink_to("../.git/held.py")
    graph, content = built(root, tmp_path / "cache")
    try:
        assert ".GIT/held.py" in graph.files
        assert graph.symbols is not None
        assert dict(graph.symbols.defs).get("LedgerSecretHolder", ()) == ()
        assert content.search(["settlement"], 10) == []
        task = TASK + "The holder is .GIT/held.py.\n"
        assert [lead.path for lead in rank(mentions(task), graph, content)] == NAMED
    finally:
        content.close()
    with pytest.raises(fsguard.Refused) as into_git:
        fsguard.read_bytes(root, ".GIT/held.py")
    assert into_git.value.reason == "git-folder"
    assert not fsguard.resolves_inside(root, ".GIT/held.py")
    assert fsguard.read_bytes(root, ".git/held.py") == LINKED.encode()  # git's own file, named as such
    index = FileIndex(root.resolve(), graph.files)
    assert not index.inside(".GIT/held.py")
