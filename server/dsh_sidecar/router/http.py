"""The chain's HTTP exchange: one request, one bounded response, or a :class:`ProviderFailure`.

Everything a provider module must not do itself lives here: the shared client, the
per-attempt timeout (headers *and* body), cancellation (leaving the ``async with`` closes the
connection), the cap on the body and its decoding.

Decompression is ours, not httpx's: httpx inflates each network chunk in one unbounded call,
so a 1.8 KB ``Content-Encoding: gzip, gzip`` body becomes a GiB before any size check can
run. Here the raw stream is inflated with :meth:`zlib.Decompress.decompress`'s
``max_length``, counting *decoded* bytes against :data:`MAX_BODY_BYTES`; only the codings we
ask for (:data:`ACCEPT_ENCODING`, one layer: what providers really send) are accepted, and a
stacked or unknown coding is the provider's ``bad_response`` failure, so the chain falls back.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import zlib
from typing import Final

import httpx

from dsh_sidecar import PROJECT_URL, __version__
from dsh_sidecar.router.providers.base import (
    BAD_RESPONSE,
    CONFIG,
    NETWORK,
    TIMEOUT,
    HttpRequest,
    HttpResponse,
    ProviderFailure,
)

#: Largest response body accepted from a provider, bytes, counted after decoding (and before:
#: the encoded stream is held to the same cap).
MAX_BODY_BYTES: Final = 8 * 1024 * 1024
#: Content codings we ask for and accept (RFC 9110 §8.4.1): one layer of gzip or deflate.
#: Providers compress once; brotli/zstd are not asked for, so they never legitimately come.
ACCEPT_ENCODING: Final = "gzip, deflate"
#: Most non-identity content codings accepted on one body (a stack is a bomb, not a provider).
MAX_CODINGS: Final = 1
#: User-Agent sent to providers: the distribution, its version and its home page (RFC 9110
#: §10.1.5 product tokens, the ``+URL`` comment crawlers use).
USER_AGENT: Final = f"dsh-search-sidecar/{__version__} (+{PROJECT_URL})"

_GZIP_NAMES: Final = frozenset({"gzip", "x-gzip"})
_DEFLATE_NAMES: Final = frozenset({"deflate"})


@functools.lru_cache(maxsize=1)
def tls_context() -> ssl.SSLContext:
    """The TLS context every client of this process uses: httpx's default one
    (:func:`httpx.create_ssl_context`: certifi's CA bundle, certificate and host name
    verification), without the environment's ``SSL_CERT_FILE``/``SSL_CERT_DIR``, as the client
    is built without it. Made once: loading the CA bundle is ~17 ms of CPU per context (of
    ~21 ms per client, measured with httpx 0.29), paid by every router a reconfigure builds.
    An :class:`ssl.SSLContext` may be shared by clients and threads (httpx's SSL guide passes
    one to several clients); a change to it reaches every client. Our code changes nothing;
    httpcore sets the ALPN protocols on each TLS connect, the same ``http/1.1`` for every client
    made here (none asks for HTTP/2, which would make those writes differ)."""
    return httpx.create_ssl_context(trust_env=False)


class LoopTransport(httpx.AsyncHTTPTransport):
    """httpx's transport whose httpcore pool connects through :mod:`.loopnet` (asyncio's own
    transports instead of anyio's streams); everything else is httpx's: the request and
    response mapping, the exception mapping, the pool and its limits."""

    def __init__(self, ssl_context: ssl.SSLContext) -> None:
        super().__init__(verify=ssl_context, trust_env=False)
        import httpcore

        from dsh_sidecar.router.loopnet import LoopBackend

        limits = httpx.Limits()  # httpx's defaults, as the pool it replaces had
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=LoopBackend(),
        )


class ProviderClient(httpx.AsyncClient):
    """The shared client (:func:`make_client`); :func:`exchange` sends through its
    :attr:`transport` directly (no redirects, cookies, auth flow or event hooks to run: the
    client has none of them), which is a third of the CPU of a small exchange."""

    def __init__(self) -> None:
        self.transport = LoopTransport(tls_context())
        super().__init__(
            follow_redirects=False,
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
            timeout=None,
            trust_env=False,
            transport=self.transport,
        )


def make_client() -> ProviderClient:
    """The shared client: no redirects, no proxy/env config, no client timeout (the chain
    bounds every exchange itself), our User-Agent and Accept-Encoding, :func:`tls_context`,
    connections on the event loop's own transports (:class:`LoopTransport`)."""
    return ProviderClient()


