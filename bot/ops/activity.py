"""Turns and errors per minute over the last hour, for the admin page's chart.

Sixty counters in memory, fed by the metrics' turn count (one increment per turn, no
I/O). A restart starts the chart afresh, like the Prometheus counters it sits beside.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

MINUTES = 60
# What a turn's outcome counts as: the rest (a refused usage, a shutdown) is no error.
NOT_ERRORS = frozenset({"ok", "tool_error", "cancelled"})


@dataclass(frozen=True, slots=True)
class Minute:
    ago: int  # 0: the current minute
    turns: int
    errors: int


class Activity:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._turns = [0] * MINUTES
        self._errors = [0] * MINUTES
        self._stamp = [-1] * MINUTES  # which minute each slot holds

    def _slot(self, minute: int) -> int:
        slot = minute % MINUTES
        if self._stamp[slot] != minute:
            self._stamp[slot], self._turns[slot], self._errors[slot] = minute, 0, 0
        return slot

    def record(self, outcome: str) -> None:
        slot = self._slot(int(self._clock() // 60))
        self._turns[slot] += 1
        if outcome not in NOT_ERRORS:
            self._errors[slot] += 1

    def last_hour(self) -> list[Minute]:
        """Oldest first: 60 minutes ending with the current one."""
        now = int(self._clock() // 60)
        out = []
        for ago in range(MINUTES - 1, -1, -1):
            minute, slot = now - ago, (now - ago) % MINUTES
            held = self._stamp[slot] == minute
            out.append(
                Minute(ago, self._turns[slot] if held else 0, self._errors[slot] if held else 0)
            )
        return out
