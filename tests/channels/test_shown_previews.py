"""channels/shown.py: what each preview shows, so a final that changes nothing is skipped."""

from __future__ import annotations

from bot.messages import ChatKey
from channels.shown import ShownPreviews

A, B = ChatKey("telegram", "42"), ChatKey("telegram", "43")


def test_a_message_id_is_one_chats_own() -> None:
    """Telegram numbers each chat's messages on its own: message 100 of one chat says
    nothing about message 100 of another."""
    shown = ShownPreviews()
    shown.showing(A, "100", "the first chat's preview")
    shown.showing(B, "100", "the second chat's preview")
    assert not shown.already(A, "100", "the second chat's preview")
    assert shown.already(B, "100", "the second chat's preview")


def test_each_answer_skips_its_edit_once_and_a_failed_edit_counts_as_unknown() -> None:
    shown = ShownPreviews(size=2)
    shown.showing(A, "1", "done")
    assert shown.already(A, "1", "done") and not shown.already(A, "1", "done")
    shown.showing(A, "2", "half")
    shown.forget(A, "2")  # an edit was sent: what it shows is unknown until accepted
    assert not shown.already(A, "2", "half")
    for n in "345":
        shown.showing(A, n, "x")
    assert not shown.already(A, "3", "x")  # bounded: the oldest went
