"""Shared helpers for benchmarks: rows, the table printer, process measurements."""

from __future__ import annotations

import os
import platform
import resource
import statistics
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Target:
    """A bound the project promises for a figure (README's table, the performance
    issue): checked where the figure is made, so ``make bench`` fails when one is missed
    instead of printing a worse number nobody compares."""

    measured: float
    limit: float
    unit: str = ""
    at_least: bool = False  # a floor (messages delivered), not a ceiling (a ratio)
    name: str = ""  # what is bounded, when it is not the row's metric

    @staticmethod
    def _number(x: float) -> str:
        return f"{x:,.0f}" if float(x).is_integer() else f"{x:.3f}"

    def shown(self) -> str:
        return f"{self._number(self.measured)}{self.unit}"

    @property
    def met(self) -> bool:
        return self.measured >= self.limit if self.at_least else self.measured <= self.limit

    def bound(self) -> str:
        return f"{'>=' if self.at_least else '<='} {self._number(self.limit)}{self.unit}"


@dataclass(frozen=True, slots=True)
class Row:
    scenario: str
    metric: str
    value: str
    note: str = ""
    target: Target | None = None


def print_table(rows: list[Row]) -> None:
    print("| scenario | metric | value | note |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r.scenario} | {r.metric} | {r.value} | {r.note} |")


def print_targets(rows: list[Row]) -> list[str]:
    """The rows that carry a target, as a table; the names of those missed."""
    checked = [(f"{r.scenario}: {r.target.name or r.metric}", r.target) for r in rows if r.target]
    print("\n| target | measured | bound | met |")
    print("| --- | --- | --- | --- |")
    for name, t in checked:
        print(f"| {name} | {t.shown()} | {t.bound()} | {'yes' if t.met else '**NO**'} |")
    return [name for name, t in checked if not t.met]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {cpu}, {platform.system()} {platform.release()}"


def rss_mb() -> float:
    """Current resident set size of this process, in MB (Linux)."""
    try:
        with open("/proc/self/status", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))
    return ordered[k]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0
