"""Legislation importers (issue 34): register DOCX, EPUB and corpus JSONL files become instruments with
their numbering, text, notes and provenance; newer compilations keep older ones as versions; pinpoints
resolve to subsections and search ranks section text. Every file is built by the tests (tests/
legislation_files.py): invented instruments, never statutory text."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest

from domain.axiom.seed import seed_legislation
from tests.axiom_helpers import axiom_key, staff_headers
from tests.legislation_files import act_docx, act_epub, act_pdf, write_corpus
from tests.processes import concord

FRL_CREDIT = "Sourced from the Federal Register of Legislation at 2031-03-01"


async def upload(hub, headers, name: str, data: bytes, status: int = 200, **fields: str):
    form = aiohttp.FormData()
    for key, value in fields.items():
        form.add_field(key, value)
    form.add_field("file", data, filename=name)
    resp = await hub.post("/api/axiom/legislation/import", data=form, headers=headers)
    body = await resp.json()
    assert resp.status == status, body
    return body


async def get(hub, key, path, status=200, **params):
    resp = await hub.get(path, params=params, headers=key["headers"])
    body = await resp.json() if resp.content_type == "application/json" else await resp.text()
    assert resp.status == status, body
    return body


async def test_a_register_docx_becomes_an_instrument_with_numbering_text_notes_and_provenance(hub, runtime):
    staff = await staff_headers(runtime)
    key = await axiom_key(hub)
    result = await upload(
        hub,
        staff,
        "widget.docx",
        act_docx("Widget Keeping Act 2031"),
        sourceRegister="frl",
        versionDate="2031-03-01",
        source="https://register.example/C2031A00001/latest",
    )
    assert result["kind"] == "docx"
    assert (result["created"], result["records"]) == (1, 1)
    doc_id = result["ids"][0]
    body = (await get(hub, key, f"/api/axiom/legislation/{doc_id}"))["legislation"]
    assert body["title"] == "Widget Keeping Act 2031"
    assert body["jurisdiction"] == "AU"
    assert body["year"] == 2031
    prov = body["provenance"]
    assert prov["sourceRegister"] == "frl"
    assert prov["licence"] == "CC BY 4.0"
    assert prov["versionDate"] == "2031-03-01"
    assert prov["sample"] is False
    assert prov["source"] == "https://register.example/C2031A00001/latest"
    assert prov["attribution"].startswith(FRL_CREDIT)
    by_id = {s["sectionId"]: s for s in body["sections"]}
    order = [s["sectionId"] for s in body["sections"]]
    assert order.index("pt 1") < order.index("s 1") < order.index("s 2") < order.index("pt 2")
    assert order.index("pt 2 div 1") < order.index("s 180") < order.index("s 180(1)") < order.index("s 180A")
    assert by_id["s 180"]["parentId"] == "pt 2 div 1"
    assert by_id["s 180"]["title"] == "Duty of widget keepers"
    assert "must keep every widget dry" in by_id["s 180"]["content"]
    assert by_id["s 180(2)(b)(ii)"]["content"] == "(ii) borrowed widgets; and"
    assert by_id["s 180(2)(b)(ii)"]["parentId"] == "s 180(2)(b)"
    assert by_id["s 180(2)(c)"]["parentId"] == "s 180(2)"
    assert by_id["s 2"]["notes"] == "Note: The word gadget is not defined."
    assert "gadget" not in by_id["s 2"]["content"]
    assert by_id["sch 1 cl 1"]["parentId"] == "sch 1"
    assert all(s["provenance"] == prov for s in body["sections"])

    markdown = await get(hub, key, f"/api/axiom/legislation/{doc_id}", format="markdown")
    assert f"- Attribution: {FRL_CREDIT}" in markdown
    assert "- Licence: CC BY 4.0" in markdown
    assert "#### s 180 Duty of widget keepers" in markdown
    assert "(2) The keeper must also:" in markdown
    assert "> Note: The word gadget is not defined." in markdown


async def test_an_epub_imports_and_a_pinpoint_resolves_to_the_subsection(hub, runtime):
    staff = await staff_headers(runtime)
    result = await upload(
        hub,
        staff,
        "act.epub",
        act_epub("Gadget Storage Act 2031"),
        sourceRegister="nsw",
        versionDate="2031-05-02",
    )
    assert result["kind"] == "epub"
    assert result["created"] == 1
    resp = await hub.get(
        "/api/axiom/resolve", params={"citation": "Gadget Storage Act 2031 (NSW) s 180(2)(b)(i)"}
    )
    body = await resp.json()
    assert resp.status == 200, body
    assert body["sectionRef"] == "s 180(2)(b)(i)"
    assert body["unverifiedPinpoint"] is None
    resp = await hub.get("/api/axiom/resolve", params={"citation": "Gadget Storage Act 2031 (NSW) s 180(9)"})
    body = await resp.json()
    assert body["sectionRef"] == "s 180"
    assert body["unverifiedPinpoint"] == "(9)"


async def test_search_ranks_section_text(hub, runtime):
    staff = await staff_headers(runtime)
    key = await axiom_key(hub)
    await upload(hub, staff, "a.epub", act_epub("Sprocket Act 2031"), sourceRegister="qld")
    body = await get(hub, key, "/api/axiom/legislation/search", q="borrowed widgets", jurisdiction="AU-QLD")
    assert body["total"] >= 1
    top = body["results"][0]
    assert top["sectionId"].startswith("s 180(2)(b)")
    assert "**borrowed**" in top["content"]
    # Stemmed: "labelling" finds the text "label".
    body = await get(hub, key, "/api/axiom/legislation/search", q="labels registrar", jurisdiction="AU-QLD")
    assert {r["sectionId"] for r in body["results"]} >= {"s 180(2)"}


async def test_a_newer_compilation_keeps_the_older_as_a_version(hub, runtime):
    staff = await staff_headers(runtime)
    key = await axiom_key(hub)
    first = await upload(
        hub, staff, "v1.epub", act_epub("Cog Act 2031"), sourceRegister="sa", versionDate="2031-01-01"
    )
    doc_id = first["ids"][0]
    second = await upload(
        hub,
        staff,
        "v2.epub",
        act_epub("Cog Act 2031", duty_text="must keep every cog oiled"),
        sourceRegister="sa",
        versionDate="2032-01-01",
    )
    assert second["updated"] == 1
    now = (await get(hub, key, f"/api/axiom/legislation/{doc_id}"))["legislation"]
    assert now["versions"] == ["2031-01-01", "2032-01-01"]
    sections = {s["sectionId"]: s for s in now["sections"]}
    assert "cog oiled" in sections["s 180(1)"]["content"]
    assert sections["s 180(1)"]["amendedBy"] == "compilation of 2032-01-01"
    assert sections["s 180A"]["amendedBy"] is None
    then = (await get(hub, key, f"/api/axiom/legislation/{doc_id}", asAt="2031-06-30", section="s 180(1)"))[
        "legislation"
    ]
    assert then["provenance"]["versionDate"] == "2031-01-01"
    assert then["sections"][0]["content"] == "(1) A widget keeper must keep every widget dry."
    missing = await get(hub, key, f"/api/axiom/legislation/{doc_id}", status=404, asAt="2030-01-01")
    assert missing["error"] == "version_not_found"
    # An older compilation arriving late is kept as a version only; the current text stays.
    older = await upload(
        hub,
        staff,
        "v0.epub",
        act_epub("Cog Act 2031", "must count cogs"),
        sourceRegister="sa",
        versionDate="2030-06-01",
    )
    assert (older["versioned"], older["updated"]) == (1, 0)
    old = await get(hub, key, f"/api/axiom/legislation/{doc_id}", asAt="2030-12-31", section="s 180(1)")
    assert "count cogs" in old["legislation"]["sections"][0]["content"]
    assert (
        "cog oiled"
        in (await get(hub, key, f"/api/axiom/legislation/{doc_id}", section="s 180(1)"))["legislation"][
            "sections"
        ][0]["content"]
    )


async def test_a_repeal_is_recorded(hub, runtime):
    staff = await staff_headers(runtime)
    key = await axiom_key(hub)
    result = await upload(
        hub, staff, "r.epub", act_epub("Lever Act 2031"), sourceRegister="tas", repealed="true"
    )
    body = (await get(hub, key, f"/api/axiom/legislation/{result['ids'][0]}"))["legislation"]
    assert body["inForce"] is False
    assert body["status"] == "repealed"


async def test_bad_uploads_are_refused_clearly(hub, runtime):
    staff = await staff_headers(runtime)
    resp = await hub.post("/api/axiom/legislation/import", data=b"x", headers=staff)
    assert resp.status == 415
    assert "multipart" in (await resp.json())["detail"]
    body = await upload(hub, staff, "notes.txt", b"just some words", status=415)
    assert "not a DOCX, EPUB, XHTML, PDF or JSONL" in body["detail"]
    body = await upload(hub, staff, "broken.epub", b"PK\x03\x04 not really a zip", status=422)
    assert "broken.epub" in body["detail"]
    body = await upload(hub, staff, "untitled.epub", act_epub("Some Words"), status=422, sourceRegister="frl")
    assert "no title" in body["detail"]
    body = await upload(hub, staff, "a.epub", act_epub("Pulley Act 2031"), status=400, versionDate="soon")
    assert "versionDate" in body["detail"]
    body = await upload(hub, staff, "a.epub", act_epub("Pulley Act 2031"), status=400, colour="red")
    assert "colour" in body["detail"]
    body = await upload(
        hub, staff, "a.epub", act_epub("Pulley Act 2031"), status=422
    )  # no register: no jurisdiction
    assert "no jurisdiction" in body["detail"]
    assert (await hub.post("/api/axiom/legislation/import", data=aiohttp.FormData({"x": "1"}))).status == 401


async def test_an_upload_over_the_limit_is_413(hub, runtime):
    staff = await staff_headers(runtime)
    limit = runtime.settings.max_upload_bytes
    body = await upload(hub, staff, "big.jsonl", b"{}\n" * (limit // 3 + 2), status=413)
    assert "larger than" in body["detail"]


async def test_the_seeded_sample_stays_marked_as_a_sample(hub, runtime):
    async with runtime.db.transaction() as session:
        await seed_legislation(session)
    key = await axiom_key(hub)
    listing = await get(
        hub, key, "/api/axiom/legislation", q="Work Health Safety", jurisdiction="AU", limit=1
    )
    prov = listing["legislation"][0]["provenance"]
    assert prov["sample"] is True
    assert prov["sourceRegister"] == "sample"
    markdown = await get(
        hub, key, "/api/axiom/legislation", q="Work Health Safety", jurisdiction="AU", format="markdown"
    )
    assert "no statutory text" in markdown


@pytest.mark.slow
async def test_a_corpus_jsonl_imports_by_cli_with_progress_and_resumes(hub, runtime, tmp_path: Path):
    corpus = write_corpus(
        tmp_path / "corpus.jsonl",
        2000,
        extra=[
            json.dumps(
                {"type": "decision", "jurisdiction": "commonwealth", "citation": "A v B", "text": "x"}
            ),
            "not json",
        ],
    )
    code, out, err = await concord("legislation", "import", str(corpus), "--batch", "250")
    assert code == 0, err
    assert "2002 records, 2000 created" in out
    assert "2 skipped" in out
    assert "instruments/s" in out
    assert "MB/s" in out
    assert "skipped line 2001: type 'decision' is not legislation" in err
    assert not (tmp_path / "corpus.jsonl.import-state").exists()
    key = await axiom_key(hub)
    listing = await get(
        hub, key, "/api/axiom/legislation", q="Synthetic Widget", jurisdiction="AU-NSW", limit=1
    )
    assert listing["total"] == 2000
    reg = await get(
        hub, key, "/api/axiom/legislation/nsw-synthetic-widget-19-regulation-2031", section="reg 180(1)"
    )
    assert reg["legislation"]["type"] == "regulation"
    assert reg["legislation"]["provenance"]["sourceRegister"] == "nsw"
    assert "widget 19 dry" in reg["legislation"]["sections"][0]["content"]

    # Resume: a checkpoint part-way through is honoured (only the rest is read), and a checkpoint for a
    # file of another size is ignored.
    size = corpus.stat().st_size
    half = corpus.read_bytes()[: size // 2].rfind(b"\n") + 1
    (tmp_path / "corpus.jsonl.import-state").write_text(json.dumps({"size": size, "offset": half}))
    code, out, err = await concord("legislation", "import", str(corpus))
    assert code == 0, err
    assert f"resumed at byte {half}" in err
    records = int(out.split(" records")[0].rsplit(" ", 1)[1])
    assert 900 < records < 1100
    assert "0 created, 0 updated" in out  # already stored: nothing is written again


async def test_cli_import_of_a_docx_and_a_missing_file(hub, runtime, tmp_path: Path):
    path = tmp_path / "act.docx"
    path.write_bytes(act_docx("Ratchet Act 2031"))
    code, out, err = await concord(
        "legislation",
        "import",
        str(path),
        str(tmp_path / "nope.docx"),
        "--register",
        "wa",
        "--version-date",
        "2031-02-03",
    )
    assert code == 1
    assert "1 created" in out
    assert "no such file" in err


async def test_a_pdf_imports_with_its_numbering(hub, runtime):
    staff = await staff_headers(runtime)
    key = await axiom_key(hub)
    result = await upload(hub, staff, "act.pdf", act_pdf("Flange Act 2031"), sourceRegister="wa")
    assert result["kind"] == "pdf"
    body = (await get(hub, key, f"/api/axiom/legislation/{result['ids'][0]}", section="s 180(2)"))[
        "legislation"
    ]
    assert body["jurisdiction"] == "AU-WA"
    assert body["provenance"]["attribution"].startswith("Contains material from the Western Australian")
    ids = [s["sectionId"] for s in body["sections"]]
    assert ids == ["s 180(2)", "s 180(2)(a)", "s 180(2)(b)", "s 180(2)(c)"]


async def test_a_small_corpus_uploads_through_the_api(hub, runtime, tmp_path: Path):
    staff = await staff_headers(runtime)
    corpus = write_corpus(tmp_path / "small.jsonl", 12, extra=['{"type": "primary_legislation"}'])
    result = await upload(hub, staff, "small.jsonl", corpus.read_bytes())
    assert result["kind"] == "jsonl"
    assert (result["records"], result["created"], result["skipped"]) == (13, 12, 1)
    assert result["skipReasons"] == ["line 13: jurisdiction None is not known"]
    again = await upload(hub, staff, "small.jsonl", corpus.read_bytes())
    assert (again["created"], again["unchanged"]) == (0, 12)


async def test_other_requests_are_answered_while_an_upload_imports(hub, runtime, tmp_path: Path):
    """The corpus is read and parsed in a worker thread, a batch at a time: while the upload imports, cheap
    requests keep being answered, and they see the import's progress (batches committed one by one)."""
    from sqlalchemy import func, select

    from domain.axiom.models import LegislationDoc

    staff = await staff_headers(runtime)
    records = 400  # 4 batches
    corpus = write_corpus(tmp_path / "busy.jsonl", records)
    importing = asyncio.create_task(upload(hub, staff, "busy.jsonl", corpus.read_bytes()))
    seen: list[int] = []  # instruments stored when each cheap request was answered during the import
    while not importing.done():
        resp = await hub.get("/api/axiom/keys")
        assert resp.status == 200
        if importing.done():
            break
        async with runtime.db.read() as session:
            seen.append(await session.scalar(select(func.count()).select_from(LegislationDoc)) or 0)
    result = await importing
    assert (result["records"], result["created"]) == (records, records)
    # Answered before the first batch was stored, and between batches: the import did not hold the loop.
    assert seen[0] == 0
    assert len({n for n in seen if 0 < n < records}) >= 2, seen
    assert seen == sorted(seen)
