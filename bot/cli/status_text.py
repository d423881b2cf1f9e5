"""``bot status`` for a person: one short section per part, the report of
:mod:`bot.cli.status` (``--json`` prints the same report whole)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bot.reminders.schedule import describe as describe_repeat
from bot.reminders.timeparse import format_delay


def render(report: dict[str, Any]) -> str:
    """The report as lines a person reads top to bottom: the verdict first."""
    lines = [*_daemon(report), f"model: {report['model']}"]
    lines.append("channels: " + _states(report["channels"], "none configured"))
    lines += _queue(report)
    lines += _reminders(report.get("reminders"))
    lines.append("MCP servers: " + _states(report["mcp"], "none configured"))
    lines += _replicas(report.get("replicas"))
    store = report["store"]
    lines.append(f"store: {store['where']}" + (f": {store['error']}" if store["error"] else ""))
    return "\n".join(lines)


def _daemon(report: dict[str, Any]) -> list[str]:
    live = report["live"]
    if live is None:
        return [f"daemon: {report['daemon']} ({report['why']})"]
    verdict = "healthy" if live["status"] == "ok" else "FAILING: " + ", ".join(live["failing"])
    up = live.get("ready_for_s")
    since = f", ready for {format_delay(timedelta(seconds=up))}" if up is not None else ""
    lines = [f"daemon: running at {report['web']} (pid {live['pid']}{since}): {verdict}"]
    if theirs := report.get("daemon_data_dir"):
        lines.append(
            f"  WARNING: the daemon's data folder is {theirs}, this command read "
            f"{report['data_dir']}: run it with the daemon's config and environment "
            f"(data_dir in the config, or BOT_DATA_DIR={theirs})"
        )
    lines += [f"  {name}: {live['parts'][name]}" for name in live["failing"]]
    if live.get("replica"):
        lines.append(f"  replica {live['replica']}, holds {live.get('leases') or 'none'}")
    return lines


def _queue(report: dict[str, Any]) -> list[str]:
    live = report["live"]
    queue = (live or {}).get("queue") or report.get("queue")
    if queue is None:
        return ["queue: unknown (the store was not read)"]
    if queue.get("inbox") is None:  # the daemon's database did not answer in time
        line = f"queue: inbox and outbox unknown ({queue.get('why') or 'not read'})"
    else:
        line = f"queue: inbox {queue['inbox']} unanswered, outbox {queue['outbox']} undelivered"
    if "running" in queue:
        line += f"; {queue['running']} turns running, {queue['waiting']} waiting behind them"
    return [line]


def _reminders(reminders: dict[str, Any] | None) -> list[str]:
    if reminders is None:
        return ["reminders: unknown (the store was not read)"]
    lines = [f"reminders: {reminders['active']} active"]
    if reminders["next"]:
        lines.append("  next:")
        lines += [f"    {_reminder(r)}" for r in reminders["next"]]
    if reminders["waiting_count"]:
        lines.append(f"  due and waiting ({reminders['waiting_count']}):")
        lines += [f"    {_reminder(r)}" for r in reminders["waiting"]]
        hidden = reminders["waiting_count"] - len(reminders["waiting"])
        if hidden:
            lines.append(f"    ... and {hidden} more (bot reminders list)")
    return lines


def _reminder(r: dict[str, Any]) -> str:
    repeat = f", repeats {describe_repeat(r['repeat'])}" if r["repeat"] else ""
    waiting = f"  ({r['waiting']})" if r["waiting"] else ""
    return f"#{r['id']} {r['kind']} at {r['local']}{repeat} [{r['chat']}]: {r['text']}{waiting}"


def _replicas(replicas: list[dict[str, Any]] | None) -> list[str]:
    if replicas is None:  # SQLite: one process, no cluster tables in use
        return []
    live = [r for r in replicas if r["live"]]
    lapsed = len(replicas) - len(live)
    lines = [f"replicas: {len(live)} live" + (f", {lapsed} lapsed" if lapsed else "")]
    for r in replicas:
        state = "live" if r["live"] else "lapsed"
        seen = f"seen {r['seen_ago_ms'] / 1000:.1f} s ago"
        lines.append(f"  {r['replica']} ({state}, pid {r['pid']} on {r['host']}, {seen})")
        lines.append(f"    leases: {_leases(r['leases'])}")
    return lines


def _leases(leases: list[dict[str, Any]]) -> str:
    """``chats`` partitions counted, single leases named, each with its token."""
    chats = [lease for lease in leases if lease["name"].startswith("chats:")]
    singles = [f"{lease['name']}#{lease['token']}" for lease in leases if lease not in chats]
    parts = [f"{len(chats)} chat partitions"] if chats else []
    return ", ".join(parts + singles) or "none"


def _states(states: dict[str, str], empty: str) -> str:
    return ", ".join(f"{name} {state}" for name, state in states.items()) or empty
