"""Who a platform channel answers: ``allow_from`` ids, usernames bound to ids, approvals.

Usernames change hands: someone who later takes the name of a listed user must not
inherit the access. So an ``allow_from`` entry that is a username is bound, at its first
sight in a message, to the account id that wrote it, the binding is stored (it holds
across restarts), and from then on only that id matches; the operator is warned to list
the id instead. Only an entry that is clearly a name binds: one of digits only is an id
(platforms' user ids are often numbers, and some let anyone take a username made of
digits), so an account named like a listed id never gets that id's access.

Approved users (pairing) are read from the store per message, so an approval or a
revocation made by the CLI while the daemon runs takes effect at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime

from bot.messages import InboundMessage, utcnow
from bot.store.base import Access

log = logging.getLogger(__name__)


def normalize_entry(entry: str) -> str:
    return str(entry).strip().lstrip("@").lower()


def is_name(entry: str) -> bool:
    """Whether a normalized entry may match a username: not an id of digits (``-100..``)."""
    return entry not in ("", "*") and not entry.removeprefix("-").isdigit()


class Members:
    def __init__(
        self,
        allow_from: Mapping[str, Sequence[str]],
        store: Access | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._allow = {ch: {normalize_entry(x) for x in v} - {""} for ch, v in allow_from.items()}
        self._names = {ch: {x for x in v if is_name(x)} for ch, v in self._allow.items()}
        self._store = store
        self._clock = clock
        self._bound: dict[tuple[str, str], str] = {}
        self._stored: set[tuple[str, str]] = set()
        self._approved: set[str] = set()
        self._loaded = False

    def listed(self, channel: str) -> bool:
        """Whether the channel has an ``allow_from`` list at all."""
        return bool(self._allow.get(channel))

    def admits(self, msg: InboundMessage, *, approved: bool = True) -> bool:
        allowed = self._allow.get(msg.key.channel, set())
        if "*" in allowed or msg.user_id.lower() in allowed:
            return True
        channel = msg.key.channel
        names = self._names.get(channel, set())
        name = normalize_entry(msg.user_name)
        if name in names and (channel, name) not in self._bound:
            self._bound[(channel, name)] = msg.user_id  # first sight: the name means this id
            _warn_bound(channel, name, msg.user_id)
        # A bound name is that id, also after its owner renamed themselves. Only name
        # entries count: a binding of an id entry stored by an older version is ignored.
        if any(self._bound.get((channel, entry)) == msg.user_id for entry in names):
            return True
        return approved and msg.sender in self._approved

    async def refresh(self, msg: InboundMessage, *, approvals: bool = True) -> None:
        """Bring what :meth:`admits` knows about ``msg``'s sender up to date from the store."""
        if self._store is None:
            return
        channel = msg.key.channel
        if not self._loaded:
            stored = await self._store.name_bindings()
            self._bound.update(stored)  # stored bindings win over first sights in memory
            self._stored.update(stored)
            self._loaded = True
        name = normalize_entry(msg.user_name)
        key = (channel, name)
        if name in self._names.get(channel, set()) and key not in self._stored:
            bound = await self._store.bind_name(channel, name, msg.user_id, self._clock())
            if key not in self._bound:
                _warn_bound(channel, name, bound)
            self._bound[key] = bound
            self._stored.add(key)
        if not approvals or self.admits(msg, approved=False):
            return
        if await self._store.is_approved(channel, msg.user_id):
            self._approved.add(msg.sender)
        else:
            self._approved.discard(msg.sender)


def _warn_bound(channel: str, name: str, user_id: str) -> None:
    log.warning(
        "channels.%s.allow_from lists the username '%s': it now means user id %s, the "
        "account first seen with that name; list the id instead (usernames change hands)",
        channel,
        name,
        user_id,
    )
