"""Who may edit a workspace: the global ``admins``, that workspace's own ``admins``,
and anyone on a trusted local channel (the terminal of the machine's owner)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.config.workspaces import WorkspacesSettings
from bot.messages import InboundMessage


class WorkspaceAdmins:
    def __init__(
        self,
        settings: WorkspacesSettings,
        admins: Sequence[str],
        trusted_channels: Sequence[str] = (),
    ) -> None:
        self._global = {a.lower() for a in admins}
        self._own = {
            name: {a.lower() for a in section.admins}
            for name, section in settings.sections().items()
        }
        self._trusted = frozenset(trusted_channels)

    def is_admin(self, msg: InboundMessage, workspace: str) -> bool:
        if msg.key.channel in self._trusted:
            return True
        sender = msg.sender.lower()
        return sender in self._global or sender in self._own.get(workspace, set())
