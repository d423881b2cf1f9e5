"""``make bench`` fails when a promised figure is missed: the target check itself."""

from __future__ import annotations

import pytest

from bench.common import Row, Target, print_targets


def test_a_ceiling_is_met_up_to_its_limit() -> None:
    assert Target(1.29, 1.3, "x").met
    assert Target(1.3, 1.3, "x").met
    assert not Target(1.31, 1.3, "x").met


def test_a_floor_is_met_from_its_limit() -> None:
    assert Target(1000, 1000, at_least=True).met
    assert not Target(999, 1000, at_least=True).met


def test_one_missed_target_fails_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        Row("turns", "CPU per message", "4.3 ms", target=Target(1.2, 1.3, "x")),
        Row("start-up", "spawn to ready", "612 ms", target=Target(612, 500, " ms")),
        Row("turns", "latency p50", "8 ms"),  # no target: not listed
    ]
    assert print_targets(rows) == ["start-up: spawn to ready"]
    out = capsys.readouterr().out
    assert "| turns: CPU per message | 1.200x | <= 1.300x | yes |" in out
    assert "| start-up: spawn to ready | 612 ms | <= 500 ms | **NO** |" in out
    assert "latency" not in out


def test_a_target_can_name_what_it_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    row = Row("turns", "messages/s", "231", target=Target(0, 0, name="replies that are errors"))
    assert print_targets([row]) == []
    assert "| turns: replies that are errors | 0 | <= 0 | yes |" in capsys.readouterr().out


def test_all_met_misses_nothing() -> None:
    assert print_targets([Row("a", "b", "1", target=Target(1, 2))]) == []
    assert print_targets([Row("a", "b", "1")]) == []
