"""The scripted 40-turn chat both bots hold for the token comparison (bench_tokens.py),
and the fake model's side of it.

The same user texts go to ours and to nanobot-ai, and the fake model answers both the
same way: every fourth turn asks about the user's reminders, so the model first calls
the bot's tool for that (ours: ``list_reminders``; nanobot: its ``cron`` tool with
``action=list``, which is what its gateway offers for reminders), then answers from the
result; the other turns are answered at once. The answer text is the same for both bots:
ours carries it in the ``final_result`` call its output contract requires, nanobot as
plain content. Everything here is deterministic, so two runs send the same requests.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.llm_server import FINAL_RESULT, Reply, text_reply, tool_calls_reply

TURNS = 40
TOOL_EVERY = 4  # every fourth turn calls a tool first

_TOPICS = (
    "Can you suggest a quick dinner I can cook with rice, eggs and spinach?",
    "What is a good way to remember the difference between affect and effect?",
    "How long should I let a sourdough starter rest before feeding it again?",
    "Give me three ideas for a rainy Sunday afternoon with two kids.",
    "What does it mean when a plant's leaves turn yellow at the edges?",
    "How do I politely decline a meeting invitation from a colleague?",
    "Which stretches help after a long day sitting at a desk?",
    "Explain in two sentences why the sky looks blue.",
    "What should I pack for a two-day hiking trip in autumn?",
)
_TOOL_ASK = "Before you answer, check which reminders I have set right now (check {n})."
# (tool name, arguments) per bot, the first offered wins: the same question to each
# (nanobot without its cron service, as the bench's other nanobot rows run it, lists
# its workspace instead: a harmless read-only call).
_LISTING_TOOLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("list_reminders", {}),
    ("cron", {"action": "list"}),
    ("list_dir", {"path": "."}),
)


def user_texts() -> list[str]:
    """The user's 40 messages, each different (the fake finds its turn by the text)."""
    texts = []
    for n in range(1, TURNS + 1):
        if n % TOOL_EVERY == 0:
            texts.append(_TOOL_ASK.format(n=n // TOOL_EVERY))
        else:
            texts.append(f"{_TOPICS[n % len(_TOPICS)]} (question {n})")
    return texts


def answer_to(text: str) -> str:
    """The model's reply to one user message: a few sentences, as a chat reply is."""
    if text.startswith(_TOOL_ASK.split("(", 1)[0]):
        return "You have no reminders set right now. Want me to add one?"
    return (
        f"Here is my answer to {text!r}: keep it simple, start with what you already have, "
        "and adjust as you go. Tell me if you want more detail on any step."
    )


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _turn(messages: list[dict[str, Any]]) -> tuple[str | None, bool]:
    """The script's text of this request's turn (None: not a scripted turn, e.g. a
    memory fold) and whether a tool result already follows it."""
    texts = user_texts()
    for message in reversed(messages):
        if message.get("role") == "tool":
            continue
        if message.get("role") != "user" and message.get("tool_calls"):
            continue
        if message.get("role") != "user":
            return None, False
        said = _content_text(message)
        found = next((t for t in texts if t in said), None)
        tool_seen = messages[-1].get("role") == "tool"
        return found, tool_seen
    return None, False


def respond(payload: Any) -> Reply:
    """The fake model's answer to one request of the scripted chat."""
    messages = payload.get("messages") or []
    offered = {t["function"]["name"] for t in payload.get("tools") or [] if "function" in t}
    text, tool_seen = _turn(messages)
    if text is None:
        return text_reply("{}")  # a call outside the script (a fold): an empty result
    if text.startswith(_TOOL_ASK.split("(", 1)[0]) and not tool_seen:
        for name, arguments in _LISTING_TOOLS:
            if name in offered:
                return tool_calls_reply([(name, arguments)])
    answer = answer_to(text)
    if FINAL_RESULT in offered:
        return tool_calls_reply([(FINAL_RESULT, {"answer": answer})])
    return text_reply(answer)


def serialized(payload: dict[str, Any]) -> bytes:
    """What a provider's prompt cache compares: the tools, then the messages, in order
    (OpenAI and Anthropic both cache tools, system prompt, messages as one prefix)."""
    return json.dumps(
        [payload.get("tools") or [], payload.get("messages") or []],
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    ).encode()


def common_prefix(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo
