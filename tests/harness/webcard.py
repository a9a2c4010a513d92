"""The "Search router" card in a real ``dsh web``, driven in Chromium: one run, a JSON report.

Runs inside the caller's network namespace (the test starts it under ``unshare -n`` when root):
the fake model (its script: every session calls ``web_search`` once, then answers), one loopback
mock that answers both Exa (``POST /search``) and SearXNG (``GET /search``), DeepSeek Harness's
web profile with the search-router package installed (``dsh plugin --profile web add file:…``)
and its row in the profile's own patch layer (the composition value: ``order: [exa, searxng]``,
both endpoints on the mock, ``timeoutMs: 4000``, ``maxQueuedSearches: 64``), ``EXA_API_KEY`` in the
environment, and the
browser driver (tests/harness/webcard.mjs). Each step's card state and the provider requests
of each search are recorded. Usage::

    python tests/harness/webcard.py WORKDIR ARTIFACTS
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness and support packages

from support.mockprovider import MockProvider, Reply, case_reply  # noqa: E402
from support.trees import copy_fixture  # noqa: E402

from harness import harnesses as h  # noqa: E402
from harness.fakemodel import FakeModel, ToolStep  # noqa: E402

ROUTER = h.DSH_BUNDLE / "plugins" / "search-router"
DRIVER = Path(__file__).resolve().parent / "webcard.mjs"
PLAYWRIGHT = h.REPO / "tests" / "vscode" / "node_modules" / "playwright-core" / "index.mjs"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ENV_KEY = "env-exa-key-0001"
GUI_KEY = "gui-exa-key-0002"


class Providers:
    """The loopback Exa + SearXNG mock; ``slow_exa_s`` delays Exa's answers, ``empty_exa``
    makes Exa answer 200 with no results."""

    def __init__(self) -> None:
        self.mock = MockProvider()
        self.slow_exa_s = 0.0
        self.empty_exa = False
        exa, _ = case_reply("exa", "ok", check=False)
        searx, _ = case_reply("searxng", "ok", check=False)
        no_results = Reply(200, {"Content-Type": "application/json"}, b'{"results": []}')
        self.mock.route(
            "POST",
            "/search",
            lambda seen: (
                no_results if self.empty_exa else Reply(exa.status, exa.headers, exa.body, delay_s=self.slow_exa_s)
            ),
        )
        self.mock.route("GET", "/search", searx)
        self.seen = 0

    def new_requests(self) -> list[dict[str, Any]]:
        """The provider requests since the last call: ``{provider, key}`` in arrival order."""
        with self.mock.lock:
            fresh = self.mock.requests[self.seen :]
            self.seen = len(self.mock.requests)
        return [
            {"provider": "exa" if r.method == "POST" else "searxng", "key": r.headers.get("x-api-key")}
            for r in fresh
            if r.path == "/search"
        ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    """The browser driver process (JSON lines both ways)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [str(h.NODE22_BIN / "node"), str(DRIVER)],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def __call__(self, command: str, **params: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"do": command, **params}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(
                f"the browser driver ended: {self.proc.stderr.read()[-3000:] if self.proc.stderr else ''}"
            )
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"{command}: {answer['error']}")
        return answer


