"""Untrusted repository packs (``<workspace>/.dsh/pack.yml``) over real stdio: a hostile pack
is refused with a clear line (ledger via ``window/logMessage`` and ``dsh/status``), the
built-in packs keep working, and no call takes unbounded time (ReDoS, YAML bombs)."""

from __future__ import annotations

import os
import re
import shutil

import pytest
from support.rawrpc import RawServer
from support.trees import copy_fixture
from support.waiting import wait_until

#: "Does not hang" bound of one call, seconds: each request must be answered within it (a
#: catastrophic regex would take hours). Generous for a loaded CI machine; a timing bound of
#: the regex budget itself is bench's business, the budget's ledger line is asserted here.
CALL_BOUND_S = 60.0

GOOD_SIGNAL = "{pattern: 'zzz', weight: 3.0}"


def pack(signals: str = GOOD_SIGNAL, candidates: str = "{path: README.md, reason: the readme}") -> str:
    return f"id: hostile\nintents:\n  Config:\n    signals: [{signals}]\n    candidates: [{candidates}]\n"


@pytest.fixture(scope="module")
def packsrv(tmp_path_factory):
    """One sidecar for the module; each case rewrites ``.dsh`` and sends ``dsh/toolsChanged``
    (which reloads the packs at the next call)."""
    root = tmp_path_factory.mktemp("ws") / "pyproj"
    copy_fixture("pyproj", root)
    srv = RawServer(tmp_path_factory.mktemp("dsh-home"))
    srv.initialize({"suggester": {"enabled": True}}, root=root)
    srv.root = root  # type: ignore[attr-defined]
    # the built-in note needs the content index (its version facts): a note is never guessed
    # before it (suggester/readiness.py), so the cases start once it is built
    wait_until(lambda: srv.request("dsh/status", {})["result"]["suggester"]["graph"]["ready"], "the projection")
    yield srv
    srv.close()


def reload(srv: RawServer) -> list[str]:
    """Reload the packs (toolsChanged + one call) and return ``packErrors``."""
    srv.barrier()  # every line of the previous case is read: none is counted for this one
    srv.notifications.clear()
    srv.notify("dsh/toolsChanged")
    timed_post_execute(srv, "nothing to see", turn=0)
    return refusal(srv)


def set_dsh(srv: RawServer, pack_text: str | None = None, link_to=None) -> None:
    dsh = srv.root / ".dsh"  # type: ignore[attr-defined]
    if dsh.is_symlink() or dsh.is_file():
        dsh.unlink()
    elif dsh.exists():
        shutil.rmtree(dsh)
    if link_to is not None:
        os.symlink(link_to, dsh)
        return
    dsh.mkdir()
    if pack_text is not None:
        (dsh / "pack.yml").write_text(pack_text)


def timed_post_execute(srv: RawServer, pattern: str, turn: int = 1, session: str = "sec") -> dict:
    """One ``dsh/postExecute``; a call not answered within :data:`CALL_BOUND_S` fails the test."""
    reply = srv.request(
        "dsh/postExecute",
        {"sessionId": session, "turn": turn, "tool": {"name": "Grep", "input": {"pattern": pattern}}},
        timeout=CALL_BOUND_S,
    )
    assert "result" in reply, reply
    return reply["result"]


def refusal(srv: RawServer) -> list[str]:
    status = srv.request("dsh/status", {})["result"]
    return status["suggester"]["packErrors"]


def ledger_lines(srv: RawServer) -> list[str]:
    srv.barrier()
    return srv.log_lines()


def assert_builtin_still_works(srv: RawServer) -> None:
    # a fresh session each time: the noise control stays quiet on a repeat within one session
    notes = timed_post_execute(srv, "__version__", session=f"fresh-{srv.next_id}")["additionalContexts"]
    assert notes and notes[0]["source"]["targets"] == ["src/demo_pkg/__init__.py"], notes


