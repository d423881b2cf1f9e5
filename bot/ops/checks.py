"""What a ``bot doctor`` check returns, and the one HTTP helper the checks share.

Channel packages write their own checks with these (plain aiohttp against the
configured root, no SDK), so they work against compatible servers and the test fakes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # channel settings import this module: aiohttp only for a check
    import aiohttp

HTTP_TIMEOUT_S = 10.0

# "note": nothing is wrong, but the operator should read it (exit code 0).
Status = Literal["ok", "failed", "skipped", "note"]


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


def ok(name: str, detail: str) -> Check:
    return Check(name, "ok", detail)


def failed(name: str, detail: str, fix: str) -> Check:
    return Check(name, "failed", detail, fix)


class HttpProblem(Exception):
    """The service could not be asked at all (refused, timed out, not JSON)."""


async def get_json(
    http: aiohttp.ClientSession,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    params: Mapping[str, str] | None = None,
    timeout: float = HTTP_TIMEOUT_S,
) -> tuple[int, Any]:
    """(status, decoded JSON or None); transport failures become :class:`HttpProblem`."""
    import aiohttp

    try:
        async with http.request(
            method,
            url,
            headers=headers,
            params=params,
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as resp:
            raw = await resp.read()
            status = resp.status
    except TimeoutError:
        raise HttpProblem(f"no answer within {timeout:g} s") from None
    except aiohttp.ClientError as exc:
        raise HttpProblem(f"cannot connect ({type(exc).__name__}: {exc})") from None
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        if status != 200:
            return status, None
        raise HttpProblem(f"HTTP {status} but the answer is not JSON") from None
