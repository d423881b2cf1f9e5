"""The SSRF guard: every spelling of a non-public address is refused before any
connection, on the first request and on each redirect, and the connection goes to the
address that was checked."""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

import pytest
from yarl import URL

from bot.config.webtools import FetchSettings
from tests.fakes.web_sites import FakeSite
from tools.web.errors import WebError
from tools.web.fetch import Fetcher
from tools.web.ssrf import (
    AddressGuard,
    Allowance,
    Refused,
    non_public_reason,
    parse_ip_literal,
    parse_ipv4_forms,
)


class FakeDns:
    """``loop.getaddrinfo`` for made-up names: each lookup answers the next address of
    the name's list (the last one again once it runs out); every lookup is recorded."""

    def __init__(self, **names: list[str]) -> None:
        self.names = {k.replace("_", "."): v for k, v in names.items()}
        self.lookups: list[str] = []

    async def getaddrinfo(self, host: str, port: int, **kwargs: Any) -> list[Any]:
        self.lookups.append(host)
        answers = self.names.get(host)
        if not answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        address = answers.pop(0) if len(answers) > 1 else answers[0]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]


def guard(dns: FakeDns | None = None, allow: tuple[str, ...] = ()) -> AddressGuard:
    return AddressGuard(Allowance.parse(allow), loop=dns or FakeDns())  # type: ignore[arg-type]


