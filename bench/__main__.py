"""Run every ``bench/bench_*.py`` scenario (or those named on the command line) and
print one table. Each module exposes ``async def run() -> list[Row]``. This process runs
on the daemon's default event loop, as its in-process scenarios (reminders, governor,
journal) run in ``bot run``; measured workers choose their own (bench/worker.py)."""

from __future__ import annotations

import importlib
import os
import pkgutil
import platform
import sys
import time

from bench.common import Row, machine, print_table, print_targets
from bench.procs import DAEMON_LOOP
from bot.ops.loop import run_on

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


async def _main(names: list[str]) -> int:
    import bench

    modules = sorted(
        m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_")
    )
    if names:
        modules = [m for m in modules if any(n in m for n in names)]
    rows: list[Row] = []
    for name in modules:
        module = importlib.import_module(f"bench.{name}")
        started = time.perf_counter()
        print(f"running {name} ...", file=sys.stderr, flush=True)
        rows.extend(await module.run())
        print(f"  {name} took {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    print(f"Machine: {machine()}; Python {platform.python_version()}")
    print_table(rows)
    if missed := print_targets(rows):
        print(f"targets missed: {'; '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(run_on(DAEMON_LOOP, _main(sys.argv[1:])))