@pytest.mark.parametrize(
    "text, reason",
    [
        (pack(signals="{pattern: '(a+)+$', weight: 3.0}"), "catastrophic backtracking"),
        (pack(signals="{pattern: '" + "a" * 400 + "', weight: 3.0}"), "pattern longer than 300 characters"),
        (pack(candidates="{path: '../../etc/passwd', reason: escape}"), "must be a relative path inside the workspace"),
        (pack(candidates="{path: '/etc/passwd', reason: escape}"), "must be a relative path inside the workspace"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x]\n"
            + "".join(
                f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
                for i in range(8)
            ),
            "hostile",
        ),  # billion laughs: 9^9 leaves if expanded
        ("id: big\n# " + "x" * (300 * 1024) + "\n", "larger than 256 KiB"),
        ("id: [unclosed\n", "invalid YAML"),
        ("- just\n- a list\n", "a pack must be a mapping"),
        (pack().replace("Config", "NotAnIntent"), "unknown intent"),
    ],
    ids=[
        "redos-nested",
        "long-pattern",
        "traversal",
        "absolute",
        "yaml-bomb",
        "huge-file",
        "bad-yaml",
        "not-mapping",
        "unknown-intent",
    ],
)
def test_hostile_repo_pack_is_refused_with_a_clear_line(packsrv, text, reason):
    srv = packsrv
    set_dsh(srv, text)
    errors = reload(srv)  # each of its calls bounded by CALL_BOUND_S
    if reason == "hostile":  # the bomb is not a pack: refused without being expanded
        assert len(errors) == 1 and ".dsh/pack.yml" in errors[0], errors
    else:
        assert len(errors) == 1 and reason in errors[0], errors
    # a refusal found by a background activation is written at the next call of the request
    # thread (dsh/status, the barrier, is one): wait for the line, not for a guessed time
    lines = wait_until(
        lambda: [line for line in ledger_lines(srv) if "pack refused (" in line], "the pack refused ledger line"
    )
    assert len(lines) == 1 and errors[0] in lines[0], lines
    assert_builtin_still_works(srv)
    assert srv.rss_kib() < 300 * 1024


def test_symlinked_pack_pointing_out_of_the_workspace_is_refused(packsrv, tmp_path):
    outside = tmp_path / "outside.yml"
    outside.write_text(pack())
    set_dsh(packsrv)
    os.symlink(outside, packsrv.root / ".dsh" / "pack.yml")
    errors = reload(packsrv)
    assert len(errors) == 1 and "a symlink; packs must be regular files" in errors[0], errors
    assert_builtin_still_works(packsrv)


def test_symlinked_dsh_folder_pointing_out_of_the_workspace_is_refused(packsrv, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "pack.yml").write_text(pack())
    set_dsh(packsrv, link_to=outside)
    try:
        errors = reload(packsrv)
        ids = [p["id"] for p in packsrv.request("dsh/status", {})["result"]["suggester"]["packs"]]
        assert "hostile" not in ids, ids
        assert len(errors) == 1 and ".dsh" in errors[0], errors
    finally:
        set_dsh(packsrv)


@pytest.mark.parametrize("pattern", ["((a+))+$", "(a|a)*$", "(a|aa)*$", "(?:a|a)*b$", "(\\w|\\d)*!$"])
def test_redos_patterns_that_pass_the_static_check_are_bounded_per_call(packsrv, pattern):
    """Patterns the nested-quantifier check cannot see (alternation overlap, doubly nested
    groups) are still matched under a timeout: each call stays bounded."""
    set_dsh(packsrv, pack(signals=f"{{pattern: '{pattern}', weight: 3.0}}"))
    assert reload(packsrv) == []  # accepted by the static check...
    for turn in range(1, 4):  # ...and still bounded per call
        timed_post_execute(packsrv, "a" * 40 + "1" * 40 + "#", turn=turn)
    assert packsrv.alive()
    assert_builtin_still_works(packsrv)


