"""Binds the metrics readings to a daemon's parts.

This module says which existing counters and states are exported, and reads them
only when ``/metrics`` is scraped (nothing on the hot path).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from bot.dispatcher.dispatcher import Dispatcher
from bot.ops.metrics import PrometheusMetrics, Sample, as_sample, channel_states
from bot.reminders.scheduler import ReminderScheduler
from bot.store.base import Outbox
from channels.base import Channel, channel_health

log = logging.getLogger(__name__)


def bind_metrics(
    metrics: PrometheusMetrics,
    *,
    scheduler: ReminderScheduler,
    dispatcher: Dispatcher,
    outbox: Outbox,
    channels: Mapping[str, Channel],
) -> None:
    """Export what the daemon already tracks, read at scrape time (nothing on the hot path)."""

    def reminders() -> Iterable[Sample]:
        yield as_sample("bot_reminders_scheduled", "Reminders scheduled", scheduler.scheduled)
        yield as_sample("bot_reminders_fired", "Reminder occurrences fired", scheduler.fired)
        yield as_sample("bot_reminders_late", "Occurrences fired late", scheduler.late)
        yield as_sample("bot_reminders_missed", "Occurrences past the grace", scheduler.missed)

    def workers() -> Iterable[Sample]:
        yield as_sample(
            "bot_workers_active", "Chat workers alive (one per chat)", dispatcher.active_workers
        )
        yield as_sample("bot_workers_busy", "Chat workers running a turn", dispatcher.busy_workers)

    async def outbox_depth() -> None:
        metrics.set_outbox_depth(await outbox.depth())

    metrics.read_counters(reminders)
    metrics.read_gauges(workers)
    metrics.read_metrics(
        channel_states(lambda: {n: channel_health(c).ok for n, c in channels.items()})
    )
    metrics.refresh_before_scrape(outbox_depth)
