"""A provider's base URL is checked as httpx will parse it; the URLs httpx accepts without a doubt
(ASCII, no credentials, a host of plain labels or a dotted IPv4 address) are told without
importing httpx (~60 ms of CPU in a server's start), every other one by httpx itself."""

from __future__ import annotations

import random
import subprocess
import sys
import textwrap
from urllib.parse import urlsplit

import httpx
import pytest
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.router.resolve import check_base_url, plainly_valid

#: Base URLs, each with whether it is told without httpx (``plainly_valid``): the rest are
#: httpx's to judge, or refused by ``urlsplit`` before httpx is asked.
URLS = {
    "http://127.0.0.1:8888": True,
    "https://searx.example.org/": True,
    "https://searx.example.org/search/": True,
    "http://localhost:1": True,
    "http://LOCALHOST": True,
    "http://a-b.c-d.example:65535/x-y_z~/%41": True,
    "http://0.0.0.0": True,
    "http://255.255.255.255:80": True,
    "http://256.1.1.1": False,
    "http://999.1.1.1": False,
    "http://01.2.3.4": False,
    "http://1.2.3": True,
    "http://1.2.3.4.5": True,
    "http://[::1]:80": False,
    "http://[::g]": False,
    "http://bücher.de": False,
    "http://xn--bcher-kva.de": True,
    "http://-lead.example": False,
    "http://trail-.example": False,
    "http://a_b.example": False,
    "http://a..b": False,
    "http://ex%61mple.org": False,
    "http://user:pw@host.example": False,
    'http://host.example/"quoted"': True,
    "http://host.example/{x}|y": True,
    "http://host.example:0": True,
    "http://host.example:": True,
}


def httpx_verdict(url: str) -> bool:
    try:
        httpx.URL(url)
    except httpx.InvalidURL:
        return False
    return True


def checked(url: str) -> str | None:
    try:
        return check_base_url("k", url, allow_credentials=True)
    except ConfigError:
        return None


def told_without_httpx(url: str) -> bool | None:
    """Whether ``plainly_valid`` tells ``url`` without httpx; ``None`` when ``urlsplit`` refuses
    it (its port included) before either is asked."""
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError:
        return None
    return plainly_valid(url, parts)


@pytest.mark.parametrize("url", URLS)
def test_a_url_told_without_httpx_is_one_httpx_accepts(url: str) -> None:
    told = told_without_httpx(url)
    if told is None:  # refused before httpx is asked
        assert checked(url) is None
        return
    if told:
        assert httpx_verdict(url)
    if not httpx_verdict(url):
        assert checked(url) is None


def test_random_plain_urls_agree_with_httpx() -> None:
    rng = random.Random(11)
    alphabet = "ab0129-._"
    for _ in range(3000):
        host = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        port = rng.choice(["", ":80", ":8888", ":65535", ":0"])
        url = f"http://{host}{port}/p"
        if told_without_httpx(url):
            assert httpx_verdict(url), url


def test_a_plain_url_in_the_environment_is_checked_without_importing_httpx() -> None:
    code = textwrap.dedent(
        """
        import sys
        from dsh_sidecar.router.config import parse_router_config, resolve_chain
        chain, missing = resolve_chain(parse_router_config(None), {"SEARXNG_BASE_URL": "http://127.0.0.1:8888/"})
        print([s.id for s in chain], [s.base_url for s in chain][0], "httpx" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["['searxng',", "'duckduckgo']", "http://127.0.0.1:8888", "False"]


def test_which_urls_are_told_without_httpx() -> None:
    assert {url: bool(told_without_httpx(url)) for url in URLS} == URLS