def wait_for_answers(fake: FakeModel, count: int, timeout_s: float = 60.0) -> None:
    """Until ``count`` sessions have sent the model their web_search result (the search ran)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done = sum(1 for body in fake.main_requests() if any(m.get("role") == "tool" for m in body.get("messages", [])))
        if done >= count:
            return
        time.sleep(0.1)
    raise RuntimeError(f"{count} searches expected; the model saw {done}")


def main() -> int:
    work, artifacts = Path(sys.argv[1]), Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    artifacts.mkdir(parents=True, exist_ok=True)
    env = h.isolated(work)
    env["PATH"] = f"{h.PNPM_BIN}:{env['PATH']}"
    home = Path(env["HOME"])
    copy_fixture("pyproj", home / "ws")  # every file at the fixtures' time, as the rest of the suite
    fake = FakeModel("openai", [ToolStep("web_search", {"queries": ["bike chain cleaning"]})], final="Done.")
    providers = Providers()
    env.update(
        {
            "DEEPSEEK_BASE_URL": fake.url,
            "DEEPSEEK_API_KEY": "sk-fake-key-for-loopback",
            "EXA_API_KEY": ENV_KEY,
        }
    )
    report: dict[str, Any] = {"steps": []}
    dsh = driver = None
    try:
        install = h.run([str(h.DSH), "plugin", "--profile", "web", "add", f"file:{ROUTER}"], work, env, 300)
        if install.returncode != 0:
            raise RuntimeError(f"dsh plugin add: {install.stderr[-2000:]}")
        # the composition value: the router seed's own row, in the profile's own patch layer
        profile_patch = Path(env["DSH_HOME"]) / "profiles" / "web" / "cordis.patch.yml"
        row = {
            "order": ["exa", "searxng"],
            "timeoutMs": 4000,
            "maxQueuedSearches": 64,
            "providers": {"exa": {"baseURL": providers.mock.url}, "searxng": {"baseUrl": providers.mock.url}},
        }
        profile_patch.write_text(f"- id: search-router\n  config: {json.dumps(row)}\n")
        hmr = work / "hmr-on.patch.yml"
        hmr.write_text("- id: hmr\n  disabled: false\n")  # rc.8's web profile boots only with it
        port = free_port()
        argv = [str(h.DSH), "--profile", "web", "--patch", str(hmr), "--no-open", "--host", "127.0.0.1"]
        with open(artifacts / "dsh-web.log", "w") as log:  # the child keeps its own copy of the fd
            dsh = subprocess.Popen(
                [*argv, "--port", str(port)],
                cwd=home / "ws",
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        url = f"http://127.0.0.1:{port}/"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if dsh.poll() is not None:
                    raise RuntimeError(
                        f"dsh web exited {dsh.returncode}: {(artifacts / 'dsh-web.log').read_text()[-2000:]}"
                    ) from None
                time.sleep(0.2)
        driver = Driver(
            {
                **env,
                "URL": url,
                "ARTIFACTS": str(artifacts),
                "PROFILE": str(work / "chromium-profile"),
                "WORKSPACE": "ws",
                "CHROMIUM": CHROMIUM,
                "PLAYWRIGHT": str(PLAYWRIGHT),
            }
        )
        searches = 0

        def search(label: str) -> list[dict[str, Any]]:
            nonlocal searches
            driver("prompt", text=f"Find how to clean a bike chain ({label}).")
            searches += 1
            wait_for_answers(fake, searches)
            asked = providers.new_requests()
            report["steps"].append({"step": f"search {label}", "asked": asked})
            return asked

        def step(label: str, command: str, **params: Any) -> dict[str, Any]:
            answer = driver(command, **params)
            report["steps"].append({"step": label, **{k: v for k, v in answer.items() if k != "ok"}})
            return answer

        step("boot", "boot")
        step("card", "openCard")
        step("shot: the card as composed", "shot", name="01-card-composed")
        search("composed")
        step("card again", "openCard")
        step("drag searxng above exa", "drag", **{"from": "searxng", "to": "exa"})
        step("after drag", "rows")
        step("shot: reordered by drag", "shot", name="02-dragged")
        search("after drag")
        step("card again", "openCard")
        step("exa up with the keyboard", "key", provider="exa", key="ArrowUp")
        step("store a key for exa", "storeKey", provider="exa", value=GUI_KEY)
        step("shot: key stored", "shot", name="03-key-stored")
        document = Path(env["DSH_HOME"]) / "settings.yaml"  # DSH's settings document
        report["keyInSettings"] = {
            "stored": f"apiKey: {GUI_KEY}" in document.read_text(),
            "mode": oct(document.stat().st_mode & 0o777),
        }
        search("gui key")
        step("card again", "openCard")
        step("clear exa's key", "clearKey", provider="exa")
        search("key cleared")
        step("card again", "openCard")
        step("add duckduckgo", "addProvider", provider="duckduckgo")
        step("shot: provider added", "shot", name="04-added")
        step("remove duckduckgo", "removeProvider", provider="duckduckgo")
        step("drag searxng above exa again", "drag", **{"from": "searxng", "to": "exa"})
        step("reset the chain", "resetChain")
        step("after reset", "rows")
        search("chain reset")
        providers.slow_exa_s = 3.0  # exa answers in 3 s: within the row's 4000 ms, past a 2500 ms one
        step("card again", "openCard")
        step("timeout 2500", "setTimeout", ms=2500)
        step("shot: advanced, overridden", "shot", name="05-timeout-overridden")
        search("timeout 2500, exa slow")
        step("card again", "openCard")
        step("reset the timeout", "resetTimeout")
        step("shot: advanced, reset", "shot", name="06-timeout-reset")
        search("timeout reset, exa slow")
        providers.slow_exa_s, providers.empty_exa = 0.0, True  # exa answers 0 results: emptyResultsFallback decides
        search("exa empty, fallback")
        step("card again", "openCard")
        step("empty results: the answer", "setEmpty", value="answer")
        step("shot: empty results overridden", "shot", name="07-empty-answer")
        search("exa empty, answer")
        step("card again", "openCard")
        step("reset empty results", "resetEmpty")
        search("exa empty, reset")
        # the searches' cap (Advanced): the sidecar's default shown, the row's value, an override
        step("card again", "openCard")
        step("limits as composed", "limits")
        step("shot: the searches' cap", "shot", name="08-limits")
        step("at most 4 searches at once", "setLimit", id="dshsr-concurrent", value=4)
        report["concurrentInSettings"] = "maxConcurrentSearches: 4" in document.read_text()
        step("reset the searches at once", "resetLimit", id="dshsr-concurrent")
        report["settingsAtEnd"] = document.read_text()
        driver("quit")
    except Exception as exc:  # reported: the test shows how far it got
        report["error"] = str(exc)[-4000:]
    finally:
        if driver is not None and driver.proc.poll() is None:
            driver.proc.kill()
        if dsh is not None and dsh.poll() is None:
            os.killpg(dsh.pid, 15)
            try:
                dsh.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(dsh.pid, 9)
        fake.close()
        providers.mock.close()
    report["leakedKey"] = any(GUI_KEY in p.read_text(errors="replace") for p in artifacts.glob("*.log"))
    sys.stdout.write(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
