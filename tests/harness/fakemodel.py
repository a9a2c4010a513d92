"""Stdlib fake model servers on loopback for the real-harness tests: an Anthropic Messages API
(``POST /v1/messages``, SSE when ``stream`` is true) for Claude Code and an OpenAI-compatible
chat-completions API (``POST …/chat/completions``, SSE) for DeepSeek Harness.

Each follows a script: a list of steps, each a :class:`ToolStep` (call one tool) or a text
answer. A request belongs to the agent's main loop when its tool list offers the first
step's tool; its step is the number of assistant turns already in its messages, so the
harness's own retries and side requests (titles, summaries: no such tool) never advance the
script. Every request body is logged (``requests``), in order.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class ToolStep:
    """Call ``name`` with ``input``; ``match`` picks the tool by substring (MCP tools carry a
    harness-specific prefix) when ``name`` itself is not offered; ``think_s`` is how long the
    fake "thinks" before answering with this step (spaces the tool calls out in time), or, with
    ``until``, its bound: the fake answers as soon as that file exists (an event of the run, not
    a guess of how long it takes)."""

    name: str
    input: dict[str, Any]
    match: str | None = None
    think_s: float = 0.0
    until: Path | None = None


Step = ToolStep | str


@dataclass
class Logged:
    """One request: its path and body, when it arrived and when its answer was fully sent
    (``time.monotonic()`` seconds; the gap from one answer to the next request is the
    harness's time to run the tool, its hooks and listeners)."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    received: float = 0.0
    answered: float = 0.0


class FakeModel:
    """One loopback server speaking ``api`` (``anthropic`` or ``openai``)."""

    def __init__(self, api: str, steps: list[Step], final: str = "All done.") -> None:
        self.api = api
        self.steps = steps
        self.final = final
        self.requests: list[Logged] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_HEAD(self) -> None:  # noqa: N802 - connectivity probes
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:  # noqa: N802 - model lists and the like
                body = json.dumps({"data": [], "object": "list"}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                logged = Logged(self.path, body, {k.lower(): v for k, v in self.headers.items()}, time.monotonic())
                with fake.lock:
                    fake.requests.append(logged)
                if self.path.split("?")[0].endswith("/count_tokens"):
                    return self._json({"input_tokens": 100})
                step = fake.step_of(body)
                if isinstance(step, ToolStep) and step.think_s:
                    deadline = time.monotonic() + step.think_s
                    while time.monotonic() < deadline and not (step.until is not None and step.until.exists()):
                        time.sleep(0.02)
                events = fake.answer(body)
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.send_header("cache-control", "no-cache")
                    self.send_header("connection", "close")
                    self.end_headers()
                    for name, data in events:
                        line = (
                            f"event: {name}\n" if name else ""
                        ) + f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n"
                        self.wfile.write(line.encode())
                        self.wfile.flush()
                    self.close_connection = True
                else:
                    self._json(fake.whole(body))
                logged.answered = time.monotonic()

            def _json(self, obj: Any) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    # ------------------------------------------------------------------ script

    def tool_names(self, body: dict[str, Any]) -> list[str]:
        names = []
        for t in body.get("tools") or []:
            name = t.get("name") or (t.get("function") or {}).get("name")
            if name:
                names.append(name)
        return names

    def resolve(self, step: ToolStep, offered: list[str]) -> str | None:
        if step.name in offered:
            return step.name
        if step.match:
            return next((n for n in offered if step.match in n), None)
        return None

    def is_main(self, body: dict[str, Any]) -> bool:
        first = next((s for s in self.steps if isinstance(s, ToolStep)), None)
        return first is not None and self.resolve(first, self.tool_names(body)) is not None

    def step_of(self, body: dict[str, Any]) -> Step:
        if not self.is_main(body):
            return self.final
        turns = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
        return self.steps[turns] if turns < len(self.steps) else self.final

    def main_requests(self) -> list[dict[str, Any]]:
        """The logged bodies of the agent's main loop, in order."""
        return [r.body for r in self.main_logged()]

    def main_logged(self) -> list[Logged]:
        """The logged requests of the agent's main loop, in order."""
        with self.lock:
            return [r for r in self.requests if self.is_main(r.body)]

    def tool_gaps_ms(self) -> list[float]:
        """Per scripted tool call: from the answer that asked for it to the next main-loop
        request (the harness ran the tool and everything hooked to it), in milliseconds."""
        main = self.main_logged()
        return [(b.received - a.answered) * 1000 for a, b in zip(main, main[1:]) if a.answered]

    # ------------------------------------------------------------------ wire formats

    def answer(self, body: dict[str, Any]) -> list[tuple[str | None, Any]]:
        step = self.step_of(body)
        if self.api == "anthropic":
            return self._anthropic_events(body, step)
        return self._openai_chunks(body, step)

    def whole(self, body: dict[str, Any]) -> dict[str, Any]:
        step = self.step_of(body)
        if self.api == "anthropic":
            content: list[dict[str, Any]]
            if isinstance(step, ToolStep):
                name = self.resolve(step, self.tool_names(body)) or step.name
                content = [{"type": "tool_use", "id": _id("toolu"), "name": name, "input": step.input}]
            else:
                content = [{"type": "text", "text": step}]
            return {
                "id": _id("msg"),
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "fake"),
                "content": content,
                "stop_reason": "tool_use" if isinstance(step, ToolStep) else "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        message: dict[str, Any] = {"role": "assistant", "content": None if isinstance(step, ToolStep) else step}
        if isinstance(step, ToolStep):
            name = self.resolve(step, self.tool_names(body)) or step.name
            message["tool_calls"] = [
                {"id": _id("call"), "type": "function", "function": {"name": name, "arguments": json.dumps(step.input)}}
            ]
        return {
            "id": _id("chatcmpl"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if isinstance(step, ToolStep) else "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def _anthropic_events(self, body: dict[str, Any], step: Step) -> list[tuple[str | None, Any]]:
        msg = {
            "id": _id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "fake"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": msg})]
        if isinstance(step, ToolStep):
            name = self.resolve(step, self.tool_names(body)) or step.name
            block = {"type": "tool_use", "id": _id("toolu"), "name": name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(step.input)}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": step}
            stop = "end_turn"
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return events

    def _openai_chunks(self, body: dict[str, Any], step: Step) -> list[tuple[str | None, Any]]:
        cid, created, model = _id("chatcmpl"), int(time.time()), body.get("model", "fake")

        def chunk(delta: dict[str, Any], finish: str | None = None, usage: bool = False) -> dict[str, Any]:
            out: dict[str, Any] = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            if usage:
                out["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            return out

        chunks: list[tuple[str | None, Any]] = [(None, chunk({"role": "assistant", "content": ""}))]
        if isinstance(step, ToolStep):
            name = self.resolve(step, self.tool_names(body)) or step.name
            call = {
                "index": 0,
                "id": _id("call"),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(step.input)},
            }
            chunks += [(None, chunk({"tool_calls": [call]})), (None, chunk({}, "tool_calls", usage=True))]
        else:
            chunks += [(None, chunk({"content": step})), (None, chunk({}, "stop", usage=True))]
        chunks.append((None, "[DONE]"))
        return chunks


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def texts(value: Any) -> str:
    """Every string inside a request body fragment, joined (to look for a note anywhere in it)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(texts(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(texts(v) for v in value)
    return ""
