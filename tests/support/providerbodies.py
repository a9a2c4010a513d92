"""Answers in each provider's own wire format built from plain items, for tests that plant a
value in every field of every provider (code-like text, secrets): ``answer(provider, items)``
→ a :class:`mockprovider.Reply`.

An item is ``{url, title, snippet, date}``. Fields the provider documents as HTML (Brave's
``description``, DuckDuckGo's whole page) are HTML-escaped as the provider would send them,
with ``markup`` wrapped around them when given; every other field goes in as JSON text.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from support.mockprovider import Reply

JSON = {"content-type": "application/json"}


def _json(body: Any) -> Reply:
    return Reply(200, dict(JSON), json.dumps(body).encode())


def answer(provider: str, items: list[dict[str, str]], markup: tuple[str, str] = ("", "")) -> Reply:
    """The provider's 200 answer carrying ``items``; ``markup`` = (open, close) tags put
    around each HTML field's escaped text."""
    o, c = markup
    if provider == "exa":
        return _json(
            {
                "results": [
                    {"url": i["url"], "title": i["title"], "text": i["snippet"], "publishedDate": i.get("date")}
                    for i in items
                ]
            }
        )
    if provider == "tavily":
        rows = [
            {"url": i["url"], "title": i["title"], "content": i["snippet"], "published_date": i.get("date")}
            for i in items
        ]
        return _json({"query": "q", "results": rows})
    if provider == "brave":
        rows = [
            {
                "url": i["url"],
                "title": i["title"],
                "description": f"{o}{escape(i['snippet'])}{c}",
                "page_age": i.get("date"),
            }
            for i in items
        ]
        return _json({"type": "search", "web": {"type": "search", "results": rows}})
    if provider == "perplexity":
        rows = [{"url": i["url"], "title": i["title"], "snippet": i["snippet"], "date": i.get("date")} for i in items]
        return _json({"id": "x", "results": rows})
    if provider == "searxng":
        rows = [
            {"url": i["url"], "title": i["title"], "content": i["snippet"], "publishedDate": i.get("date")}
            for i in items
        ]
        return _json({"query": "q", "results": rows, "unresponsive_engines": []})
    if provider == "deepseek":
        results = [
            {"type": "web_search_result", "url": i["url"], "title": i["title"], "page_age": i.get("date")}
            for i in items
        ]
        citations = [{"type": "web_search_result_location", "url": i["url"], "cited_text": i["snippet"]} for i in items]
        return _json(
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "server_tool_use", "id": "t1", "name": "web_search", "input": {"query": "q"}},
                    {"type": "web_search_tool_result", "tool_use_id": "t1", "content": results},
                    {"type": "text", "text": "answer", "citations": citations},
                ],
            }
        )
    if provider == "duckduckgo":
        blocks = "".join(
            f'<div class="result results_links web-result"><div class="links_main result__body">'
            f'<h2 class="result__title"><a class="result__a" href="{escape(i["url"])}">{o}{escape(i["title"])}{c}</a></h2>'
            f'<a class="result__snippet" href="{escape(i["url"])}">{o}{escape(i["snippet"])}{c}</a></div></div>'
            for i in items
        )
        page = f"<!DOCTYPE html><html><head><title>q at DuckDuckGo</title></head><body>{blocks}</body></html>"
        return Reply(200, {"content-type": "text/html; charset=UTF-8"}, page.encode())
    raise ValueError(provider)
