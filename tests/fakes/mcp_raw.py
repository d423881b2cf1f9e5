"""A hand-written stdio MCP server, for what a server written with the SDK cannot do:
break its own output stream.

Run as a child (``python tests/fakes/mcp_raw.py``). It answers ``initialize``,
``tools/list``, ``ping`` and ``tools/call`` of its tools:

- ``ok`` answers "fine";
- ``latin1`` answers with text encoded in Latin-1 (bytes that are not UTF-8), as a
  server with a broken encoder does;
- ``wedge`` never answers, and from then on nothing is answered (a stuck server whose
  process lives on);
- ``wedge_after`` answers "fine", then answers nothing more.
"""

from __future__ import annotations

import json
import sys
from typing import Any

TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("ok", "latin1", "wedge")]
TOOLS.append({"name": "wedge_after", "inputSchema": {"type": "object"}})


def _send(payload: bytes) -> None:
    sys.stdout.buffer.write(payload + b"\n")
    sys.stdout.buffer.flush()


def _result(mid: Any, result: dict[str, Any]) -> None:
    _send(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}).encode())


def _text(mid: Any, text: bytes) -> None:
    """A tools/call result whose text is ``text`` as given, whatever its encoding."""
    head = b'{"jsonrpc":"2.0","id":' + json.dumps(mid).encode()
    _send(head + b',"result":{"content":[{"type":"text","text":"' + text + b'"}]}}')


def _answer(msg: dict[str, Any]) -> bool:
    """Answer one message; False once the server is wedged."""
    mid, method = msg.get("id"), msg.get("method")
    if method == "initialize":
        version = msg["params"]["protocolVersion"]
        info = {"name": "raw", "version": "1"}
        _result(
            mid, {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
        )
    elif method == "tools/list":
        _result(mid, {"tools": TOOLS})
    elif method == "tools/call":
        name: str = msg["params"]["name"]
        if name == "wedge":
            return False
        _text(mid, "café crème".encode("latin-1") if name == "latin1" else b"fine")
        return name != "wedge_after"
    elif mid is not None:
        _result(mid, {})
    return True


def main() -> None:
    answering = True
    for line in sys.stdin.buffer:
        if answering:
            answering = _answer(json.loads(line))


if __name__ == "__main__":
    main()
