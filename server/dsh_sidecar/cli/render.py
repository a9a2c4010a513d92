"""What the CLI prints for a search, a status and a doctor report: plain text for pipes and
Rich renderables for a terminal. Every function takes the wire dict (``dsh/search`` result,
``dsh/status`` result, the doctor report) and returns text or a renderable; nothing prints.

Untrusted text (titles, snippets, URLs, provider messages, paths) always goes through
:func:`~dsh_sidecar.cli.output.clean` and is wrapped in Rich ``Text``, never read as markup.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from dsh_sidecar.cli.output import clean

#: Longest snippet shown per source, characters (the JSON output has it whole).
SNIPPET_CHARS = 200


def _attempts(attempts: list[dict[str, Any]]) -> str:
    return ", ".join(f"{clean(a['provider'])}={clean(a['outcome'])} ({a['ms']} ms)" for a in attempts)


#: The offline docs index's provider id (``router.providers.local``).
LOCAL = "local"


def offline(result: dict[str, Any]) -> bool:
    """Whether the offline docs index answered (no web provider did)."""
    answered = {a["provider"] for a in result["attempts"] if str(a["outcome"]).startswith("ok")}
    return bool(answered) and answered <= {LOCAL}


def _headline(result: dict[str, Any]) -> str:
    n = len(result["sources"])
    line = f"{result['strategy']} · {n} source{'' if n == 1 else 's'} · {result['durationMs']} ms · "
    if offline(result):  # the bandit does not learn from it: no reward to show
        line += "offline: local docs (no web provider answered)"
    else:
        line += f"reward {result['reward']:.3f}"
    return line + (" · truncated" if result.get("truncated") else "")


def search_plain(result: dict[str, Any]) -> str:
    """A ``dsh/search`` result as plain text: headline, numbered sources, the attempts line."""
    lines = [_headline(result)]
    for i, s in enumerate(result["sources"], 1):
        lines.append(f"{i:>2}. {clean(s.get('title') or '(no title)')}")
        lines.append(f"    {clean(s['url'])}")
        if s.get("snippet"):
            lines.append(f"    {clean(s['snippet'])[:SNIPPET_CHARS]}")
    lines.append("attempts: " + _attempts(result["attempts"]))
    return "\n".join(lines)


def search_rich(result: dict[str, Any]) -> Group:
    """A ``dsh/search`` result for a terminal: bold headline, titles, dim URLs (clickable where
    the terminal supports OSC 8 links), snippets, and each attempt coloured by outcome."""
    parts: list[Any] = [Text(_headline(result), style="bold")]
    sources = Table.grid(padding=(0, 1))
    sources.add_column(justify="right", style="bold cyan", no_wrap=True)
    sources.add_column()
    for i, s in enumerate(result["sources"], 1):
        url = clean(s["url"])
        block = Text()
        block.append(clean(s.get("title") or "(no title)"), style="bold")
        block.append("\n")
        block.append(url, style=f"blue underline link {url}" if url.startswith(("http://", "https://")) else "blue")
        if s.get("snippet"):
            block.append("\n")
            block.append(clean(s["snippet"])[:SNIPPET_CHARS], style="dim")
        sources.add_row(f"{i}.", block)
    parts.append(sources)
    tries = Text("attempts: ", style="dim")
    for n, a in enumerate(result["attempts"]):
        if n:
            tries.append(", ")
        outcome = clean(a["outcome"])
        tries.append(f"{clean(a['provider'])}=")
        tries.append(outcome, style="green" if outcome.startswith("ok") else "red")
        tries.append(f" ({a['ms']} ms)", style="dim")
    parts.append(tries)
    return Group(*parts)


# ---------------------------------------------------------------------------- status


def render_status(status: dict[str, Any]) -> str:
    """The ``bandit`` block of ``dsh/status`` as a small text table (``dsh-search status`` in
    a pipe); moved here from the bandit core, which knows no output format."""
    from dsh_sidecar.bandit.policy import ARMS

    lines = [
        f"bandit posteriors Beta(alpha, beta) per query class (discount {status['discount']:g}; a class arm with "
        f"under {status['minClassEvidence']:g} observations borrows from global):",
        f"  {'class':8} {'arm':9} {'alpha':>9} {'beta':>9} {'mean':>6} {'evidence':>9}  fallback",
    ]
    rows = [(c, v, v["evidence"], "yes" if v["usesGlobalFallback"] else "no") for c, v in status["classes"].items()]
    rows.append(("global", status["arms"], "", ""))
    for name, arms, evidence, fallback in rows:
        for i, arm in enumerate(ARMS):
            p = arms[arm]
            ev = f"{evidence:g}" if i == 0 and evidence != "" else ""
            fb = fallback if i == 0 else ""
            lines.append(
                f"  {name if i == 0 else '':8} {arm:9} {p['alpha']:9.3f} {p['beta']:9.3f} {p['mean']:6.3f} {ev:>9}  {fb}"
            )
    lines.append(f"  updates per arm (searches learnt from): {_updates_text(status)}")
    state = status["state"]
    shared = state.get("shared")  # the fleet store's URL (its password redacted)
    where = clean(state["path"]) if state["path"] else f"{clean(shared)} (fleet store)" if shared else "memory only"
    lines.append(
        f"  state: {where}{'' if state['persisting'] or not state['path'] else ' (not persisting)'}; "
        f"pending feedback: {status['pendingFeedback']}"
    )
    for w in state["warnings"] + status["decisionLog"]["warnings"]:
        lines.append(f"  warning: {clean(w)}")
    return "\n".join(line.rstrip() for line in lines)


def _updates_text(bandit: dict[str, Any]) -> str:
    """``quick 3, thorough 1``: the posterior updates each arm has had (``bandit.updates`` of
    ``dsh/status``; outages are not counted)."""
    from dsh_sidecar.bandit.policy import ARMS

    updates = bandit.get("updates") or {}
    return ", ".join(f"{arm} {int(updates.get(arm, 0))}" for arm in ARMS)


def _health_word(h: dict[str, Any]) -> str:
    word = str(h.get("state") or "unknown")
    if h.get("cooldownSecondsLeft"):
        word += f", cooldown {h['cooldownSecondsLeft']}s left ({clean(h.get('failureClass') or 'failure')})"
    return word


def _health_by_provider(router: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {h["provider"]: h for h in router.get("health", [])}


def _suggester_line(s: dict[str, Any]) -> str:
    c = s.get("counters", {})
    counts = " ".join(f"{k}={v}" for k, v in c.items())
    graph = s.get("graph", {})
    ready = "building" if graph.get("building") else ("ready" if graph.get("ready") else "not built")
    return f"{'enabled' if s.get('enabled') else 'disabled'}; {counts}; workspace graph {ready}"


def servers_lines(status: dict[str, Any]) -> list[str]:
    """The running servers' live state (``servers``, from their status files under
    ``$DSH_HOME/run``), or why there is none to show."""
    servers = status.get("servers")
    if servers is None:
        return []
    if status.get("serversError"):
        return [f"running servers: cannot tell ({clean(status['serversError'])})"]
    if not servers:
        return [
            "running servers: none (a server writes its live state under $DSH_HOME/run; the provider health"
            " below is this command's own, which has searched nothing)"
        ]
    lines = [f"running servers ({len(servers)}, live):"]
    for s in servers:
        where = f" {clean(s['workspace'])}" if s.get("workspace") else ""
        lines.append(f"  {clean(s.get('kind'))} pid {s.get('pid')}{where}, heartbeat {s.get('heartbeatAgeS')}s ago")
        router = s.get("router") or {}
        health = _health_by_provider(router)
        chain = ", ".join(
            f"{clean(p.get('provider'))} [{_health_word(health.get(p.get('provider'), {}))}]"
            for p in router.get("chain") or []
        )
        lines.append(f"    chain: {chain or '(none)'}")
        cache = router.get("cache")
        if cache:
            lines.append(
                f"    cache: {cache.get('entries')} entries, {cache.get('hits')} hits, {cache.get('misses')} misses"
            )
        sug = s.get("suggester") or {}
        counts = " ".join(f"{clean(k)}={v}" for k, v in (sug.get("counters") or {}).items())
        lines.append(
            f"    suggester: {'enabled' if sug.get('enabled') else 'disabled'}" + (f"; {counts}" if counts else "")
        )
    return lines


def _unavailable_word(health: dict[str, Any]) -> str:
    """What an unusable provider's line says: ``not configured``, or the reason a malformed
    setting in the environment skips it (its health line's outcome, the variable named)."""
    return str(health.get("lastOutcome") or "not configured")


def status_plain(status: dict[str, Any]) -> str:
    """``dsh/status`` as plain text: the running servers' live state, the router chain with
    each provider's health, the bandit table (:func:`render_status`), the suggester and where
    state lives (the terminal's order)."""
    router = status["router"]
    health = _health_by_provider(router)
    lines = [*servers_lines(status)]
    lines += ["", "router chain (tried in order):"] if lines else ["router chain (tried in order):"]
    for i, p in enumerate(router["chain"], 1):
        lines.append(
            f"  {i}. {p['provider']:11} {clean(p['baseUrl'])}  [{_health_word(health.get(p['provider'], {}))}]"
        )
    for pid in router.get("unavailable", []):
        lines.append(f"  -  {pid:11} {clean(_unavailable_word(health.get(pid, {})))}")
    cache = router.get("cache")
    lines.append(
        f"  timeout {router['timeoutMs']} ms per provider, deadline {router['deadlineMs']} ms; cache "
        + (f"{cache['entries']} entries, {cache['hits']} hits, {cache['misses']} misses" if cache else "off")
    )
    lines += ["", render_status(status["bandit"])]
    s = status["suggester"]
    lines += ["", f"suggester: {_suggester_line(s)}"]
    if s.get("workspace"):
        lines.append(f"  workspace: {clean(s['workspace'])}")
    if s.get("ledger"):
        lines.append(f"  ledger: {clean(s['ledger'])}")
    lines += ["", f"state: {clean(status['state']['dshHome'])} (DSH_HOME)", f"version: {status['version']}"]
    return "\n".join(lines)


def status_rich(status: dict[str, Any]) -> Group:
    """``dsh/status`` for a terminal: a chain table, a posterior table, suggester and state."""
    router = status["router"]
    health = _health_by_provider(router)
    chain = Table(title="Router chain (tried in order)", title_justify="left", title_style="bold")
    for col in ("#", "provider", "endpoint", "health"):
        chain.add_column(col, justify="right" if col == "#" else "left")
    for i, p in enumerate(router["chain"], 1):
        h = health.get(p["provider"], {})
        word = _health_word(h)
        style = "green" if h.get("state") == "ok" else ("red" if h.get("cooldownSecondsLeft") else "yellow")
        chain.add_row(str(i), p["provider"], Text(clean(p["baseUrl"])), Text(word, style=style))
    for pid in router.get("unavailable", []):
        h = health.get(pid, {})
        chain.add_row("-", pid, Text(clean(_unavailable_word(h)), style="yellow" if h else "dim"), "")
    b = status["bandit"]
    post = Table(
        title=f"Bandit posteriors Beta(α, β) per query class (discount {b['discount']:g})",
        title_justify="left",
        title_style="bold",
    )
    for col in ("class", "arm", "alpha", "beta", "mean", "evidence", "fallback"):
        post.add_column(col, justify="right" if col in ("alpha", "beta", "mean", "evidence") else "left")
    from dsh_sidecar.bandit.policy import ARMS

    rows = [(c, v, f"{v['evidence']:g}", "yes" if v["usesGlobalFallback"] else "no") for c, v in b["classes"].items()]
    rows.append(("global", b["arms"], "", ""))
    for name, arms, ev, fb in rows:
        best = max(ARMS, key=lambda a: arms[a]["mean"])
        for i, arm in enumerate(ARMS):
            p = arms[arm]
            post.add_row(
                name if i == 0 else "",
                arm,
                f"{p['alpha']:.3f}",
                f"{p['beta']:.3f}",
                Text(f"{p['mean']:.3f}", style="bold green" if arm == best and p["mean"] > 0.5 else ""),
                ev if i == 0 else "",
                fb if i == 0 else "",
                end_section=i == len(ARMS) - 1,
            )
    state = b["state"]
    lines = Text()
    lines.append("Suggester: ", style="bold")
    lines.append(_suggester_line(status["suggester"]))
    lines.append("\nBandit updates per arm: ", style="bold")
    lines.append(_updates_text(b))
    lines.append("\nState: ", style="bold")
    lines.append(f"{clean(status['state']['dshHome'])} (DSH_HOME); posteriors {clean(state['path'] or 'memory only')}")
    for w in state["warnings"] + b["decisionLog"]["warnings"]:
        lines.append(f"\nwarning: {clean(w)}", style="yellow")
    live = servers_lines(status)
    if live:
        return Group(Text("\n".join(live)), chain, post, lines)
    return Group(chain, post, lines)


# ---------------------------------------------------------------------------- doctor

_MARK = {"ok": "ok", "warn": "warn", "fail": "FAIL", "info": "info", "skip": "skip"}
_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "info": "cyan", "skip": "dim"}


