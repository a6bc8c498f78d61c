"""`concord pact lab` and PACT's own conformance runner (TailorAU/pact spec/v2.0/conformance/runner, built
outside the repository by `make pact-runner`): the lab refuses any bind but loopback, serves the vectors'
fixtures with the vectors' identities, and the unmodified runner passes every vector. The normal apps ignore
X-Pact-Principal."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.documents_support import make_key, upload_ready
from tests.processes import command, free_port, start, stop

RUNNER_HOME = Path(
    os.environ.get("CONCORD_PACT_RUNNER", Path.home() / ".cache/concord/pact-runner")
).expanduser()
CONFORMANCE = RUNNER_HOME / "spec/v2.0/conformance"
RUNNER = CONFORMANCE / "runner/dist/index.js"
SESSION_VECTORS = {
    f"extended/sessions/{name}"
    for name in (
        "heartbeat-timeout",
        "manifest-cross-org-disclosure",
        "obligation-surfacing",
        "onboard-partial-failure",
        "onboard-success",
        "two-agent-negotiation-smoke",
    )
}
READY_LINE = "PACT conformance lab on http://"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A `concord pact lab` process on a free loopback port with a data directory of its own."""
    folder = tmp_path_factory.mktemp("pact-lab")
    port = free_port()
    log = folder / "lab.log"
    proc = start(
        [command("concord"), "pact", "lab", "--port", str(port), "--data-dir", str(folder / "data")], {}, log
    )
    try:
        deadline = time.monotonic() + 120
        while READY_LINE not in log.read_text(errors="replace"):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the lab did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.org"])
