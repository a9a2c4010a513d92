"""The offline docs index (``router/providers/local.py`` + ``router/localdocs``): a provider of
the registry's shape, answered from SQLite FTS5 in a thread; the last resort of
``dsh-search query`` (opt-out), never in a served zero-config chain (the search-router seed's
chain and all-failed error stay byte-exact), bounded, resumable, and a rebuildable cache."""

from __future__ import annotations

import json
import socket
import sqlite3
import sys
import threading
import time
from pathlib import Path

import pytest
from dsh_sidecar.router import AllProvidersFailed, Router, localdocs, parse_router_config
from dsh_sidecar.router.config import CANONICAL_ORDER, resolve_chain
from dsh_sidecar.router.localdocs import LocalDocs
from dsh_sidecar.router.localdocs.sources import Doc, Source, environment_source_name, project_source, roff_to_text
from dsh_sidecar.router.providers import KNOWN, PROVIDERS, local
from dsh_sidecar.router.providers.base import HttpRequest, HttpResponse, ProviderFailure, ProviderSpec
from support.cli import env_for, run
from support.mockprovider import Reply

SEED_ORDER = ("exa", "tavily", "brave", "perplexity", "deepseek", "searxng", "duckduckgo")


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "docs" / "guide").mkdir(parents=True)
    (root / "README.md").write_text("# Widget\n\nWidgets frobnicate the gizmo. Configure the flux capacitor.\n")
    (root / "docs" / "guide" / "tuning.md").write_text("Tuning\n======\n\nSet frobnication depth with --depth.\n")
    (root / "docs" / "notes.bin").write_bytes(b"\0binary frobnicate")  # not a doc extension
    return root


@pytest.fixture
def only_project(monkeypatch):
    """The index's sources reduced to the project's (the machine's packages and man pages are
    not what these tests are about, and cost seconds of CPU)."""
    monkeypatch.setattr(localdocs, "sources", lambda project: [project_source(project)] if project else [])


def request(query: str, limit: int = 5) -> HttpRequest:
    return local.build_request(ProviderSpec("local", local.INDEX_URL), query, limit)


# ------------------------------------------------------------------ the provider module


def test_local_is_known_but_never_auto_detected():
    assert (*SEED_ORDER, "local") == KNOWN and CANONICAL_ORDER == SEED_ORDER
    assert PROVIDERS["local"] is local
    chain, _ = resolve_chain(parse_router_config(None), {})
    assert [s.id for s in chain] == ["duckduckgo"]  # the seed's zero-config chain, unchanged
    chain, _ = resolve_chain(parse_router_config({"localFallback": True}), {})
    assert [s.id for s in chain] == ["duckduckgo", "local"]
    chain, _ = resolve_chain(parse_router_config({"order": ["local", "duckduckgo"], "localFallback": True}), {})
    assert [s.id for s in chain] == ["local", "duckduckgo"]  # named: where it is named, once


@pytest.mark.parametrize(
    ("query", "expression"),
    [
        ("how to fix a leaky faucet", '"fix" OR "leaky" OR "faucet"'),
        ('NEAR(a b) * "quoted" col:x', '"near" OR "quoted" OR "col"'),  # FTS5 syntax is text
        ("the a of", ""),
        ("Vec<T> in rust", '"vec" OR "rust"'),
        ("ünïcödé wörds", '"ünïcödé" OR "wörds"'),
    ],
)
def test_match_expression(query, expression):
    assert local.match_expression(query) == expression


def test_match_expression_keeps_the_longest_words():
    words = [f"w{'x' * i}" for i in range(1, 20)]
    assert local.match_expression(" ".join(words)).count(" OR ") == local.MAX_TERMS - 1
    assert '"wx"' not in local.match_expression(" ".join(words))


def test_parse_response():
    body = {"results": [{"url": "file:///a.md", "title": "A", "snippet": "s"}], "docs": 3, "building": False}
    answer = local.parse_response(HttpResponse(200, {}, json.dumps(body).encode()), 5)
    assert [(i.url, i.title, i.snippet) for i in answer.items] == [("file:///a.md", "A", "s")]
    building = {"results": [], "docs": 0, "building": True}
    with pytest.raises(ProviderFailure, match="still being built"):
        local.parse_response(HttpResponse(200, {}, json.dumps(building).encode()), 5)
    assert local.parse_response(HttpResponse(200, {}, b'{"results": [], "docs": 9}'), 5).items == []


