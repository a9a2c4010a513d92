"""Class 5 (docs/SECURITY.md): redaction comes first and covers every form. A key a provider plants in
any field, in raw, URL-encoded, base64 or JSON-escaped form, never leaves the sidecar: not in
a reply (any string field), an error reason, a log record at any level, a decision-log line
or a frame on stdout; and it is redacted before any cut, so no cut leaves part of it."""

from __future__ import annotations

import base64
import io
import json
import logging
import os
from urllib.parse import quote, quote_plus

import pytest
from dsh_sidecar.bandit.decisions import DecisionLog
from dsh_sidecar.lsp.transport import FdWriter, redact_frame
from dsh_sidecar.redact import MARKER, RedactingFilter, Redactor, secret_forms
from dsh_sidecar.router import AllProvidersFailed, Router, parse_router_config
from support.mockprovider import Reply
from support.providerbodies import answer
from support.routers import ROUTES, base_url_key

KEY = "sk-Live_9f8e7d6c5b4a3/21+0zz"  # a key with the characters encoders change (/ + _)
JSON = {"content-type": "application/json"}


def leaks(text: str, key: str = KEY) -> list[str]:
    """Every piece of ``key`` of 8+ characters (raw or in a known form) found in ``text``."""
    found = [f for f in secret_forms(key) if f in text]
    found += [key[i : i + 8] for i in range(len(key) - 7) if key[i : i + 8] in text]
    return found


def every_form(key: str = KEY) -> dict[str, str]:
    b64 = base64.b64encode(f"Authorization: Bearer {key}".encode()).decode()
    return {
        "raw": key,
        "quote": quote(key, safe=""),
        "quote-lower-hex": quote(key, safe="").lower().replace("sk-live_", "sk-Live_"),
        "quote_plus": quote_plus(key),
        "base64": base64.b64encode(key.encode()).decode(),
        "base64-embedded": b64,
        "base64-urlsafe": base64.urlsafe_b64encode(b"x" + key.encode()).decode(),
        "json-escaped": json.dumps(key)[1:-1].replace("/", "\\/"),
    }


@pytest.mark.parametrize("form", list(every_form()))
def test_every_form_is_redacted(form):
    text = f"before {every_form()[form]} after"
    out = Redactor([KEY])(text)
    assert leaks(out) == [] and MARKER in out and out.startswith("before ") and out.endswith(" after")


def test_every_form_is_redacted_in_bytes_too():
    red = Redactor([KEY])
    for value in every_form().values():
        assert MARKER.encode() in red.redact_bytes(f"<{value}>".encode())


def test_short_secrets_and_plain_text_are_left_alone():
    red = Redactor(["abc", "", "   "])
    assert red("abc and more") == "abc and more" and not red.active


def test_deep_redacts_every_string_keys_included():
    red = Redactor([KEY])
    out = red.deep({KEY: [KEY, {"n": 1, "s": f"x{quote(KEY, safe='')}"}], "ok": None})
    assert json.dumps(out).count(MARKER) == 3 and leaks(json.dumps(out)) == []


# ---------------------------------------------------------------- the router, over real HTTP


def router(provider: str, url: str) -> Router:
    key = base_url_key(provider)
    cfg = {"provider": provider, "cache": False, "providers": {provider: {key: url}}}
    if provider in ("exa", "tavily", "brave", "perplexity", "deepseek"):
        cfg["providers"][provider]["apiKey"] = KEY
    else:
        cfg["providers"][provider][key] = url.replace("http://", f"http://user:{quote(KEY, safe='')}@")
    return Router.from_config(parse_router_config(cfg), {})


PROVIDERS = ("exa", "tavily", "brave", "perplexity", "deepseek", "searxng", "duckduckgo")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("form", ["raw", "quote", "base64-embedded", "json-escaped"])
async def test_a_key_planted_in_every_field_of_every_provider_is_redacted(provider, form, mock_provider):
    planted = every_form()[form]
    item = {
        "url": f"https://evil.example/?k={planted}",
        "title": f"title {planted}",
        # at the snippet cap (400): a cut before redaction would leave the key's first characters
        "snippet": "s" * 395 + planted,
        "date": "2024-03-01",
    }
    mock_provider.route(*ROUTES[provider], answer(provider, [item]))
    r = router(provider, mock_provider.url)
    try:
        res = await r.search("q", 5)
    finally:
        await r.aclose()
    dump = json.dumps([s.wire() for s in res.sources]) + (res.content or "")
    assert leaks(dump) == [], (provider, form, dump)
    assert MARKER in res.sources[0].title and res.sources[0].snippet.endswith("…")


