"""Login without a stored password: one-time links, sliding sessions, CSRF tokens.

A link (``bot admin link``, or ``/admin`` in an admin's one-to-one chat) is a random
token valid for 10 minutes and redeemed once; redeeming it opens a session whose cookie
lapses after 12 idle hours. Only SHA-256 hashes of tokens are stored (the tokens carry
256 random bits, so a plain hash is enough), in the database the CLI and the daemon
share. A session's CSRF token is derived from its token (an HMAC), so nothing more is
stored and every form of that session carries the same one.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.messages import utcnow
from bot.store.admin import LINK, SESSION, LinkCheck, LinkState
from bot.store.base import AdminTokens

log = logging.getLogger(__name__)

LINK_TTL = timedelta(minutes=10)
SESSION_IDLE = timedelta(hours=12)
LOGIN_PATH = "/admin/login"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


def csrf_token(session_token: str) -> str:
    return hmac.new(session_token.encode("ascii", "replace"), b"csrf", "sha256").hexdigest()


def base_url(public_url: str, host: str, port: int) -> str:
    """Where people open the page: ``public_url``, else the ``[web]`` address (a
    wildcard bind is reached on loopback from the machine itself)."""
    if public_url:
        return public_url.rstrip("/")
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


@dataclass(frozen=True, slots=True)
class Session:
    admin: str
    token: str

    @property
    def csrf(self) -> str:
        return csrf_token(self.token)


class AdminAuth:
    def __init__(
        self,
        store: AdminTokens,
        clock: Callable[[], datetime] = utcnow,
        *,
        is_admin: Callable[[str], bool] = lambda _: True,
    ) -> None:
        self._store = store
        self._clock = clock
        # Asked at every request: a session outlives no admin removed from the config.
        self._is_admin = is_admin

    async def new_link(self, admin: str, base: str) -> str:
        """A login URL for ``admin`` (``"<channel>:<user id>"`` or ``"cli"``)."""
        token = secrets.token_urlsafe(32)
        now = self._clock()
        await self._store.add_token(token_hash(token), LINK, admin, now, now + LINK_TTL)
        log.info("admin login link issued for %s (valid %d min)", admin, LINK_TTL.seconds // 60)
        return f"{base.rstrip('/')}{LOGIN_PATH}?token={token}"

    async def check_link(self, token: str) -> LinkCheck:
        return await self._store.check_link(token_hash(token), self._clock())

    async def log_in(self, token: str) -> tuple[LinkCheck, Session | None]:
        """Redeem a link: a new session, or why the link cannot be used."""
        now = self._clock()
        found = await self._store.use_link(token_hash(token), now)
        if found.state is not LinkState.VALID:
            return found, None
        session = secrets.token_urlsafe(32)
        await self._store.add_token(
            token_hash(session), SESSION, found.admin, now, now + SESSION_IDLE
        )
        log.warning("admin page: %s logged in", found.admin)
        return found, Session(found.admin, session)

    async def session(self, token: str) -> Session | None:
        """The live session of a cookie's token (its idle expiry renewed), or None."""
        if not token:
            return None
        now = self._clock()
        admin = await self._store.session(token_hash(token), now, now + SESSION_IDLE)
        if admin is None:
            return None
        if not self._is_admin(admin):
            await self._store.end_sessions(token_hash(token))
            log.warning("admin page: %s is no longer an admin; their session ended", admin)
            return None
        return Session(admin, token)

    async def log_out(self, token: str) -> None:
        await self._store.end_sessions(token_hash(token))

    async def log_out_all(self) -> int:
        ended = await self._store.end_sessions()
        log.warning("admin page: every session ended (%d)", ended)
        return ended


class LoginLimiter:
    """At most ``attempts`` login tries per client address per ``window_s``: a link
    carries 256 bits, so this only keeps a scanner from filling the log and the table."""

    def __init__(
        self,
        attempts: int = 10,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._attempts = attempts
        self._window = window_s
        self._clock = clock
        self._seen: dict[str, list[float]] = {}

    def allow(self, client: str) -> bool:
        now = self._clock()
        if len(self._seen) > 10_000:  # forget idle clients: bounded memory
            self._seen = {k: v for k, v in self._seen.items() if v and v[-1] > now - self._window}
        recent = [t for t in self._seen.get(client, []) if t > now - self._window]
        allowed = len(recent) < self._attempts
        if allowed:
            recent.append(now)
        self._seen[client] = recent
        return allowed
