"""The admin page in a real browser: Debian's headless Chromium driven by Playwright,
against a running daemon (fake channel, fake model). One browser and one daemon for the
module (per xdist worker: `make test` may split the module over two), logged in once;
each test stands on its own, in any order.

A screenshot of each page is written under this module's temp dir (printed at the end)
for a reviewer to look at.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Browser, Page, async_playwright

from bot.app import build_daemon
from bot.daemon import Daemon
from bot.messages import ChatKey, utcnow
from bot.store.access import PairingRequest
from bot.store.memory import Scope
from bot.store.reminders import ReminderStatus
from bot.store.sqlite import sqlite_storage
from tests.conftest import make_settings
from tests.fakes.admin import new_link
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import FakeLLM

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

pytestmark = pytest.mark.asyncio(loop_scope="module")


@dataclass
class Setup:
    daemon: Daemon
    channel: FakeChannel
    llm: FakeLLM
    browser: Browser
    page: Page
    data: Path
    shots: Path

    @property
    def url(self) -> str:
        assert self.daemon.web is not None
        return self.daemon.web.url

    async def shot(self, name: str) -> None:
        await self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def setup(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Setup]:
    root = tmp_path_factory.mktemp("admin-browser")
    shots = root / "screenshots"
    shots.mkdir()
    async with FakeLLM() as llm, async_playwright() as pw:
        channel = FakeChannel()
        settings = make_settings(root / "data", llm.url, admin={"enabled": True})
        daemon = build_daemon(settings, [channel])
        await daemon.start()
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = await browser.new_context(viewport={"width": 1100, "height": 800})
        page = await context.new_page()
        page.on("dialog", lambda dialog: dialog.accept())  # the "are you sure?" prompts
        made = Setup(daemon, channel, llm, browser, page, root / "data", shots)
        try:
            await _log_in(made, page)  # every test starts logged in, in any order
            yield made
        finally:
            print(f"\nadmin page screenshots: {shots}")
            await browser.close()
            await daemon.stop(timeout=2)


async def _log_in(setup: Setup, page: Page) -> str:
    link = await new_link(setup.daemon, setup.url)
    await page.goto(link)
    await page.get_by_role("button", name="Log in").click()
    await page.wait_for_url(f"{setup.url}/admin")
    return link


async def _note(page: Page) -> str:
    return await page.locator(".note").inner_text()


async def test_login_by_link_and_a_used_link_is_refused(setup: Setup) -> None:
    page = setup.page
    link = await _log_in(setup, page)
    assert await page.locator("h1").inner_text() == "Overview"
    assert "chatbot-daemon" in await page.locator(".brand").inner_text()
    await setup.shot("overview")
    again = await page.goto(link)
    assert again is not None and again.status == 410
    assert "already used" in await page.locator("main").inner_text()


async def test_a_soul_edit_reaches_the_next_model_request(setup: Setup) -> None:
    page = setup.page
    await page.goto(f"{setup.url}/admin/workspaces?file=SOUL.md")
    await page.locator("textarea#text").fill("You are Captain Browser, brief and kind.")
    assert "40 / 8,000 chars" in await page.locator(".size").inner_text()  # live, by script
    await page.get_by_role("button", name="Save SOUL.md").click()
    assert "saved as version" in await _note(page)
    await setup.shot("workspaces")
    before = len(setup.llm.requests)
    msg = await setup.channel.say("hello there")
    await setup.channel.wait_for(lambda sent: bool(setup.channel.replies_to(msg)))
    system = setup.llm.requests[before].json["messages"][0]["content"]
    assert "You are Captain Browser, brief and kind." in system


async def test_the_live_size_counts_characters_as_the_server_does(setup: Setup) -> None:
    """The script counted UTF-16 units: an emoji is two, so 4,001 of them showed
    "8,002 / 8,000" in red while the server took them (4,001 characters)."""
    page = setup.page
    await page.goto(f"{setup.url}/admin/workspaces?file=USER.md")
    await page.locator("textarea#text").fill("\U0001f600" * 4001)
    size = page.locator(".size")
    assert await size.inner_text() == "4,001 / 8,000 chars"
    assert "bad" not in (await size.get_attribute("class") or "")
    await page.get_by_role("button", name="Save USER.md").click()
    assert "saved as version" in await _note(page)
    assert await size.inner_text() == "4,001 / 8,000 chars"  # the server's count


async def test_a_file_with_a_nul_or_a_lone_cr_saved_unchanged_changes_nothing(
    setup: Setup,
) -> None:
    """A browser sends a textarea's NUL back as U+FFFD and a lone CR as a line end, so
    saving an unchanged file that held them wrote it again as a new version."""
    page = setup.page
    agents = setup.data / "workspaces" / "default" / "AGENTS.md"
    agents.write_bytes(b"line1\rline2\r\nline3\x00end\n")
    await page.goto(f"{setup.url}/admin/workspaces?file=AGENTS.md")
    records = sqlite_storage(setup.daemon.db).workspaces
    before = await records.latest("default", "AGENTS.md")
    await page.get_by_role("button", name="Save AGENTS.md").click()
    assert "already says that" in await _note(page)
    assert agents.read_bytes() == b"line1\rline2\r\nline3\x00end\n"
    assert await records.latest("default", "AGENTS.md") == before


async def test_a_leading_blank_line_survives_a_save_unchanged(setup: Setup) -> None:
    """HTML drops one newline right after <textarea>: a file starting with a blank line
    lost it when saved from the page without a change."""
    page = setup.page
    user = setup.data / "workspaces" / "default" / "USER.md"
    user.write_text("\nName: Ana\nLikes: tea\n")
    await page.goto(f"{setup.url}/admin/workspaces?file=USER.md")
    assert await page.locator("textarea#text").input_value() == "\nName: Ana\nLikes: tea\n"
    await page.get_by_role("button", name="Save USER.md").click()
    await page.locator(".note").wait_for()
    assert user.read_text() == "\nName: Ana\nLikes: tea\n"


async def test_a_diff_and_a_rollback(setup: Setup) -> None:
    page = setup.page
    soul = setup.data / "workspaces" / "default" / "SOUL.md"
    await page.goto(f"{setup.url}/admin/workspaces?file=SOUL.md")
    await page.locator("textarea#text").fill("A version to roll back from.")
    await page.get_by_role("button", name="Save SOUL.md").click()
    records = sqlite_storage(setup.daemon.db).workspaces
    first = await records.version("default", "SOUL.md", 1)
    assert first is not None and soul.read_text() == "A version to roll back from."
    await page.goto(f"{setup.url}/admin/workspaces?file=SOUL.md&diff=1")
    assert await page.locator("table.diff").count() == 1
    await setup.shot("workspaces-diff")
    history = page.locator("table.list tr")  # the diff's rows hold the template's words too
    row = history.filter(has=page.locator("td", has_text="template")).first
    await row.get_by_role("button", name="rollback").click()
    assert "version 1 restored" in await _note(page)
    assert soul.read_text() == first.text
    latest = await records.latest("default", "SOUL.md")
    assert latest is not None and latest.author == "web:cli"


async def test_a_pairing_approval(setup: Setup) -> None:
    page = setup.page
    now = utcnow()
    request = PairingRequest(
        "KPQR2345", ChatKey("test", "dm-s1"), "s1", "@stranger", now, now.replace(year=now.year + 1)
    )
    access = sqlite_storage(setup.daemon.db).access
    assert await access.add_request(request, max_pending=10)
    await page.goto(f"{setup.url}/admin/access")
    await setup.shot("access")
    row = page.locator("tr", has_text="KPQR2345")
    await row.get_by_role("button", name="approve").click()
    assert "Approved test:s1 (@stranger)." in await _note(page)
    assert await access.is_approved("test", "s1")


async def test_a_reminder_cancel(setup: Setup) -> None:
    page = setup.page
    made = await setup.daemon.reminders.create(
        ChatKey("test", "c1"), "u1", "water the plants", "in 2 hours"
    )
    await page.goto(f"{setup.url}/admin/reminders")
    await setup.shot("reminders")
    row = page.locator("tr", has_text="water the plants")
    await row.get_by_role("button", name="cancel").click()
    assert f"Cancelled #{made.id}" in await _note(page)
    found = await setup.daemon.reminders.get(made.id)
    assert found is not None and found.status is ReminderStatus.CANCELLED


async def test_the_other_pages_render(setup: Setup) -> None:
    memory = sqlite_storage(setup.daemon.db).memory
    await memory.add("default", Scope.USER, "test:u1", "prefers tea over coffee", "cli")
    for name, heading in (
        ("memory", "Memory of workspace default"),
        ("skills", "Skills of workspace default"),
        ("mcp", "MCP servers"),
        ("sessions", "Sessions"),
    ):
        await setup.page.goto(f"{setup.url}/admin/{name}")
        assert await setup.page.locator("h1").inner_text() == heading
        await setup.shot(name)
    phone = await setup.browser.new_context(viewport={"width": 390, "height": 844})
    await phone.add_cookies(await setup.page.context.cookies())
    small = await phone.new_page()
    await small.goto(f"{setup.url}/admin")
    width = await small.evaluate("document.documentElement.scrollWidth")
    await small.screenshot(path=str(setup.shots / "overview-phone.png"), full_page=True)
    await phone.close()
    assert width <= 390  # nothing wider than a phone's screen


async def test_a_post_without_the_csrf_token_is_refused(setup: Setup) -> None:
    page = setup.page
    soul = setup.data / "workspaces" / "default" / "SOUL.md"
    before = soul.read_text()
    await page.goto(f"{setup.url}/admin/workspaces?file=SOUL.md")
    await page.evaluate("document.querySelector('form.editor input[name=csrf]').remove()")
    await page.locator("textarea#text").fill("Forged.")
    async with page.expect_response(lambda r: r.request.method == "POST") as posted:
        await page.get_by_role("button", name="Save SOUL.md").click()
    response: Any = await posted.value
    assert response.status == 403
    assert "nothing was changed" in await page.locator("main").inner_text()
    assert soul.read_text() == before


async def test_a_logged_out_visit_is_refused(setup: Setup) -> None:
    fresh = await setup.browser.new_context()
    page = await fresh.new_page()
    response = await page.goto(f"{setup.url}/admin/workspaces")
    assert response is not None and response.status == 401
    assert "not logged in" in await page.locator("main").inner_text()
    await fresh.close()