SHORT_KEY = "pk_9f8e7d6c5b4a"  # short enough to fit a date string (40 characters at most)


@pytest.mark.parametrize("provider", ["exa", "tavily", "brave", "perplexity", "deepseek", "searxng"])
async def test_a_key_inside_a_date_that_parses_is_redacted_in_published_at(provider, mock_provider):
    """RFC 2822 dates accept a trailing zone token, so ``20 Nov 1995 19:12:08 <key>`` is a date."""
    item = {"url": "https://e.example/", "title": "t", "snippet": "s", "date": f"20 Nov 1995 19:12:08 {SHORT_KEY}"}
    mock_provider.route(*ROUTES[provider], answer(provider, [item]))
    key = base_url_key(provider)
    cfg = {"provider": provider, "cache": False, "providers": {provider: {key: mock_provider.url}}}
    if provider != "searxng":
        cfg["providers"][provider]["apiKey"] = SHORT_KEY
    else:
        cfg["providers"][provider][key] = mock_provider.url.replace("http://", f"http://u:{SHORT_KEY}@")
    r = Router.from_config(parse_router_config(cfg), {})
    try:
        res = await r.search("q", 5)
    finally:
        await r.aclose()
    assert res.sources[0].published_at == f"20 Nov 1995 19:12:08 {MARKER}"


@pytest.mark.parametrize(
    ("provider", "status", "body"),
    [
        ("exa", 401, {"requestId": "r", "error": "x" * 150 + f"bad key {KEY}", "tag": "INVALID_API_KEY"}),
        ("tavily", 401, {"detail": {"error": "y" * 155 + KEY}}),
        (
            "brave",
            422,
            {"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "z" * 152 + KEY}},
        ),
        ("perplexity", 400, {"error": {"message": "\\u".join("") + "w" * 158 + KEY}}),
    ],
)
async def test_error_details_are_redacted_before_the_cut(provider, status, body, mock_provider):
    mock_provider.route(*ROUTES[provider], Reply(status, dict(JSON), json.dumps(body).encode()))
    r = router(provider, mock_provider.url)
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await r.search("q", 5)
    finally:
        await r.aclose()
    text = info.value.message + json.dumps([a.wire() for a in info.value.attempts]) + json.dumps(r.health_status())
    assert leaks(text) == [], text


async def test_a_key_escaped_char_by_char_in_json_is_redacted(mock_provider):
    """``\\uXXXX`` for every character: no text form of the body holds the key, the parsed one does."""
    escaped = "".join(f"\\u{ord(c):04x}" for c in KEY)
    body = '{"results": [{"url": "https://e.example/", "title": "%s", "text": "%s"}]}' % (escaped, "t" * 398 + escaped)
    mock_provider.route(*ROUTES["exa"], Reply(200, dict(JSON), body.encode()))
    r = router("exa", mock_provider.url)
    try:
        res = await r.search("q", 5)
    finally:
        await r.aclose()
    assert res.sources[0].title == MARKER and leaks(json.dumps(res.sources[0].wire())) == []


async def test_searxng_engine_reasons_and_deepseek_codes_are_redacted_before_cut_or_sanitising(mock_provider):
    body = {"results": [], "unresponsive_engines": [["google", "r" * 75 + KEY], [KEY + "engine", "timeout"]]}
    mock_provider.route(*ROUTES["searxng"], Reply(200, dict(JSON), json.dumps(body).encode()))
    r = router("searxng", mock_provider.url)
    with pytest.raises(AllProvidersFailed) as info:
        await r.search("q", 5)
    await r.aclose()
    assert leaks(info.value.message) == [] and "unresponsive engines" in info.value.message
    block = {"type": "web_search_tool_result", "content": {"type": "web_search_tool_result_error", "error_code": KEY}}
    mock_provider.route(*ROUTES["deepseek"], Reply(200, dict(JSON), json.dumps({"content": [block]}).encode()))
    r = router("deepseek", mock_provider.url)
    with pytest.raises(AllProvidersFailed) as info:
        await r.search("q", 5)
    await r.aclose()
    # the sanitiser keeps [A-Za-z0-9_-.]: run before redaction it would have let "sk-Live_9f8e7d6c5b4a3" out
    assert leaks(info.value.message) == [] and "web_search error redacted" in info.value.message


# ---------------------------------------------------------------- logs, decision log, frames


@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR])
def test_log_records_are_redacted_at_every_level(level):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(Redactor([KEY])))
    logger = logging.Logger(f"t{level}", logging.DEBUG)
    logger.addHandler(handler)
    logger.log(level, "raw %s quoted %s", KEY, quote(KEY, safe=""))
    logger.log(level, "json %r", {"k": KEY})
    try:
        raise ValueError(f"boom {KEY}")
    except ValueError:
        logger.log(level, "with traceback", exc_info=True)
    logger.log(level, "stack", stack_info=True, extra={})
    logger.log(level, "unformattable %d", KEY)  # bad args: still redacted, never crashes
    out = stream.getvalue()
    assert leaks(out) == [] and out.count(MARKER) >= 5


