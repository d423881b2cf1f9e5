"""``[search]`` and ``[fetch]``: the web tools' settings (``web_search``, ``web_fetch``).

A backend that needs a key or a URL it was not given is a start-up error naming the key,
never a failed call later. ``allow_private`` entries are checked here too, so a typo in
an operator's intranet exception is caught before the daemon runs.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from bot.config.section import Section

SearchBackend = Literal["duckduckgo", "brave", "tavily", "searxng"]
DEFAULT_USER_AGENT = "Mozilla/5.0 (compatible; chatbot-daemon; web_fetch)"
_HOST_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9_-]{1,63}(\.[a-z0-9_-]{1,63})*\.?", re.IGNORECASE)


class SearchSettings(Section):
    backend: SearchBackend = "duckduckgo"
    api_key: SecretStr = SecretStr("")  # brave, tavily
    searxng_url: str = ""  # the SearXNG instance's root, e.g. "http://searx.lan:8080"
    max_results: int = Field(default=5, ge=1, le=20)
    timeout_s: float = Field(default=10, gt=0)

    @model_validator(mode="after")
    def _backend_needs(self) -> SearchSettings:
        if self.backend in ("brave", "tavily") and not self.api_key.get_secret_value():
            raise ValueError(f"search backend {self.backend!r} needs [search] api_key")
        if self.backend == "searxng" and not self.searxng_url.startswith(("http://", "https://")):
            raise ValueError("search backend 'searxng' needs [search] searxng_url (http/https)")
        return self


class FetchSettings(Section):
    max_bytes: int = Field(default=2_000_000, ge=1_000)
    timeout_s: float = Field(default=15, gt=0)
    user_agent: str = DEFAULT_USER_AGENT
    max_redirects: int = Field(default=5, ge=0, le=20)
    # Hosts or CIDRs fetched although they are private, loopback, ... (an intranet wiki).
    allow_private: list[str] = Field(default=[])

    @field_validator("allow_private")
    @classmethod
    def _hosts_or_networks(cls, entries: list[str]) -> list[str]:
        for entry in entries:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                if not _HOST_NAME.fullmatch(entry):
                    raise ValueError(
                        f"allow_private entry {entry!r} is neither a host name nor an "
                        "address or CIDR (e.g. 'wiki.lan', '10.0.0.0/8', '127.0.0.1')"
                    ) from None
        return entries
