"""The outbound guard (domain/kernel/outbound.py) every outgoing request goes through: which addresses are
refused (IPv4 and IPv6 forms that hide a private address included), every address a name resolves to
checked, the connection made to the checked address (not to a second DNS answer), every redirect checked
again, only http(s). The market's fetches go through it, so market refusals are tested there too."""

from __future__ import annotations

import ssl
from collections import Counter

import pytest
import trustme
from aiohttp import web

from domain.kernel import outbound
from domain.market import outbound as market_outbound
from tests.market_fixtures import add_product, add_retailer
from tests.waiting import eventually

LIMITS = outbound.Limits(timeout_seconds=10, max_bytes=100_000, max_redirects=3, user_agent="test")


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
        ("64:ff9b::808:808", None),  # NAT64 of a public address: how a DNS64 network reaches IPv4 sites
        ("2002:808:808::1", None),
        ("::ffff:8.8.8.8", None),
        ("127.0.0.1", "loopback"),
        ("127.8.9.10", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),
        ("100.64.0.1", "shared (carrier-grade NAT)"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", ""),  # reserved (the standard library calls it private too): refused either way
        ("255.255.255.255", ""),
        ("192.0.2.1", ""),  # documentation
        ("198.18.0.1", ""),  # benchmarking
        ("::1", "loopback"),
        ("::", "unspecified"),
        ("fe80::1", "link-local"),
        ("fe80::1%eth0", "link-local"),
        ("ff02::1", "multicast"),
        ("fc00::1", "unique local"),
        ("fd12:3456::1", "unique local"),
        ("fec0::1", "site-local"),
        ("::ffff:127.0.0.1", "IPv4-mapped form of 127.0.0.1, loopback"),
        ("::ffff:10.0.0.1", "IPv4-mapped form of 10.0.0.1, private"),
        ("::127.0.0.1", "IPv4-compatible form of 127.0.0.1"),
        ("::8.8.8.8", "IPv4-compatible form of 8.8.8.8, deprecated"),
        ("64:ff9b::7f00:1", "NAT64 form of 127.0.0.1, loopback"),
        ("64:ff9b::a9fe:a9fe", "NAT64 form of 169.254.169.254, link-local"),
        ("64:ff9b::c0a8:101", "NAT64 form of 192.168.1.1, private"),
        ("64:ff9b:1::a00:1", "local-use NAT64"),
        ("2002:7f00:1::", "6to4 form of 127.0.0.1, loopback"),
        ("2002:a00:1::1", "6to4 form of 10.0.0.1, private"),
        ("2002:a9fe:a9fe::", "6to4 form of 169.254.169.254, link-local"),
        ("2001::1", "Teredo"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
        ("2001:db8::1", ""),  # documentation
        ("not-an-address", "not an IP address"),
    ],
)
def test_which_addresses_are_refused(address, why):
    found = outbound.refusal(address)
    if why is None:
        assert found is None
    else:
        assert found is not None
        assert why in found


@pytest.mark.parametrize(
    "answer",
    [
        "64:ff9b::7f00:1",
        "64:ff9b::a00:1",
        "64:ff9b:1::7f00:1",
        "2002:7f00:1::",
        "2002:c0a8:101::1",
        "::ffff:127.0.0.1",
        "::127.0.0.1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "fec0::1",
        "fd00::1",
    ],
)
async def test_a_name_resolving_to_a_disguised_private_address_is_refused_before_any_connection(dns, answer):
    dns.set("shop.example", [answer])
    with pytest.raises(market_outbound.FetchError) as info:
        await market_outbound.fetch("http://shop.example/p/1")
    assert info.value.kind == "blocked_address"
    assert info.value.detail.startswith(f"shop.example resolves to non-public address {answer} (")


@pytest.mark.parametrize(
    "url", ["http://[64:ff9b::7f00:1]/x", "http://[2002:7f00:1::]/x", "http://[::ffff:a9fe:a9fe]/x"]
)
async def test_address_literals_in_disguise_are_refused(url):
    with pytest.raises(market_outbound.FetchError) as info:
        await market_outbound.fetch(url)
    assert info.value.kind == "blocked_address"
    assert "the URL's host is non-public address" in info.value.detail


async def test_every_address_a_name_resolves_to_is_checked(dns):
    dns.set("mixed.example", ["8.8.8.8", "64:ff9b::a00:1"])
    with pytest.raises(market_outbound.FetchError) as info:
        await market_outbound.fetch("https://mixed.example/")
    assert info.value.kind == "blocked_address"
    assert "64:ff9b::a00:1 (NAT64 form of 10.0.0.1, private)" in info.value.detail


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("file:///etc/passwd", "only http and https URLs are contacted, not file:"),
        ("gopher://example.com/1", "only http and https URLs are contacted, not gopher:"),
        ("javascript:alert(1)", "only http and https URLs are contacted, not javascript:"),
        ("//example.com/x", "not a URL without a scheme"),
        ("http://example.com:99999/", "bad port"),
        ("http:///x", "no host"),
        ("http://user@example.com/", "credentials"),
    ],
)
async def test_only_plain_http_and_https_urls_are_contacted(url, said):
    with pytest.raises(outbound.FetchError) as info:
        await outbound.request("GET", url, limits=LIMITS)
    assert info.value.kind == "invalid_url"
    assert said in info.value.detail


async def test_the_trusted_hosts_of_the_operator_never_apply_to_market_urls(
    aiohttp_server, settings, monkeypatch
):
    monkeypatch.setattr(settings, "outbound_trusted_hosts", ["127.0.0.1"])
    server = await aiohttp_server(web.Application())
    with pytest.raises(market_outbound.FetchError) as info:
        await market_outbound.fetch(str(server.make_url("/p")))
    assert info.value.kind == "blocked_address"