def test_roff_to_text():
    summary, text = roff_to_text(
        ".TH LS 1\n.SH NAME\nls \\- list directory contents\n.SH SYNOPSIS\n.B ls\n[\\fIOPTION\\fR]...\n"
    )
    assert summary == "ls - list directory contents"
    assert "SYNOPSIS" in text and "[OPTION]..." in text and "\\f" not in text and ".TH" not in text


# ------------------------------------------------------------------ the index


def test_project_docs_are_indexed_and_found(tmp_path: Path, project: Path, only_project):
    docs = LocalDocs(tmp_path / "cache" / "docs", project)
    assert docs.build_now() == {"project": 2}
    reply = json.loads(docs.answer(request("frobnicate depth"), deadline=time.monotonic() + 60).body)
    assert [r["url"] for r in reply["results"]] == [
        (project / "docs" / "guide" / "tuning.md").as_uri(),
        (project / "README.md").as_uri(),
    ]
    assert reply["results"][0]["title"] == "Tuning (docs/guide/tuning.md)"
    assert reply["results"][1]["title"] == "Widget (README.md)"
    assert (tmp_path / "cache" / "docs" / "docs.sqlite").stat().st_mode & 0o777 == 0o600


def test_another_workspaces_docs_are_never_answered(tmp_path: Path, project: Path, only_project):
    """One cache folder holds every workspace's docs: a search from one workspace (or from
    none) answers from its own project's documents only."""
    other = tmp_path / "other"
    other.mkdir()
    (other / "README.md").write_text("# Secret plans\n\nThe frobnicate rollout of the other team.\n")
    LocalDocs(tmp_path / "cache" / "docs", other).build_now()
    docs = LocalDocs(tmp_path / "cache" / "docs", project)
    assert docs.build_now() == {"project": 2}
    reply = json.loads(docs.answer(request("frobnicate"), deadline=time.monotonic() + 60).body)
    assert sorted(r["url"] for r in reply["results"]) == [
        (project / "README.md").as_uri(),
        (project / "docs" / "guide" / "tuning.md").as_uri(),
    ]
    outside = LocalDocs(tmp_path / "cache" / "docs", None)
    assert json.loads(outside.answer(request("frobnicate"), deadline=time.monotonic() + 60).body)["results"] == []


def test_another_environments_packages_are_never_answered(tmp_path: Path, monkeypatch):
    """One cache folder serves every virtual environment of the user: a search answers from the
    distributions installed where it runs, never another environment's (nor an older index's
    unscoped rows)."""

    def packages(*names: str) -> list[Source]:
        def read(name: str) -> Doc:
            return Doc(f"https://pypi.org/project/{name}/", f"{name} 1.0", f"{name}: frobnicate the widgets")

        return [Source(environment_source_name("packages"), lambda: ",".join(names), lambda: names, read)]

    folder = tmp_path / "cache" / "docs"
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "other-venv"))
    monkeypatch.setattr(localdocs, "sources", lambda project: packages("otherpkg"))
    assert LocalDocs(folder).build_now() == {"packages": 1}
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "this-venv"))
    monkeypatch.setattr(localdocs, "sources", lambda project: packages("thispkg"))
    docs = LocalDocs(folder)
    assert docs.build_now() == {"packages": 1}
    reply = json.loads(docs.answer(request("frobnicate"), deadline=time.monotonic() + 60).body)
    assert [r["url"] for r in reply["results"]] == ["https://pypi.org/project/thispkg/"]
    con = sqlite3.connect(docs.path)
    with con:  # an older index's rows, named without their environment
        con.execute(
            "INSERT INTO docs(title, body, url, source, at) VALUES ('old', 'frobnicate', 'https://old/', 'packages', 0)"
        )
    con.close()
    reply = json.loads(docs.answer(request("frobnicate"), deadline=time.monotonic() + 60).body)
    assert [r["url"] for r in reply["results"]] == ["https://pypi.org/project/thispkg/"]


