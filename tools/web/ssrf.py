"""The SSRF guard: which hosts ``web_fetch`` may reach, decided before any connection.

A fetch tool in a group chat is the classic way into the host's own network, so every
hop (the first request and each redirect) goes through :meth:`AddressGuard.check`:
only ``http``/``https``; ``localhost`` names refused by name; IP literals parsed the way
browsers and ``inet_aton`` read them (``2130706433``, ``0177.0.0.1``, ``0x7f.1``) so no
spelling slips through; every address a name resolves to (the loop's ``getaddrinfo``)
must be public, an IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4,
compatible) is judged by that IPv4 address. The checked addresses are then pinned in
:class:`PinnedResolver`, the connector's only resolver, so the connection goes to
exactly what was checked: a name that answers differently a second time (DNS
rebinding) is never looked up a second time.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from aiohttp.abc import AbstractResolver, ResolveResult
from yarl import URL

from tools.web.errors import WebError
from tools.web.reasons import shown_host, shown_url

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

SCHEMES = frozenset({"http", "https"})
_NUMERIC_PART = re.compile(r"0x[0-9a-f]*|[0-9]+", re.IGNORECASE)
_OCTAL = re.compile(r"0[0-7]*")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_V4_COMPATIBLE = ipaddress.ip_network("::/96")
_PLAIN_HOST = re.compile(r"[a-z0-9._:\[\]%-]{1,253}")
_NUMERIC_FLAGS = socket.AI_NUMERICHOST | socket.AI_NUMERICSERV


class Refused(WebError):
    """A URL the guard will not fetch; the message says why (shown to the model)."""

    outcome = "refused"


def _part_value(part: str) -> int:
    if part.lower().startswith("0x"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        if not _OCTAL.fullmatch(part):
            raise ValueError(f"{part!r} is not an octal number")
        return int(part, 8)
    return int(part)


def parse_ipv4_forms(host: str) -> ipaddress.IPv4Address | None:
    """``host`` as IPv4 when every dot-separated part is a number, read like
    ``inet_aton`` and the WHATWG URL parser: 1 to 4 parts, each decimal, octal (leading
    0) or hex (0x); the last part fills the remaining bytes. None: not numeric (a name).
    A numeric host that is no valid address raises ValueError."""
    parts = host.removesuffix(".").split(".")
    if not parts or not all(_NUMERIC_PART.fullmatch(p) for p in parts):
        return None
    if len(parts) > 4:
        raise ValueError(f"{host!r} has more than four numeric parts")
    values = [_part_value(p) for p in parts]
    last_bytes = 5 - len(values)
    if any(v > 255 for v in values[:-1]) or values[-1] >= 256**last_bytes:
        raise ValueError(f"{host!r} is out of the IPv4 range")
    number = values[-1]
    for i, value in enumerate(values[:-1]):
        number |= value << (8 * (3 - i))
    return ipaddress.IPv4Address(number)


def parse_ip_literal(host: str) -> IPAddress | None:
    """An address written as the host (any IPv4 form, IPv6 with or without brackets),
    or None for a name."""
    bare = host.strip("[]")
    if ":" in bare:
        return ipaddress.IPv6Address(bare)
    return parse_ipv4_forms(bare)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for (mapped, NAT64, 6to4, compatible)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64 or (address in _V4_COMPATIBLE and int(address) > 1):
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def non_public_reason(address: IPAddress) -> str | None:
    """Why ``address`` is not on the public internet, or None when it is."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None:
            reason = non_public_reason(inner)
            return f"{reason} (as IPv4 {inner} inside IPv6)" if reason else None
    checks = (
        (address.is_loopback, "a loopback address"),
        (address.is_unspecified, "the unspecified address"),
        (address in _THIS_NETWORK, "in 0.0.0.0/8 (this network)"),
        (address.is_link_local, "a link-local address"),
        # fec0::/10: deprecated, still routed inside some networks; not private to ipaddress
        (_site_local(address), "a site-local address"),
        (address.is_multicast, "a multicast address"),
        (address in _CGNAT, "a shared (carrier-grade NAT) address"),
        (address.is_reserved, "a reserved address"),
        (address.is_private, "a private address"),
        (not address.is_global, "not a public address"),
    )
    return next((why for hit, why in checks if hit), None)


def _site_local(address: IPAddress) -> bool:
    return isinstance(address, ipaddress.IPv6Address) and address.is_site_local


