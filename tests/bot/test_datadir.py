"""A data folder the bot's user cannot write is said with whose it is and the chown that
lets the bot in: in the image (uid 10001), a root-owned host folder bind-mounted on /data
got "set data_dir in the config (or BOT_DATA_DIR)", which the image's BOT_DATA_DIR beats.

Run under the image's uid in a forked child when the tests run as root (the venv's
python may sit where that uid cannot exec it); otherwise as this user, on /."""

from __future__ import annotations

import multiprocessing
import os
import tempfile
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

from bot.cli.process import make_data_dir
from bot.errors import ConfigError
from bot.ops.doctor import check_data_dir
from tests.fakes.waiting import PROCESS_S

IMAGE_UID = 10001  # deploy/Dockerfile's USER
AS_ROOT = os.geteuid() == 0
UID = IMAGE_UID if AS_ROOT else os.geteuid()
GID = IMAGE_UID if AS_ROOT else os.getegid()


@pytest.fixture
def roots_folder() -> Iterator[Path]:
    """A folder root owns that others may enter but not write (a host folder as `mkdir`
    makes it), outside pytest's temp folder, which only its user may enter."""
    if not AS_ROOT:
        yield Path("/")
        return
    with tempfile.TemporaryDirectory(prefix="bot-datadir-") as name:
        folder = Path(name)
        folder.chmod(0o755)
        yield folder


def _drop_and_run(work: Callable[[], str], out: Connection) -> None:
    if AS_ROOT:
        os.setgroups([])
        os.setgid(IMAGE_UID)
        os.setuid(IMAGE_UID)
    out.send(work())


def _as_image_user(work: Callable[[], str]) -> str:
    """What ``work`` returns, run as the image's user."""
    fork = multiprocessing.get_context("fork")
    answer, out = fork.Pipe(duplex=False)
    child = fork.Process(target=_drop_and_run, args=(work, out))
    child.start()
    try:
        assert answer.poll(PROCESS_S), "the child said nothing"
        return str(answer.recv())
    finally:
        child.join(PROCESS_S)


def _run_refused(data_dir: Path) -> str:
    try:
        make_data_dir(data_dir)
    except ConfigError as exc:
        return str(exc)
    return "made"


def test_run_names_the_owner_and_the_chown(
    roots_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOT_DATA_DIR", str(roots_folder))  # as the image sets it
    said = _as_image_user(lambda: _run_refused(roots_folder))
    assert said.startswith(
        f"data_dir {roots_folder}: not writable; {roots_folder} is owned by uid 0, "
        f"this process runs as uid {UID}: chown {UID}:{GID} {roots_folder}"
    ), said
    # The variable set is the one to change: the config's data_dir would lose to it.
    assert said.endswith(
        f"or set BOT_DATA_DIR (it beats data_dir in the config) to a folder uid {UID} can write"
    ), said


def test_a_folder_to_make_in_roots_is_to_make_and_chown_not_its_parent(
    roots_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BOT_DATA_DIR", raising=False)
    data = roots_folder / "bot-datadir-test"
    said = _as_image_user(lambda: _run_refused(data))
    assert said.startswith(f"data_dir {data}: cannot be created (Permission denied); "), said
    assert f"create {data} and chown {UID}:{GID} it, or set data_dir in the config" in said
    assert f"chown {UID}:{GID} {roots_folder}" not in said


def test_doctor_names_the_owner_and_the_chown(roots_folder: Path) -> None:
    def doctor() -> str:
        checks = [check_data_dir(roots_folder), check_data_dir(roots_folder / "bot-datadir-test")]
        return "\n".join(f"{check.status}: {check.fix}" for check in checks)

    there, to_make = _as_image_user(doctor).splitlines()
    assert there.startswith(
        f"failed: {roots_folder} is owned by uid 0, this process runs as uid {UID}: "
        f"chown {UID}:{GID} {roots_folder}"
    ), there
    assert f"create {roots_folder / 'bot-datadir-test'} and chown {UID}:{GID} it" in to_make
