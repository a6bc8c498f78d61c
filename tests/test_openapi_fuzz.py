"""Each app's /openapi.json says exactly what its wire does: schemathesis (its pytest integration) generates
requests from the document, positive and negative, sends them to the app served on a local port, and runs
all of its checks on every answer (no 5xx; statuses, content types, headers and bodies as documented;
schema-valid input accepted and schema-violating input refused; authentication not ignored...).

Two kinds of run per app: every operation on its own (examples, coverage and fuzzing phases), and the
stateful phase, sequences of calls along the links schemathesis infers between operations (upload a
document, then read, share and download it; create a topic, then propose and vote on it...), with the
same checks plus the stateful ones (a deleted resource is gone, a created one is there).

Valid keys of every kind the document declares are supplied (schemathesis's OpenAPI auth, by security
scheme), so secured operations are tested past their guard. A few examples per operation and a time box for
the scenarios keep the run within CI's budget (`CONCORD_FUZZ_EXAMPLES`, default 4, and
`CONCORD_FUZZ_SECONDS`, default 45 per app, up to 30 scenarios; raise them locally). Strings carry no NUL
character: both apps refuse NUL anywhere as input (PostgreSQL cannot store it), which the documents say in
their description rather than as a pattern on every string.

The apps run in a thread of their own with their own event loop (schemathesis calls them synchronously)
on the suite's database and broker."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from schemathesis.config import SchemathesisConfig
from schemathesis.config._checks import (
    NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES,
    POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES,
)
from schemathesis.core.parameters import ParameterLocation

import tests.fuzz_media  # noqa: F401 - registers the upload's media types
from web.docs.api import build_api as build_docs_api
from web.hub.api import build_api as build_hub_api

# The served apps' threads (the broker's workers, the drivers, Redis's client) may use `random` while
# Hypothesis draws a case, which it reports as the strategy using `random` (163 warnings a PostgreSQL + Redis
# run); schemathesis's strategies do not (tests/test_sections_outline.py says the same of its own).
pytestmark = [
    pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning"),
    pytest.mark.slow,
]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = int(os.environ.get("CONCORD_FUZZ_EXAMPLES", "4"))
# The scenarios run until this many seconds are spent (per app), in suites of SCENARIOS, a fresh seed each.
SCENARIO_SECONDS = int(os.environ.get("CONCORD_FUZZ_SECONDS", "45"))
SCENARIOS = 30
STEPS = 8  # calls per scenario, at most

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
        # The submission's shape is the claimed assignment's work type's, and a price observation names
        # an item key, a retailer and the item's unit as the reference tables hold them.
        "POST /api/work/submit": "submission: the shape of the assignment's work type; item key, retailer "
        "and unit as recorded",
    },
    "docs": {
        "GET /oauth/authorize": "client_id must name a registered client and redirect_uri one of its own "
        "(else a 400 page, never a redirect)",
        "POST /oauth/authorize": "the consent form: the same request, and a CSRF token bound to the page's "
        "cookie",
        # Each access mode's needs are in the schema (one branch each); that a closed-org link's reviewers
        # are at its domain compares two fields.
        "POST /api/documents/{id}/share-link": "reviewerEmails of a closed-org link at its allowedDomain",
        # Whether an address is asked for, and which, is the link's own setting: an open or public link
        # needs none, a closed-org link takes its domain's only (400 naming email, as the flow documents).
        "POST /api/share/{token}/verification": "email: only for a closed link, at a closed-org link's "
        "domain",
        "POST /api/share/{token}/verification/confirm": "email: only for a closed link, at a closed-org "
        "link's domain",
        # A redirect URI must parse as a URL with a host and a valid port, https or http to a loopback host
        # (RFC 8252): a URL grammar. (The registration rules are being reworked with the open-redirect fix
        # of issue 29; their pattern can join the schema then.)
        "POST /oauth/register": "redirect_uris: absolute https URLs or http to a loopback host, no user "
        "name, a valid port",
    },
}

# Refusals that depend on the state of what a request names rather than on its form, so that schema-valid
# input may meet them, each documented on its operations: 402 (the agent's balance or the commercial key's
# credits run out), 410 (a share link revoked or expired), besides 404 and 409 which schemathesis expects.
STATE_REFUSALS = ["402", "410"]
# An upload is schema-valid whatever its bytes; the server reads them: a file over the size limit is 413,
# one of a format it does not convert (or a body that is not multipart) 415, an empty or unreadable one 422
# (each documented).
CONTENT_REFUSALS = {
    "docs": {"POST /api/documents": ["413", "415", "422"]},
    "hub": {"POST /api/axiom/legislation/import": ["413", "415", "422"]},
}
# Schema-violating input may also be too large to read: a body over the apps' limit is 413 (documented on the
# operations whose schemas allow bodies near it, as the legislation ingest's 20,000 sections do).
NEGATIVE_REFUSALS = [*NEGATIVE_DATA_REJECTION_EXPECTED_STATUSES, "413"]


def _semantic_refusals(api: Any) -> list[str]:
    """The operations that document a 422. Both apps answer a request whose form breaks the schema with
    400; a 422 is always a refusal that depends on what the request names (a constraint naming a section
    the document lacks, a mark-read range past the resource's last event, a document whose conversion
    failed), which schema-valid input may meet, so their documented 422 joins the statuses accepted for it."""
    spec = api.openapi()
    return [
        f"{method.upper()} {path}"
        for path, methods in spec["paths"].items()
        for method, entry in methods.items()
        if "422" in entry.get("responses", {})
    ]


def _property_escapes(api: Any) -> list[str]:
    """The operations whose request takes a pattern with a Unicode property escape (`\\p{L}`, a letter of any
    script: a name must hold a letter or digit). Schemathesis reads such a class as Latin letters only, so
    it sends a Greek or CJK name as schema-violating input and expects it refused; the document is right
    (JSON Schema patterns are ECMA 262, where `\\p{L}` is every letter, tests/test_http_platform.py checks
    them so) and the wire accepts it, so "schema-violating input is refused" is not asked of them. Every
    other check still runs on them, and tests/test_openapi_strict.py holds their rules to the wire."""
    spec = api.openapi()
    found = []
    for path, methods in spec["paths"].items():
        for method, entry in methods.items():
            refs = json.dumps(entry)
            bodies = [
                json.dumps(spec["components"]["schemas"].get(ref.rsplit("/", 1)[1], {}))
                for ref in {part.split('"')[0] for part in refs.split('"$ref": "')[1:]}
            ]
            if any("\\\\p{" in text for text in (refs, *bodies)):
                found.append(f"{method.upper()} {path}")
    return found


@dataclass
class Served:
    hub: str
    docs: str
    loop: asyncio.AbstractEventLoop
    keys: dict[str, str]


def _settings(app: str) -> dict[str, Any]:
    """The schemathesis configuration of an app's runs (as `schemathesis.toml` would hold it)."""
    acceptance = [*POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES, *STATE_REFUSALS]
    operations: list[dict[str, Any]] = [
        {"include-name": label, "checks": {"positive_data_acceptance": {"enabled": False}}}
        for label in MAY_REFUSE_VALID[app]
    ]
    api = build_hub_api() if app == "hub" else build_docs_api()
    refusals = {label: ["422"] for label in _semantic_refusals(api) if label not in MAY_REFUSE_VALID[app]}
    refusals.update(CONTENT_REFUSALS[app])
    operations += [
        {
            "include-name": label,
            "checks": {"positive_data_acceptance": {"expected-statuses": [*acceptance, *statuses]}},
        }
        for label, statuses in refusals.items()
    ]
    operations += [
        {"include-name": label, "checks": {"negative_data_rejection": {"enabled": False}}}
        for label in _property_escapes(api)
    ]
    if app == "docs":
        # A multipart field is text on the wire: a "number" schemathesis puts in the upload's title arrives
        # as the string "6.1e+96", a valid title, so "schema-violating data must be refused" cannot hold.
        operations.append(
            {"include-name": "POST /api/documents", "checks": {"negative_data_rejection": {"enabled": False}}}
        )
    return {
        "generation": {"max-examples": EXAMPLES, "allow-x00": False, "deterministic": True},
        "phases": {"stateful": {"max-steps": STEPS}},
        "checks": {
            "positive_data_acceptance": {"expected-statuses": acceptance},
            "negative_data_rejection": {"expected-statuses": NEGATIVE_REFUSALS},
        },
        "operations": operations,
    }