def test_every_source_is_shared_or_scoped_to_the_asking_process(tmp_path: Path):
    docs = LocalDocs(tmp_path / "docs", tmp_path)
    names = {source.name for source in localdocs.sources(tmp_path)}
    assert names <= set(localdocs.SHARED_SOURCES) | set(docs.scoped)
    assert {name.split(":")[0] for name in docs.scoped} == {"project", "packages", "modules"}


def test_the_project_is_read_through_the_workspace_guard(tmp_path: Path, project: Path, only_project):
    """A doc that is a symlink out of the project, or a FIFO, is never read."""
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret frobnicate token\n")
    (project / "docs" / "leak.md").symlink_to(secret)
    import os

    os.mkfifo(project / "docs" / "pipe.md")
    docs = LocalDocs(tmp_path / "cache" / "docs", project)
    assert docs.build_now() == {"project": 2}
    reply = json.loads(docs.answer(request("secret token"), deadline=time.monotonic() + 60).body)
    assert reply["results"] == []


def test_remembered_web_results_answer_offline_and_stay_bounded(tmp_path: Path, monkeypatch, only_project):
    from dsh_protocol import Source as Found

    monkeypatch.setattr(localdocs, "MAX_FETCHED", 3)
    docs = LocalDocs(tmp_path / "docs", None)
    for i in range(5):
        docs.remember(f"bike chain {i}", [Found(url=f"https://ex.example/{i}", title=f"Chain {i}", snippet="oil it")])
    docs.remember("ignored", [Found(url="file:///etc/passwd", title="x")])  # only web results are kept
    docs.close()
    con = sqlite3.connect(docs.path)
    rows = con.execute("SELECT url FROM docs WHERE source='fetched' ORDER BY url").fetchall()
    assert [r[0] for r in rows] == ["https://ex.example/2", "https://ex.example/3", "https://ex.example/4"]
    reply = json.loads(docs.answer(request("bike chain"), deadline=time.monotonic() + 60).body)
    assert {r["url"] for r in reply["results"]} == {
        "https://ex.example/2",
        "https://ex.example/3",
        "https://ex.example/4",
    }


def test_a_build_cut_short_resumes_where_it_stopped(tmp_path: Path, monkeypatch):
    """Chunks of CHUNK documents, one transaction each: a build stopped after the first chunk
    keeps it and records ``partial:<stamp>``; the next reads only the rest."""
    read: list[int] = []
    stop_after = {"n": 5}

    def read_one(i: int) -> Doc | None:
        read.append(i)
        if len(read) == stop_after["n"]:
            docs._stop.set()
        return Doc(f"man:page{i}(1)", f"page{i}(1)", f"page number {i} about widgets")

    monkeypatch.setattr(localdocs, "CHUNK", 2)
    monkeypatch.setattr(
        localdocs, "sources", lambda project: [Source("man", lambda: "s1", lambda: list(range(9)), read_one)]
    )
    docs = LocalDocs(tmp_path / "docs", None)
    docs._build()
    con = sqlite3.connect(docs.path)
    assert con.execute("SELECT stamp, done FROM sources").fetchall() == [("partial:s1", 5)]
    assert con.execute("SELECT count(*) FROM docs").fetchone() == (5,)
    docs._stop.clear()
    stop_after["n"] = 10**6
    read.clear()
    docs._build()
    assert read == [5, 6, 7, 8]
    assert con.execute("SELECT stamp, done FROM sources").fetchall() == [("s1", 9)]
    assert con.execute("SELECT count(*) FROM docs").fetchone() == (9,)


def test_a_lookup_is_bounded_in_steps(tmp_path: Path, project: Path, only_project, monkeypatch):
    docs = LocalDocs(tmp_path / "docs", project)
    docs.build_now()
    monkeypatch.setattr(localdocs, "QUERY_STEPS", 1)
    assert json.loads(docs.answer(request("frobnicate"), deadline=time.monotonic() + 60).body)["results"] == []


def test_an_index_of_another_schema_is_rebuilt(tmp_path: Path, project: Path, only_project):
    docs = LocalDocs(tmp_path / "docs", project)
    docs.build_now()
    con = sqlite3.connect(docs.path)
    con.execute("UPDATE meta SET value='0' WHERE key='schema'")
    con.commit()
    con.close()
    fresh = LocalDocs(tmp_path / "docs", project)
    assert fresh.build_now() == {"project": 2}


