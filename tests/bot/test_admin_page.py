"""The admin page's handlers through aiohttp's test client, on a running daemon's own
web app: login links and sessions, CSRF, and each page calling the chat's services."""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from typer.testing import CliRunner

from bot.admin.auth import AdminAuth, token_hash
from bot.admin.site import COOKIE
from bot.cli.app import app as cli
from bot.daemon import Daemon
from bot.handlers.pairing import APPROVED, DENIED
from bot.messages import ChatKey, utcnow
from bot.store.access import PairingRequest
from bot.store.memory import Scope
from bot.store.reminders import ReminderStatus
from bot.store.sqlite import sqlite_storage
from tests.conftest import DaemonFactory
from tests.fakes.admin import auth_of, csrf_of, new_link
from tests.fakes.channel import FakeChannel
from tests.fakes.waiting import until

Site = Callable[..., Awaitable[tuple[Daemon, FakeChannel, TestClient[Any, Any]]]]


@pytest_asyncio.fixture
async def site(daemon_factory: DaemonFactory) -> AsyncIterator[Site]:
    clients: list[TestClient[Any, Any]] = []

    async def make(**overrides: Any) -> tuple[Daemon, FakeChannel, TestClient[Any, Any]]:
        overrides.setdefault("admin", {"enabled": True})
        daemon, channel = await daemon_factory(**overrides)
        assert daemon.web is not None
        client = TestClient(TestServer(daemon.web.build_app()))
        await client.start_server()
        clients.append(client)
        return daemon, channel, client

    yield make
    for client in clients:
        await client.close()


async def logged_in(client: TestClient[Any, Any], daemon: Daemon) -> str:
    """Log in with a fresh link; the CSRF token of the session."""
    token = (await new_link(daemon)).split("token=")[1]
    response = await client.post("/admin/login", data={"token": token}, allow_redirects=False)
    assert response.status == 303, await response.text()
    page = await client.get("/admin")
    assert page.status == 200
    return csrf_of(await page.text())


def _editor_of(page: str) -> tuple[str, str]:
    """The editor's text (unescaped) and the hash of the text it started from."""
    text = re.search(r'<textarea id="text"[^>]*>\n(.*?)</textarea>', page, re.S)
    based_on = re.search(r'name="based_on" value="([0-9a-f]{64})"', page)
    assert text is not None and based_on is not None, page
    return html.unescape(text.group(1)), based_on.group(1)


async def opened(client: TestClient[Any, Any], file: str = "SOUL.md") -> str:
    """What a save from a freshly opened editor says it was based on."""
    page = await client.get(f"/admin/workspaces?ws=default&file={file}")
    return _editor_of(await page.text())[1]


async def test_a_link_logs_in_once_with_a_strict_httponly_cookie(site: Site) -> None:
    daemon, _, client = await site()
    link = await new_link(daemon, "http://127.0.0.1:8765")
    assert link.startswith("http://127.0.0.1:8765/admin/login?token=")
    path = link.removeprefix("http://127.0.0.1:8765")
    opened = await client.get(path)  # a link previewer's GET spends nothing
    assert opened.status == 200 and "Log in" in await opened.text()
    token = path.split("token=")[1]
    response = await client.post("/admin/login", data={"token": token}, allow_redirects=False)
    assert response.status == 303 and response.headers["Location"] == "/admin"
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/admin" in cookie
    assert "Secure" not in cookie  # plain http on loopback
    assert (await client.get("/admin")).status == 200
    again = await client.get(path)
    assert again.status == 410 and "already used" in await again.text()
    reused = await client.post("/admin/login", data={"token": token}, allow_redirects=False)
    assert reused.status == 410 and "already used" in await reused.text()
    unknown = await client.get("/admin/login?token=forged")
    assert unknown.status == 404 and "not a valid login link" in await unknown.text()


async def test_an_expired_link_says_so_and_https_makes_the_cookie_secure(site: Site) -> None:
    daemon, _, client = await site(admin={"enabled": True, "public_url": "https://bot.example"})
    past = AdminAuth(
        sqlite_storage(daemon.db).admin, clock=lambda: utcnow() - timedelta(minutes=11)
    )
    stale = (await past.new_link("cli", "")).split("token=")[1]
    expired = await client.get(f"/admin/login?token={stale}")
    assert expired.status == 410 and "expired" in await expired.text()
    token = (await new_link(daemon)).split("token=")[1]
    response = await client.post("/admin/login", data={"token": token}, allow_redirects=False)
    assert "Secure" in response.headers["Set-Cookie"]


async def test_logins_are_rate_limited(site: Site) -> None:
    _, _, client = await site()
    statuses = [(await client.get("/admin/login?token=x")).status for _ in range(11)]
    assert statuses == [404] * 10 + [429]


