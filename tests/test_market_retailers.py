"""Retailers as reference data: `concord market retailers add|list` through the real command, the domain
normalisation of what an operator types, and `host_belongs`, which decides whether a product page is on a
retailer's site."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from domain.kernel.context import SYSTEM
from domain.kernel.errors import BadRequest
from domain.kernel.models import AuditEntry
from domain.market.models import Retailer
from domain.market.retailers import add_retailer, host_belongs, normalise_domain
from tests.processes import concord


async def test_add_and_list_retailers_through_the_command(hub, runtime):
    code, out, err = await concord(
        "market",
        "retailers",
        "add",
        "--slug",
        "hardware-hub",
        "--name",
        "  Hardware   Hub ",
        "--domain",
        "https://Shop.Hardware-Hub.COM.au:8443/catalogue?x=1",
    )
    assert code == 0, err
    added = json.loads(out)
    assert added == {
        "slug": "hardware-hub",
        "name": "Hardware Hub",
        "domain": "shop.hardware-hub.com.au",
        "demo": False,
        "createdAt": added["createdAt"],
    }
    code, out, err = await concord(
        "market", "retailers", "add", "--slug", "local-dev", "--name", "Local", "--domain", "127.0.0.1:8000"
    )
    assert code == 0, err
    assert json.loads(out)["domain"] == "127.0.0.1"

    code, out, err = await concord("market", "retailers", "list")
    assert code == 0, err
    listed = [json.loads(line) for line in out.strip().splitlines()]
    assert [r["slug"] for r in listed] == ["hardware-hub", "local-dev"]
    assert listed[0] == added

    async with runtime.db.read() as session:
        row = await session.get(Retailer, "hardware-hub")
        entry = await session.scalar(select(AuditEntry).where(AuditEntry.op == "market.retailer.add"))
    assert row is not None
    assert (row.delivery_fee_cents, row.pickup_available, row.demo) == (0, False, False)
    assert entry is not None
    assert entry.entity_id == "hardware-hub"
    assert entry.actor_id == "system"

    # The new retailer's products show under its slug (the catalogue reads it like any other).
    resp = await hub.get("/api/market/catalog/stats")
    assert resp.status == 200, await resp.text()
    assert {"retailer": "hardware-hub", "name": "Hardware Hub", "products": 0, "demo": False} in (
        await resp.json()
    )["byRetailer"]


async def test_a_taken_slug_is_refused_and_nothing_changes(runtime):
    args = ("market", "retailers", "add", "--slug", "alpha", "--name", "Alpha", "--domain", "alpha.example")
    code, _, err = await concord(*args)
    assert code == 0, err
    code, out, err = await concord(
        "market", "retailers", "add", "--slug", "alpha", "--name", "Other", "--domain", "other.example"
    )
    assert code == 2
    assert not out
    assert "retailer 'alpha' exists" in err
    async with runtime.db.read() as session:
        row = await session.get(Retailer, "alpha")
    assert row is not None
    assert (row.name, row.domain) == ("Alpha", "alpha.example")


BAD_INPUT = [
    ("A", "Alpha", "alpha.example", "slug"),
    ("Alpha", "Alpha", "alpha.example", "slug"),
    ("al_pha", "Alpha", "alpha.example", "slug"),
    ("a" * 65, "Alpha", "alpha.example", "slug"),
    ("alpha", "A", "alpha.example", "name"),
    ("alpha", "x" * 201, "alpha.example", "name"),
    ("alpha", "Al\x00pha", "alpha.example", "name"),
    ("alpha", "Alpha", "", "domain"),
    ("alpha", "Alpha", "https://", "domain"),
    ("alpha", "Alpha", "not a host", "domain"),
    ("alpha", "Alpha", "-bad-.example", "domain"),
    ("alpha", "Alpha", "256.1.1.1", "domain"),
    ("alpha", "Alpha", "alpha\x00.example", "domain"),
]


@pytest.mark.parametrize(("slug", "name", "domain", "field"), BAD_INPUT[1::4])
async def test_the_command_refuses_bad_input_naming_the_field(runtime, slug, name, domain, field):
    code, out, err = await concord(
        "market", "retailers", "add", "--slug", slug, "--name", name, "--domain", domain
    )
    assert code == 2, out
    assert err.startswith(f"error: {field}:"), err


@pytest.mark.parametrize(("slug", "name", "domain", "field"), BAD_INPUT)
async def test_bad_input_is_refused_naming_the_field(runtime, slug, name, domain, field):
    with pytest.raises(BadRequest) as caught:
        async with runtime.db.transaction() as session:
            await add_retailer(session, SYSTEM, slug=slug, name=name, domain=domain)
    assert caught.value.extra["field"] == field
    assert caught.value.detail.startswith(f"{field}:")
    async with runtime.db.read() as session:
        assert await session.scalar(select(func.count()).select_from(Retailer)) == 0


@pytest.mark.parametrize(
    ("raw", "host"),
    [
        ("example.com", "example.com"),
        ("Example.COM.", "example.com"),
        ("example.com:8080", "example.com"),
        ("http://127.0.0.1:8000/x", "127.0.0.1"),
        ("https://user:pw@shop.example.com/p?q#f", "shop.example.com"),
        ("shop.example.com/path/page", "shop.example.com"),
        ("  https://www.example.com.au  ", "www.example.com.au"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("http://[2001:db8::1]:8080/", "2001:db8::1"),
        ("localhost", "localhost"),
    ],
)
def test_normalise_domain_keeps_only_the_host(raw, host):
    assert normalise_domain(raw) == host


@pytest.mark.parametrize("raw", ["", "   ", "http://", "a..b", "exa mple.com", "x" * 64 + ".com", "1.2.3"])
def test_normalise_domain_refuses_what_is_no_host(raw):
    with pytest.raises(BadRequest) as caught:
        normalise_domain(raw)
    assert caught.value.extra["field"] == "domain"


@pytest.mark.parametrize(
    ("host", "domain", "belongs"),
    [
        ("example.com", "example.com", True),
        ("www.example.com", "example.com", True),
        ("a.b.example.com", "example.com", True),
        ("WWW.Example.COM", "example.com", True),
        ("www.example.com.", "example.com", True),
        ("www.example.com", "EXAMPLE.com.", True),
        ("www.example.com:443", "example.com", True),
        ("example.com", "example.com:8080", True),
        ("evilexample.com", "example.com", False),
        ("example.com.evil.net", "example.com", False),
        ("example.co", "example.com", False),
        ("com", "example.com", False),
        ("shop.example.com", "www.example.com", False),
        ("", "example.com", False),
        ("example.com", "", False),
        ("bücher.example", "xn--bcher-kva.example", True),
        ("shop.xn--bcher-kva.example", "BÜCHER.example", True),
        ("127.0.0.1", "127.0.0.1", True),
        ("127.0.0.1:8000", "127.0.0.1", True),
        ("1.127.0.0.1", "127.0.0.1", False),
        ("x.127.0.0.1", "127.0.0.1", False),
        ("127.0.0.2", "127.0.0.1", False),
        ("127.0.0.1", "0.0.1", False),
        ("[2001:db8::1]:443", "2001:db8:0::1", True),
        ("2001:db8::1", "[2001:db8::1]", True),
        ("2001:db8::2", "2001:db8::1", False),
        ("localhost", "127.0.0.1", False),
    ],
)
def test_host_belongs(host, domain, belongs):
    assert host_belongs(host, domain) is belongs
