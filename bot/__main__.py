"""``python -m bot`` is the same CLI as ``bot``."""

from __future__ import annotations

from bot.cli.launch import main

main()
