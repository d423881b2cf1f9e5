"""MCP pieces without a server: tool names, result rendering, the config model."""

from __future__ import annotations

import asyncio
import logging
import os
import re

import pytest
from pydantic import ValidationError

from bot.config import Settings
from bot.config.channels import secret_values
from bot.config.mcp import MCPServerSettings, MCPSettings
from bot.ops.redaction import maskable
from tools.mcp.names import MAX_NAME, tool_names
from tools.mcp.results import render_result
from tools.mcp.stderr import MAX_LINE, stderr_to_log

_VALID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def tool_name(server: str, tool: str) -> str:
    return tool_names(server, [tool], [server])[tool]


def test_names_are_prefixed_and_cleaned() -> None:
    assert tool_name("files", "read_file") == "mcp_files_read_file"
    cleaned = tool_name("git", "log.show/one ü")
    assert _VALID.fullmatch(cleaned) and cleaned.startswith("mcp_git_log_show_one__")


def test_long_names_are_cut_with_a_hash_that_keeps_them_unique() -> None:
    a = tool_name("server", "x" * 80 + "alpha")
    b = tool_name("server", "x" * 80 + "beta")
    assert len(a) == len(b) == MAX_NAME and a != b
    assert _VALID.fullmatch(a) and a.startswith("mcp_server_xxx")
    assert tool_name("server", "x" * 80 + "alpha") == a  # stable across listings


def test_names_that_collide_on_one_server_do_not_depend_on_the_listing_order() -> None:
    """The name needing no cleaning keeps it; the ones that clean to it are all hashed."""
    one = tool_names("s", ["a.b", "a_b", "a b", "c.d"], ["s"])
    two = tool_names("s", ["c.d", "a b", "a_b", "a.b"], ["s"])
    assert one == two and one["a_b"] == "mcp_s_a_b" and one["c.d"] == "mcp_s_c_d"
    assert len(set(one.values())) == 4 and all(_VALID.fullmatch(n) for n in one.values())
    both = tool_names("s", ["a.b", "a b"], ["s"])
    assert "mcp_s_a_b" not in both.values() and len(set(both.values())) == 2


def test_a_name_another_configured_server_would_own_is_hashed() -> None:
    """``mcp_a_b_c`` reads as server ``a_b``'s tool ``c``: ``a``'s ``b_c`` never gets it,
    listed or not, so the name means one tool whichever server lists first."""
    servers = ["a", "a_b", "z"]
    assert tool_names("a_b", ["c"], servers) == {"c": "mcp_a_b_c"}
    theirs = tool_names("a", ["b_c", "b", "bc"], servers)
    assert theirs["b_c"] != "mcp_a_b_c" and theirs["b_c"].startswith("mcp_a_b_c_")
    assert (theirs["b"], theirs["bc"]) == ("mcp_a_b", "mcp_a_bc")  # no collision: plain
    assert tool_names("a", ["b_c"], ["a", "z"]) == {"b_c": "mcp_a_b_c"}


def test_a_name_a_builtin_or_plugin_has_is_hashed() -> None:
    named = tool_names("s", ["x"], ["s"], reserved={"mcp_s_x"})
    assert named["x"] != "mcp_s_x" and _VALID.fullmatch(named["x"])