def _schema(app: str) -> Any:
    api = build_hub_api() if app == "hub" else build_docs_api()
    config = _settings(app)
    config["phases"]["stateful"]["enabled"] = False  # the scenarios run through the CLI's engine, below
    schema: Any = schemathesis.openapi.from_dict(api.openapi(), config=SchemathesisConfig.from_dict(config))
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

    try:
        with httpx.Client(base_url=urls["hub"]) as client:
            agent = client.post("/api/pact/register", json={"agentName": "Fuzzer"})
            assert agent.status_code == 201, agent.text
            keys["agent"] = agent.json()["apiKey"]
            commercial = client.post("/api/axiom/keys", json={"ownerName": "Fuzz Research"})
            assert commercial.status_code == 201, commercial.text
            keys["commercial"] = commercial.json()["apiKey"]
        yield Served(hub=urls["hub"], docs=urls["docs"], loop=loop, keys=keys)
    finally:

        async def stop() -> None:
            # The relay first: the runners' cleanup waits up to a minute for requests still open, and this
            # runtime's relay, on the worker's database and the suite's queues, must not claim the outbox
            # jobs of the next module's tests meanwhile (test_relay_claims lost a batch of 100 to it).
            assert rt.relay is not None  # relay=True
            await rt.relay.stop()
            for runner in runners:
                await runner.cleanup()
            await rt.stop()

        try:
            run(stop())
        finally:
            # Stopped whatever the stop did (it raises when it takes longer than run's timeout): nothing of
            # this module's runtime may run on during other modules' tests.
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()


