"""The router's HTTP client (``dsh_sidecar.router.http.make_client``): every client of a process
shares one verifying TLS context, built without the environment, and the client keeps its
other settings."""

from __future__ import annotations

import ssl

import httpx
import pytest
from dsh_sidecar.router import http


@pytest.fixture
def fresh_context():
    http.tls_context.cache_clear()
    yield
    http.tls_context.cache_clear()


async def test_clients_share_one_verifying_tls_context(fresh_context):
    first, second = http.make_client(), http.make_client()
    try:
        ctx = http.tls_context()
        assert ctx is http.tls_context()
        for client in (first, second):
            pool = client._transport._pool  # httpx 0.29: AsyncHTTPTransport -> httpcore pool
            assert pool._ssl_context is ctx
        assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
        assert ctx.minimum_version >= ssl.TLSVersion.TLSv1_2
        assert ctx.cert_store_stats()["x509_ca"] > 50  # certifi's bundle is loaded
    finally:
        await first.aclose()
        await second.aclose()


def test_the_context_ignores_ssl_cert_file_and_dir(fresh_context, monkeypatch, tmp_path):
    # with the environment trusted, a missing SSL_CERT_FILE would raise FileNotFoundError here
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path / "missing"))
    ctx = http.tls_context()
    assert ctx.cert_store_stats()["x509_ca"] > 50


async def test_the_client_keeps_its_settings(fresh_context):
    client = http.make_client()
    try:
        assert client.follow_redirects is False
        assert client.trust_env is False
        assert client.timeout == httpx.Timeout(None)
        assert client.headers["User-Agent"] == http.USER_AGENT
        assert client.headers["Accept-Encoding"] == "gzip, deflate"
    finally:
        await client.aclose()


def test_the_user_agent_names_the_released_version_and_the_project_home():
    """``dsh-search-sidecar/<version> (+<Homepage>)``: the version and URL of pyproject.toml,
    not a placeholder."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text("utf-8"))["project"]
    assert f"dsh-search-sidecar/{project['version']} (+{project['urls']['Homepage']})" == http.USER_AGENT


async def test_providers_receive_the_user_agent(mock_provider):
    from support.providerbodies import answer
    from support.routers import ROUTES, make_router

    mock_provider.route(
        *ROUTES["searxng"], answer("searxng", [{"url": "https://a.example/", "title": "t", "snippet": "s"}])
    )
    router = make_router(mock_provider, "searxng", cache=False)
    try:
        await router.search("q", 5)
    finally:
        await router.aclose()
    assert mock_provider.requests[-1].headers["user-agent"] == http.USER_AGENT
