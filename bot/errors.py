"""The one exception tree of the daemon.

Everything the daemon raises on purpose derives from :class:`BotError`, so callers
can catch one type at a boundary (a worker, the CLI) and let real bugs surface::

    BotError
    ├── ConfigError              bad or unreadable configuration (exit code 2)
    ├── StoreError               the database cannot be opened or migrated
    │   ├── FencedOff            a write for a lease this replica no longer holds
    │   ├── StoreUnavailable     the connection to the database was lost mid-statement
    │   └── StoreBusy            another process held the write lock past the wait
    ├── QuotaExceeded            a per-user limit would be passed (checked with the write)
    │   └── ChatQuotaExceeded    ... a per-chat one (a group's members share it)
    ├── LLMError                 anything about talking to the model
    │   ├── ModelNotConfiguredError   no usable model / credentials
    │   │   └── CredentialsRejectedError   the provider refused the key
    │   └── ModelUnavailableError     every model and retry failed
    ├── ToolError                raised by a tool; the registry turns it into an "Error: ..." result
    │   └── WorkspaceError       a persona edit refused: bad name, over budget, symlink
    ├── SkillError               a SKILL.md that cannot be read (names the file)
    ├── MediaError               an attachment the user sent could not be taken (the reason
    │                            is said to the user: too large, unreadable, no model)
    ├── MCPError                 about an MCP server (tools/mcp turns each into an Error result)
    │   ├── MCPConnectionLost         the server is gone (dead child, expired session, refused)
    │   ├── MCPTimeout                no answer within the request's timeout
    │   ├── MCPServerError            the server answered with a JSON-RPC error
    │   └── UncleanableSchema         a tool's input schema cannot be made provider-safe
    └── ChannelError             a platform adapter could not start or send
        ├── DeliveryRejected     the platform refused a message for good (no retry)
        │   ├── ChatGone         ... because the chat refuses the bot for good (kicked, archived)
        │   └── ChatMoved        ... because the chat lives on under another id
        ├── PreviewRateLimited   a streamed preview hit the platform's rate limit (retry_after)
        ├── PreviewGone          a streamed preview was deleted or may no longer be edited
        └── PreviewStopped       the person pressed the platform's stop on a streamed answer
"""

from __future__ import annotations


class BotError(Exception):
    """Base of every deliberate error in the daemon."""


class ConfigError(BotError):
    """Configuration is invalid; the message is one line naming the key and the problem."""


class StoreError(BotError):
    """The store (SQLite or PostgreSQL) failed in a way the caller cannot retry."""


class FencedOff(StoreError):
    """A write (or send) for a lease this replica no longer holds: another replica took
    it over (this one was frozen or cut off past the lease's TTL). The work is dropped,
    never retried: the new holder runs it again from the journal."""


class StoreUnavailable(StoreError):
    """The database server dropped the connection (a restart, a failover, a connection
    cut) or refused a new one: the statement may or may not have committed. Work that
    can be run again (a turn, whose writes are keyed) is run again, never apologized for."""


class StoreBusy(StoreError):
    """Another process (a backup, a ``bot`` command, a sqlite3 shell) held the database's
    write lock past the wait: nothing was written, and the same write works once it lets
    go. Worded for people: a page says to try again in a moment."""


class QuotaExceeded(BotError):
    """A write would pass a per-user limit; checked in the write's own transaction."""


class ChatQuotaExceeded(QuotaExceeded):
    """A write would pass a per-chat limit (what a group's members share), checked
    the same way; said apart from the user's own limit, as the fix differs."""


class LLMError(BotError):
    """A model call failed."""


class ModelNotConfiguredError(LLMError):
    """No model credentials or endpoint are configured."""


class CredentialsRejectedError(ModelNotConfiguredError):
    """The provider refused the configured key (its message quotes the provider);
    ``env`` names the provider's own key variable (ANTHROPIC_API_KEY, ...) for a user."""

    def __init__(self, message: str, env: str) -> None:
        super().__init__(message)
        self.env = env