# The schemas are fixtures, read by schemathesis when the test runs (`from_fixture`): each operation's test,
# with its coverage cases, is built in the one worker that runs it, instead of at collection in every worker
# (10 s of each worker's start on 2026-11-27). Each operation still reports on its own, as a subtest named
# by its method and path, and counts as a test collected.
@pytest.fixture(scope="module")
def hub_openapi() -> Any:
    return _schema("hub")


@pytest.fixture(scope="module")
def docs_openapi() -> Any:
    return _schema("docs")


@pytest.fixture(autouse=True)
def _node_id_for_lazy_schemas(request: pytest.FixtureRequest) -> None:
    """schemathesis 4.32's lazy tests name each operation's subtest by rewriting the item's `_nodeid`,
    an attribute pytest 9.2 no longer has (it keeps the id elsewhere); given one, the rewrite reads and
    puts it back, and each subtest is still named by its operation's label."""
    request.node._nodeid = request.node.nodeid


# Each app's operations in two runs of about half each (the protocol's, and the rest), so that two workers
# can share an app's minute or two of generation and requests.
hub_schema = schemathesis.pytest.from_fixture("hub_openapi")
docs_schema = schemathesis.pytest.from_fixture("docs_openapi")
HUB_PROTOCOL, DOCS_PROTOCOL = r"^/api/pact/", r"^/api/tap/"


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
    if "error_description" in body:  # OAuth's own error body (RFC 6749 §5.2, RFC 7591 §3.2.2)
        assert body["error_description"], (case.operation.label, body)
        return
    assert isinstance(body.get("detail"), str), (case.operation.label, body)
    assert body["detail"], (case.operation.label, body)
    assert body.get("field"), (case.operation.label, body)


@pytest.fixture(scope="module")
def http() -> Iterator[requests.Session]:
    """One HTTP session for a module's cases, its connections kept alive between them (a session per call,
    schemathesis's default, opened a connection and read the environment's proxy settings for every case:
    a tenth of the run). Nothing else carries over: cookies are cleared after each case (`_call`)."""
    with requests.Session() as session:
        session.trust_env = False  # loopback: no proxies, no .netrc
        yield session


def _call(case: Any, base_url: str, served: Served, http: requests.Session) -> Any:
    try:
        return case.call_and_validate(
            base_url=base_url, session=http, headers=_credentials(case, served.keys)
        )
    finally:
        http.cookies.clear()  # each case starts without the cookies an earlier one was given


def _hub_case(case: Any, served: Served, http: requests.Session) -> None:
    _refused_cleanly(case, _call(case, served.hub, served, http), "hub")