def doctor_plain(report: dict[str, Any]) -> str:
    """The doctor report as plain text: one ``[ok|warn|FAIL|info|skip] name: detail`` line per check."""
    lines = [f"[{_MARK[c['status']]:>4}] {c['name']}: {clean(c['detail'])}" for c in report["checks"]]
    lines.append(report["summary"])
    return "\n".join(lines)


def doctor_rich(report: dict[str, Any]) -> Group:
    """The doctor report for a terminal: a table of checks coloured by outcome."""
    table = Table(title="dsh-search doctor", title_justify="left", title_style="bold")
    table.add_column("", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("detail")
    for c in report["checks"]:
        table.add_row(
            Text(_MARK[c["status"]], style=_STYLE[c["status"]]), c["name"], Text(clean(c["detail"], one_line=False))
        )
    ok = report["ok"]
    return Group(table, Text(report["summary"], style="bold green" if ok else "bold red"))


def config_plain(doc: dict[str, Any]) -> str:
    """``dsh-search config``: the files (first wins) and each value set with the file that set it."""
    lines = ["config files (the first wins):"]
    width = max(len(f["kind"]) for f in doc["files"])
    for f in doc["files"]:
        where = clean(f["path"]) if f["path"] else ""
        lines.append(f"  {f['kind']:<{width}}  {where}{'  ' if where else ''}{clean(f['status'])}")
    values = doc["values"]
    if not values:
        lines += ["", "no value set: every default (docs/SCHEME.md)"]
        return "\n".join(lines)
    lines += ["", "values set:"]
    for key, v in values.items():
        lines.append(f"  {clean(key)} = {clean(json.dumps(v['value'], ensure_ascii=False))}  ({clean(v['from'])})")
    return "\n".join(lines)
