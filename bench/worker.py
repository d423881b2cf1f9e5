"""Entry point of a measured child process.

- ``python -m bench.worker [--loop auto|uvloop|asyncio] mod:func '<json>'`` runs
  ``bench.<mod>.<func>(**kwargs)`` (an ``async def`` returning a dict) and prints its
  result as one JSON line.
- ``python -m bench.worker --segments [--loop ...] mod:func '<json>'`` enters
  ``bench.<mod>.<func>(**kwargs)``, an async context manager that sets up (a daemon, a
  warmed-up litellm) and yields a ``segment`` coroutine function; it prints ``READY``,
  then answers each JSON line on stdin with ``segment(**line)``'s dict as one JSON
  line, until stdin closes. Two such workers alive at once let a scenario and its floor
  alternate in short segments (bench/procs.py ``Segments``).

``--loop`` (before the target; default ``asyncio``) is the event loop the worker runs
on, chosen as ``bot run`` chooses with ``event_loop = ...`` (bot/ops/loop.py): a
daemon's workers run on the daemon's default, a bare floor on asyncio's.

Workers may profile their measured phase (``bench.harness.profiled``,
``BENCH_PROFILE=<dir>``).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import sys
from typing import Any, cast, get_args

from bot.ops.loop import EventLoopChoice, run_on

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


async def _serve_segments(factory: Any, kwargs: dict[str, Any]) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with factory(**kwargs) as segment:
        print("READY", flush=True)
        while line := await reader.readline():
            print(json.dumps(await segment(**json.loads(line))), flush=True)


def main() -> None:
    args = sys.argv[1:]
    segments = args[0] == "--segments"
    args = args[segments:]
    loop: EventLoopChoice = "asyncio"
    if args[0] == "--loop":
        if args[1] not in get_args(EventLoopChoice):
            raise SystemExit(f"--loop {args[1]!r}: one of {get_args(EventLoopChoice)}")
        loop, args = cast(EventLoopChoice, args[1]), args[2:]
    target, raw = args
    module_name, func_name = target.split(":")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    for noisy in ("LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    func = getattr(importlib.import_module(f"bench.{module_name}"), func_name)
    kwargs = json.loads(raw)
    if segments:
        run_on(loop, _serve_segments(func, kwargs))
    else:
        print(json.dumps(run_on(loop, func(**kwargs))), flush=True)
    # A worker measures; it does not wait for stray non-daemon threads at exit.
    os._exit(0)


if __name__ == "__main__":
    main()
