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
# An order is refused only where it is addressed to the assistant: at the start of a
# sentence (an imperative), after "please", or after "you", "the assistant", "the bot",
# "AI" or "system". Ordinary facts that use the same verbs about someone ("Ada will act
# as host", "Ada must reply to her landlord", "Carl wants to ignore the old dress code
# rules", "Ada's kids never obey", "the team meets on Mondays") match none.
_LEAD = r"(?:^|[.!?;:]\s*|\bplease\s+)(?:(?:now|also|then|just|kindly|so|and)\s+)*"
_MODAL = r"(?:(?:will|shall|should|must|can|may|need to|have to|are to|are|is|to|now"
_MODAL += r"|from now on|always|never)\s+)*"
_TO_YOU = r"\b(?:you|(?:the\s+)?(?:assistant|bot|ai|model|system)|chatgpt|claude)\W{0,3}" + _MODAL
_ADDRESSED = f"(?:{_LEAD}|{_TO_YOU})"
_RULES = r"(?:instruction|rule|prompt|guideline|polic(?:y|ie)|restriction|safeguard)s?\b"
_EARLIER = r"(?:previous|prior|above|earlier|preceding|original|system|your)"
_INSTRUCTION = re.compile(
    # a forged header: "SYSTEM OVERRIDE", "system prompt", "admin notice"
    r"\b(?:system|developer|admin(?:istrator)?|operator|root)[\s_-]{0,3}"
    r"(?:override|prompt|message|instruction|notice)s?\b"
    # setting the rules aside: said to the assistant, or naming its own rules
    rf"|{_ADDRESSED}(?:ignore|disregard|forget|override|bypass)\b.{{0,40}}?\b{_RULES}"
    rf"|\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|of|the)\s+)*"
    rf"(?:{_EARLIER}\s+)+(?:\w+\s+)?{_RULES}"
    rf"|\b(?:ignore|disregard|forget|override|bypass)\s+(?:all|any)\s+{_RULES}"
    # a new role or regime for the assistant
    rf"|{_ADDRESSED}(?:from now on|act as|pretend (?:to be|you are))\b"
    r"|\bfrom now on,?\s+(?:you|(?:the\s+)?(?:assistant|bot|ai|model))\b"
    r"|\b(?:you are now|pretend you are|new (?:system )?instructions?\s*:|jailbreak"
    r"|developer mode)\b"
    r"|^\W*(?:system|assistant|developer|tool)\s*:"
    # orders to obey, reveal or grant
    rf"|{_ADDRESSED}(?:(?:always|never|must)\s+)+"
    r"(?:obey|comply|follow|reveal|answer|reply|respond|refuse|grant|approve)\b"
    # a new regime for how the assistant speaks, said after the order
    r"|\b(?:answer|reply|respond|speak|talk|write)\b.{0,40}\bfrom now on\b"
    rf"|{_ADDRESSED}(?:obey|comply|reveal|grant|approve)\b",
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