async def test_a_valid_link_logs_in_while_its_address_is_limited(site: Site) -> None:
    """Behind a reverse proxy every client shares one address: a scanner's failures
    there must not lock the admin out, so only failed tries count against it."""
    daemon, _, client = await site()
    for _ in range(11):
        await client.post("/admin/login", data={"token": "guess"})
    assert (await client.post("/admin/login", data={"token": "guess"})).status == 429
    token = (await new_link(daemon)).split("token=")[1]
    assert (await client.get(f"/admin/login?token={token}")).status == 200
    response = await client.post("/admin/login", data={"token": token}, allow_redirects=False)
    assert response.status == 303


PAGES = [
    "/admin",
    "/admin/workspaces",
    "/admin/reminders",
    "/admin/access",
    "/admin/memory",
    "/admin/skills",
    "/admin/mcp",
    "/admin/sessions",
]
POSTS = [
    "/admin/workspaces/save",
    "/admin/workspaces/rollback",
    "/admin/reminders/cancel",
    "/admin/access/approve",
    "/admin/access/deny",
    "/admin/access/revoke",
    "/admin/memory/forget",
    "/admin/memory/forget-all",
    "/admin/skills/toggle",
    "/admin/sessions/new",
    "/admin/logout",
]


async def test_logged_out_visits_are_refused_and_csrf_less_posts_change_nothing(
    site: Site, tmp_path: Path
) -> None:
    daemon, _, client = await site()
    for path in PAGES:
        response = await client.get(path)
        assert response.status == 401 and "not logged in" in await response.text(), path
    soul = tmp_path / "data" / "workspaces" / "default" / "SOUL.md"
    before = soul.read_text()
    for path in POSTS:  # not even a valid token helps without a session
        response = await client.post(path, data={"text": "x", "file": "SOUL.md"})
        assert response.status == 403, path
    csrf = await logged_in(client, daemon)
    for data in ({"text": "evil"}, {"text": "evil", "csrf": "0" * 64}):
        response = await client.post("/admin/workspaces/save", data={**data, "file": "SOUL.md"})
        assert response.status == 403 and "nothing was changed" in await response.text()
    assert soul.read_text() == before
    versions = await sqlite_storage(daemon.db).workspaces.versions("default", "SOUL.md")
    assert versions == []  # not even the template was recorded: no page read it
    assert csrf  # the forms' token works (below)
    logout = await client.post("/admin/logout", data={"csrf": csrf})
    assert logout.status == 200 and "logged out" in await logout.text()
    assert (await client.get("/admin")).status == 401


async def test_logout_all_from_the_cli_ends_every_session(site: Site, tmp_path: Path) -> None:
    daemon, _, client = await site()
    await logged_in(client, daemon)
    config = tmp_path / "bot.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n[admin]\nenabled = true\n')
    printed = await asyncio.to_thread(
        CliRunner().invoke, cli, ["admin", "link", "--config", str(config)]
    )
    assert printed.exit_code == 0, printed.output
    url = printed.stdout.strip().splitlines()[0]
    assert url.startswith("http://127.0.0.1:8765/admin/login?token=")
    ended = await asyncio.to_thread(
        CliRunner().invoke, cli, ["admin", "logout-all", "--config", str(config)]
    )
    assert ended.exit_code == 0 and "ended 1 admin session" in ended.output
    assert (await client.get("/admin")).status == 401
    token = url.split("token=")[1]  # the CLI's link opens a session in the daemon
    response = await client.post("/admin/login", data={"token": token}, allow_redirects=False)
    assert response.status == 303
    assert (await client.get("/admin/workspaces")).status == 200


async def test_a_session_ends_once_its_admin_is_no_longer_one(site: Site, tmp_path: Path) -> None:
    """An admin taken off `admins` loses the page at the next request (a session slides
    12 h with each use: it would otherwise outlive the removal indefinitely)."""
    from bot.admin.site import COOKIE

    data = tmp_path / "data"
    daemon, _, client = await site(
        channel=FakeChannel("tg", trusted=False), admins=["tg:boss"], data_dir=data
    )
    token = (await auth_of(daemon).new_link("tg:boss", "")).split("token=")[1]
    response = await client.post("/admin/login", data={"token": token}, allow_redirects=False)
    assert response.status == 303
    cookie = {COOKIE: response.cookies[COOKIE].value}
    assert (await client.get("/admin", cookies=cookie)).status == 200
    await daemon.stop(timeout=2)
    daemon, _, client = await site(
        channel=FakeChannel("tg", trusted=False), admins=[], data_dir=data
    )
    assert (await client.get("/admin", cookies=cookie)).status == 401
    posted = await client.post("/admin/logout", data={"csrf": "x"}, cookies=cookie)
    assert posted.status == 403


