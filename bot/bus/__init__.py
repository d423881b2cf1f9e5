"""The bus: :class:`Bus` and the in-process queues in :mod:`bot.bus.base`; the SQLite
journaled bus in :mod:`bot.bus.durable` (imported only where storage is wired)."""

from bot.bus.base import Bus, InProcessBus

__all__ = ["Bus", "InProcessBus"]