def test_the_lab_refuses_any_bind_but_loopback(host: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [
            command("concord"),
            "pact",
            "lab",
            "--port",
            str(free_port()),
            "--host",
            host,
            "--data-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "loopback only" in done.stderr
    assert not (tmp_path / "concord.db").exists()  # refused before anything was created


async def test_the_lab_takes_the_vectors_identities(lab: str) -> None:
    async with aiohttp.ClientSession() as http:
        # A fixture's members, read as one of them (the header) and as the vector's default caller.
        for headers in ({"X-Pact-Principal": "did:web:bob.example"}, {}):
            async with http.get(f"{lab}/api/pact/fab_hb_001/agents", headers=headers) as resp:
                assert resp.status == 200, await resp.text()
                names = [a["agentName"] for a in await resp.json()]
            assert sorted(names) == ["alice-bot", "bob-bot"]
        async with http.get(
            f"{lab}/api/pact/fab_obl_001/proposals", headers={"X-Pact-Principal": "did:web:bob.example"}
        ) as resp:
            assert [p["proposalId"] for p in (await resp.json())["proposals"]] == ["prop_xyz"]
        # Not a DID: 400 naming the header. No principal and no fixture: the app's own 401.
        async with http.get(f"{lab}/api/pact/fab_hb_001/agents", headers={"X-Pact-Principal": "bob"}) as resp:
            assert resp.status == 400
            assert "X-Pact-Principal" in await resp.text()
        async with http.get(f"{lab}/api/documents") as resp:
            assert resp.status == 401
        # A real credential wins over the header: a wrong key is a 401, whatever principal is named.
        async with http.get(
            f"{lab}/api/pact/fab_hb_001/agents",
            headers={"X-Pact-Principal": "did:web:bob.example", "X-Api-Key": "svc_sk_wrong"},
        ) as resp:
            assert resp.status == 401


async def test_the_lab_enforces_its_fixtures_disclosure_policy_on_onboard(lab: str) -> None:
    """fab_pf_abc123's fabric_policy (max_disclosure_ceiling 2) refuses the whole onboarding with §4.4.5's
    rejection body; the caller is not a member afterwards; under the policy it onboards."""
    url = f"{lab}/api/pact/fab_pf_abc123"
    body: dict[str, Any] = {
        "agentName": "test-bot",
        "role": "contributor",
        "constraints": [
            {"sectionId": "sec:rate-limit-per-minute", "boundary": "30"},
            {"sectionId": "disclosure-ceiling", "boundary": "4"},
        ],
    }
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{url}/_onboard", json=body) as resp:
            assert resp.status == 422, await resp.text()
            refused = await resp.json()
        assert refused["status"] == "rejected"
        assert (refused["rejection_reason"], refused["rejected_constraint_index"]) == (
            "constraint.incompatible",
            1,
        )
        assert "maximum of 2" in refused["detail"]
        async with http.get(f"{url}/_status") as resp:
            # The lab hides existence from a non-member (the normal apps answer 403 agent.not_joined): an
            # empty snapshot, as for an id that names nothing.
            assert resp.status == 200
            assert ((await resp.json())["members"], (await resp.json())["phase"]) == ([], "forming")
        knox = {"X-Pact-Principal": "did:web:knox.example"}
        async with http.get(f"{lab}/api/pact/fab_nothing_here/_status", headers=knox) as resp:
            assert ((await resp.json())["members"], (await resp.json())["phase"]) == ([], "forming")
        body["constraints"][1] = {"sectionId": "sec:disclosure-ceiling", "boundary": "2"}
        async with http.post(f"{url}/_onboard", json=body) as resp:
            assert resp.status == 200, await resp.text()
            assert (await resp.json())["role"] == "contributor"


async def test_the_lab_takes_the_vectors_proposal_dialect(lab: str) -> None:
    """A proposal naming its own id (and carrying no text) answers PACT's reference shape; a repeat of the id
    answers it again, not a second proposal; the id on another resource is a 409; a bodiless done is
    `aligned`. Without a proposalId the document API's own route answers."""
    alpha = {"X-Pact-Principal": "did:web:alpha.example"}
    url = f"{lab}/api/pact/fab_neg_smoke"
    body = {"proposalId": "prop_dialect", "sectionId": "sec:payment-terms", "summary": "Net-14"}
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{url}/_onboard", json={"agentName": "alpha-bot", "role": "proposer"}, headers=alpha
        ) as resp:
            assert resp.status == 200, await resp.text()
        async with http.post(f"{url}/proposals", json=body, headers=alpha) as resp:
            assert resp.status == 200, await resp.text()
            made = await resp.json()
        assert (made["proposalId"], made["status"], made["created"], made["proposer"]) == (
            "prop_dialect",
            "open",
            True,
            "did:web:alpha.example",
        )
        async with http.post(f"{url}/proposals", json=body, headers=alpha) as resp:
            assert (resp.status, (await resp.json())["created"]) == (200, False)
        async with http.get(f"{url}/proposals", headers=alpha) as resp:
            (listed,) = (await resp.json())["proposals"]
        assert listed["content"].strip() == "Fixture text of payment terms."  # a position: the text as it is
        async with http.post(
            f"{lab}/api/pact/fab_abc123/proposals",
            json={**body, "sectionId": "sec:risk"},
            headers={"X-Pact-Principal": "did:web:knox.example"},
        ) as resp:
            assert resp.status == 409, await resp.text()
        async with http.post(
            f"{url}/proposals", json={**body, "proposalId": "bad id!"}, headers=alpha
        ) as resp:
            assert resp.status == 400
            assert "proposalId" in (await resp.json())["detail"]
        async with http.post(
            f"{url}/proposals", json={"sectionId": "sec:payment-terms"}, headers=alpha
        ) as resp:
            assert resp.status == 400  # the document API's own route: content and summary are required
        async with http.post(f"{url}/done", headers=alpha) as resp:
            done = await resp.json()
        assert (done["status"], done["principal_id"], done["done"]) == (
            "aligned",
            "did:web:alpha.example",
            True,
        )


async def test_the_normal_apps_ignore_x_pact_principal(docs: Any, hub: Any, runtime: Any) -> None:
    owner = await make_key(runtime, org="Principal Org")
    doc = await upload_ready(docs, owner, b"# Plan\n\nText.\n", "plan.md")
    principal = {"X-Pact-Principal": "did:web:alice.example"}
    for path in (f"/api/pact/{doc['id']}/agents", "/api/documents"):
        resp = await docs.get(path, headers=principal)
        assert resp.status == 401, await resp.text()
    resp = await docs.post(f"/api/pact/{doc['id']}/join", headers=principal, json={"agentName": "alice"})
    assert resp.status == 401
    resp = await hub.get("/api/pact/wallet", headers=principal)
    assert resp.status == 401
    resp = await docs.post("/__reset")
    assert resp.status == 404
    # And `concord serve` has no lab to start: the command is `concord pact lab` alone.
    from concord_cli import make_parser

    assert make_parser().parse_args(["serve"]).command == "serve"


def _runner_or_skip() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the PACT conformance runner is a Node.js program")
    if not RUNNER.exists():
        pytest.skip(f"the PACT conformance runner is not built at {RUNNER}: run `make pact-runner`")
    return node


def test_the_conformance_runner_passes_against_the_lab(lab: str) -> None:
    node = _runner_or_skip()
    report: dict[str, Any] = {}
    for _ in range(2):  # twice: the runner's POST /__reset makes a re-run start from the fixtures again
        done = subprocess.run(
            [node, str(RUNNER), "run", "--vectors", str(CONFORMANCE), "--server", lab, "--json"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "__reset" not in done.stderr, done.stderr  # the reset answered
        report = json.loads(done.stdout)
        outcomes = {r["id"]: r["outcome"] for r in report["results"]}
        assert outcomes["core/join/basic"]["status"] == "pass", outcomes["core/join/basic"]
        failing = {vid: o.get("reason") for vid, o in outcomes.items() if o["status"] != "pass"}
        assert failing == {}, failing
        assert report["http_coverage"]["executed"] == report["http_coverage"]["total"]
    # Every vector of the suite ran (19 at PACT's branch head), the session ones among them.
    assert len(report["results"]) >= 19
    assert {r["id"] for r in report["results"]} >= SESSION_VECTORS