async def test_persona_edits_from_page_disk_and_chat_meet_in_one_history(
    site: Site, tmp_path: Path
) -> None:
    daemon, channel, client = await site()
    csrf = await logged_in(client, daemon)
    soul = tmp_path / "data" / "workspaces" / "default" / "SOUL.md"
    form = {"csrf": csrf, "ws": "default", "file": "SOUL.md", "based_on": await opened(client)}
    saved = await client.post(
        "/admin/workspaces/save", data={**form, "text": "Be brief.\r\nAlways."}
    )
    assert saved.status == 200 and "saved as version 2" in await saved.text()
    assert soul.read_text() == "Be brief.\nAlways."
    records = sqlite_storage(daemon.db).workspaces
    latest = await records.latest("default", "SOUL.md")
    assert latest is not None and (latest.author, latest.via) == ("web:cli", "web")

    soul.write_text("Edited on disk.")  # shows on the next page load, recorded via disk
    page = await (await client.get("/admin/workspaces?file=SOUL.md")).text()
    assert "Edited on disk." in page and ">disk<" in page and ">web:cli<" in page
    msg = await channel.say("/soul set From chat.")
    await channel.wait_for(lambda sent: bool(channel.replies_to(msg)))
    page = await (await client.get("/admin/workspaces")).text()
    assert "From chat." in page and ">chat<" in page
    config = tmp_path / "bot.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n')
    args = ["workspace", "set", "default", "SOUL.md", "--config", str(config)]
    made = await asyncio.to_thread(CliRunner().invoke, cli, args, input="From the CLI.")
    assert made.exit_code == 0, made.output
    page = await (await client.get("/admin/workspaces")).text()
    assert "From the CLI." in page and ">cli<" in page

    diff = await (await client.get("/admin/workspaces?file=SOUL.md&diff=2")).text()
    assert 'class="diff"' in diff and "Always." in diff and "From the CLI." in diff
    back = await client.post(
        "/admin/workspaces/rollback", data={"csrf": csrf, "file": "SOUL.md", "version": "2"}
    )
    assert "version 2 restored as version 6" in await back.text()
    assert soul.read_text() == "Be brief.\nAlways."

    too_long = "x" * 8001
    form["based_on"] = await opened(client)
    refused = await client.post("/admin/workspaces/save", data={**form, "text": too_long})
    assert refused.status == 200 and "over its budget" in await refused.text()
    assert soul.read_text() == "Be brief.\nAlways."


async def test_reminders_are_paginated_and_cancelled_through_the_service(site: Site) -> None:
    daemon, _, client = await site()
    csrf = await logged_in(client, daemon)
    await daemon.reminders.set_timezone("test", "u2", "Asia/Tokyo")
    made = []
    for n in range(21):
        user = "u1" if n < 20 else "u2"
        key = ChatKey("test", f"chat-{user}")
        made.append(await daemon.reminders.create(key, user, f"task {n}", f"in {n + 1} hours"))
    first = await (await client.get("/admin/reminders")).text()
    assert first.count("task ") == 20 and "page=2" in first and "task 20" not in first
    second = await (await client.get("/admin/reminders?page=2")).text()
    assert "task 20" in second and "Asia/Tokyo" in second and "page=1" in second
    target = made[3]
    done = await client.post("/admin/reminders/cancel", data={"csrf": csrf, "id": str(target.id)})
    assert f"Cancelled #{target.id} reminder" in await done.text()
    found = await daemon.reminders.get(target.id)
    assert found is not None and found.status is ReminderStatus.CANCELLED
    again = await client.post("/admin/reminders/cancel", data={"csrf": csrf, "id": str(target.id)})
    assert "Error: there is no active reminder" in await again.text()


async def test_a_repeat_is_listed_in_words_beside_its_cron(site: Site) -> None:
    daemon, _, client = await site()
    await logged_in(client, daemon)
    key = ChatKey("test", "chat-u1")
    await daemon.reminders.create(key, "u1", "water", "now", recurrence="0 9 * * 1-5")
    page = await (await client.get("/admin/reminders")).text()
    assert "repeats at 09:00 on weekdays (&#39;0 9 * * 1-5&#39;)" in page, page


def _request(code: str, user: str) -> PairingRequest:
    now = utcnow()
    return PairingRequest(
        code, ChatKey("test", f"dm-{user}"), user, f"@{user}", now, now + timedelta(hours=1)
    )