REFUSED_URLS = [
    ("http://127.0.0.1/", "loopback"),
    ("http://127.1.2.3:8080/admin", "loopback"),
    ("http://2130706433/", "loopback"),  # decimal
    ("http://0177.0.0.1/", "loopback"),  # octal
    ("http://0x7f.0.0.1/", "loopback"),  # hex
    ("http://0x7f000001/", "loopback"),
    ("http://127.1/", "loopback"),  # two parts, inet_aton style
    ("http://017700000001/", "loopback"),  # one octal number
    ("http://[::1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "loopback address (as IPv4 127.0.0.1 inside IPv6)"),
    ("http://[::ffff:7f00:1]/", "loopback"),
    ("http://[64:ff9b::a00:1]/", "private"),  # NAT64 of 10.0.0.1
    ("http://[2002:c0a8:101::]/", "private"),  # 6to4 of 192.168.1.1
    ("http://10.1.2.3/", "private"),
    ("http://172.16.0.1/", "private"),
    ("http://192.168.1.1/", "private"),
    ("http://[fd00::1]/", "private"),
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://[fe80::1]/", "link-local"),
    ("http://224.0.0.1/", "multicast"),
    ("http://[ff02::1]/", "multicast"),
    ("http://0.0.0.0/", "unspecified"),
    ("http://[::]/", "unspecified"),
    ("http://0.1.2.3/", "0.0.0.0/8"),
    ("http://100.64.0.1/", "carrier-grade NAT"),
    ("http://240.0.0.1/", "reserved"),
    ("http://255.255.255.255/", "reserved"),
    ("http://198.18.0.1/", "private"),  # benchmarking range
    ("http://192.0.2.1/", "private"),  # documentation range
    ("http://localhost:8080/", "localhost"),
    ("http://LOCALHOST./", "localhost"),
    ("http://api.localhost/", "localhost"),
    ("http://intranet.example/", "private"),  # a name that resolves to 10.0.0.5
    ("http://mixed.example/", "loopback"),  # one public and one loopback address
    ("http://v6only.example/", "link-local"),
    ("http://[fec0::1]/", "site-local"),  # deprecated, still routed on some networks
    ("http://sitelocal.example/", "site-local"),  # a name that resolves to fec0::5
]


@pytest.mark.parametrize(("url", "why"), REFUSED_URLS)
async def test_non_public_addresses_are_refused_saying_why(url: str, why: str) -> None:
    dns = FakeDns(
        intranet_example=["10.0.0.5"],
        mixed_example=["93.184.216.34", "127.0.0.1"],
        v6only_example=["fe80::1234"],
        sitelocal_example=["fec0::5"],
    )
    dns.names["mixed.example"] = ["93.184.216.34"]

    async def both(host: str, port: int, **kwargs: Any) -> list[Any]:
        if host == "mixed.example":
            return [
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
                (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
            ]
        return await FakeDns.getaddrinfo(dns, host, port, **kwargs)

    dns.getaddrinfo = both  # type: ignore[method-assign]
    with pytest.raises(Refused) as caught:
        await guard(dns).check(URL(url))
    assert why in str(caught.value)
    assert "allow_private" in str(caught.value) or "localhost" in str(caught.value)


@pytest.mark.parametrize(
    "url", ["ftp://example.com/x", "file:///etc/passwd", "gopher://example.com/", "data:,hi"]
)
async def test_only_http_and_https(url: str) -> None:
    with pytest.raises(Refused, match="only http and https"):
        await guard().check(URL(url))


async def test_invalid_numeric_hosts_are_refused_not_resolved() -> None:
    dns = FakeDns()
    for url in ("http://256.1.1.1/", "http://1.2.3.4.5/", "http://08.0.0.1/", "http://4294967296/"):
        with pytest.raises(Refused, match="not a valid address"):
            await guard(dns).check(URL(url))
    assert dns.lookups == []


async def test_public_addresses_pass_with_what_was_checked() -> None:
    dns = FakeDns(example_org=["93.184.216.34", "2606:2800:220:1::1"])
    target = await guard(dns).check(URL("https://example.org/page"))
    assert target.addresses == ("93.184.216.34",)  # FakeDns answers one at a time
    target = await guard().check(URL("http://8.8.8.8/"))
    assert target.addresses == ("8.8.8.8",)


async def test_allow_private_lists_hosts_and_networks() -> None:
    dns = FakeDns(wiki_lan=["10.0.0.7"], other_lan=["10.9.9.9"])
    allowed = guard(dns, ("wiki.lan", "127.0.0.0/8", "fd00::/8"))
    assert (await allowed.check(URL("http://wiki.lan/page"))).addresses == ("10.0.0.7",)
    assert (await allowed.check(URL("http://127.0.0.1:9/"))).addresses == ("127.0.0.1",)
    assert (await allowed.check(URL("http://[::ffff:127.0.0.1]/"))).addresses
    assert (await allowed.check(URL("http://[fd00::5]/"))).addresses == ("fd00::5",)
    with pytest.raises(Refused, match="private"):
        await allowed.check(URL("http://other.lan/"))


def test_ipv4_forms_are_read_like_inet_aton() -> None:
    assert parse_ipv4_forms("2130706433") == ipaddress.IPv4Address("127.0.0.1")
    assert parse_ipv4_forms("0177.0.0.01") == ipaddress.IPv4Address("127.0.0.1")
    assert parse_ipv4_forms("0x7f.1") == ipaddress.IPv4Address("127.0.0.1")
    assert parse_ipv4_forms("10.1") == ipaddress.IPv4Address("10.0.0.1")
    assert parse_ipv4_forms("192.168.257") == ipaddress.IPv4Address("192.168.1.1")
    assert parse_ipv4_forms("1.2.3.4.") == ipaddress.IPv4Address("1.2.3.4")
    assert parse_ipv4_forms("example.com") is None
    assert parse_ipv4_forms("1.2.3.example") is None
    assert parse_ip_literal("[::1]") == ipaddress.IPv6Address("::1")
    assert non_public_reason(ipaddress.ip_address("1.1.1.1")) is None
    assert non_public_reason(ipaddress.ip_address("::ffff:1.1.1.1")) is None


async def test_redirect_from_an_allowed_host_to_a_refused_one(
    fake_site: FakeSite, loopback_only: list[str]
) -> None:
    """The site on 127.0.0.1 is allowed; where it redirects to is checked again."""
    fetcher = Fetcher(FetchSettings(allow_private=["127.0.0.1"]))
    for location, why in [
        ("http://localhost:1/", "localhost"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::1]:1/", "loopback"),
        ("http://0177.0.0.2:1/", "loopback"),  # octal; only 127.0.0.1 itself is allowed
        ("file:///etc/passwd", "only http and https"),
    ]:
        url = fake_site.redirect(f"/go-{len(loopback_only)}", location)
        with pytest.raises(Refused, match=why):
            await fetcher.fetch(url)
    assert set(loopback_only) == {"127.0.0.1"}  # only the allowed site was connected to


async def test_refused_before_any_connection(loopback_only: list[str]) -> None:
    fetcher = Fetcher(FetchSettings())
    for url in ("http://127.0.0.1:9/", "http://0177.0.0.1:9/", "http://[::1]:9/"):
        with pytest.raises(Refused):
            await fetcher.fetch(url)
    assert loopback_only == []


async def test_the_connection_goes_to_the_checked_address(
    fake_site: FakeSite, loopback_only: list[str]
) -> None:
    """A name that answers loopback (allowed here) once and a private address after that
    (DNS rebinding) is looked up once: the connection uses the first, checked answer."""
    dns = FakeDns(rebind_example=["127.0.0.1", "10.0.0.1"])
    fetcher = Fetcher(
        FetchSettings(allow_private=["127.0.0.0/8"]),
        guard=guard(dns, ("127.0.0.0/8",)),
    )
    fake_site.page("/hello", "hello from the site", "text/plain")
    fetched = await fetcher.fetch(f"http://rebind.example:{fake_site.port}/hello")
    assert fetched.body == b"hello from the site"
    assert dns.lookups == ["rebind.example"]
    assert loopback_only == ["127.0.0.1"]
    assert fake_site.requests[-1].headers["Host"] == f"rebind.example:{fake_site.port}"


async def test_too_many_redirects(fake_site: FakeSite, loopback_only: list[str]) -> None:
    for n in range(7):
        fake_site.redirect(f"/r{n}", f"/r{n + 1}")
    fake_site.page("/r7", "done", "text/plain")
    fetcher = Fetcher(FetchSettings(allow_private=["127.0.0.1"]))
    with pytest.raises(WebError, match="too many redirects"):
        await fetcher.fetch(fake_site.root + "/r0")
    assert (await fetcher.fetch(fake_site.root + "/r2")).body == b"done"  # 5 hops: fine


async def test_the_test_guard_fails_a_connection_outside_loopback() -> None:
    """Tests never send a packet elsewhere: were a fetch allowed to 10.0.0.1, the
    connector fails the test before connecting."""
    dns = FakeDns(intranet_example=["10.0.0.1"])
    fetcher = Fetcher(FetchSettings(), guard=guard(dns, ("10.0.0.0/8",)))
    with pytest.raises(pytest.fail.Exception, match=r"tried to connect to 10\.0\.0\.1"):
        await fetcher.fetch("http://intranet.example:9/")


async def test_a_redirect_to_junk_is_an_error(fake_site: FakeSite) -> None:
    url = fake_site.redirect("/junk", "http://[::1")
    with pytest.raises(WebError, match="redirects to an invalid URL"):
        await Fetcher(FetchSettings(allow_private=["127.0.0.1"])).fetch(url)