async def test_the_event_loop_never_runs_the_index(tmp_path: Path, project: Path, only_project, monkeypatch):
    """The lookup and the build run on other threads than the event loop's."""
    seen: list[int] = []
    real = LocalDocs._lookup

    def spy(self, con, match, limit):
        seen.append(threading.get_ident())
        return real(self, con, match, limit)

    monkeypatch.setattr(LocalDocs, "_lookup", spy)
    docs = LocalDocs(tmp_path / "docs", project)
    response = await docs.exchange(request("frobnicate"), 10_000)
    assert json.loads(response.body)["results"]
    assert seen and threading.get_ident() not in seen
    docs.close()


# ------------------------------------------------------------------ in the chain


async def test_the_chain_falls_back_to_local_and_learns_from_web_answers_only(
    tmp_path: Path, project: Path, only_project, monkeypatch, mock_provider
):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    mock_provider.route("GET", "/search", Reply(500, {}, b"down"))
    cfg = parse_router_config(
        {"order": ["searxng"], "providers": {"searxng": {"baseUrl": mock_provider.url}}, "localFallback": True}
    )
    router = Router.from_config(cfg, {"XDG_CACHE_HOME": str(tmp_path / "cache")}, docs_root=project)
    try:
        res = await router.search("frobnicate gizmo", 5)
    finally:
        await router.aclose()
    assert [(a.provider, a.outcome) for a in res.attempts] == [("searxng", "HTTP 500"), ("local", "ok")]
    assert res.provider == "local" and res.sources[0].url == (project / "README.md").as_uri()


async def test_a_served_chain_without_local_keeps_the_seed_error_byte_exact(mock_provider):
    mock_provider.route("GET", "/search", Reply(503, {}, b"down"))
    cfg = parse_router_config({"order": ["searxng"], "providers": {"searxng": {"baseUrl": mock_provider.url}}})
    router = Router.from_config(cfg, {})
    try:
        with pytest.raises(AllProvidersFailed) as failed:
            await router.search("q", 5)
    finally:
        await router.aclose()
    assert router.docs is None
    assert failed.value.message == "search-router: all configured search providers failed:\n- searxng: HTTP 503"


@pytest.mark.slow
def test_the_cli_answers_offline_from_local_docs_and_no_local_opts_out(tmp_path: Path, project: Path):
    """``dsh-search query`` with every web provider unreachable (DuckDuckGo pointed at a dead
    port): the project's docs answer, marked offline, exit 0; the bandit learns nothing from
    it; ``--no-local`` gives the router's all-failed error and exit 1."""
    cfg = tmp_path / "offline.yml"
    cfg.write_text(f"router:\n  providers:\n    duckduckgo: {{baseURL: 'http://127.0.0.1:{_dead_port()}'}}\n")
    env = env_for(tmp_path / "home", {"DSH_SEARCH_CONFIG": str(cfg)})
    rc, out, err = run(["query", "frobnicate the gizmo", "-s", "quick", "-v"], env, project)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("quick · ") and lines[0].endswith(" ms · offline: local docs (no web provider answered)")
    assert " 1. Widget (README.md)" in lines and f"    {(project / 'README.md').as_uri()}" in lines
    assert (
        lines[-1].startswith("attempts: duckduckgo=network error: connection failed (") and ", local=ok (" in lines[-1]
    )
    assert "reward=none" in err and "learned=false" in err
    assert not (tmp_path / "home" / "bandit" / "posteriors.json").exists()
    rc, out, err = run(["query", "frobnicate", "-s", "quick", "--no-local"], env, project)
    assert (rc, out) == (1, "")
    assert (
        err
        == "search-router: all configured search providers failed:\n- duckduckgo: network error: connection failed\n"
    )
    # the index lives in the cache directory; `cache clean` removes it
    assert (Path(env["XDG_CACHE_HOME"]) / "dsh-search" / "docs" / "docs.sqlite").exists()
    rc, out, err = run(["cache", "clean"], env, project)
    assert rc == 0 and not (Path(env["XDG_CACHE_HOME"]) / "dsh-search" / "docs").exists()