def _docs_case(case: Any, served: Served, http: requests.Session) -> None:
    _refused_cleanly(case, _call(case, served.docs, served, http), "docs")


@hub_schema.include(path_regex=HUB_PROTOCOL).parametrize()
def test_hub_protocol_wire_matches_its_openapi(case: Any, served: Served, http: requests.Session) -> None:
    _hub_case(case, served, http)


@hub_schema.exclude(path_regex=HUB_PROTOCOL).parametrize()
def test_hub_wire_matches_its_openapi(case: Any, served: Served, http: requests.Session) -> None:
    _hub_case(case, served, http)


@docs_schema.include(path_regex=DOCS_PROTOCOL).parametrize()
def test_document_api_protocol_wire_matches_its_openapi(
    case: Any, served: Served, http: requests.Session
) -> None:
    _docs_case(case, served, http)


@docs_schema.exclude(path_regex=DOCS_PROTOCOL).parametrize()
def test_document_api_wire_matches_its_openapi(case: Any, served: Served, http: requests.Session) -> None:
    _docs_case(case, served, http)


def _toml(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, bool) else str(value).lower()


def _config_file(path: Path, app: str, keys: dict[str, str]) -> Path:
    """The CLI's configuration: the app's settings, and a valid key for each security scheme."""
    config = _settings(app)
    lines = [f"[generation]\n{_line(config['generation'])}"]
    lines.append(f"[phases.stateful]\n{_line(config['phases']['stateful'])}")
    for check in ("positive_data_acceptance", "negative_data_rejection"):
        lines.append(f"[checks.{check}]\n{_line(config['checks'][check])}")
    auth = (
        {"apiKey": {"api_key": keys["service"]}}
        if app == "docs"
        else {
            "agentBearer": {"bearer": keys["agent"]},
            "commercialBearer": {"bearer": keys["commercial"]},
            "staffBearer": {"bearer": keys["staff"]},
        }
    )
    lines += [f"[auth.openapi.{scheme}]\n{_line(values)}" for scheme, values in auth.items()]
    for operation in config["operations"]:
        ((check, setting),) = operation["checks"].items()
        lines.append(
            f"[[operations]]\ninclude-name = {_toml(operation['include-name'])}\n"
            f"[operations.checks.{check}]\n{_line(setting)}"
        )
    path.write_text("\n".join(lines))
    return path


def _line(table: dict[str, Any]) -> str:
    return "".join(f"{key} = {_toml(value)}\n" for key, value in table.items())


def _run_scenarios(app: str, base_url: str, keys: dict[str, str], tmp_path: Path) -> None:
    """SCENARIOS sequences of up to STEPS calls along the links schemathesis infers between the app's
    operations, run by the schemathesis CLI's engine (which records each failure as it happens, so the
    server's changing state never hides one), every answer checked as above."""
    config = _config_file(tmp_path / "schemathesis.toml", app, keys)
    run = subprocess.run(
        [
            str(Path(sys.executable).with_name("schemathesis")),
            "--config-file",
            str(config),
            "run",
            f"{base_url}/openapi.json",
            "--phases",
            "stateful",
            "--max-examples",
            str(SCENARIOS),
            "--seed",
            "29",
            "--workers",
            "1",
            "--max-time",
            str(SCENARIO_SECONDS),
        ],
        # In the test's own folder (the CLI keeps a cache where it runs), importing the hooks from here.
        env={
            **os.environ,
            "SCHEMATHESIS_HOOKS": "tests.fuzz_media",
            "PYTHONPATH": str(ROOT),
            "NO_COLOR": "1",
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=SCENARIO_SECONDS + 120,
    )
    assert run.returncode == 0, run.stdout[-20_000:] + run.stderr[-5_000:]
    assert "Stateful" in run.stdout, run.stdout  # the phase ran (links were found)


def test_hub_scenarios_match_its_openapi(served: Served, tmp_path: Path) -> None:
    _run_scenarios("hub", served.hub, served.keys, tmp_path)


def test_document_api_scenarios_match_its_openapi(served: Served, tmp_path: Path) -> None:
    _run_scenarios("docs", served.docs, served.keys, tmp_path)
