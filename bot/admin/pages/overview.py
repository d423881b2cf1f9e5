"""Overview: health parts, channels, model, queues, the last hour's turns and errors
(an inline SVG chart: no script, no library), version."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from bot.admin.site import PageRoute, View
from bot.ops.activity import Minute

CHART_W, CHART_H = 600, 120


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    width: float
    turns_y: float
    turns_h: float
    errors_y: float
    errors_h: float
    label: str


def bars(minutes: list[Minute]) -> tuple[list[Bar], int]:
    """The chart's bars, scaled to the busiest minute (and that count)."""
    top = max([m.turns for m in minutes] + [1])
    width = CHART_W / len(minutes)
    out = []
    for i, m in enumerate(minutes):
        th = CHART_H * m.turns / top
        eh = CHART_H * m.errors / top
        label = f"{m.ago} min ago: {m.turns} turns, {m.errors} errors"
        out.append(Bar(i * width, width * 0.8, CHART_H - th, th, CHART_H - eh, eh, label))
    return out, top


async def overview(view: View) -> web.StreamResponse:
    services = view.services
    health = await services.health()
    minutes = services.activity.last_hour()
    chart, top = bars(minutes)
    parts = dict(health.parts)
    channels = {k.removeprefix("channel:"): v for k, v in parts.items() if k.startswith("channel:")}
    return view.render(
        "overview.html",
        health=health,
        parts={k: v for k, v in parts.items() if not k.startswith("channel:")},
        info=dict(health.info),
        channels=channels,
        model=services.settings.llm.model,
        queues=await services.queues(),
        chart=chart,
        top=top,
        chart_w=CHART_W,
        chart_h=CHART_H,
        turns=sum(m.turns for m in minutes),
        errors=sum(m.errors for m in minutes),
    )


ROUTES = [PageRoute("GET", "/admin", overview)]