def test_text_is_joined_and_binary_described() -> None:
    raw = {
        "content": [
            {"type": "text", "text": "line one"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"},
            {"type": "hologram"},
            "junk",
            {"type": "text", "text": "line two"},
        ]
    }
    outcome = render_result(raw)
    assert not outcome.is_error
    assert outcome.text.splitlines() == [
        "line one",
        "[image: image/png, 8 bytes]",
        "[audio: audio/wav, 3 bytes]",
        "[resource file:///a.txt]",
        "inside",
        "[embedded resource file:///b.bin: unknown type, 3 bytes]",
        "[resource link: c (file:///c, unknown type)]",
        "[hologram content omitted]",
        "[unreadable content part: 'junk']",
        "line two",
    ]
    assert "iVBOR" not in outcome.text


def test_structured_only_errors_and_empty_results() -> None:
    assert render_result({"content": [], "structuredContent": {"t": 21}}).text == '{"t": 21}'
    assert render_result({"content": [{"type": "text", "text": "no"}], "isError": True}).is_error
    assert render_result({}).text == "(no output)"
    assert render_result(["not", "a", "result"]).is_error


def test_config_transports_and_validation() -> None:
    assert MCPServerSettings(command="npx").transport == "stdio"
    assert MCPServerSettings(url="https://h/mcp").transport == "http"
    assert MCPServerSettings(url="https://h/sse").transport == "sse"
    assert MCPServerSettings(url="https://h/sse/").transport == "sse"
    assert not MCPServerSettings().enabled
    with pytest.raises(ValidationError, match="not both"):
        MCPServerSettings(command="npx", url="https://h/mcp")
    with pytest.raises(ValidationError, match="http"):
        MCPServerSettings(url="ftp://h/mcp")
    with pytest.raises(ValidationError, match="server name"):
        MCPSettings(servers={"bad name!": MCPServerSettings(command="x")})


def test_env_and_headers_are_secrets() -> None:
    settings = Settings(
        mcp={
            "servers": {
                "a": {"command": "x", "env": {"TOKEN": "env-secret-1", "DEBUG": "1"}},
                "b": {"url": "https://h/mcp", "headers": {"Authorization": "Bearer hdr-secret"}},
            }
        }
    )
    assert "env-secret-1" not in repr(settings) and "hdr-secret" not in repr(settings)
    values = secret_values(settings)
    assert "env-secret-1" in values and "Bearer hdr-secret" in values
    # too short to be a secret: the redactor leaves it alone, or it would garble reports
    assert not maskable("1") and maskable("env-secret-1")


def test_a_bad_env_or_header_value_is_named_but_never_shown(tmp_path) -> None:
    from bot.config import load_settings
    from bot.errors import ConfigError

    config = tmp_path / "bot.toml"
    config.write_text('[mcp.servers.a]\ncommand = "x"\nenv = { TOKEN = ["s3cr3t-value"] }\n')
    with pytest.raises(ConfigError, match=r"mcp\.servers\.a\.env\.TOKEN") as caught:
        load_settings(config)
    assert "s3cr3t" not in str(caught.value)


@pytest.mark.slow
def test_the_sdk_is_imported_only_when_a_server_is_configured() -> None:
    """Start-up (ready:) must not pay the SDK's import when no MCP server is configured."""
    import subprocess
    import sys

    probe = "import bot.app, sys; print(sorted({m.split('.')[0] for m in sys.modules}))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert "'mcp'" not in out and "'mcp_types'" not in out and "'httpx2'" not in out


def test_a_key_in_an_mcp_urls_path_is_a_secret_but_words_and_versions_are_not() -> None:
    from bot.ops.redaction import url_secrets

    found = url_secrets(
        "https://u:pw-123456789@mcp.example/api/v1/mcp/s/k3yAbCdEfGh1234xyz/sse?t=q1"
    )
    assert set(found) == {"k3yAbCdEfGh1234xyz", "pw-123456789", "q1"}
    plain = "https://mcp.example/2025-03-26/streamable-http/mcp/server-registry-tools"
    assert url_secrets(plain) == []


async def test_stderr_lines_are_cut_and_an_unfinished_last_line_kept(caplog) -> None:
    """A 100 KB line (more than a pipe holds) is read whole, logged cut; a last line
    without its newline is logged when the child's end closes."""
    caplog.set_level(logging.INFO, logger="tools.mcp.stderr")
    async with stderr_to_log("t") as pipe:
        data = b"x" * 100_000 + b"\nshort\r\nno end"
        await asyncio.to_thread(os.write, pipe.writer.fileno(), data)
        pipe.spawned()
    said = [r.getMessage() for r in caplog.records if r.name == "tools.mcp.stderr.t"]
    assert said == ["x" * MAX_LINE, "short", "no end"]


def test_a_store_password_in_the_query_string_is_a_secret() -> None:
    """asyncpg and libpq take it as ``?password=`` or ``?sslpassword=``; only the user
    info's was masked in log lines."""
    url = "postgresql://bot:info-pw-123@db/bot?password=Hunter2Super&sslpassword=KeyPass-987"
    values = secret_values(
        Settings.model_validate({"store": {"url": url + "&sslmode=verify-full"}})
    )
    assert {"info-pw-123", "Hunter2Super", "KeyPass-987"} <= set(values)
    assert "verify-full" not in values  # a setting, not a secret: masking it garbles logs
