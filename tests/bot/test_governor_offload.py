"""Tool-result offload: big results go to a file, the message keeps a reference and an
excerpt, exempt tools are never offloaded, and a session's files leave with it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.agent.governor.offload import RESULTS_DIR, ToolResultOffload, head_tail
from bot.agent.toolbox import FINAL_RESULT
from bot.messages import ChatKey
from bot.store.db import Database
from bot.store.sessions import SessionStore
from tools.loader import build_registry

KEY = ChatKey("telegram", "100")


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[SessionStore]:
    db = Database(tmp_path / "bot.db")
    await db.open()
    yield SessionStore(db)
    await db.close()


def test_head_tail_keeps_both_ends_within_the_limit():
    text = "HEAD" + "-" * 10_000 + "TAIL"
    cut = head_tail(text, 600)
    assert len(cut) <= 600
    assert cut.startswith("HEAD") and cut.endswith("TAIL")
    assert "characters omitted" in cut
    assert head_tail("short", 600) == "short"


async def test_big_result_is_written_and_referenced(tmp_path: Path):
    ws = tmp_path / "workspaces" / "default"
    offload = ToolResultOffload(tmp_path / "workspaces", threshold=1_000)
    big = "first line\n" + "y" * 20_000 + "\nlast line"
    stored = await offload.normalize(
        big, workspace=ws, session_id=7, call_id="call/1", exempt=False
    )
    files = list((ws / RESULTS_DIR).iterdir())
    assert [f.name.startswith("7-call_1-") for f in files] == [True]
    assert files[0].read_text(encoding="utf-8") == big
    assert str(files[0].resolve()) in stored
    assert "first line" in stored and stored.endswith("last line")
    assert len(stored) < 1_000


async def test_small_and_exempt_results_stay_inline(tmp_path: Path):
    offload = ToolResultOffload(tmp_path, threshold=100)
    ws = tmp_path / "default"
    assert await offload.normalize("x" * 100, workspace=ws, session_id=1, call_id="a", exempt=False)
    huge = "z" * 5_000
    kept = await offload.normalize(huge, workspace=ws, session_id=1, call_id="b", exempt=True)
    assert kept == huge
    assert not (ws / RESULTS_DIR).exists()


async def test_unwritable_folder_falls_back_to_a_cut(tmp_path: Path):
    blocker = tmp_path / "default"
    blocker.write_text("a file where the workspace folder should be")
    offload = ToolResultOffload(tmp_path, threshold=500)
    out = await offload.normalize(
        "q" * 5_000, workspace=blocker, session_id=1, call_id="c", exempt=False
    )
    assert len(out) <= 500


def test_registry_marks_final_result_and_flagged_tools_exempt():
    registry = build_registry()
    assert registry.offload_exempt(FINAL_RESULT)
    assert not registry.offload_exempt("no_such_tool")
    assert not registry.offload_exempt(None)
    for name in registry.names():
        tool = registry.get(name)
        assert tool is not None
        assert registry.offload_exempt(name) == (tool.offload_exempt or name == FINAL_RESULT)


async def test_clear_removes_the_sessions_files_only(tmp_path: Path, store: SessionStore):
    root = tmp_path / "workspaces"
    offload = ToolResultOffload(root, threshold=10)
    store.add_clear_hook(offload.remove_session)
    sid = await store.session_id(KEY)
    other = await store.session_id(ChatKey("telegram", "200"))
    ws = root / "default"
    await offload.normalize("m" * 100, workspace=ws, session_id=sid, call_id="a", exempt=False)
    await offload.normalize("m" * 100, workspace=ws, session_id=other, call_id="a", exempt=False)
    await store.append(KEY, [{"role": "user", "content": "hi"}])
    await store.save_summary(KEY, "they said hi", 1)

    assert await store.clear(KEY) == 1
    left = [p.name for p in (ws / RESULTS_DIR).iterdir()]
    assert len(left) == 1 and left[0].startswith(f"{other}-")
    assert await store.summary(KEY) is None


async def test_a_failing_clear_hook_does_not_fail_clear(store: SessionStore):
    def broken(session_id: int, key: ChatKey) -> None:
        raise OSError("disk gone")

    store.add_clear_hook(broken)
    await store.append(KEY, [{"role": "user", "content": "hi"}])
    assert await store.clear(KEY) == 1
