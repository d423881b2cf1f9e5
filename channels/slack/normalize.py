"""Slack event -> InboundMessage: the only place that reads Slack event payloads.

Pure functions (no I/O), so every odd event shape is unit-testable. Anything the bot
should not answer (its own and other bots' messages, edits, deletions, joins and every
other subtype, unaddressed channel chatter) becomes ``None``; the caller still acks.

The message id is ``"<channel>:<ts>"``: the same for a redelivered event, for the
``message`` + ``app_mention`` twins Slack sends for one mention, and after a restart,
so the daemon's inbox keeps exactly one of them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.messages import WORDLESS, Attachment, ChatKey, InboundMessage

CHANNEL = "slack"
MESSAGE_EVENTS = frozenset({"message", "app_mention"})
# Subtypes that are still a person writing to us; every other subtype is housekeeping.
# Subtypes a person sends: a file, a thread reply also sent to the channel, a /me action.
USER_SUBTYPES = frozenset({"file_share", "thread_broadcast", "me_message"})
CONTEXT_LINE_MAX = 500
_TS = re.compile(r"\d+\.\d+")  # a message's ts: seconds.sequence


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who "we" are (from auth.test): to drop our own echoes and find our mentions."""

    user_id: str
    bot_id: str
    team_id: str


@dataclass(frozen=True, slots=True)
class Candidate:
    """A message a person wrote where the bot can read it; not yet known to be for us."""

    channel: str
    ts: str
    thread_ts: str | None  # the thread it was written in; None at top level
    user: str
    text: str  # the bot's mention stripped, Slack's &amp; escapes undone
    team: str
    channel_type: str  # "im", "mpim", "channel", "group"
    mentioned: bool
    attachments: tuple[Attachment, ...] = ()
    wordless: bool = False  # files and no words: ``text`` is made up ("[file: a.png]")

    @property
    def message_id(self) -> str:
        return message_id(self.channel, self.ts)

    @property
    def direct(self) -> bool:
        return self.channel_type == "im"

    @property
    def key(self) -> ChatKey:
        """DMs answer where they were written; in channels a top-level mention opens a
        thread under itself, so the conversation stays out of the channel."""
        if self.thread_ts:
            return ChatKey(CHANNEL, self.channel, self.thread_ts)
        return ChatKey(CHANNEL, self.channel, None if self.direct else self.ts)


def message_id(channel: str, ts: str) -> str:
    return f"{channel}:{ts}"


def parse_message_id(value: str | None) -> tuple[str, str] | None:
    """``"C1:1700.1"`` -> ``("C1", "1700.1")``; None for ids not made here (a
    follow-up's ``followup:7:...``)."""
    if not value or ":" not in value:
        return None
    channel, _, ts = value.partition(":")
    return (channel, ts) if channel and _TS.fullmatch(ts) else None


def _mention_re(me: BotIdentity) -> re.Pattern[str]:
    return re.compile(rf"<@{re.escape(me.user_id)}(?:\|[^>]*)?>")


def clean_text(text: str, me: BotIdentity) -> tuple[str, bool]:
    """(text without our mention and Slack's escapes, whether we were mentioned). Only
    the gap our mention leaves is tidied: the rest keeps its spacing, so indented
    code or a ``/soul set`` text arrives as typed."""
    gap = re.compile(rf"([ \t]*){_mention_re(me).pattern}[ \t]*")
    mentioned = gap.search(text) is not None
    return html.unescape(readable(gap.sub(_close_gap, text).strip())), mentioned


# <target> or <target|label>: Slack escapes a typed < > & as &lt; &gt; &amp;, so every
# literal angle bracket in an event's text is one of its sequences.
_SEQUENCE = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")


def readable(text: str) -> str:
    """Slack's sequences as a person sees them: ``<#C1|general>`` -> ``#general``,
    ``<@U1|bob>`` -> ``@bob`` (``@U1`` when Slack sends no name: no lookup per message),
    ``<!here>`` -> ``@here``, ``<https://x|the spec>`` -> ``the spec (https://x)``,
    a date its fallback. The model read them raw and wrote ids back at people."""
    return _SEQUENCE.sub(_readable, text)


def _readable(found: re.Match[str]) -> str:
    target, label = found[1], (found[2] or "").strip()
    if target.startswith(("@", "#")):
        return target[0] + (label.removeprefix(target[0]) or target[1:])
    if target.startswith("!"):
        if target.startswith("!date^"):
            return label or target
        return "@" + (label.removeprefix("@") or target[1:].rsplit("^", 1)[-1])
    shown = target.removeprefix("mailto:")
    if not label or label in (target, shown):
        return shown
    if not shown:
        return label
    bare = re.sub(r"^https?://", "", shown)  # a typed example.com Slack linked
    return label if label == bare else f"{label} ({shown})"


def _close_gap(found: re.Match[str]) -> str:
    """A mention and the blanks around it: nothing at a line's end, the line's own
    indentation at its start, one space between words."""
    text, start, end = found.string, found.start(), found.end()
    if end == len(text) or text[end] == "\n":
        return ""
    if start == 0 or text[start - 1] == "\n":
        return found.group(1)
    return " "


def _attachments(event: Mapping[str, Any]) -> tuple[Attachment, ...]:
    """The files shared; a clip recorded in Slack (``slack_audio``) is a voice note, the
    person speaking, where an audio file they upload is only a file."""
    found = []
    for f in event.get("files") or ():
        if isinstance(f, dict) and f.get("id"):
            size = f.get("size")
            found.append(
                Attachment(
                    kind="voice" if f.get("subtype") == "slack_audio" else "file",
                    file_id=str(f["id"]),
                    name=str(f.get("name") or ""),
                    mime_type=str(f.get("mimetype") or ""),
                    size=size if isinstance(size, int) else None,
                )
            )
    return tuple(found)


def _shared(event: Mapping[str, Any], me: BotIdentity) -> str:
    """A message shared (forwarded) into this one, or a pasted message link Slack unfurled:
    its words are in ``attachments``, not in ``text``. Each becomes a quote naming its
    author, so the model reads them as someone else's words, passed on."""
    quotes = []
    for a in event.get("attachments") or ():
        if not isinstance(a, dict) or not (a.get("is_share") or a.get("is_msg_unfurl")):
            continue
        said = clean_text(str(a.get("text") or a.get("fallback") or ""), me)[0]
        if said:
            who = str(a.get("author_name") or a.get("author_subname") or "someone")
            said = said.replace("\n", "\n> ")
            quotes.append(f"> shared message from {who}: {said}")
    return "\n".join(quotes)


def _from_person(event: Mapping[str, Any], me: BotIdentity) -> bool:
    subtype = event.get("subtype")
    if subtype is not None and subtype not in USER_SUBTYPES:
        return False
    if event.get("bot_id") or event.get("bot_profile"):
        return False  # ours or another bot's: never a turn (no bot loops)
    user = event.get("user")
    return isinstance(user, str) and bool(user) and user != me.user_id


def candidate(body: Mapping[str, Any], me: BotIdentity) -> Candidate | None:
    """The person-written message in an ``event_callback`` body, else None."""
    event = body.get("event")
    if not isinstance(event, dict) or event.get("type") not in MESSAGE_EVENTS:
        return None
    if not _from_person(event, me):
        return None
    channel, ts = event.get("channel"), event.get("ts")
    if not (isinstance(channel, str) and channel and isinstance(ts, str) and ts):
        return None
    text, mentioned = clean_text(str(event.get("text") or ""), me)
    shared = _shared(event, me)
    text = f"{text}\n{shared}".strip() if shared else text
    attachments = _attachments(event)
    wordless = not text and bool(attachments)
    if wordless:
        text = f"[file: {attachments[0].name or attachments[0].file_id}]"
    if not text and not mentioned:
        return None
    text = text or "(you were mentioned without a message)"
    channel_type = event.get("channel_type") or ("im" if channel.startswith("D") else "channel")
    thread_ts = event.get("thread_ts")
    return Candidate(
        channel=channel,
        ts=ts,
        thread_ts=thread_ts if isinstance(thread_ts, str) and thread_ts != ts else None,
        user=str(event["user"]),
        text=text,
        team=str(event.get("team") or body.get("team_id") or me.team_id),
        channel_type=str(channel_type),
        mentioned=mentioned or event.get("type") == "app_mention",
        attachments=attachments,
        wordless=wordless,
    )


def addressed(c: Candidate, group_policy: str, engaged_thread: bool) -> bool:
    """DMs always; in channels a mention, a reply in a thread we joined, or policy "all"."""
    return c.direct or c.mentioned or group_policy == "all" or engaged_thread


def context_lines(replies: Sequence[Mapping[str, Any]], c: Candidate, me: BotIdentity) -> list[str]:
    """Earlier messages of the thread as ``author: text`` lines (the new one excluded)."""
    lines = []
    for r in replies:
        if r.get("ts") == c.ts or r.get("subtype") not in (None, *USER_SUBTYPES, "bot_message"):
            continue
        said = "\n".join(
            filter(None, (clean_text(str(r.get("text") or ""), me)[0], _shared(r, me)))
        )
        text = " ".join(said.split())
        if not text:
            continue
        if r.get("user") == me.user_id or (me.bot_id and r.get("bot_id") == me.bot_id):
            who = "you (the bot)"
        else:
            who = _author(r)
        if len(text) > CONTEXT_LINE_MAX:
            text = text[:CONTEXT_LINE_MAX] + "…"
        lines.append(f"{who}: {text}")
    return lines


def _author(r: Mapping[str, Any]) -> str:
    """``@name`` from the profile Slack puts in a message it returns, else ``@<user id>``."""
    profile = r.get("user_profile")
    if isinstance(profile, dict):
        for key in ("display_name", "real_name", "name"):
            name = profile.get(key)
            if isinstance(name, str) and name.strip():
                return "@" + name.strip()
    return f"@{r.get('user') or r.get('bot_id') or '?'}"


def with_context(text: str, lines: Sequence[str]) -> str:
    """Prepend the thread so far as a quote, so the model sees what it is asked about.
    A chat command (``@bot /reminders``) keeps its text as typed, so it stays the
    command; the thread is still in ``extras["thread_context"]``."""
    if not lines or text.startswith("/"):
        return text
    quoted = "\n".join(f"> {line}" for line in lines)
    return f"Earlier in this Slack thread:\n{quoted}\n\n{text}"


def to_inbound(c: Candidate, context: Sequence[str] = ()) -> InboundMessage:
    extras: dict[str, Any] = {
        "workspace_key": f"{CHANNEL}:{c.team}",
        "team_id": c.team,
        "channel_type": c.channel_type,
        "ts": c.ts,
    }
    if context:
        extras["thread_context"] = list(context)
    if c.wordless:  # the thread's earlier messages above "[file: ...]" are nothing to answer
        extras[WORDLESS] = True
    try:
        received = datetime.fromtimestamp(float(c.ts), UTC)
    except ValueError:
        received = datetime.now(UTC)
    return InboundMessage(
        key=c.key,
        user_id=c.user,
        text=with_context(c.text, context),
        message_id=c.message_id,
        attachments=c.attachments,
        extras=extras,
        received_at=received,
        direct=c.direct,
    )