def test_symlink_candidate_out_of_the_workspace_is_never_named_or_read(packsrv, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("__version__ = 'stolen'\n")
    link = packsrv.root / "src" / "demo_pkg" / "leak.py"
    os.symlink(secret, link)
    set_dsh(
        packsrv,
        "id: linky\nreplace: true\nintents:\n  Version:\n    signals: [{pattern: '__version__', weight: 3.0}]\n"
        "    candidates: [{path: 'src/demo_pkg/leak.py', contains: 'stolen', reason: the leak}]\n",
    )
    try:
        reload(packsrv)  # candidates are resolved by the background preparation: wait for it
        errors = wait_until(lambda: refusal(packsrv), "the candidate's refusal in packErrors")
        assert errors == ["candidate src/demo_pkg/leak.py: resolves outside the workspace"]
        notes = timed_post_execute(packsrv, "__version__", session="linky")["additionalContexts"]
        assert all("leak.py" not in t for n in notes for t in n["source"]["targets"]), notes
    finally:
        link.unlink()
        set_dsh(packsrv)


INTENT_NAMES = ("Version", "Path", "Ledger", "Config", "Dependency", "Test", "Symbol", "Doc", "Usage", "Owner")


def test_many_slow_signals_share_one_budget_per_call(packsrv):
    """100 slow-but-accepted patterns in every intent: each one's own timeout would add up
    to ~50 s a call; the per-call budget keeps the whole call bounded and says so once."""
    rows = "".join(
        f"  {name}:\n    signals: [" + ", ".join(["{pattern: '(a|a)*$', weight: 0.01}"] * 100) + "]\n"
        "    candidates: [{path: README.md, reason: the readme}]\n"
        for name in INTENT_NAMES
    )
    set_dsh(packsrv, "id: slow\nintents:\n" + rows)
    try:
        # the pack is accepted; on a loaded machine even reload's benign call may spend the
        # budget on its 1,000 signals, and that is the one refusal it may then report
        budget = "untrusted pack regexes used the 50 ms budget of a call; the remaining signals count as no match"
        assert all(e == budget for e in reload(packsrv)), refusal(packsrv)
        for turn in range(1, 3):
            timed_post_execute(packsrv, "a" * 60 + "b", turn=turn)
        budget_lines = [m for m in ledger_lines(packsrv) if "budget of a call" in m]
        assert len(budget_lines) == 1, budget_lines
        assert budget_lines[0].endswith(f"pack refused ({budget})")
        assert refusal(packsrv) == [budget]
        assert packsrv.alive()
    finally:
        set_dsh(packsrv)


def test_slow_contains_checks_share_one_activation_budget(packsrv):
    """Every intent with 100 `contains` candidates over files built to make the regex
    backtrack: activation stays bounded (the budget), the server keeps answering."""
    data = packsrv.root / "src" / "slowdata"  # type: ignore[attr-defined]
    data.mkdir(exist_ok=True)
    for i in range(30):
        (data / f"f{i}.txt").write_text("a" * 5000 + "!")
    cands = ", ".join([f"{{path: 'src/slowdata/f{i % 30}.txt', contains: '(a|a)*$', reason: r}}" for i in range(100)])
    rows = "".join(
        f"  {name}:\n    signals: [{{pattern: 'zzz', weight: 3.0}}]\n    candidates: [{cands}]\n"
        for name in INTENT_NAMES
    )
    set_dsh(packsrv, "id: slowcontains\nintents:\n" + rows)
    try:
        reload(packsrv)  # its call answered within CALL_BOUND_S, under the activation budget
        assert packsrv.alive()
    finally:
        set_dsh(packsrv)
        shutil.rmtree(data)


def test_our_packs_pass_the_untrusted_checks_they_are_spared():
    """Our packs are validated without the untrusted-regex check at each start (their patterns
    are compiled by ``re``): every one of them passes it, and a pack from the workspace or the
    user is still checked (the trust is ours to give, never the document's)."""
    from importlib import resources

    from dsh_sidecar.suggester.packs import PackError, check_regex, compile_trusted, parse_pack

    root = resources.files("dsh_packs")
    names = sorted(e.name for e in root.iterdir() if e.name.endswith((".yml", ".yaml")))
    patterns = []
    for name in names:
        spared = parse_pack(root.joinpath(name).read_text("utf-8"), name, trusted=True)
        assert spared == parse_pack(root.joinpath(name).read_text("utf-8"), name)  # the same pack checked
        for row in spared.intents.values():
            patterns += [s.pattern for s in row.signals] + [c.contains for c in row.candidates if c.contains]
    assert len(names) >= 5 and len(patterns) > 100
    for pattern in patterns:
        check_regex(pattern)
        assert compile_trusted(pattern).compiled.flags & re.MULTILINE  # as a match compiles it: with re
    hostile = pack(signals="{pattern: '(a+)+$', weight: 3.0}")
    with pytest.raises(PackError, match="catastrophic backtracking"):
        parse_pack(hostile, "repo")
    with pytest.raises(PackError):  # a document cannot ask for trust
        parse_pack(hostile.replace("id: hostile", "id: hostile\ntrusted: true"), "repo")
