"""What the daemon counts, behind a small interface with a no-op default.

The hot path (the daemon's turn handler, delivery, the model client, the tool box) calls
plain methods on a :class:`Metrics`; only :class:`PrometheusMetrics` knows about
prometheus-client. Each daemon gets its own ``CollectorRegistry`` (never the global
one), so several daemons can live in one process, as they do in tests. Values that
already exist elsewhere (reminder counters, worker counts, outbox depth) are read when
``/metrics`` is scraped instead of being mirrored on every change.

prometheus-client itself (about 10 ms of imports) is loaded at the first count or
scrape, which comes after ``ready:``, not by every start before it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bot.ops.activity import Activity

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.core import Metric

    from bot.agent.toolbox import ToolBox, ToolCall, ToolContext, ToolResult

log = logging.getLogger(__name__)

UNKNOWN_TOOL = "(unknown)"  # the label of every tool name the model made up
TURN_BUCKETS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300)


class Metrics:
    """The counting interface; this base class records nothing (tests, library use)."""

    def message_in(self, channel: str) -> None:
        """A message reached a chat worker."""

    def message_out(self, channel: str, kind: str) -> None:
        """A channel accepted an outbound message."""

    def delivery_failed(self, channel: str) -> None:
        """One send attempt failed (it may be retried)."""

    def turn(self, channel: str, kind: str, outcome: str, seconds: float) -> None:
        """A turn (``kind`` agent or command) ended with ``outcome`` after ``seconds``."""

    def model_call(self, model: str, error: str | None) -> None:
        """One HTTP attempt at a model; ``error`` is the failure kind, None on success."""

    def tool_call(self, name: str, outcome: str) -> None:
        """One tool call ended ``ok`` or ``error``."""

    def task_restarted(self, task: str) -> None:
        """A supervised long-lived task died and is restarted."""


NO_METRICS = Metrics()

Sample = tuple[str, str, float]  # (metric name, help, value)


class _Readings:
    """Counters and gauges read from the daemon's own state at scrape time (a collector:
    the registry only calls ``collect``)."""

    def __init__(self) -> None:
        self.counters: list[Callable[[], Iterable[Sample]]] = []
        self.gauges: list[Callable[[], Iterable[Sample]]] = []
        self.labelled: list[Callable[[], Iterable[Metric]]] = []

    def collect(self) -> Iterable[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        for read in self.counters:
            for name, doc, value in read():
                yield CounterMetricFamily(name, doc, value=value)
        for read in self.gauges:
            for name, doc, value in read():
                yield GaugeMetricFamily(name, doc, value=value)
        for make in self.labelled:
            yield from make()


class _Families:
    """The recorded metric families, in a registry of their own."""

    def __init__(self, readings: _Readings) -> None:
        from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

        self.registry = r = CollectorRegistry(auto_describe=True)
        self.messages_in = Counter(
            "bot_messages_in", "Messages handed to a chat worker", ["channel"], registry=r
        )
        self.messages_out = Counter(
            "bot_messages_out", "Messages a channel accepted", ["channel", "kind"], registry=r
        )
        self.send_failed = Counter(
            "bot_delivery_failures", "Failed send attempts (retried)", ["channel"], registry=r
        )
        self.turns = Histogram(
            "bot_turn_seconds",
            "Turn latency from worker pick-up to reply queued",
            ["channel", "kind", "outcome"],
            buckets=TURN_BUCKETS,
            registry=r,
        )
        self.model_calls = Counter("bot_model_calls", "Model HTTP attempts", ["model"], registry=r)
        self.model_errors = Counter(
            "bot_model_errors", "Failed model attempts by kind", ["model", "kind"], registry=r
        )
        self.tools = Counter(
            "bot_tool_calls", "Tool calls by tool and outcome", ["tool", "outcome"], registry=r
        )
        self.restarts = Counter(
            "bot_task_restarts",
            "Long-lived tasks that died and were restarted",
            ["task"],
            registry=r,
        )
        self.outbox_depth = Gauge(
            "bot_outbox_depth", "Outbound messages not yet delivered", registry=r
        )
        r.register(readings)  # a collector by shape: the registry calls its collect()


class PrometheusMetrics(Metrics):
    """Records into a registry of its own; :meth:`render` is the ``/metrics`` body."""

    def __init__(self) -> None:
        self._readings = _Readings()
        self._refreshers: list[Callable[[], Awaitable[None]]] = []
        self._built: _Families | None = None
        self.activity = Activity()  # the admin page's last hour

    @property
    def _families(self) -> _Families:
        if self._built is None:
            self._built = _Families(self._readings)
        return self._built

    @property
    def registry(self) -> CollectorRegistry:
        return self._families.registry

    def load(self) -> None:
        """Build the families now (the daemon's warm-up after ``ready:``), so that no
        turn's first count pays the import."""
        _ = self._families

    def message_in(self, channel: str) -> None:
        self._families.messages_in.labels(channel).inc()

    def message_out(self, channel: str, kind: str) -> None:
        self._families.messages_out.labels(channel, kind).inc()

    def delivery_failed(self, channel: str) -> None:
        self._families.send_failed.labels(channel).inc()

    def turn(self, channel: str, kind: str, outcome: str, seconds: float) -> None:
        self._families.turns.labels(channel, kind, outcome).observe(seconds)
        self.activity.record(outcome)

    def model_call(self, model: str, error: str | None) -> None:
        families = self._families
        families.model_calls.labels(model).inc()
        if error is not None:
            families.model_errors.labels(model, error).inc()

    def tool_call(self, name: str, outcome: str) -> None:
        self._families.tools.labels(name or "(none)", outcome).inc()

    def task_restarted(self, task: str) -> None:
        self._families.restarts.labels(task).inc()

    def set_outbox_depth(self, depth: int) -> None:
        self._families.outbox_depth.set(depth)

    # -- read at scrape time ---------------------------------------------------------
    def read_counters(self, read: Callable[[], Iterable[Sample]]) -> None:
        """Counters kept elsewhere as plain ints (``read`` must be cheap and sync)."""
        self._readings.counters.append(read)

    def read_gauges(self, read: Callable[[], Iterable[Sample]]) -> None:
        self._readings.gauges.append(read)

    def read_metrics(self, make: Callable[[], Iterable[Metric]]) -> None:
        """Whole metric families, for labelled readings (e.g. per-channel state)."""
        self._readings.labelled.append(make)

    def refresh_before_scrape(self, refresh: Callable[[], Awaitable[None]]) -> None:
        """Async readings (a database count) taken just before each scrape."""
        self._refreshers.append(refresh)

    async def render(self) -> bytes:
        for refresh in self._refreshers:
            try:
                await refresh()
            except Exception as exc:  # a stale gauge beats a failed scrape
                log.warning("metrics refresh failed: %s", exc)
        from prometheus_client import generate_latest

        return generate_latest(self.registry)


def channel_states(states: Callable[[], dict[str, bool]]) -> Callable[[], Iterable[Metric]]:
    """``bot_channel_connected{channel}``: 1 while a channel can send and receive."""

    def make() -> Iterable[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        family = GaugeMetricFamily(
            "bot_channel_connected", "1 while the channel is connected", labels=["channel"]
        )
        for name, up in sorted(states().items()):
            family.add_metric([name], 1.0 if up else 0.0)
        yield family

    return make


CounterSpec = tuple[str, str, str]  # (metric name, field of the reading, help)


def labelled_counters(
    label: str,
    read: Callable[[], Mapping[str, Mapping[str, float]]],
    specs: Sequence[CounterSpec],
) -> Callable[[], Iterable[Metric]]:
    """Counters kept elsewhere per ``label`` value (e.g. per MCP server), read at scrape."""

    def make() -> Iterable[Metric]:
        from prometheus_client.core import CounterMetricFamily

        readings = read()
        for name, key, doc in specs:
            family = CounterMetricFamily(name, doc, labels=[label])
            for value, fields in sorted(readings.items()):
                family.add_metric([value], float(fields.get(key, 0)))
            yield family

    return make


def counters_by(
    name: str,
    doc: str,
    labels: Sequence[str],
    read: Callable[[], Mapping[tuple[str, ...], float]],
) -> Callable[[], Iterable[Metric]]:
    """One counter family kept elsewhere, keyed by a tuple of label values (e.g. a web
    tool's calls by tool and outcome), read at scrape."""

    def make() -> Iterable[Metric]:
        from prometheus_client.core import CounterMetricFamily

        family = CounterMetricFamily(name, doc, labels=list(labels))
        for values, count in sorted(read().items()):
            family.add_metric(list(values), float(count))
        yield family

    return make


def as_sample(name: str, doc: str, value: Any) -> Sample:
    return (name, doc, float(value))


class CountingToolBox:
    """A ToolBox that counts each call by name and outcome, then defers to the real one."""

    def __init__(self, inner: ToolBox, metrics: Metrics) -> None:
        self._inner = inner
        self._metrics = metrics
        self._known: dict[int, tuple[list[dict[str, Any]], frozenset[str]]] = {}

    def definitions(self, workspace: str = "default") -> list[dict[str, Any]]:
        return self._inner.definitions(workspace)

    def concurrency_safe(self, name: str | None) -> bool:
        return self._inner.concurrency_safe(name)

    def offload_exempt(self, name: str | None) -> bool:
        return self._inner.offload_exempt(name)

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        result = await self._inner.execute(call, ctx)
        self._metrics.tool_call(self._label(result.name, ctx), "error" if result.is_error else "ok")
        return result

    def _label(self, name: str, ctx: ToolContext) -> str:
        """The name the model chose is a label only when it is a tool it was offered, so
        invented names cannot create one time series each."""
        if not name:
            return "(none)"
        offered = self._inner.definitions(ctx.workspace_name)
        known = self._known.get(id(offered))
        if known is None or known[0] is not offered:
            known = (offered, frozenset(d["function"]["name"] for d in offered))
            if len(self._known) >= 64:  # tool sets change rarely (MCP reconnects)
                self._known.clear()
            self._known[id(offered)] = known
        return name if name in known[1] else UNKNOWN_TOOL
