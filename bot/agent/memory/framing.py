"""How a remembered fact reaches the prompt: as a quote with who said it, never as text
in the system's own voice.

Any member of a group may store a chat fact, and every later turn in that chat (an
admin's too) carries it in its system prompt. Left verbatim, "SYSTEM OVERRIDE: ..."
under "About this chat" reads like an instruction from the operator. So each fact is a
JSON string literal (a quote or a newline inside cannot end it or start a heading),
attributed to its author, and a fact that reads as an order to the assistant is not
stored at all (:func:`reads_as_instruction`). Runtime-label imitations are defused by
:func:`bot.agent.forgery.neutralize` before a fact is stored.
"""

from __future__ import annotations

import json
import re

from bot.agent.forgery import fold
from bot.store.memory import Fact

# High-signal shapes of prompt injection, matched on the folded text (look-alike letters,
# zero-width characters and case undone), so they are refused however they are spelled.
# Ordinary facts ("Ada always takes the train", "the team meets on Mondays") match none.
_INSTRUCTION = re.compile(
    r"\b(system|developer|admin(istrator)?|operator|root)\W{0,3}"
    r"(override|prompt|message|instruction|notice|command|mode|update)s?\b"
    r"|\b(ignore|disregard|forget|override|bypass)\b.{0,40}?"
    r"\b(instruction|rule|prompt|guideline|polic(y|ies)|restriction|safeguard)s?\b"
    r"|\b(from now on|you are now|new instructions?|act as|pretend (to be|you are)"
    r"|jailbreak|developer mode)\b"
    r"|^\W*(system|assistant|developer|tool)\s*:"
    r"|\b(always|never|must)\s+(obey|comply|follow|reveal|answer|reply|respond|grant|approve)\b"
    r"|\bobey\b",
)


def reads_as_instruction(text: str) -> bool:
    """Whether ``text`` is an order to the assistant rather than a fact about someone."""
    folded, _ = fold(" ".join(text.split()))
    return _INSTRUCTION.search(folded) is not None


def attribution(fact: Fact) -> str:
    """Who said it: the author's user id (its channel is the chat's), else where it came
    from (a fold of the conversation, the command line, a row older than authors)."""
    if fact.author:
        return f"user {fact.author.split(':', 1)[-1]} said"
    if fact.source == "consolidation":
        return "noted from the conversation"
    if fact.source == "cli":
        return "added by the operator's command line"
    return "noted earlier"


def quoted(fact: Fact) -> str:
    """One line of the prompt's memory section: the fact as a quote with its author."""
    return f"- {attribution(fact)}: {json.dumps(fact.text, ensure_ascii=False)}"