def warm_async_backend() -> None:
    """Import what a first exchange imports on the event loop otherwise: httpcore's pool and
    sockets go through anyio, which loads its asyncio backend (and sniffio) on first use,
    ~50 ms here. Runs a throwaway event loop, so call it off the server's loop (a thread)."""
    import anyio

    async def touch() -> None:
        anyio.Event().set()
        await anyio.sleep(0)

    asyncio.run(touch())


def _too_big() -> ProviderFailure:
    return ProviderFailure(f"response body larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB", BAD_RESPONSE)


class BoundedDecoder:
    """Inflate one content coding incrementally, never producing more than ``limit`` bytes.

    ``coding`` is ``identity``, ``gzip``/``x-gzip`` (RFC 1952, concatenated members
    included) or ``deflate`` (RFC 1950 zlib, or the raw RFC 1951 stream some servers send).
    :meth:`feed` and :meth:`finish` raise :class:`ProviderFailure` (``bad_response``) when the
    decoded size passes ``limit`` or the data is corrupt.
    """

    def __init__(self, coding: str, limit: int = MAX_BODY_BYTES) -> None:
        self.coding = coding
        self.limit = limit
        self.size = 0
        self._chunks: list[bytes] = []
        self._first = True
        self._d: zlib._Decompress | None = None
        if coding in _GZIP_NAMES:
            self._d = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif coding in _DEFLATE_NAMES:
            self._d = zlib.decompressobj(zlib.MAX_WBITS)

    def _add(self, data: bytes) -> None:
        if data:
            self.size += len(data)
            if self.size > self.limit:
                raise _too_big()
            self._chunks.append(data)

    def _inflate(self, data: bytes) -> None:
        assert self._d is not None
        while data:
            # max_length bounds what one call may produce: the room left plus one byte, so
            # an overflow is seen without ever inflating more than the cap
            self._add(self._d.decompress(data, self.limit - self.size + 1))
            data = self._d.unconsumed_tail
            if self._d.eof and self._d.unused_data and self.coding in _GZIP_NAMES:
                data = self._d.unused_data  # the next gzip member
                self._d = zlib.decompressobj(zlib.MAX_WBITS | 16)

    def feed(self, data: bytes) -> None:
        """Decode one chunk of the encoded stream."""
        if self._d is None:
            self._add(data)
            return
        try:
            if self._first and self.coding in _DEFLATE_NAMES and data:
                self._first = False
                try:
                    self._inflate(data)
                    return
                except zlib.error:  # not zlib-wrapped: the raw deflate stream
                    self._d = zlib.decompressobj(-zlib.MAX_WBITS)
                    self.size, self._chunks = 0, []
            self._first = False
            self._inflate(data)
        except zlib.error:
            raise ProviderFailure(f"corrupt {self.coding} response body", BAD_RESPONSE) from None

    def finish(self) -> bytes:
        """The whole decoded body."""
        if self._d is not None:
            try:
                self._add(self._d.flush())
            except zlib.error:
                raise ProviderFailure(f"corrupt {self.coding} response body", BAD_RESPONSE) from None
        return b"".join(self._chunks)


def content_coding(headers: httpx.Headers) -> str:
    """The single content coding of a response (``identity`` when none), from every
    ``Content-Encoding`` header line. Raises :class:`ProviderFailure` (``bad_response``) for
    more than :data:`MAX_CODINGS` non-identity codings or one we did not ask for."""
    codings = [c.strip().lower() for line in headers.get_list("content-encoding") for c in line.split(",") if c.strip()]
    codings = [c for c in codings if c != "identity"]
    if len(codings) > MAX_CODINGS:
        raise ProviderFailure(f"stacked content encodings refused ({len(codings)} layers)", BAD_RESPONSE)
    if not codings:
        return "identity"
    coding = codings[0]
    if coding not in _GZIP_NAMES | _DEFLATE_NAMES:
        shown = "".join(ch for ch in coding if ch.isascii() and (ch.isalnum() or ch in "-_."))[:20] or "?"
        raise ProviderFailure(f"unsupported content encoding {shown}", BAD_RESPONSE)
    return coding


