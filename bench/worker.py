"""Entry point of a measured child process: ``python -m bench.worker mod:func '<json>'``.

Runs ``bench.<mod>.<func>(**kwargs)`` (an ``async def`` returning a dict) and prints
its result as one JSON line. Workers
may profile their measured phase (``bench.harness.profiled``, ``BENCH_PROFILE=<dir>``).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def main() -> None:
    target, raw = sys.argv[1], sys.argv[2]
    module_name, func_name = target.split(":")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    for noisy in ("LiteLLM", "litellm", "httpx"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    func = getattr(importlib.import_module(f"bench.{module_name}"), func_name)
    kwargs = json.loads(raw)
    result = asyncio.run(func(**kwargs))
    print(json.dumps(result), flush=True)
    # A worker measures; it does not wait for stray non-daemon threads at exit.
    os._exit(0)


if __name__ == "__main__":
    main()
