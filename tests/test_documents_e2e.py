"""End to end, as a new user would: keys from the command line, upload documents (the ones the tests
build, and every shared fixture), wait for ready, read content and sections, join with two agents,
propose, vote, lock, escalate, download the DOCX and open it with python-docx."""

from __future__ import annotations

import asyncio
import io

import docx

from tests import built_documents as built
from tests.documents_support import fixture_path, upload, wait_status


async def _cli_key(capsys, name: str) -> dict:
    """A key made the way an operator makes one: `concord keys create`."""
    import concord_cli

    code = await asyncio.to_thread(concord_cli.main, ["keys", "create", "--org", "Acme", "--name", name])
    assert code == 0
    secret = capsys.readouterr().out.strip().splitlines()[-1]
    assert secret.startswith("svc_sk_")
    return {"apiKey": secret, "headers": {"X-Api-Key": secret}}


def _first_section(tree: list[dict]) -> dict | None:
    """The first headed section, else the text before any heading (sec:_root), else None."""
    headed = [node for node in tree if node["sectionId"] != "sec:_root"]
    return (headed or tree)[0] if (headed or tree) else None


async def test_agent_journey_over_built_documents(docs, runtime, capsys):
    await _journey(docs, capsys, {"budget.docx": built.docx_bytes(), "annual-report.pdf": built.pdf_bytes()})


async def test_agent_journey_over_every_shared_fixture(docs, runtime, capsys):
    folder = fixture_path()
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
    assert len(files) >= 10
    await _journey(docs, capsys, files)


async def _journey(docs, capsys, files: dict[str, bytes]) -> None:
    alice = await _cli_key(capsys, "alice-key")
    bob = await _cli_key(capsys, "bob-key")
    for name, data in files.items():
        resp = await upload(docs, alice, data, name, tags="e2e")
        assert resp.status == 202, (name, await resp.text())
        doc = await wait_status(docs, alice, (await resp.json())["id"], "ready")
        p = f"/api/pact/{doc['id']}"

        resp = await docs.get(f"{p}/content", headers=bob["headers"])
        assert resp.status == 200, name
        body = await resp.json()
        assert body["format"] == "markdown"
        markdown = body["content"]
        resp = await docs.get(f"{p}/sections", headers=bob["headers"])
        tree = (await resp.json())["sections"]

        for key, agent, role in ((alice, "drafter", "editor"), (bob, "checker", "reviewer")):
            resp = await docs.post(
                f"{p}/join", headers=key["headers"], json={"agentName": agent, "role": role}
            )
            assert resp.status == 201, (name, await resp.text())

        section = _first_section(tree)
        if section is not None:
            sid = section["sectionId"]
            # Propose and vote: the reviewer's approval is enough (needed = min(2, eligible) = 1).
            resp = await docs.post(
                f"{p}/proposals",
                headers=alice["headers"],
                json={"sectionId": sid, "content": "Rewritten by the drafter.", "summary": "tighten"},
            )
            assert resp.status == 201, (name, await resp.text())
            proposal = await resp.json()
            assert proposal["status"] == "pending"
            resp = await docs.post(
                f"{p}/proposals/{proposal['proposalId']}/approve", headers=bob["headers"], json={}
            )
            assert resp.status == 200, (name, await resp.text())
            assert (await resp.json())["vote"] == "approve"
            resp = await docs.get(f"{p}/proposals?sectionId={sid}", headers=bob["headers"])
            listed = (await resp.json())["proposals"]
            assert listed[0]["status"] == "approved"
            assert listed[0]["votes"]["approve"] == 1
            resp = await docs.get(f"{p}/content", headers=bob["headers"])
            assert "Rewritten by the drafter." in (await resp.json())["content"]

            # Lock: the other agent's proposal on the locked section is refused.
            resp = await docs.post(
                f"{p}/sections/{sid}/lock", headers=bob["headers"], json={"ttlSeconds": 120}
            )
            assert resp.status == 200, (name, await resp.text())
            resp = await docs.post(
                f"{p}/proposals",
                headers=alice["headers"],
                json={"sectionId": sid, "content": "x", "summary": "while locked"},
            )
            assert resp.status == 409
            resp = await docs.post(
                f"{p}/escalate",
                headers=alice["headers"],
                json={"question": f"Who owns {sid}?", "sectionId": sid, "priority": "high"},
            )
            assert resp.status == 201
            assert (await resp.json())["status"] == "open"
        else:
            assert markdown.strip() == "", name

        resp = await docs.get(f"/api/documents/{doc['id']}/download", headers=bob["headers"])
        assert resp.status == 200, name
        assert resp.content_type == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        word = docx.Document(io.BytesIO(await resp.read()))
        text = "\n".join(p.text for p in word.paragraphs)
        if section is not None:
            assert "Rewritten by the drafter." in text, name
        if section is not None and section["sectionId"] != "sec:_root":
            # A Word Title stays the Title (the original's own paragraph), other headings are Heading N.
            headings = [
                p.text for p in word.paragraphs if p.style and p.style.name.startswith(("Heading", "Title"))
            ]
            assert section["title"] in headings, name
        for key in (alice, bob):
            resp = await docs.delete(f"{p}/leave", headers=key["headers"])
            assert resp.status == 200

    resp = await docs.get("/api/documents?tag=e2e&pageSize=100", headers=alice["headers"])
    listing = await resp.json()
    assert listing["total"] == len(files)
    assert {d["status"] for d in listing["data"]} == {"ready"}
