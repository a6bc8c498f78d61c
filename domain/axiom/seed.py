"""`concord seed` legislation sample: real Australian instruments and standards (titles, years,
jurisdictions, dates and section headings only) from domain/data/legislation_sample.json."""

from __future__ import annotations

import json
from importlib import resources

from sqlalchemy.ext.asyncio import AsyncSession

from domain.axiom import legislation
from domain.axiom.provenance import Register
from domain.kernel.context import SYSTEM

SAMPLE = "legislation_sample.json"


def load_sample() -> list[legislation.InstrumentIn]:
    """The sample's instruments, each marked as the sample (provenance register `sample`, with the file's
    attribution note): they carry titles and headings only, never statutory text."""
    data = json.loads(resources.files("domain").joinpath("data", SAMPLE).read_text(encoding="utf-8"))
    docs = legislation.parse_documents(data)
    for doc in docs:
        doc.provenance = legislation.ProvenanceIn(
            sourceRegister=Register.SAMPLE,
            source=f"domain/data/{SAMPLE}",
            attribution=data.get("attribution"),
        )
    return docs


async def seed_legislation(session: AsyncSession) -> int:
    """Upserts every sample instrument by its stable id, so running it again changes nothing."""
    result = await legislation.ingest(session, SYSTEM, load_sample())
    return result.count