async def test_pairing_approve_deny_revoke_tell_the_stranger(site: Site) -> None:
    daemon, channel, client = await site()
    csrf = await logged_in(client, daemon)
    access = sqlite_storage(daemon.db).access
    for code, user in (("ABCD2345", "s1"), ("EFGH6789", "s2")):
        assert await access.add_request(_request(code, user), max_pending=3)
    page = await (await client.get("/admin/access")).text()
    assert "ABCD2345" in page and "EFGH6789" in page and "expires in" in page
    approved = await client.post("/admin/access/approve", data={"csrf": csrf, "code": "abcd-2345"})
    assert "Approved test:s1 (@s1)." in await approved.text()
    assert await access.is_approved("test", "s1")
    denied = await client.post("/admin/access/deny", data={"csrf": csrf, "code": "EFGH6789"})
    assert "Denied test:s2" in await denied.text()
    await channel.wait_for(lambda sent: len(sent) >= 2)
    told = {m.key.chat_id: m.text for m in channel.sent}
    assert told == {"dm-s1": APPROVED, "dm-s2": DENIED}
    users = await access.approved_users()
    assert [(u.user_id, u.approved_by) for u in users] == [("s1", "web:cli")]
    page = await (await client.get("/admin/access")).text()
    assert "test:s1" in page and "none pending" in page
    revoked = await client.post("/admin/access/revoke", data={"csrf": csrf, "user": "test:s1"})
    assert "Revoked the approval of test:s1." in await revoked.text()
    assert not await access.is_approved("test", "s1")


async def test_memory_forget_one_and_all_of_an_owner(site: Site) -> None:
    daemon, _, client = await site()
    csrf = await logged_in(client, daemon)
    memory = sqlite_storage(daemon.db).memory
    kept = await memory.add("default", Scope.CHAT, "test:c1", "the team meets on Mondays", "cli")
    one = await memory.add("default", Scope.USER, "test:u1", "likes tea", "cli")
    await memory.add("default", Scope.USER, "test:u1", "lives in Lyon", "cli", chat="test:g1")
    await memory.add("other", Scope.USER, "test:u1", "elsewhere", "cli")
    page = await (await client.get("/admin/memory")).text()
    assert "likes tea" in page and "team meets" in page and "elsewhere" not in page
    assert page.count("only in test:g1") == 1  # a fact learned in a group says where it stays
    forgot = await client.post("/admin/memory/forget", data={"csrf": csrf, "id": str(one.id)})
    assert "Forgot: likes tea" in await forgot.text()
    all_of = await client.post(
        "/admin/memory/forget-all", data={"csrf": csrf, "scope": "user", "owner": "test:u1"}
    )
    assert "Forgot 1 fact of test:u1." in await all_of.text()
    assert [f.id for f in await memory.all_facts("default")] == [kept.id]
    assert len(await memory.all_facts("other")) == 1


async def test_skills_toggle_and_load_errors(site: Site, tmp_path: Path) -> None:
    daemon, _, client = await site()
    csrf = await logged_in(client, daemon)
    broken = tmp_path / "data" / "workspaces" / "default" / "skills" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("no front matter here")
    page = await (await client.get("/admin/skills")).text()
    assert "broken" in page and "Load errors" in page
    name = re.findall(r'name="name" value="([^"]+)"', page)[0]
    off = await client.post(
        "/admin/skills/toggle", data={"csrf": csrf, "name": name, "enable": "0"}
    )
    assert f"Skill {name} is now disabled." in await off.text()
    disabled = broken.parent / "disabled.txt"
    assert disabled.read_text() == f"{name}\n"  # the file /skills disable writes
    on = await client.post("/admin/skills/toggle", data={"csrf": csrf, "name": name, "enable": "1"})
    assert "is now enabled" in await on.text() and disabled.read_text() == ""


async def test_overview_sessions_and_mcp_show_the_running_daemon(site: Site) -> None:
    daemon, channel, client = await site(
        mcp={"servers": {"gone": {"url": "http://127.0.0.1:9/mcp", "connect_timeout_s": 1}}}
    )
    csrf = await logged_in(client, daemon)
    msg = await channel.say("hello")
    await channel.wait_for(lambda sent: bool(channel.replies_to(msg)))
    await until(lambda: sum(m.turns for m in daemon.metrics.activity.last_hour()) == 1)
    overview = await (await client.get("/admin")).text()
    assert "openai/fake-model" in overview and "healthy" in overview
    assert "Last hour: 1 turns, 0 errors" in overview and "<svg" in overview
    assert re.search(r"<th>test</th><td class=\"ok\">connected</td>", overview)

    mcp = await (await client.get("/admin/mcp")).text()
    assert "gone" in mcp and "http" in mcp

    stored = len(await daemon.sessions.history(ChatKey("test", "c1")))
    sessions = await (await client.get("/admin/sessions")).text()
    assert "<td>test:c1</td>" in sessions and f"<td>{stored}</td>" in sessions
    fresh = await client.post(
        "/admin/sessions/new", data={"csrf": csrf, "channel": "test", "chat_id": "c1"}
    )
    assert f"the {stored} earlier messages here are forgotten" in await fresh.text()
    assert await daemon.sessions.history(ChatKey("test", "c1")) == []


