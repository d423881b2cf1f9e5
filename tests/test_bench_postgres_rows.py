"""``make bench``'s PostgreSQL rows carry the issue's bounds: a failover past the TTL plus
2 s, a chat answered twice or a slow burst, and a PostgreSQL turn over 1.5x SQLite's
CPU each fail the table (the figures themselves come from bench/bench_postgres.py)."""

from __future__ import annotations

from typing import Any

from bench import bench_postgres
from bench.common import print_targets


def segment(cpu_s: float, server_s: float = 0.0) -> dict[str, Any]:
    return {
        "messages": 100,
        "cpu_s": cpu_s,
        "server_cpu_s": server_s,
        "writers_cpu_s": 0.0,
        "failed": 0,
        "latencies": [0.1, 0.2],
        "bot_api_calls": {"sendMessage": 100},
    }


def test_a_failover_past_the_ttl_plus_two_seconds_is_missed() -> None:
    limit = bench_postgres.TTL_S + 2
    assert print_targets(bench_postgres._failover_rows([8.0, limit])) == []
    assert print_targets(bench_postgres._failover_rows([8.0, limit + 0.1])) != []


def test_a_burst_answered_twice_or_slower_than_the_bound_is_missed() -> None:
    floors = [{"wall_s": 5.0}, {"wall_s": 5.0}]
    burst = {"wall_s": 6.0, "p50_s": 5.0, "p99_s": 6.0, "cpu_s": 5.0, "replies": 1000}
    once = {**burst, "answered": 1000, "twice": 0}
    assert print_targets(bench_postgres._burst_rows(once, floors)) == []
    twice = {**once, "twice": 1, "replies": 1001}
    assert len(print_targets(bench_postgres._burst_rows(twice, floors))) == 1
    slow = {**once, "wall_s": 6.6}
    assert len(print_targets(bench_postgres._burst_rows(slow, floors))) == 1


def test_postgres_cpu_counts_the_server_backends_against_sqlite() -> None:
    lite = [segment(0.5)]
    assert (
        print_targets(bench_postgres._cpu_rows({"sqlite": lite, "postgres": [segment(0.6, 0.15)]}))
        == []
    )
    missed = bench_postgres._cpu_rows({"sqlite": lite, "postgres": [segment(0.6, 0.2)]})
    assert len(print_targets(missed)) == 1  # 0.8 s over 0.5 s: the backends tip it
