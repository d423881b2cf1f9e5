"""The one exception tree of the daemon.

Everything the daemon raises on purpose derives from :class:`BotError`, so callers
can catch one type at a boundary (a worker, the CLI) and let real bugs surface::

    BotError
    ├── ConfigError              bad or unreadable configuration (exit code 2)
    ├── StoreError               the database cannot be opened or migrated
    ├── QuotaExceeded            a per-user limit would be passed (checked with the write)
    ├── LLMError                 anything about talking to the model
    │   ├── ModelNotConfiguredError   no usable model / credentials
    │   └── ModelUnavailableError     every model and retry failed
    ├── ToolError                raised by a tool; the registry turns it into an "Error: ..." result
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


class QuotaExceeded(BotError):
    """A write would pass a per-user limit; checked in the write's own transaction."""


class LLMError(BotError):
    """A model call failed."""


class ModelNotConfiguredError(LLMError):
    """No model credentials or endpoint are configured."""


class ModelUnavailableError(LLMError):
    """The model and all fallbacks failed after retries."""


class ToolError(BotError):
    """A tool failed in an expected way; its message is shown to the model."""


class ChannelError(BotError):
    """A channel adapter failed to start or deliver; a failed send is retried."""


class DeliveryRejected(ChannelError):
    """The platform refused this message permanently (e.g. the chat no longer exists)."""