async def test_admin_command_sends_a_link_to_an_admin_in_a_direct_chat_only(site: Site) -> None:
    channel = FakeChannel("tg", trusted=False)
    daemon, _, client = await site(
        channel=channel, admins=["tg:boss"], access={"dm_policy": "open"}
    )
    group = await channel.say("/admin", user="boss", chat="g1", direct=False)
    stranger = await channel.say("/admin", user="other", chat="c2")
    direct = await channel.say("/admin", user="boss", chat="c1")
    await channel.wait_for(
        lambda sent: all(channel.replies_to(m) for m in (group, stranger, direct))
    )
    assert "one-to-one chat" in channel.replies_to(group)[0].text
    assert "Only an admin" in channel.replies_to(stranger)[0].text
    text = channel.replies_to(direct)[0].text
    assert daemon.web is not None
    link = re.search(r"http://127\.0\.0\.1:(\d+)/admin/login\?token=(\S+)", text)
    assert link is not None and int(link.group(1)) == daemon.web.port  # the bound port
    response = await client.post("/admin/login", data={"token": link.group(2)})
    assert response.status == 200 and "tg:boss" in await response.text()
    assert auth_of(daemon) is not None


async def test_a_refused_persona_save_keeps_the_text_in_the_editor(
    site: Site, tmp_path: Path
) -> None:
    """Over the budget, the save is refused and the page says why, with the text as sent
    still in the editor (it was sent back to the file's old text: everything typed was
    lost); the file is unchanged and the page's links lead to the page, not the form."""
    daemon, _, client = await site()
    csrf = await logged_in(client, daemon)
    soul = tmp_path / "data" / "workspaces" / "default" / "SOUL.md"
    before = soul.read_text()
    draft = "You are Ada, <terse> & kind.\n" + "x" * 8000
    based_on = await opened(client)
    refused = await client.post(
        "/admin/workspaces/save",
        data={
            "csrf": csrf,
            "ws": "default",
            "file": "SOUL.md",
            "based_on": based_on,
            "text": draft,
        },
    )
    page = await refused.text()
    assert refused.status == 200 and soul.read_text() == before
    assert "over its budget of 8,000; nothing was changed" in page
    assert "Your text is below, not saved." in page
    editor = re.search(r'<textarea id="text"[^>]*>\n(.*?)</textarea>', page, re.S)
    assert editor is not None and editor.group(1) == html.escape(draft, quote=False)
    assert "8,029 / 8,000 chars" in page
    assert _editor_of(page)[1] == based_on  # still what the draft started from
    assert 'href="/admin/workspaces?ws=default&amp;file=AGENTS.md"' in page


async def test_a_save_over_an_edit_made_since_opening_is_refused_with_the_text_kept(
    site: Site, tmp_path: Path
) -> None:
    """Two tabs open SOUL.md; the first saves, then the second: the second is refused
    (it was based on the text the first replaced), says who changed it, and keeps what
    was typed; saved again from there, it replaces that version knowingly. An edit in
    chat meanwhile is caught the same way."""
    daemon, channel, client = await site()
    csrf = await logged_in(client, daemon)
    soul = tmp_path / "data" / "workspaces" / "default" / "SOUL.md"
    url = "/admin/workspaces?ws=default&file=SOUL.md"
    text_a, base_a = _editor_of(await (await client.get(url)).text())
    text_b, base_b = _editor_of(await (await client.get(url)).text())
    form = {"csrf": csrf, "ws": "default", "file": "SOUL.md"}
    a = await client.post(
        "/admin/workspaces/save",
        data={**form, "based_on": base_a, "text": text_a + "\nAlways answer in French."},
    )
    assert a.status == 200 and "saved as version 2" in await a.text()
    draft = text_b + "\nKeep answers short."
    b = await client.post(
        "/admin/workspaces/save", data={**form, "based_on": base_b, "text": draft}
    )
    page = await b.text()
    assert b.status == 409, page
    assert "SOUL.md of workspace default changed since you opened it: it is now version 2," in page
    assert "by web:cli via web" in page and "Your text is below, not saved" in page
    assert soul.read_text().endswith("Always answer in French.")
    kept, base_now = _editor_of(page)
    assert kept == draft and base_now != base_b  # based now on the French version
    again = await client.post(
        "/admin/workspaces/save", data={**form, "based_on": base_now, "text": kept}
    )
    assert again.status == 200 and "saved as version 3" in await again.text()
    assert soul.read_text() == draft

    _, opened = _editor_of(await (await client.get(url)).text())
    msg = await channel.say("/soul set From chat.")
    await channel.wait_for(lambda sent: bool(channel.replies_to(msg)))
    late = await client.post(
        "/admin/workspaces/save", data={**form, "based_on": opened, "text": "From the page."}
    )
    assert late.status == 409 and "via chat" in await late.text()
    assert soul.read_text() == "From chat."
    refusals = await sqlite_storage(daemon.db).workspaces.refusals("default")
    assert [r[3] for r in refusals] == ["changed since read"] * 2


