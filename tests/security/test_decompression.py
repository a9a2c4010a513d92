"""Class 4 (docs/SECURITY.md): decompression is bounded. Every provider body is inflated in bounded
steps with its *decoded* size counted against the cap; stacked or unasked-for codings are
refused; each case is that provider's failure, so the chain falls back. Real HTTP to loopback
mocks."""

from __future__ import annotations

import gzip
import resource
import zlib

import pytest
from dsh_sidecar.router import Router, parse_router_config
from dsh_sidecar.router.http import ACCEPT_ENCODING, MAX_BODY_BYTES, BoundedDecoder
from dsh_sidecar.router.providers.base import ProviderFailure
from support.mockprovider import MockProvider, Reply, case_reply
from support.routers import router_block

MIB = 1024 * 1024
SEARXNG_OK = b'{"query": "q", "results": [{"url": "https://ok.example/", "title": "fine", "content": "text"}]}'


def bomb(size: int, wbits: int = 31) -> bytes:
    """``size`` zero bytes compressed (gzip by default; 15 zlib, -15 raw deflate)."""
    c = zlib.compressobj(9, zlib.DEFLATED, wbits)
    chunk = b"\0" * MIB
    return b"".join(c.compress(chunk) for _ in range(size // MIB)) + c.flush()


@pytest.fixture(scope="module")
def bomb_64m() -> bytes:
    return bomb(64 * MIB)


@pytest.fixture
def chain():
    """A searxng mock (the hostile one, first) and a duckduckgo mock (healthy) behind one router."""
    hostile, healthy = MockProvider(), MockProvider()
    healthy.route("POST", "/html/", case_reply("duckduckgo", "ok", check=False)[0])
    cfg = parse_router_config(
        router_block({"searxng": hostile, "duckduckgo": healthy}, ["searxng", "duckduckgo"], cache=False)
    )
    router = Router.from_config(cfg, {})
    yield hostile, router
    hostile.close()
    healthy.close()


async def falls_back(hostile: MockProvider, router: Router, reply: Reply) -> str:
    hostile.route("GET", "/search", reply)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        res = await router.search("bomb", 5)
    finally:
        await router.aclose()
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 3 * MAX_BODY_BYTES // 1024, f"peak RSS grew {grown_kib} KiB"
    assert [a.provider for a in res.attempts] == ["searxng", "duckduckgo"]
    assert res.provider == "duckduckgo" and res.attempts[-1].outcome == "ok"
    return res.attempts[0].outcome


async def test_stacked_gzip_gzip_is_refused_and_the_chain_falls_back(chain, bomb_64m):
    hostile, router = chain
    body = gzip.compress(bomb_64m)  # a small body, two layers
    assert len(body) < 16 * 1024
    reply = Reply(200, {"content-type": "application/json", "content-encoding": "gzip, gzip"}, body)
    assert await falls_back(hostile, router, reply) == "stacked content encodings refused (2 layers)"


async def test_stacked_encodings_on_separate_header_lines_are_refused(chain, bomb_64m):
    hostile, router = chain
    # the mock sends one header line per key: two spellings, two Content-Encoding lines
    headers = {"content-type": "application/json", "Content-Encoding": "gzip", "content-encoding": "deflate"}
    reply = Reply(200, headers, zlib.compress(gzip.compress(bomb_64m)))
    assert await falls_back(hostile, router, reply) == "stacked content encodings refused (2 layers)"


@pytest.mark.parametrize(
    ("coding", "wbits"),
    [("gzip", 31), ("x-gzip", 31), ("deflate", 15), ("deflate", -15)],
    ids=["gzip", "x-gzip", "zlib", "raw"],
)
async def test_a_single_layer_bomb_stops_at_the_decoded_cap(chain, coding, wbits):
    hostile, router = chain
    body = bomb(32 * MIB, wbits)
    assert len(body) < MAX_BODY_BYTES // 100
    reply = Reply(200, {"content-type": "application/json", "content-encoding": coding}, body)
    assert await falls_back(hostile, router, reply) == "response body larger than 8 MiB"


@pytest.mark.parametrize("coding", ["br", "zstd", "compress", "gzip;q=1", "x-evil\u00e9"])
async def test_codings_we_did_not_ask_for_are_refused(chain, coding):
    hostile, router = chain
    reply = Reply(
        200,
        {"content-type": "application/json", "content-encoding": coding.encode("utf-8").decode("latin-1")},
        b"\x1f\x8b junk",
    )
    outcome = await falls_back(hostile, router, reply)
    assert outcome.startswith("unsupported content encoding ")
    assert "\u00e9" not in outcome and ";" not in outcome


async def test_corrupt_gzip_is_the_providers_failure(chain):
    hostile, router = chain
    body = gzip.compress(SEARXNG_OK)[:-12] + b"garbage-tail"
    reply = Reply(200, {"content-type": "application/json", "content-encoding": "gzip"}, body)
    assert await falls_back(hostile, router, reply) in (
        "corrupt gzip response body",
        "unparseable JSON response (content-type application/json)",
    )


async def test_a_legitimate_compressed_answer_is_read(chain):
    hostile, router = chain
    for coding, body in (
        ("gzip", gzip.compress(SEARXNG_OK)),
        ("deflate", zlib.compress(SEARXNG_OK)),
        ("identity, gzip", gzip.compress(SEARXNG_OK)),
    ):
        hostile.route(
            "GET", "/search", Reply(200, {"content-type": "application/json", "content-encoding": coding}, body)
        )
        res = await router.search(f"legit {coding}", 5)
        assert res.provider == "searxng" and [s.url for s in res.sources] == ["https://ok.example/"]
    assert all(r.headers.get("accept-encoding") == ACCEPT_ENCODING for r in hostile.requests)
    await router.aclose()


def test_bounded_decoder_never_inflates_past_the_cap(bomb_64m):
    """Fed the whole bomb in one chunk, the decoder still produces at most cap + 1 bytes."""
    decoder = BoundedDecoder("gzip", limit=MIB)
    with pytest.raises(ProviderFailure) as info:
        decoder.feed(bomb_64m)
    assert info.value.failure_class == "bad_response"
    assert decoder.size <= MIB + 1


def test_concatenated_gzip_members_count_together():
    member = gzip.compress(b"\0" * (MIB // 2 + 1024))  # each member alone is under the cap, together over it
    decoder = BoundedDecoder("gzip", limit=MIB)
    with pytest.raises(ProviderFailure):
        decoder.feed(member + member + member)
    small = BoundedDecoder("gzip", limit=MIB)
    small.feed(gzip.compress(b"ab") + gzip.compress(b"cd"))
    assert small.finish() == b"abcd"


def test_decoding_in_small_chunks_gives_the_same_bytes():
    data = bytes(range(256)) * 4000
    raw = zlib.compressobj(6, zlib.DEFLATED, -15)
    for coding, body in (
        ("gzip", gzip.compress(data)),
        ("deflate", zlib.compress(data)),
        ("deflate", raw.compress(data) + raw.flush()),
    ):
        decoder = BoundedDecoder(coding)
        for i in range(0, len(body), 7):
            decoder.feed(body[i : i + 7])
        assert decoder.finish() == data
