"""Skills: the selected workspace's skills, enable or disable each, and the files that
could not be read; through :class:`~bot.agent.skills.catalog.SkillCatalog`, as ``/skills``."""

from __future__ import annotations

from aiohttp import web

from bot.admin.site import PageRoute, View, available

PATH = "/admin/skills"


async def skills(view: View) -> web.StreamResponse:
    catalog = available(view.services.agent().skills, "the skill catalog")
    return view.render(
        "skills.html",
        states=catalog.states(view.workspace),
        problems=catalog.problems(view.workspace),
    )


async def toggle(view: View) -> web.StreamResponse:
    enable = view.form.get("enable") == "1"
    state = available(view.services.agent().skills, "the skill catalog").set_enabled(
        view.workspace, view.form.get("name", ""), enable
    )
    now = "enabled" if state.enabled else "disabled"
    return view.done(PATH, f"Skill {state.skill.name} is now {now}.")


ROUTES = [PageRoute("GET", PATH, skills), PageRoute("POST", f"{PATH}/toggle", toggle, PATH)]