class ModelUnavailableError(LLMError):
    """The model and all fallbacks failed after retries.

    The message is for the log (it may quote the provider and name the endpoint);
    ``hint`` is what a user may be told: which setting to check, never its value.
    ``refused``: the provider refused the request itself (HTTP 400), so sending it again
    unchanged cannot succeed, however long one waits. ``too_long``: the request was over
    the model's context window (a shorter one may pass). ``setup``: the provider serves no
    such model (HTTP 404): waiting does not mend it, its operator must.
    """

    def __init__(
        self,
        message: str,
        hint: str = "",
        *,
        refused: bool = False,
        too_long: bool = False,
        setup: bool = False,
    ) -> None:
        super().__init__(message)
        self.hint = hint
        self.refused = refused
        self.too_long = too_long
        self.setup = setup


class PromptTooLongError(ModelUnavailableError):
    """The request was over the model's context window even with older turns left out:
    refused, as the message is too long for the model (``history``: with the turns that
    request still held, so a fresh conversation may take it)."""

    def __init__(self, message: str, *, history: bool) -> None:
        super().__init__(message, refused=True, too_long=True)
        self.history = history


class ToolError(BotError):
    """A tool failed in an expected way; its message is shown to the model."""


class WorkspaceError(ToolError, ValueError):
    """A workspace or persona file request was refused; the message says why (a bad
    name is also a ValueError, as it always was)."""


class EditConflict(WorkspaceError):
    """An edit started from a text the file no longer holds (another editor saved in
    between): refused whole, so neither edit is silently lost."""


class SkillError(BotError):
    """A skill folder is malformed; the message names the file and the problem."""


class MediaError(BotError):
    """An attachment could not be downloaded, seen, heard or read; the message says why
    in words the user reads."""


class MCPError(BotError):
    """Something about an MCP server; never leaves the MCP client as an exception."""


class MCPConnectionLost(MCPError):
    """The server is gone: a dead child, an expired HTTP session, a refused connection."""


class MCPTimeout(MCPError):
    """No answer within the request's timeout."""


class MCPServerError(MCPError):
    """The server answered with a JSON-RPC error (unknown tool, bad arguments, ...)."""


class UncleanableSchema(MCPError):
    """A tool's input schema cannot be expressed for strict providers (the message says why)."""


class ChannelError(BotError):
    """A channel adapter failed to start or deliver; a failed send is retried."""


class DeliveryRejected(ChannelError):
    """The platform refused this message permanently (e.g. the chat no longer exists)."""


class ChatGone(DeliveryRejected):
    """The chat itself refuses the bot for good (removed from it, blocked, archived,
    deleted): every later delivery there would be refused too, so what would post there
    again (repeats, follow-ups) is ended. ``thread_only``: only the key's thread is gone,
    not the rest of its chat."""

    def __init__(self, message: str, *, thread_only: bool = False) -> None:
        super().__init__(message)
        self.thread_only = thread_only


class ChatMoved(DeliveryRejected):
    """The chat lives on under another id (a group the platform upgraded): this message
    and what else belongs to the chat go there, same thread. A caller that does not
    know to move it has it refused, as before."""

    def __init__(self, message: str, *, chat_id: str) -> None:
        super().__init__(message)
        self.chat_id = chat_id


class PreviewRateLimited(ChannelError):
    """A preview call (post, edit) hit the platform's rate limit (an HTTP 429, a flood
    wait). Raised at once, never waited out in place: the streaming
    pipeline pauses that one chat's previews for ``retry_after`` seconds, while other
    chats and the final answer (which goes through the outbox) carry on."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = max(0.0, float(retry_after))


class PreviewGone(ChannelError):
    """The preview message was deleted (by someone in the chat) or may no longer be
    edited: the turn previews no more, and its final answer is posted as new."""


class PreviewStopped(ChannelError):
    """The person stopped the streamed answer with the platform's own control (a stop
    button on a native stream): the turn ends as their /stop would end it, and the text
    shown so far stays as they stopped it."""