async def exchange(
    client: ProviderClient,
    request: HttpRequest,
    budget_ms: float,
    basic_auth: tuple[str, str] | None = None,
) -> HttpResponse:
    """Send ``request`` and read its whole body within ``budget_ms`` milliseconds.

    HTTP Basic auth is added when ``basic_auth`` is given. Raises :class:`ProviderFailure`:
    ``timeout`` (``timeout after <N>ms``), ``network`` (``network error: <kind>``, never a
    URL), ``config`` for a URL or header httpx cannot send (``invalid request URL``), and
    ``bad_response`` for a body over :data:`MAX_BODY_BYTES` (encoded or decoded) or a
    refused/corrupt content coding. Cancelling the caller closes the connection.
    """
    check_url(request.url)
    try:
        async with asyncio.timeout(budget_ms / 1000):
            return await _exchange(client, request, basic_auth)
    except TimeoutError:
        raise ProviderFailure(f"timeout after {int(budget_ms)}ms", TIMEOUT) from None
    except (httpx.InvalidURL, httpx.UnsupportedProtocol):
        raise ProviderFailure("invalid request URL", CONFIG) from None
    except httpx.HTTPError as exc:
        raise ProviderFailure(f"network error: {describe_http_error(exc)}", NETWORK) from None
    except (ValueError, UnicodeError):  # a host IDNA rejects, a header value h11 refuses
        raise ProviderFailure("invalid request URL or header", CONFIG) from None


def check_url(url: str) -> None:
    """Raise the ``config`` failure ``invalid request URL`` unless ``url`` is an absolute
    http(s) URL with a host and a port in 1–65535 (httpx leaves the port range to the socket,
    which fails later as a connection error). The verdict is remembered per URL (a provider's
    endpoint is the same on every search; httpx's URL parse costs tens of µs)."""
    if not _url_ok(url):
        raise ProviderFailure("invalid request URL", CONFIG)


@functools.lru_cache(maxsize=256)
def _url_ok(url: str) -> bool:
    try:
        parsed = httpx.URL(url)
        port = parsed.port
    except (httpx.InvalidURL, ValueError, UnicodeError):
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.host) and (port is None or 0 < port < 65536)


def with_query(url: str, params: dict[str, str] | None) -> tuple[str, dict[str, str] | None]:
    """``(url, params)`` with the params already in the URL when it has neither a query nor a
    fragment: ``url?<httpx.QueryParams(params)>`` is the URL httpx builds from ``params``, to the
    byte (the same encoder; tests/test_router_providers.py compares them), and httpx then parses
    it once instead of parsing, merging and re-parsing (~15 µs a request). Anything else comes
    back as it was, for httpx to merge."""
    if not params or "?" in url or "#" in url:
        return url, params
    return f"{url}?{httpx.QueryParams(params)}", None


async def _exchange(client: ProviderClient, request: HttpRequest, basic_auth: tuple[str, str] | None) -> HttpResponse:
    url, params = with_query(request.url, request.params)
    outgoing = client.build_request(
        request.method, url, headers=request.headers, params=params, json=request.json, data=request.form
    )
    if basic_auth:
        outgoing = next(httpx.BasicAuth(*basic_auth).auth_flow(outgoing))
    response = await client.transport.handle_async_request(outgoing)
    try:
        decoder = BoundedDecoder(content_coding(response.headers))
        raw = 0
        stream = response.stream
        assert isinstance(stream, httpx.AsyncByteStream)  # an async transport's
        async for chunk in stream:
            raw += len(chunk)
            if raw > MAX_BODY_BYTES:
                raise _too_big()
            decoder.feed(chunk)
        headers = {k.lower(): v for k, v in response.headers.items()}
        return HttpResponse(status=response.status_code, headers=headers, body=decoder.finish())
    finally:
        await response.aclose()


def describe_http_error(exc: httpx.HTTPError) -> str:
    """A short, URL-free description of a transport error (URLs may carry secrets)."""
    if isinstance(exc, httpx.ConnectError):
        return "connection failed"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "connection closed by the server"
    if isinstance(exc, httpx.ReadError):
        return "read failed"
    return type(exc).__name__
