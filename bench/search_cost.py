"""Where a search's server CPU goes: each layer of ``dsh/search`` measured alone, in one run.

CPU, not wall time: on a shared, loaded machine a wall-clock profile (py-spy, cProfile's
default clock) charges a thread for the time it waited to run; here every figure is the CPU a
thread spent (``time.thread_time`` in process, ``/proc/<pid>/task/*/stat`` for a server),
per call, the median over ``--rounds`` rounds taken in turn (the same machine noise for every
row). The provider is the tests' loopback mock replaying ``searxng/ok``, in a process of its
own (its CPU is nobody's row).

In process (this interpreter, one event loop):

* the floor of the exchange: one keep-alive HTTP/1.1 GET on an asyncio stream and its body;
* ``aiohttp`` (when installed: not a dependency) and ``httpx.AsyncClient`` for the same GET;
* the router's exchange (``router/http.py`` ``exchange``: httpx's request, httpcore's pool and
  h11 on ``loopnet``), ``Router.search`` (chain, parse, normalise, health), ``Sidecar.search``
  with its ``wire()`` (bandit: arm, reward, credit, pending feedback, decision log, the seed's
  line; escaping; the result model), the same with the exchange replaced by its answer (the
  sidecar's own bookkeeping), and ``Sidecar.status().wire()``.

Over stdio (spawned servers, ``bench/router.py``'s client): the sidecar's ``dsh/search`` and
``dsh/status`` and a pygls+asyncio echo's (``bench/router.py``'s :data:`ECHO`: ``{}`` for a
status, one ``httpx.AsyncClient`` GET for a search), each split into the event loop's thread
and the others (the bandit's writers, the run-status heartbeat: they write behind, so their CPU
is given per search-and-status pair).

Usage: ``python bench/search_cost.py [--n 200] [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import router as bench_router  # noqa: E402
from _scratch import scratch  # noqa: E402

MOCK = """
import sys
sys.path.insert(0, sys.argv[1])
from support.mockprovider import MockProvider, case_reply
mock = MockProvider()
mock.server.RequestHandlerClass.disable_nagle_algorithm = True
mock.route("GET", "/search", case_reply("searxng", "ok", check=False)[0])
print(mock.url, flush=True)
sys.stdin.read()
mock.close()
"""


def thread_cpu(pid: int) -> tuple[float, float]:
    """(the main thread's, the other threads') CPU seconds of process ``pid``."""
    main = rest = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks = (int(fields[11]) + int(fields[12])) / bench_router.CLK_TCK
        if int(tid) == pid:
            main += ticks
        else:
            rest += ticks
    return main, rest


async def in_process(url: str, n: int, rounds: int, home: Path) -> dict[str, list[float]]:
    """Per layer, CPU µs per call, one value per round."""
    import httpx
    from dsh_protocol import SearchParams
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.router import http as router_http
    from dsh_sidecar.router.providers.base import HttpRequest
    from dsh_sidecar.sidecar import Sidecar

    host, port = url.rsplit("/", 1)[1].split(":")
    raw = await asyncio.open_connection(host, int(port))
    client = httpx.AsyncClient(trust_env=False)
    provider_client = router_http.make_client()
    router_cfg = {"provider": "searxng", "cache": False, "providers": {"searxng": {"baseUrl": url}}}
    env = {**os.environ, "DSH_HOME": str(home), "DSH_CACHE_DIR": str(home / "cache")}
    sidecar = Sidecar(
        parse_config({"router": router_cfg, "suggester": {"enabled": False}}),
        None,
        env,
        log_sink=lambda line: None,
        echo_stderr=False,
    )
    await asyncio.to_thread(sidecar._prepare_search)
    real_exchange = router_http.exchange
    answer: list = []

    async def canned(*args, **kwargs):  # the provider's answer without the exchange
        if not answer:
            answer.append(await real_exchange(*args, **kwargs))
        return answer[0]

    async def raw_get(i: int) -> None:
        reader, writer = raw
        writer.write(f"GET /search?q=q{i}&format=json HTTP/1.1\r\nHost: {host}\r\nAccept: */*\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
        size = next(
            int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")) if k.lower() == b"content-length"
        )
        await reader.readexactly(size)

    async def httpx_get(i: int) -> None:
        (await client.get(f"{url}/search", params={"q": f"q{i}", "format": "json"})).json()

    async def exchange(i: int) -> None:
        request = HttpRequest(method="GET", url=f"{url}/search", params={"q": f"q{i}", "format": "json"})
        await real_exchange(provider_client, request, 10_000)

    async def router_search(i: int) -> None:
        await sidecar.router.search(f"q{i}", 5)

    async def sidecar_search(i: int) -> None:
        (await sidecar.search(SearchParams.model_validate({"query": f"q{i}", "strategy": "quick"}))).wire()

    async def bookkeeping(i: int) -> None:
        router_http.exchange = canned
        try:
            await sidecar_search(i)
        finally:
            router_http.exchange = real_exchange

    async def status(i: int) -> None:
        sidecar.status().wire()

    layers: dict[str, Callable[[int], Awaitable[None]]] = {"HTTP/1.1 on an asyncio stream (the floor)": raw_get}
    session = None
    try:
        import aiohttp

        session = aiohttp.ClientSession(auto_decompress=False)

        async def aiohttp_get(i: int) -> None:
            assert session is not None
            async with session.get(f"{url}/search", params={"q": f"q{i}", "format": "json"}) as reply:
                await reply.read()

        layers[f"aiohttp {aiohttp.__version__} GET + body"] = aiohttp_get
    except ImportError:
        pass
    layers |= {
        "httpx.AsyncClient GET + JSON decode": httpx_get,
        "router/http.py exchange (httpx, httpcore, h11)": exchange,
        "Router.search (no cache)": router_search,
        "Sidecar.search + wire()": sidecar_search,
        "Sidecar.search + wire(), exchange's answer canned": bookkeeping,
        "Sidecar.status().wire()": status,
    }
    out: dict[str, list[float]] = {name: [] for name in layers}
    for fn in layers.values():
        for i in range(20):
            await fn(i)
    per_round = max(1, n // rounds)
    for r in range(rounds):
        for name, fn in layers.items():
            t0 = time.thread_time()
            for i in range(per_round):
                await fn(r * per_round + i)
            out[name].append((time.thread_time() - t0) / per_round * 1e6)
    await client.aclose()
    await provider_client.aclose()
    if session is not None:
        await session.close()
    raw[1].close()
    await sidecar.aclose()
    return out


def over_stdio(url: str, n: int, rounds: int, root: Path) -> dict[str, list[float]]:
    """Per server and call, CPU µs per call of the loop's thread and of the others, per round."""
    echo = bench_router.spawn_echo(root / "echo.py")
    (root / "home").mkdir()
    sidecar = bench_router.spawn(
        str(root / "home"), {"provider": "searxng", "providers": {"searxng": {"baseUrl": url}}}
    )
    calls = {
        "sidecar dsh/search": (sidecar, lambda i: bench_router.search(sidecar, f"q {i}")),
        "sidecar dsh/status": (sidecar, lambda i: sidecar.request("dsh/status", {})),
        "echo dsh/search (httpx.AsyncClient)": (
            echo,
            lambda i: bench_router.echo_search(echo, f"{url}/search", f"q {i}"),
        ),
        "echo dsh/status": (echo, lambda i: echo.request("dsh/status", {})),
    }
    try:
        for _, fn in calls.values():
            for i in range(20):
                fn(i)
        for server in (sidecar, echo):
            bench_router.settle(server)
        out: dict[str, list[float]] = {f"{name}, the loop's thread": [] for name in calls}
        others = {"sidecar": sidecar, "echo": echo}
        out |= {f"{name}, other threads (a search and a status)": [] for name in others}
        per_round = max(1, n // rounds)
        for r in range(rounds):
            before = {name: thread_cpu(server.proc.pid)[1] for name, server in others.items()}
            for name, (server, fn) in calls.items():
                m0 = thread_cpu(server.proc.pid)[0]
                for i in range(per_round):
                    fn(r * per_round + i)
                out[f"{name}, the loop's thread"].append((thread_cpu(server.proc.pid)[0] - m0) / per_round * 1e6)
            for name, server in others.items():  # written behind: in whichever call's time they ran
                spent = thread_cpu(server.proc.pid)[1] - before[name]
                out[f"{name}, other threads (a search and a status)"].append(spent / per_round * 1e6)
        return out
    finally:
        sidecar.close()
        echo.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200, help="calls per row (split over the rounds)")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    load_before = bench_router.load()
    mock = subprocess.Popen(
        [sys.executable, "-c", MOCK, str(HERE.parent / "tests")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert mock.stdout is not None
        url = mock.stdout.readline().strip()
        with scratch("dsh-search-cost-") as root:
            stdio = over_stdio(url, args.n, args.rounds, root)
            home = Path(tempfile.mkdtemp(dir=root))
            local = asyncio.run(in_process(url, args.n, args.rounds, home))
    finally:
        if mock.stdin is not None:
            mock.stdin.close()
        mock.wait(10)
    tick = 1e6 / bench_router.CLK_TCK / max(1, args.n // args.rounds)
    print(
        f"search cost (n={args.n} a row, {args.rounds} rounds; CPU us per call, median of the rounds (range)); "
        f"load {load_before} -> {bench_router.load()}"
    )
    print(f"over stdio (/proc per thread; one clock tick a round: {tick:.0f} us)")
    for name, values in stdio.items():
        print(f"  {name:58} {statistics.median(values):7.0f} ({min(values):.0f}-{max(values):.0f})")
    print("in process (thread CPU clock)")
    for name, values in local.items():
        print(f"  {name:58} {statistics.median(values):7.0f} ({min(values):.0f}-{max(values):.0f})")


if __name__ == "__main__":
    main()