def who_app(hits: Counter[str]) -> web.Application:
    """Answers with the Host header it received; /jump?to=… redirects there."""

    async def who(request: web.Request) -> web.Response:
        hits[request.path] += 1
        return web.Response(text=request.host)

    async def jump(request: web.Request) -> web.Response:
        hits[request.path] += 1
        return web.Response(status=302, headers={"Location": request.query["to"]})  # as given, unchecked

    app = web.Application()
    app.router.add_get("/who", who)
    app.router.add_get("/jump", jump)
    return app


async def test_the_connection_goes_to_the_checked_address_not_to_a_second_dns_answer(
    aiohttp_server, dns, settings, monkeypatch
):
    # The local server listens on 127.0.0.1 only. A rebinding DNS answers 127.0.0.1 when the guard asks
    # and 127.0.0.2 (where nothing listens) afterwards: the page arrives only if the connection is made to
    # the address the guard got (and would have checked), and the server sees the name as Host.
    monkeypatch.setattr(settings, "outbound_allow_private", True)  # the checked address is on loopback
    hits: Counter[str] = Counter()
    server = await aiohttp_server(who_app(hits))
    dns.set("rebind.example", ["127.0.0.1"], ["127.0.0.2"])
    page = await market_outbound.fetch(f"http://rebind.example:{server.port}/who")
    assert (page.status, page.body) == (200, f"rebind.example:{server.port}".encode())
    assert page.url == f"http://rebind.example:{server.port}/who"
    assert dns.asked["rebind.example"] == 1


async def test_tls_is_sent_and_verified_for_the_name_while_connecting_to_the_checked_address(
    aiohttp_server, dns, settings, monkeypatch
):
    ca = trustme.CA()
    server_tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("secure.example").configure_cert(server_tls)
    asked_for: list[str | None] = []
    server_tls.sni_callback = lambda sock, name, ctx: asked_for.append(name)
    client_tls = ssl.create_default_context()
    ca.configure_trust(client_tls)
    monkeypatch.setattr(outbound, "tls_verify", client_tls)
    monkeypatch.setattr(settings, "outbound_allow_private", True)  # the checked address is on loopback
    server = await aiohttp_server(who_app(Counter()), ssl=server_tls)
    dns.set("secure.example", ["127.0.0.1"], ["127.0.0.2"])
    page = await outbound.request("GET", f"https://secure.example:{server.port}/who", limits=LIMITS)
    assert (page.status, page.body) == (200, f"secure.example:{server.port}".encode())
    assert asked_for == ["secure.example"]  # SNI names the host, not the address connected to
    # The same address under a name the certificate does not cover: TLS refuses it.
    dns.set("other.example", ["127.0.0.1"])
    with pytest.raises(outbound.FetchError) as info:
        await outbound.request("GET", f"https://other.example:{server.port}/who", limits=LIMITS)
    assert info.value.kind == "connect_error"
    assert "certificate" in info.value.detail.lower()


@pytest.mark.parametrize(
    ("to", "kind", "said"),
    [
        ("/who", "blocked_address", "non-public address 127.0.0.1 (loopback)"),
        ("http://localhost/who", "blocked_address", "non-public address"),
        ("http://nat64.example/who", "blocked_address", "NAT64 form of 10.0.0.1, private"),
        ("http://[2002:7f00:1::]/who", "blocked_address", "6to4 form of 127.0.0.1, loopback"),
        ("file:///etc/passwd", "invalid_url", "only http and https"),
        ("http://a.example:port/", "connect_error", "Invalid URL in location header"),
    ],
)
async def test_every_redirect_is_checked_again(aiohttp_server, dns, settings, monkeypatch, to, kind, said):
    # The first hop is an operator-configured URL on a trusted host; trust never carries over a redirect.
    monkeypatch.setattr(settings, "outbound_trusted_hosts", ["127.0.0.1"])
    dns.set("localhost", ["127.0.0.1"])
    dns.set("nat64.example", ["64:ff9b::a00:1"])
    hits: Counter[str] = Counter()
    server = await aiohttp_server(who_app(hits))
    start = str(server.make_url("/jump").with_query(to=to))
    with pytest.raises(outbound.FetchError) as info:
        await outbound.request("GET", start, limits=LIMITS, configured=True)
    assert (info.value.kind, hits["/jump"], hits["/who"]) == (kind, 1, 0)
    assert said in info.value.detail
    # The same first hop without the redirect is allowed: the refusal is the redirect's.
    page = await outbound.request("GET", str(server.make_url("/who")), limits=LIMITS, configured=True)
    assert page.status == 200


async def test_a_scraped_product_on_a_name_resolving_to_nat64_loopback_is_refused(
    hub, runtime, register, dns
):
    dns.set("shop.example", ["64:ff9b::7f00:1"])
    agent = await register()
    await add_retailer(runtime, "shop")
    pid = await add_product(runtime, "shop", "thing", price_cents=None, url="http://shop.example/p/1")
    resp = await hub.post(f"/api/market/products/{pid}/refresh", headers=agent["headers"])
    assert resp.status == 202

    async def scraped():
        body = await (await hub.get(f"/api/market/products/history?productId={pid}")).json()
        return body["product"]["scrape"]["status"] and body["product"]["scrape"]

    scrape = await eventually(scraped)
    assert scrape["status"] == "blocked_address"
    assert "non-public address 64:ff9b::7f00:1 (NAT64 form of 127.0.0.1, loopback)" in scrape["error"]
