"""``[mcp]``: Model Context Protocol servers whose tools the model may call.

A server is a stdio child (``command``, ``args``, ``env``, ``cwd``) or a remote endpoint
(``url``, ``headers``: streamable HTTP, or SSE when the URL's path ends in ``/sse``).
A server with neither is off, like a channel without a token, so the example section
``bot init`` writes does nothing until filled in. ``env`` and ``headers`` values are
secrets: never shown in ``repr``, errors or ``bot doctor``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from pydantic import Field, SecretStr, field_validator, model_validator

from bot.config.section import Section
from bot.ops.redaction import masked_url

_SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")

Transport = Literal["stdio", "http", "sse"]


class MCPServerSettings(Section):
    """``[mcp.servers.<name>]``."""

    command: str = ""
    args: list[str] = Field(default=[])
    env: dict[str, SecretStr] = Field(default={})
    cwd: Path | None = None
    url: str = ""
    headers: dict[str, SecretStr] = Field(default={})
    tool_timeout_s: float = Field(default=30, gt=0)
    connect_timeout_s: float = Field(default=30, gt=0)
    enabled_tools: list[str] | None = None  # None: every tool the server lists
    workspaces: list[str] | None = None  # None: every workspace may use it

    @model_validator(mode="after")
    def _one_transport(self) -> MCPServerSettings:
        if self.command and self.url:
            raise ValueError("set either 'command' (stdio) or 'url' (HTTP), not both")
        if self.url and urlparse(self.url).scheme not in ("http", "https"):
            shown = masked_url(self.url, key_paths=True)  # the scheme, never the key
            raise ValueError(f"'url' must be an http(s) URL, got {shown!r}")
        return self

    @property
    def enabled(self) -> bool:
        return bool(self.command or self.url)

    @property
    def transport(self) -> Transport:
        if self.command:
            return "stdio"
        return "sse" if urlparse(self.url).path.rstrip("/").endswith("/sse") else "http"

    def secrets(self) -> list[SecretStr]:
        return [*self.env.values(), *self.headers.values()]


class MCPSettings(Section):
    """``[mcp]``: the servers, how a server that fails is retried, how often an idle
    connection is pinged (a dead one is replaced before a call needs it), and the caps
    that keep one server from flooding every request: tools installed per server, tools
    offered to the model per request (OpenAI-style APIs refuse more than 128), and the
    characters of one call's result kept."""

    servers: dict[str, MCPServerSettings] = Field(default={})
    retry_initial_s: float = Field(default=1, gt=0)
    retry_max_s: float = Field(default=60, gt=0)
    ping_interval_s: float = Field(default=30, gt=0)
    max_tools_per_server: int = Field(default=64, gt=0)
    max_tools_per_request: int = Field(default=128, gt=0, le=128)
    max_result_chars: int = Field(default=100_000, ge=1000)

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, MCPServerSettings]) -> dict[str, MCPServerSettings]:
        for name in servers:
            if not _SERVER_NAME.fullmatch(name):
                raise ValueError(f"server name {name!r}: use 1-32 of A-Z a-z 0-9 _ -")
        return servers

    def enabled_servers(self) -> dict[str, MCPServerSettings]:
        return {name: s for name, s in self.servers.items() if s.enabled}
