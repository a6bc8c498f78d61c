"""Each app's /openapi.json says exactly what its wire does: schemathesis (its pytest integration) generates
requests from the document, positive and negative, sends them to the app served on a local port, and runs
all of its checks on every answer (no 5xx; statuses, content types, headers and bodies as documented;
schema-valid input accepted and schema-violating input refused; authentication not ignored...).

Valid keys of every kind the document declares are supplied (schemathesis's OpenAPI auth, by security
scheme), so secured operations are tested past their guard. A few examples per operation keep the run
within CI's budget (`CONCORD_FUZZ_EXAMPLES`, default 4, raises it locally). Strings carry no NUL
character: both apps refuse NUL anywhere as input (PostgreSQL cannot store it), which the documents say in
their description rather than as a pattern on every string.

The apps run in a thread of their own with their own event loop (schemathesis calls them synchronously)
on the suite's database and broker."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from hypothesis import strategies as st
from schemathesis.config import SchemathesisConfig
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from web.docs.api import build_api as build_docs_api
from web.hub.api import build_api as build_hub_api

EXAMPLES = int(os.environ.get("CONCORD_FUZZ_EXAMPLES", "4"))

# Operations with a rule no OpenAPI 3.1 schema can state, so that some schema-valid input is refused with a
# 400 (see docs/decisions.md, "The OpenAPI documents and the wire"). They are fuzzed like every other, with
# every check but "schema-valid input is accepted"; a 400 they answer must be the app's error naming the
# field and the rule (`_refused_cleanly`). What their schemas can state, they state.
MAY_REFUSE_VALID: dict[str, dict[str, str]] = {
    "hub": {
        # A signature is not a pattern: the cursor is a next_cursor this endpoint signed (HMAC), not a value
        # the client composes; a forged or altered one is 400 invalid_cursor naming `cursor`.
        "GET /api/audit/me": "cursor: only a next_cursor this endpoint gave (signed)",
        # A reference to rows that exist, and an order between two fields, are not JSON Schema.
        "POST /api/pact/topics": "dependsOn must name existing topics; expiryDate not before effectiveDate",
        # Uniqueness of a property across array items (sectionId) and the standards designation grammar
        # (required for `type: standard`) stay in the domain model; spellings, ids and bounds are in the
        # schema.
        "POST /api/axiom/legislation/ingest": "sectionIds unique within an instrument; a standard's "
        "designation (required) in the standards grammar",
        # The item keys are rows of the quote-items table (GET /api/market/quote-rates/items lists them).
        "GET /api/market/quote-rates": "items must be known item keys (400 naming the unknown ones)",
    },
    "docs": {
        "GET /oauth/authorize": "client_id must name a registered client and redirect_uri one of its own "
        "(else a 400 page, never a redirect)",
        "POST /oauth/authorize": "the consent form: the same request, and a CSRF token bound to the page's "
        "cookie",
    },
}


@dataclass
class Served:
    hub: str
    docs: str
    loop: asyncio.AbstractEventLoop
    keys: dict[str, str]


# The upload declares the formats it converts (multipart encoding); these are files of those formats.
_MARKDOWN = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=200).map(
    lambda text: f"# Fuzzed\n\n{text}\n".encode()
)
schemathesis.openapi.media_type("text/markdown", _MARKDOWN)
schemathesis.openapi.media_type("text/plain", _MARKDOWN)
schemathesis.openapi.media_type(
    "text/html", _MARKDOWN.map(lambda md: b"<html><body><p>" + md + b"</p></body></html>")
)

CONFIG = SchemathesisConfig.from_dict(
    {
        "generation": {"max-examples": EXAMPLES, "allow-x00": False, "deterministic": True},
        "phases": {"stateful": {"enabled": False}},
        "checks": {"enabled": True},
    }
)


def _schema(app: str) -> Any:
    api = build_hub_api() if app == "hub" else build_docs_api()
    schema: Any = schemathesis.openapi.from_dict(api.openapi(), config=CONFIG)
    return schema


def _credentials(case: Any, keys: dict[str, str]) -> dict[str, str]:
    """The header of the key the operation's security scheme asks for (none for an anonymous one). None for a
    case whose headers are the schema-violating part: schemathesis left out or spoilt the credentials there
    (a missing Authorization is a violation of the security requirement), and a valid key added here would
    turn the case into a valid request that the check then expects refused."""
    if case.meta is not None and case.meta.is_negative_at(ParameterLocation.HEADER):
        return {}
    for requirement in case.operation.definition.raw.get("security", []):
        for scheme in requirement:
            if scheme == "apiKey":
                return {"X-Api-Key": keys["service"]}
            kind = {"agentBearer": "agent", "commercialBearer": "commercial", "staffBearer": "staff"}[scheme]
            return {"Authorization": f"Bearer {keys[kind]}"}
    return {}


@pytest.fixture(scope="module")
def served(broker: Any) -> Iterator[Served]:
    from aiohttp import web

    from domain.documents import servicekeys
    from domain.kernel.context import SYSTEM
    from domain.kernel.settings import get_settings
    from domain.people import staff
    from runtime.process import Runtime
    from tests.conftest import _wipe
    from web.app import create_docs_app, create_hub_app
    from web.kernel.server import Runner

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="fuzzed-apps", daemon=True)
    thread.start()

    def run(coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, loop).result(timeout=60)

    async def start() -> tuple[Runtime, list[web.AppRunner], dict[str, str], dict[str, str]]:
        rt = await Runtime.start(get_settings(), relay=True, scheduler=False, worker=False)
        await _wipe(rt.db)
        runners: list[web.AppRunner] = []
        urls: dict[str, str] = {}
        for name, app in (("hub", create_hub_app(rt)), ("docs", create_docs_app(rt))):
            runner = Runner(app, access_log=None)  # as `concord web` serves them (web/kernel/server.py)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = runner.addresses[0][1]
            urls[name] = f"http://127.0.0.1:{port}"
            runners.append(runner)
        async with rt.db.transaction() as session:
            service = await servicekeys.create(
                session, SYSTEM, org_name="Fuzz Org", scopes=servicekeys.parse_scopes("all")
            )
            staff_key = await staff.create(session, name="Fuzz Staff", roles=("curator", "reviewer"))
        keys = {"service": service["apiKey"], "staff": staff_key["apiKey"]}
        return rt, runners, urls, keys

    rt, runners, urls, keys = run(start())
    import httpx

    with httpx.Client(base_url=urls["hub"]) as client:
        agent = client.post("/api/pact/register", json={"agentName": "Fuzzer"})
        assert agent.status_code == 201, agent.text
        keys["agent"] = agent.json()["apiKey"]
        commercial = client.post("/api/axiom/keys", json={"ownerName": "Fuzz Research"})
        assert commercial.status_code == 201, commercial.text
        keys["commercial"] = commercial.json()["apiKey"]
    try:
        yield Served(hub=urls["hub"], docs=urls["docs"], loop=loop, keys=keys)
    finally:

        async def stop() -> None:
            for runner in runners:
                await runner.cleanup()
            await rt.stop()

        run(stop())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()


hub_schema = _schema("hub")
docs_schema = _schema("docs")


def _refused_cleanly(case: Any, response: Any, app: str) -> None:
    """An operation of MAY_REFUSE_VALID that refused schema-valid input did so with the app's error body,
    naming the field whose rule the schema cannot state (a page, the OAuth consent page, with a page saying
    why)."""
    positive = case.meta is None or case.meta.generation.mode.is_positive
    if response.status_code != 400 or not positive or case.operation.label not in MAY_REFUSE_VALID[app]:
        return
    if any(v.startswith("text/html") for v in response.headers.get("content-type", [])):
        assert "<h1" in response.text, (case.operation.label, response.text[:200])  # a page saying why
        return
    body = response.json()
    assert isinstance(body.get("detail"), str), (case.operation.label, body)
    assert body["detail"], (case.operation.label, body)
    assert body.get("field"), (case.operation.label, body)


@hub_schema.parametrize()  # type: ignore[untyped-decorator]
def test_hub_wire_matches_its_openapi(case: Any, served: Served) -> None:
    excluded = [positive_data_acceptance] if case.operation.label in MAY_REFUSE_VALID["hub"] else []
    response = case.call_and_validate(
        base_url=served.hub, headers=_credentials(case, served.keys), excluded_checks=excluded
    )
    _refused_cleanly(case, response, "hub")


@docs_schema.parametrize()  # type: ignore[untyped-decorator]
def test_document_api_wire_matches_its_openapi(case: Any, served: Served) -> None:
    # A multipart field is text on the wire: a "number" schemathesis puts in the upload's title arrives as
    # the string "6.1e+96", a valid title, so "schema-violating data must be refused" cannot hold there.
    multipart = case.media_type == "multipart/form-data"
    excluded = [negative_data_rejection] if multipart else []
    if case.operation.label in MAY_REFUSE_VALID["docs"]:
        excluded.append(positive_data_acceptance)
    response = case.call_and_validate(
        base_url=served.docs, headers=_credentials(case, served.keys), excluded_checks=excluded
    )
    _refused_cleanly(case, response, "docs")