@dataclass(frozen=True, slots=True)
class Allowance:
    """``[fetch] allow_private``: host names and networks allowed although not public."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> Allowance:
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                hosts.add(entry.lower().removesuffix("."))
        return cls(frozenset(hosts), tuple(networks))

    def covers_host(self, host: str) -> bool:
        return host.lower().removesuffix(".") in self.hosts

    def covers(self, address: IPAddress) -> bool:
        forms: list[IPAddress] = [address]
        if isinstance(address, ipaddress.IPv6Address) and (inner := embedded_ipv4(address)):
            forms.append(inner)
        return any(form in net for form in forms for net in self.networks)


@dataclass(frozen=True, slots=True)
class Target:
    """One hop's checked destination: the URL and the addresses it may connect to."""

    url: URL
    host: str
    port: int
    addresses: tuple[str, ...]


def _named(host: str) -> str:
    """``host`` as a refusal may say it: a redirect's host is the server's choice, so one
    with anything but a host name's characters is shown percent-encoded."""
    return host if _PLAIN_HOST.fullmatch(host) else shown_host(host)


class AddressGuard:
    """Checks a URL's scheme, host and every address it resolves to."""

    def __init__(self, allowance: Allowance, loop: asyncio.AbstractEventLoop | None = None):
        self._allowance = allowance
        self._loop = loop

    async def check(self, url: URL) -> Target:
        """The checked target of ``url``; :class:`Refused` (saying why) otherwise."""
        if url.scheme not in SCHEMES:
            raise Refused(f"only http and https URLs can be fetched, not {url.scheme or '?'}:")
        host = (url.raw_host or "").lower()
        if not host:
            raise Refused(f"the URL {shown_url(url)!r} names no host")
        port = url.port or (443 if url.scheme == "https" else 80)
        if self._allowance.covers_host(host):
            return Target(url, host, port, await self._resolve(host, port))
        bare = host.removesuffix(".")
        named = _named(host)
        if bare == "localhost" or bare.endswith(".localhost"):
            raise Refused(f"refused to fetch {named}: localhost names are this machine")
        try:
            literal = parse_ip_literal(host)
        except ValueError as exc:
            detail = f" ({exc})" if named == host else ""
            raise Refused(f"refused to fetch {named}: not a valid address{detail}") from None
        if literal is not None:
            self._require_public(named, literal)
            # aiohttp connects to a literal itself; a legacy form is written canonically.
            return Target(url.with_host(str(literal)), host, port, (str(literal),))
        addresses = await self._resolve(host, port)
        for text in addresses:
            self._require_public(named, ipaddress.ip_address(text.partition("%")[0]))
        return Target(url, host, port, addresses)

    def _require_public(self, host: str, address: IPAddress) -> None:
        reason = non_public_reason(address)
        if reason and not self._allowance.covers(address):
            named = host if host.strip("[]") == str(address) else f"{host} ({address})"
            raise Refused(
                f"refused to fetch {named}: {reason}; only public internet addresses can be "
                "fetched (an operator may allow it with [fetch] allow_private)"
            )

    async def _resolve(self, host: str, port: int) -> tuple[str, ...]:
        loop = self._loop or asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(
                host.strip("[]"), port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
            )
        except socket.gaierror as exc:  # the local resolver's words, not the server's
            raise Refused(f"cannot resolve {_named(host)}: {exc}") from None
        except UnicodeError:
            raise Refused(f"cannot resolve {_named(host)}: not a valid host name") from None
        found = [str(info[4][0]) for info in infos if info[0] in (socket.AF_INET, socket.AF_INET6)]
        if not found:
            raise Refused(f"cannot resolve {_named(host)}: no IPv4 or IPv6 address")
        return tuple(dict.fromkeys(found))


class PinnedResolver(AbstractResolver):
    """The fetch connector's resolver: answers only with addresses the guard checked.

    A host that was not pinned is refused, so no connection can reach an address that
    skipped the check, whatever asks aiohttp to connect.
    """

    def __init__(self) -> None:
        self._pins: dict[tuple[str, int], tuple[str, ...]] = {}

    def pin(self, target: Target) -> None:
        self._pins[(target.host.strip("[]"), target.port)] = target.addresses

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        addresses = self._pins.get((host.lower().strip("[]"), port))
        if addresses is None:
            raise OSError(f"{host}:{port} was not checked by the SSRF guard")
        return [_result(host, address, port) for address in addresses]

    async def close(self) -> None:
        self._pins.clear()


def _result(host: str, address: str, port: int) -> ResolveResult:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return ResolveResult(
        hostname=host,
        host=address,
        port=port,
        family=family,
        proto=socket.IPPROTO_TCP,
        flags=_NUMERIC_FLAGS,
    )
