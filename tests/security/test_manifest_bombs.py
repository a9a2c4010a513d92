"""Class 15: manifests are read, never run, and a hostile one costs a bounded read
(workspace/manifests/, workspace/fts.py): entity bombs and external entities refused, a huge
manifest cut at the read bound (and past 2 MiB not read at all), deep documents, alias bombs
and unbalanced build scripts stopped by the depth and node bounds, declared paths kept inside
the workspace."""

from __future__ import annotations

import time

import pytest
from dsh_sidecar.workspace import manifests
from dsh_sidecar.workspace.content import ContentIndexer
from dsh_sidecar.workspace.facts import describe
from dsh_sidecar.workspace.fts import fts5_available
from dsh_sidecar.workspace.manifests import MAX_KEYS, read

BOMB = (
    '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
    + "".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10 if i else "&lol;" * 10}">' for i in range(10))
    + "]><project><version>&lol9;</version></project>"
)


def test_declared_paths_never_leave_the_workspace():
    m = read(
        "pyproject.toml",
        '[tool.setuptools.dynamic]\nversion = {file = ["../../etc/passwd", "/etc/shadow", "C:/x", "a,b", "VERSION"]}\n',
    )
    assert m is not None and m.points == (("version-declared", "VERSION"),)


def test_billion_laughs_and_external_entities_are_refused():
    t0 = time.perf_counter()
    m = read("pom.xml", BOMB)
    assert m is not None and m.keys == {} and m.facts == frozenset()
    xxe = (
        '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY x SYSTEM "file:///etc/passwd">]><project><name>&x;</name></project>'
    )
    m = read("pom.xml", xxe)
    assert m is not None and m.keys == {}
    dtd = '<?xml version="1.0"?><!DOCTYPE p SYSTEM "http://127.0.0.1:9/x.dtd"><project><version>1</version></project>'
    m = read("pom.xml", dtd)
    assert m is not None and "root" not in m.keys and "passwd" not in m.keys
    assert time.perf_counter() - t0 < 5  # refused at once, never expanded


def test_huge_deep_and_broken_manifests_cost_a_bounded_read():
    huge = '{"dependencies": {' + '"pkg": "1.0.0",' * 3_500_000 + '"last": "1"}}'
    assert len(huge) > 50 * 1024 * 1024
    t0 = time.perf_counter()
    facts, m = describe("package.json", "manifest", huge)
    assert m is not None and m.keys == {} and facts == set()  # past the bound: cut, unparsable, nothing
    wide = "[dependencies]\n" + "".join(f'crate{i} = "1"\n' for i in range(12_000))
    m = read("Cargo.toml", wide)
    assert m is not None and len(m.keys) == MAX_KEYS
    deep_toml = "a = " + "[" * 50_000 + "]" * 50_000 + "\n"
    assert read("pyproject.toml", deep_toml) == manifests.Manifest()
    deep_json = "[" * 100_000 + "]" * 100_000
    assert read("package.json", deep_json) == manifests.Manifest()
    deep_xml = "<project>" + "<a>" * 10_000 + "</a>" * 10_000 + "</project>"
    m = read("pom.xml", deep_xml)
    assert m is not None and m.keys == {}
    aliases = "packages:\n- &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"- &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20)
    )
    m = read("pnpm-workspace.yaml", aliases)
    assert m is not None and m.facts == {"layout-manifest"}
    for name, text in (
        ("build.gradle", "dependencies {" * 50_000),
        ("CMakeLists.txt", "add_test(" * 50_000),
        ("test/CMakeLists.txt", "add_test(\n" * 50_000),
        ("setup.cfg", "[metadata\nversion = 1"),
        ("go.mod", "require (\n" * 30_000),
        ("x.gemspec", "s.version = " * 30_000),
    ):
        read(name, text)  # never raises, bounded
    assert time.perf_counter() - t0 < 30


@pytest.mark.skipif(not fts5_available(), reason="this Python's SQLite has no FTS5")
def test_the_content_index_survives_hostile_manifests(tmp_path):
    root = tmp_path / "ws"
    (root / "svc").mkdir(parents=True)
    (root / "pom.xml").write_text(BOMB)
    (root / "svc" / "Directory.Build.props").write_text(BOMB.replace("project>", "Project>"))
    with (root / "pyproject.toml").open("w") as fh:  # 50 MB: past the 2 MiB read bound
        line = '[tool.x%d]\nversion = "1"\n'
        for i in range(2_000_000):
            fh.write(line % i)
    assert (root / "pyproject.toml").stat().st_size > 50 * 1024 * 1024
    (root / "package.json").write_text("[" * 200_000 + "]" * 200_000)
    listing = ["package.json", "pom.xml", "pyproject.toml", "svc/Directory.Build.props"]
    ix = ContentIndexer(root, tmp_path / "home")
    t0 = time.perf_counter()
    ix.start(listing)
    assert ix.wait(60) and ix.ready and ix.stats["read"] == 4
    assert time.perf_counter() - t0 < 30
    assert all(ix.keys(p) is None for p in listing)  # nothing read from any of them
    assert ix.points == {}
    assert ix.fact_of.get("pyproject.toml") is None  # not read at all: no facts from its text
    ix.close()
