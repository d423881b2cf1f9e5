"""No installed distribution but ours puts a top-level ``bot``, ``channels`` or
``tools`` package in site-packages. One that did would merge into ours: cron-descriptor
2.x wheels ship a ``tools/`` folder, and with it installed the tool loader imported its
scripts as our built-in tools and the daemon failed to start."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import bot
import channels
import tools

OURS = ("bot", "channels", "tools")
ROOT = Path(__file__).resolve().parent.parent


def test_our_packages_are_only_ours():
    for package in (bot, channels, tools):
        assert [Path(p).resolve() for p in package.__path__] == [ROOT / package.__name__]


def test_no_other_distribution_installs_a_package_of_our_names():
    clashing = {
        f"{dist.metadata['Name']}: {file}"
        for dist in metadata.distributions()
        if dist.metadata["Name"] != "chatbot-daemon"
        for file in dist.files or ()
        if file.parts and file.parts[0] in OURS
    }
    assert not clashing, f"installed packages that would merge into ours: {sorted(clashing)}"
