"""The one exception tree of the daemon.

Everything the daemon raises on purpose derives from :class:`BotError`, so callers
can catch one type at a boundary (a worker, the CLI) and let real bugs surface::

    BotError
    ├── ConfigError              bad or unreadable configuration (exit code 2)
    ├── StoreError               the database cannot be opened or migrated
    ├── LLMError                 anything about talking to the model
    │   ├── ModelNotConfiguredError   no usable model / credentials
    │   └── ModelUnavailableError     every model and retry failed
    ├── ToolError                raised by a tool; the registry turns it into an "Error: ..." result
    │   └── WorkspaceError       a persona edit refused: bad name, over budget, symlink
    ├── SkillError               a SKILL.md that cannot be read (names the file)
    └── ChannelError             a platform adapter could not start or send
        └── DeliveryRejected     the platform refused a message for good (no retry)
"""

from __future__ import annotations


class BotError(Exception):
    """Base of every deliberate error in the daemon."""


class ConfigError(BotError):
    """Configuration is invalid; the message is one line naming the key and the problem."""


class StoreError(BotError):
    """The SQLite store failed in a way the caller cannot retry."""


class LLMError(BotError):
    """A model call failed."""


class ModelNotConfiguredError(LLMError):
    """No model credentials or endpoint are configured."""


class ModelUnavailableError(LLMError):
    """The model and all fallbacks failed after retries."""


class ToolError(BotError):
    """A tool failed in an expected way; its message is shown to the model."""


class WorkspaceError(ToolError, ValueError):
    """A workspace or persona file request was refused; the message says why (a bad
    name is also a ValueError, as it always was)."""


class SkillError(BotError):
    """A skill folder is malformed; the message names the file and the problem."""


class ChannelError(BotError):
    """A channel adapter failed to start or deliver; a failed send is retried."""


class DeliveryRejected(ChannelError):
    """The platform refused this message permanently (e.g. the chat no longer exists)."""