async def test_a_change_for_a_workspace_gone_since_is_refused_not_made_in_the_default(
    site: Site, tmp_path: Path
) -> None:
    """A page opened for workspace team, whose folder is then renamed: its save,
    rollback, skill toggle and forget are refused by name (each used to land in the
    default workspace); a page view of it still shows the default."""
    daemon, _, client = await site()
    csrf = await logged_in(client, daemon)
    root = tmp_path / "data" / "workspaces"
    (root / "team").mkdir()
    page = await (await client.get("/admin/workspaces?ws=team&file=SOUL.md")).text()
    assert "<h1>Workspace team</h1>" in page
    (root / "team").rename(root / "team-old")
    soul = root / "default" / "SOUL.md"
    before = soul.read_text()
    posts = [
        ("/admin/workspaces/save", {"file": "SOUL.md", "text": "You are the TEAM bot."}),
        ("/admin/workspaces/rollback", {"file": "SOUL.md", "version": "1"}),
        ("/admin/skills/toggle", {"name": "weather-planning", "enable": "0"}),
        ("/admin/memory/forget-all", {"scope": "user", "owner": "test:u1"}),
    ]
    for path, form in posts:
        response = await client.post(path, data={"csrf": csrf, "ws": "team", **form})
        text = await response.text()
        assert response.status == 200 and "Error: there is no workspace team" in text, path
    assert soul.read_text() == before
    assert not (root / "default" / "skills" / "disabled.txt").exists()
    versions = await sqlite_storage(daemon.db).workspaces.versions("default", "SOUL.md")
    assert [v.via for v in versions] == ["template"]  # recorded by the page shown after
    shown = await client.get("/admin/workspaces?ws=team")
    assert shown.status == 200 and "<h1>Workspace default</h1>" in await shown.text()


async def test_a_page_that_cannot_be_shown_says_why_instead_of_redirecting_to_itself(
    site: Site, tmp_path: Path
) -> None:
    """A SOUL.md that is a symlink (refused, never followed) made the page redirect to
    itself with the note, for ever; a diff of a version that does not exist lost the
    file asked for. Both are shown in place, with a 4xx status."""
    daemon, _, client = await site()
    await logged_in(client, daemon)
    missing = await client.get(
        "/admin/workspaces?ws=default&file=AGENTS.md&diff=7", allow_redirects=False
    )
    page = await missing.text()
    assert missing.status == 404, missing.headers.get("Location")
    assert "Error: AGENTS.md of workspace default has no version 7" in page
    assert '<label for="text">AGENTS.md</label>' in page  # the file asked for, not SOUL.md
    soul = tmp_path / "data" / "workspaces" / "default" / "SOUL.md"
    target = tmp_path / "soul-elsewhere.md"
    target.write_text("I am a bot.\n")
    soul.unlink()
    soul.symlink_to(target)
    url = "/admin/workspaces?ws=default&file=SOUL.md"
    shown = await client.get(url, allow_redirects=False)
    page = await shown.text()
    assert shown.status == 409 and "Location" not in shown.headers
    assert "Error: SOUL.md is a symbolic link" in page, page
    assert f'<a href="{html.escape(url)}">Try again</a>' in page


async def test_numbers_that_are_no_row_numbers_are_refused_not_a_server_error(
    site: Site,
) -> None:
    """ "²" passes str.isdigit but not int(); 20 digits overflow SQLite's INTEGER; a
    non-ASCII CSRF value made hmac.compare_digest raise: each was a 500."""
    daemon, _, client = await site()
    csrf = await logged_in(client, daemon)
    huge = "9" * 20
    for url in (
        "/admin/reminders?page=\u00b2",
        f"/admin/sessions?page={huge}",
        f"/admin/memory?page={2**63 - 1}",  # a row number, but its offset overflows
    ):
        response = await client.get(url)
        assert response.status == 200 and 'aria-current="page"' in await response.text(), url
    for diff in ("\u00b2", huge):
        response = await client.get(f"/admin/workspaces?file=AGENTS.md&diff={diff}")
        assert response.status == 404, diff
        assert f"AGENTS.md of workspace default has no version {diff}" in await response.text()
    refusals = [
        ("/admin/memory/forget", {"id": "\u00b2"}, "there is no fact #\u00b2"),
        ("/admin/reminders/cancel", {"id": huge}, f"there is no active reminder #{huge}"),
        ("/admin/workspaces/rollback", {"file": "SOUL.md", "version": "\u00b2"}, "choose a"),
    ]
    for path, form, said in refusals:
        response = await client.post(path, data={"csrf": csrf, **form})
        assert response.status == 200 and f"Error: {said}" in await response.text(), path
    forged = await client.post("/admin/memory/forget", data={"csrf": "\u00e9", "id": "1"})
    assert forged.status == 403 and "nothing was changed" in await forged.text()