def test_decision_log_lines_are_redacted(tmp_path):
    log = DecisionLog(tmp_path, redact=Redactor([KEY]))
    log.append({"event": "decision", "note": f"q={quote(KEY, safe='')}", "k": KEY})
    log.close()
    text = (tmp_path / "bandit" / "decisions.jsonl").read_text()
    assert leaks(text) == [] and text.count(MARKER) == 2 and json.loads(text)["event"] == "decision"


def test_every_frame_written_is_redacted_with_its_length_recomputed():
    red = Redactor([KEY])
    bodies = [
        json.dumps({"jsonrpc": "2.0", "id": i, "result": {"t": f"{KEY} {every_form()['base64-embedded']}"}})
        for i in range(2)
    ]
    frames = b"".join(b"Content-Length: %d\r\nContent-Type: x\r\n\r\n%s" % (len(b), b.encode()) for b in bodies)
    out = redact_frame(frames, red.redact_bytes)
    assert leaks(out.decode()) == []
    rest, seen = out, []
    while rest:
        head, _, rest = rest.partition(b"\r\n\r\n")
        length = int(head.split(b"\r\n")[0].split(b":")[1])
        seen.append(json.loads(rest[:length]))
        rest = rest[length:]
    assert [m["id"] for m in seen] == [0, 1]
    raw, encoded = seen[0]["result"]["t"].split(" ")
    assert raw == MARKER and MARKER in encoded  # the base64 core replaced inside the longer string
    r, w = os.pipe()
    writer = FdWriter(w, redact=red.redact_bytes)
    writer.write(frames)
    writer.close()
    assert leaks(os.read(r, 1 << 20).decode()) == []
    os.close(r)


# ---------------------------------------------------------------- end to end over stdio


def test_no_form_of_the_key_reaches_stdout_or_stderr(dsh_home, mock_provider):
    """The spawned sidecar: a provider planting every form of the key in its answer and in its
    error body; neither the replies (every frame on stdout), nor stderr (DEBUG logging) holds
    the key in any form."""
    from support.rawrpc import RawServer

    forms = list(every_form().values())
    items = [
        {"url": f"https://e.example/{i}?k={quote(f, safe='')}", "title": f, "snippet": f} for i, f in enumerate(forms)
    ]
    mock_provider.route(*ROUTES["exa"], answer("exa", items))
    srv = RawServer(dsh_home, env={"EXA_API_KEY": KEY}, forked=True)
    try:
        srv.initialize({"router": {"provider": "exa", "providers": {"exa": {"baseURL": mock_provider.url}}}})
        ok = srv.request("dsh/search", {"query": f"find {KEY}", "strategy": "quick"})
        assert ok["result"]["sources"], ok
        status = srv.request("dsh/status", {})
        assert "result" in status
        error_body = {"requestId": "r", "error": f"bad key {KEY} / {quote(KEY, safe='')}", "tag": "INVALID_API_KEY"}
        mock_provider.route(*ROUTES["exa"], Reply(401, dict(JSON), json.dumps(error_body).encode()))
        failed = srv.request("dsh/search", {"query": "another", "strategy": "quick"})
        assert failed["error"]["code"] == -32001
        assert srv.shutdown() == 0
    finally:
        srv.close()
    assert leaks(srv.stdout_bytes.decode("utf-8", "replace")) == []
    assert leaks(srv.stderr_bytes.decode("utf-8", "replace")) == []
