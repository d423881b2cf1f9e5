"""What the replicas of one bot must agree on, published with each heartbeat.

Replicas are one bot only while they share its configuration. Two that disagree on
``[cluster] partitions`` map a chat to different leases, so both may run it at once
(answers twice, out of order); one that lacks a channel another receives on takes chat
partitions whose replies it cannot send (refused, never delivered). A replica joining
a cluster that disagrees on either is refused with a message naming the difference; a
difference in the model only is reported (a rolling change of model passes through it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

# The terminal of an interactive `bot run`: its chats are this process's own.
LOCAL_CHANNELS = frozenset({"cli"})


@dataclass(frozen=True, slots=True)
class Agreement:
    """This replica's side of what every replica must share."""

    partitions: int
    channels: tuple[str, ...]
    model: str

    @classmethod
    def of(cls, partitions: int, channels: list[str], model: str) -> Agreement:
        shared = tuple(sorted(set(channels) - LOCAL_CHANNELS))
        return cls(partitions=partitions, channels=shared, model=model)

    def text(self) -> str:
        """As stored in the heartbeat row."""
        return json.dumps(
            {"partitions": self.partitions, "channels": list(self.channels), "model": self.model}
        )

    @classmethod
    def parse(cls, text: str) -> Agreement | None:
        """A peer's row; None for a replica too old to publish one (or a torn row)."""
        try:
            raw = json.loads(text)
            return cls(int(raw["partitions"]), tuple(raw["channels"]), str(raw["model"]))
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True, slots=True)
class Differences:
    """How a peer's configuration differs from this replica's."""

    refused: tuple[str, ...]  # would lose or double messages
    noted: tuple[str, ...]  # answers differ by replica, nothing is lost

    def __bool__(self) -> bool:
        return bool(self.refused or self.noted)


def compare(mine: Agreement, theirs: Agreement, peer: str) -> Differences:
    refused: list[str] = []
    if mine.partitions != theirs.partitions:
        refused.append(
            f"cluster.partitions is {mine.partitions} here and {theirs.partitions} on {peer}"
        )
    if mine.channels != theirs.channels:
        refused.append(
            f"channels are {_names(mine.channels)} here and {_names(theirs.channels)} on {peer}"
        )
    noted = []
    if mine.model != theirs.model:
        noted.append(f"llm.model is {mine.model!r} here and {theirs.model!r} on {peer}")
    return Differences(tuple(refused), tuple(noted))


def _names(channels: tuple[str, ...]) -> str:
    return ", ".join(channels) or "none"