async def test_a_save_that_does_not_say_what_it_started_from_is_refused_with_its_text(
    site: Site, tmp_path: Path
) -> None:
    """A form that names no starting text (a tab opened before forms carried it) cannot
    be checked against edits since: refused, the text kept, and saved from there."""
    daemon, _, client = await site()
    csrf = await logged_in(client, daemon)
    soul = tmp_path / "data" / "workspaces" / "default" / "SOUL.md"
    before = soul.read_text()
    form = {"csrf": csrf, "ws": "default", "file": "SOUL.md", "text": "Keep answers short."}
    refused = await client.post("/admin/workspaces/save", data=form)
    page = await refused.text()
    assert refused.status == 409 and soul.read_text() == before
    assert "did not say which text of SOUL.md it was opened with" in page
    kept, based_on = _editor_of(page)
    assert kept == "Keep answers short."
    saved = await client.post("/admin/workspaces/save", data={**form, "based_on": based_on})
    assert saved.status == 200 and soul.read_text() == "Keep answers short."


async def test_a_diff_of_many_changed_lines_leaves_chats_and_healthz_answered(
    site: Site,
) -> None:
    """difflib's HtmlDiff matched each changed line character by character, on the event
    loop: a diff of 400 changed short lines held the whole daemon for 81 s (no chat
    answered, /healthz hung). A chat and /healthz asked with it are answered, and the
    diff shows every changed line side by side."""
    daemon, channel, client = await site()
    csrf = await logged_in(client, daemon)
    form = {"csrf": csrf, "ws": "default", "file": "USER.md"}
    for bullet in "-*":
        text = "\n".join(f"{bullet} likes item {n:03d}" for n in range(400))
        based_on = await opened(client, "USER.md")
        saved = await client.post(
            "/admin/workspaces/save", data={**form, "based_on": based_on, "text": text}
        )
        assert "saved as version" in await saved.text()

    async def chat() -> None:
        msg = await channel.say("hello while a diff renders")
        await channel.wait_for(lambda sent: bool(channel.replies_to(msg)))

    async def health() -> int:
        return (await client.get("/healthz")).status

    async def diff() -> str:
        return await (await client.get("/admin/workspaces?file=USER.md&diff=2")).text()

    page, _, status = await asyncio.wait_for(asyncio.gather(diff(), chat(), health()), 30)
    assert status == 200
    assert page.count('class="line diff_chg"') == 800  # both sides of 400 lines
    assert "- likes item 399" in page and "* likes item 399" in page


