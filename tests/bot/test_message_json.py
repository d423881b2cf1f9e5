"""Bus messages as journaled: what to_json writes reads back as the same message."""

from __future__ import annotations

import dataclasses
import json

from bot.messages import (
    Attachment,
    ChatKey,
    InboundMessage,
    MessageKind,
    OutboundKind,
    OutboundMessage,
    inbound_from_json,
    outbound_from_json,
    to_json,
)


def test_inbound_and_outbound_round_trip_and_match_asdict() -> None:
    inbound = InboundMessage(
        ChatKey("telegram", "1", "7"),
        "u1",
        "héllo <b>",
        kind=MessageKind.SCHEDULED,
        user_name="Ada",
        attachments=(Attachment("photo", "/tmp/f.jpg", "f.jpg", "image/jpeg", 12),),
        extras={"nested": [1, {"deep": (2, 3)}], "none": None},
        direct=True,
    )
    outbound = OutboundMessage(
        ChatKey("slack", "C1"),
        "answer",
        kind=OutboundKind.REMINDER,
        reply_to="m1",
        idempotency_key="reminder:1",
        extras={"thread": "1.2"},
    )
    raw_in, raw_out = to_json(inbound), to_json(outbound)
    expected_in = dataclasses.asdict(inbound) | {"received_at": inbound.received_at.isoformat()}
    assert json.loads(raw_in) == json.loads(json.dumps(expected_in, default=str))
    assert json.loads(raw_out) == json.loads(json.dumps(dataclasses.asdict(outbound)))
    back = inbound_from_json(raw_in)
    assert dataclasses.replace(back, extras=inbound.extras) == inbound
    assert back.extras == {"nested": [1, {"deep": [2, 3]}], "none": None}
    assert outbound_from_json(raw_out) == outbound
