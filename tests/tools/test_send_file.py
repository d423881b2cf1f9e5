"""send_file: a file from the workspace's files folder, or content the model wrote, joins
the turn's answer; anything outside the folder (a path out, a symbolic link) is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.agent.toolbox import ToolCall, ToolContext
from bot.errors import ToolError
from bot.messages import ChatKey
from tools.loader import build_registry
from tools.send_file import write_new


def _text(path: str) -> str:
    return Path(path).read_text()


def _ctx(workspace: Path) -> ToolContext:
    return ToolContext(chat_key=ChatKey("test", "c1"), user_id="u1", workspace=workspace)


async def _send(ctx: ToolContext, **arguments: str) -> tuple[bool, str]:
    result = await build_registry(extra_plugins=False).execute(
        ToolCall("c1", "send_file", arguments), ctx
    )
    return result.is_error, result.content


async def test_a_file_from_the_folder_and_written_content_join_the_answer(tmp_path: Path) -> None:
    files = tmp_path / "ws" / "files"
    (files / "charts").mkdir(parents=True)
    (files / "charts" / "q3.png").write_bytes(b"\x89PNG data")
    ctx = _ctx(tmp_path / "ws")
    failed, said = await _send(ctx, path="charts/q3.png", caption="Q3 sales")
    assert not failed and said == "q3.png (9 bytes) will be sent with your answer."
    failed, said = await _send(ctx, content="a,b\n1,2\n", name="table.csv")
    assert not failed
    failed, said = await _send(ctx, content="again", name="table.csv")  # never overwritten
    chart, table, again = ctx.outgoing
    assert (chart.kind, chart.name, chart.caption, chart.size) == ("photo", "q3.png", "Q3 sales", 9)
    assert Path(chart.file_id) == files / "charts" / "q3.png"
    assert (table.kind, table.mime_type) == ("document", "text/csv")
    assert _text(table.file_id) == "a,b\n1,2\n"
    assert Path(again.file_id).name == "table-2.csv" and _text(again.file_id) == "again"


@pytest.mark.parametrize(
    "path",
    ["../secret.txt", "/etc/passwd", "~/.ssh/id_rsa", "link.txt", "linked/inner.txt", "none.txt"],
)
async def test_paths_outside_the_folder_and_links_are_refused(tmp_path: Path, path: str) -> None:
    workspace = tmp_path / "ws"
    files = workspace / "files"
    files.mkdir(parents=True)
    (workspace / "secret.txt").write_text("the config")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "inner.txt").write_text("x")
    os.symlink(workspace / "secret.txt", files / "link.txt")
    os.symlink(outside, files / "linked")
    ctx = _ctx(workspace)
    failed, said = await _send(ctx, path=path)
    assert failed and said.startswith("Error: ")
    assert ctx.outgoing == []


async def test_a_files_folder_that_is_a_link_and_bad_arguments_are_refused(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    os.symlink(tmp_path, workspace / "files")
    failed, said = await _send(_ctx(workspace), content="x", name="a.txt")
    assert failed and "symbolic link" in said
    failed, said = await _send(_ctx(tmp_path), path="a", content="b")
    assert failed and "either path" in said
    failed, said = await _send(_ctx(tmp_path), content="b", name=".bashrc")
    assert failed and "needs a file name" in said


async def test_what_the_bot_wrote_in_one_chat_is_not_sent_in_another(tmp_path: Path) -> None:
    """The files folder serves every chat of the workspace (the default one serves them
    all): a file the bot wrote in someone's direct chat, or an MCP tool's result there,
    was sent to any group member who named it."""
    workspace = tmp_path / "ws"
    (workspace / "files").mkdir(parents=True)
    (workspace / "files" / "menu.pdf").write_bytes(b"%PDF shared")
    private = ToolContext(chat_key=ChatKey("telegram", "42"), user_id="42", workspace=workspace)
    failed, _ = await _send(private, content="salary: 1", name="report.md")
    assert not failed
    (written,) = private.outgoing
    mcp_result = Path(written.file_id).parent / "mcp" / "get_mail-1.pdf"
    mcp_result.parent.mkdir()
    mcp_result.write_bytes(b"%PDF mail")
    group = ToolContext(chat_key=ChatKey("telegram", "-100"), user_id="7", workspace=workspace)
    for path in ("report.md", "mcp/get_mail-1.pdf", "../chat_files/telegram-42/report.md"):
        failed, said = await _send(group, path=path)
        assert failed and said.startswith("Error: "), path
    assert group.outgoing == []
    failed, _ = await _send(group, path="menu.pdf")  # the shared folder serves every chat
    failed_again, _ = await _send(private, path="report.md")  # and a chat its own files
    assert not failed and not failed_again
    assert [_text(a.file_id) for a in (group.outgoing[0], private.outgoing[1])] == [
        "%PDF shared",
        "salary: 1",
    ]


@pytest.mark.parametrize("name", ["../out.png", "a/b.png", "a\\b.png", "..", ".", "", "a\0.png"])
def test_write_new_writes_only_a_plain_name_inside_its_folder(tmp_path: Path, name: str) -> None:
    """Its callers name the file (an MCP tool's name went into it): a name that is not
    one plain path part is refused, whatever the caller cleaned or did not."""
    folder = tmp_path / "chat" / "mcp"
    with pytest.raises(ToolError):
        write_new(folder, name, b"x")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    assert write_new(folder, "..chart.png", b"x") == folder / "..chart.png"  # a plain name


def test_write_new_takes_the_number_after_the_highest_however_many_copies(
    tmp_path: Path,
) -> None:
    """A report written daily under one name: the 1000th copy was refused ('too many
    files named') after 999 failed opens; the next number now comes from one listing,
    and after housekeeping removed old copies it goes on past the highest left."""
    folder = tmp_path / "chat"
    folder.mkdir()
    (folder / "report.md").write_text("1")
    for n in range(2, 1000):
        (folder / f"report-{n}.md").write_text(str(n))
    assert write_new(folder, "report.md", b"1000") == folder / "report-1000.md"
    assert write_new(folder, "report.md", b"1001") == folder / "report-1001.md"
    assert (folder / "report-1000.md").read_bytes() == b"1000"
    for path in folder.iterdir():
        if path.name not in ("report-7.md", "report-1001.md"):
            path.unlink()
    for other in ("report-5000.txt", "report-x-9000.md", "old-report-9000.md"):
        (folder / other).write_text("another name's")
    assert write_new(folder, "report.md", b"x") == folder / "report.md"  # the name is free
    assert write_new(folder, "report.md", b"y") == folder / "report-1002.md"
    assert write_new(folder, "chart", b"z") == folder / "chart"  # no suffix: chart-2 next
    assert write_new(folder, "chart", b"z") == folder / "chart-2"