async def test_a_database_another_process_holds_is_a_page_saying_so_not_a_500(
    site: Site,
) -> None:
    """Another process holding the SQLite write lock (a backup, a sqlite3 shell) made
    every admin page a bare "500 Internal Server Error" after 5 s: each load moved the
    session's expiry, a write. Pages read now (the expiry moves at most every few
    minutes, and never waits for the lock), and a change that must write says the
    database is busy, 503."""
    daemon, _, client = await site()
    await logged_in(client, daemon)
    for path in ("/admin/workspaces", "/admin/memory"):  # first looks record templates
        assert (await client.get(path)).status == 200
    earlier = AdminAuth(
        sqlite_storage(daemon.db).admin, clock=lambda: utcnow() - timedelta(hours=1)
    )
    _, session = await earlier.log_in((await new_link(daemon)).split("token=")[1])
    assert session is not None  # it lapses in 11 h: a page load moves that to 12 h
    client.session.cookie_jar.clear()
    client.session.cookie_jar.update_cookies({COOKIE: session.token})
    expiry = "SELECT expires_at FROM admin_tokens WHERE token_hash = ?"
    with contextlib.closing(sqlite3.connect(daemon.db.path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        for path in ("/admin/workspaces", "/admin/memory"):
            shown = await client.get(path)
            assert shown.status == 200, await shown.text()
        fresh = await client.post(
            "/admin/sessions/new", data={"csrf": session.csrf, "channel": "test", "chat_id": "c1"}
        )
        page = await fresh.text()
        assert fresh.status == 503 and fresh.content_type == "text/html", page
        assert "The database is busy, try again in a moment: nothing was changed." in page
        other.execute("ROLLBACK")
    assert (await client.get("/admin")).status == 200
    moved = await daemon.db.fetchone(expiry, (token_hash(session.token),))
    assert moved is not None and moved[0] > (utcnow() + timedelta(hours=11, minutes=50)).isoformat()
    assert (await client.get("/admin")).status == 200
    assert await daemon.db.fetchone(expiry, (token_hash(session.token),)) == moved  # no write


def _kept_of(page: str) -> str | None:
    """The typed text a refusal page shows to copy (unescaped), if any."""
    found = re.search(r'<textarea class="kept" readonly[^>]*>\n(.*?)</textarea>', page, re.S)
    return html.unescape(found.group(1)) if found else None


async def test_a_save_refused_for_a_session_gone_or_changed_shows_the_typed_text(
    site: Site, tmp_path: Path
) -> None:
    """A persona save refused because the session ended (idle, logged out, logout-all),
    because a login in another tab replaced the cookie (the page's token is the older
    session's), or because the database was busy, answered a page without the text:
    everything typed was lost. Each refusal shows it, escaped, to copy; the stale
    token's page says the session changed, not that the token was missing."""
    daemon, _, client = await site()
    csrf = await logged_in(client, daemon)
    soul = tmp_path / "data" / "workspaces" / "default" / "SOUL.md"
    before = soul.read_text()
    draft = "You are Ada, <terse> & kind.\r\nSecond line: </textarea><b>not markup</b>"
    form = {"ws": "default", "file": "SOUL.md", "based_on": await opened(client), "text": draft}
    await auth_of(daemon).log_out_all()
    gone = await client.post("/admin/workspaces/save", data={**form, "csrf": csrf})
    page = await gone.text()
    assert gone.status == 403 and "not logged in" in page
    assert _kept_of(page) == draft and "<b>not" not in page

    old_csrf = await logged_in(client, daemon)
    await logged_in(client, daemon)  # another tab: this browser's cookie is a new session
    changed = await client.post("/admin/workspaces/save", data={**form, "csrf": old_csrf})
    page = await changed.text()
    assert changed.status == 403 and _kept_of(page) == draft
    assert "opened in an earlier session of this browser" in page
    assert "came without the page's security token" not in page
    missing = await client.post("/admin/workspaces/save", data=form)
    assert "came without the page's security token" in await missing.text()

    csrf = await logged_in(client, daemon)
    with contextlib.closing(sqlite3.connect(daemon.db.path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")
        busy = await client.post("/admin/workspaces/save", data={**form, "csrf": csrf})
        other.execute("ROLLBACK")
    page = await busy.text()
    assert busy.status == 503 and _kept_of(page) == draft, page
    assert soul.read_text() == before
    logout = await client.post("/admin/logout", data={"csrf": csrf})  # no text: none shown
    assert logout.status == 200 and _kept_of(await logout.text()) is None


async def test_a_persona_file_not_in_utf8_keeps_the_page_and_can_be_rolled_back(
    site: Site, tmp_path: Path
) -> None:
    """A SOUL.md saved in Latin-1 made the Workspaces page a dead end: an error page with
    no tabs, editor or history, and a rollback to a good version refused. The page now
    shows the tabs and history, says why there is no editor, and a rollback writes the
    version chosen, as UTF-8."""
    daemon, _, client = await site()
    csrf = await logged_in(client, daemon)
    await opened(client)  # version 1: the template
    soul = tmp_path / "data" / "workspaces" / "default" / "SOUL.md"
    soul.write_text("Sois poli, \u00e9l\u00e8ve.", encoding="utf-8")
    assert ">disk<" in await (await client.get("/admin/workspaces")).text()  # version 2
    soul.write_bytes("Tu es un assistant tr\u00e8s poli.".encode("latin-1"))
    shown = await client.get("/admin/workspaces")
    page = await shown.text()
    assert shown.status == 409, page
    assert "Error: SOUL.md of workspace default is not UTF-8 text (byte 21)" in page
    assert "cannot be edited here while it is not UTF-8 text" in page
    assert 'href="/admin/workspaces?ws=default&amp;file=AGENTS.md"' in page
    assert '<textarea id="text"' not in page and "diff=2" in page and "diff=1" in page
    back = await client.post(
        "/admin/workspaces/rollback", data={"csrf": csrf, "file": "SOUL.md", "version": "2"}
    )
    assert back.status == 200 and "version 2 restored as version 3" in await back.text()
    assert soul.read_text(encoding="utf-8") == "Sois poli, \u00e9l\u00e8ve."
