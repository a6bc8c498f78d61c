"""Response models of the Axiom endpoints: commercial keys and usage, verified facts, legislation and
citation resolution (they document /openapi.json; the tests check every real body against them)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from domain.axiom import citations, import_run, keys, legislation
from domain.axiom import facts as fact_records
from domain.axiom.importers import FileKind
from domain.axiom.legislation import Instrument as InstrumentRecord  # beside the `legislation` fields
from domain.axiom.legislation import InstrumentPage as InstrumentPageRecord
from domain.axiom.legislation import InstrumentType, InstrumentTypeField
from domain.axiom.provenance import Register
from domain.kernel import jurisdictions
from domain.kernel.clock import iso
from domain.kernel.vocabulary import SpeltOut
from domain.topics.store import Tier, TopicStatus
from web.hub.topics.read_models import SectionNode
from web.kernel import errors
from web.kernel.wire import Date, Timestamp

# --- keys and usage ----------------------------------------------------------------------------------


class KeyCreateHow(BaseModel):
    method: Literal["POST"]
    path: str
    body: dict[str, Literal["required", "optional"]]


class KeyAuth(BaseModel):
    scheme: str
    alsoAccepted: list[str]


class Billing(BaseModel):
    period: str
    unit: str
    creditCost: dict[str, int] = Field(description="Credits per call, by 'METHOD /path'")
    whenExhausted: str


class PricingTier(BaseModel):
    tier: str
    monthlyCredits: int
    priceAudPerMonth: int | None = Field(description="null: priced by agreement")
    selfService: bool
    issuedBy: str = Field(description="How a key gets this tier")

    @classmethod
    def of(cls, tier: keys.Tier) -> PricingTier:
        return cls(
            tier=tier.name,
            monthlyCredits=tier.monthly_credits,
            priceAudPerMonth=tier.price_aud_per_month,
            selfService=tier.self_service,
            issuedBy="self-service: POST /api/axiom/keys"
            if tier.self_service
            else "the operator: concord axiom keys set-tier KEY_ID " + tier.name,
        )


class Pricing(BaseModel):
    currency: str
    tiers: list[PricingTier]


class AxiomDiscovery(BaseModel):
    name: str
    description: str
    keyPrefix: str
    create: KeyCreateHow
    auth: KeyAuth
    billing: Billing
    pricing: Pricing
    capabilities: list[str]
    endpoints: list[str]

    @classmethod
    def current(cls) -> AxiomDiscovery:
        """What Axiom offers: its tiers and the credits each call costs (domain/axiom/keys.py)."""
        return cls(
            name="Axiom",
            description="Commercial read access to verified facts (topics that reached consensus) and to "
            "structured Australian legislation and standards; free citation resolution.",
            keyPrefix=keys.AXIOM_KEY_PREFIX,
            create=KeyCreateHow(method="POST", path="/api/axiom/keys", body={"ownerName": "required"}),
            auth=KeyAuth(scheme="Authorization: Bearer <key>", alsoAccepted=["X-Api-Key"]),
            billing=Billing(
                period="UTC calendar month",
                unit="credit",
                creditCost=keys.CREDIT_COST,
                whenExhausted="402 insufficient_balance until the next period",
            ),
            pricing=Pricing(currency="AUD", tiers=[PricingTier.of(t) for t in keys.TIERS.values()]),
            capabilities=[
                "facts",
                "facts.fulltext",
                "legislation",
                "legislation.search",
                "legislation.markdown",
                "citation.resolve",
                "usage",
            ],
            endpoints=sorted(keys.CREDIT_COST) + ["GET /api/axiom/keys", "POST /api/axiom/keys"],
        )


class Quickstart(BaseModel):
    usage: str
    facts: str
    legislation: str
    resolve: str


class AxiomKeyCreated(BaseModel):
    keyId: str
    apiKey: str = Field(description="pact_ax_… key; shown once")
    secret: str = Field(description="The same as apiKey")
    ownerName: str
    tier: str
    monthlyCredits: int
    creditsRemaining: int
    billingPeriod: str = Field(description="YYYY-MM (UTC calendar month)")
    createdAt: Timestamp
    message: str
    quickstart: Quickstart

    @classmethod
    def of(cls, new: keys.NewKey) -> AxiomKeyCreated:
        key = new.key
        return cls(
            keyId=key.id,
            apiKey=new.secret,
            secret=new.secret,
            ownerName=key.owner_name,
            tier=key.tier,
            monthlyCredits=key.monthly_credits,
            creditsRemaining=key.monthly_credits,
            billingPeriod=key.period,
            createdAt=iso(key.created_at),
            message="Store apiKey now: it is shown once. Send it as 'Authorization: Bearer <apiKey>'.",
            quickstart=Quickstart(
                usage="GET /api/axiom/usage",
                facts="GET /api/axiom/facts?q=…",
                legislation="GET /api/axiom/legislation?jurisdiction=AU-NSW",
                resolve="GET /api/axiom/resolve?citation=Work Health and Safety Act 2011 (Cth) s 19",
            ),
        )


class BillingPeriod(BaseModel):
    id: str = Field(description="YYYY-MM")
    start: Date
    end: Date


class DailyUsage(BaseModel):
    date: Date
    queries: int


class AxiomUsage(BaseModel):
    keyId: str
    ownerName: str
    tier: str
    billingPeriod: BillingPeriod
    queries: int = Field(description="Metered queries in the current period")
    monthlyCredits: int
    creditsRemaining: int
    queriesToday: int
    totalQueries: int
    daily: list[DailyUsage]
    lastUsedAt: Timestamp | None
    createdAt: Timestamp

    @classmethod
    def of(cls, u: keys.Usage) -> AxiomUsage:
        key = u.key
        return cls(
            keyId=key.id,
            ownerName=key.owner_name,
            tier=key.tier,
            billingPeriod=BillingPeriod(id=u.period, start=u.start.isoformat(), end=u.end.isoformat()),
            queries=u.queries,
            monthlyCredits=key.monthly_credits,
            creditsRemaining=u.credits_remaining,
            queriesToday=u.queries_today,
            totalQueries=key.total_queries,
            daily=[DailyUsage(date=d.isoformat(), queries=q) for d, q in u.daily],
            lastUsedAt=iso(key.last_used_at),
            createdAt=iso(key.created_at),
        )


class PageLinks(BaseModel):
    self_: str = Field(alias="self")
    next: str | None = Field(description="null on the last page")


# --- facts -------------------------------------------------------------------------------------------

FactStatus = Literal[TopicStatus.CONSENSUS, TopicStatus.STABLE]  # store.REACHED


class Provenance(BaseModel):
    sources: list[str]
    authority: str | None
    jurisdiction: str | None
    effectiveDate: Date | None
    expiryDate: Date | None
    lastVerifiedAt: Timestamp | None
    createdAt: Timestamp


class FactConsensus(BaseModel):
    status: FactStatus
    ratio: float | None
    voters: int | None
    since: Timestamp | None


class Fact(BaseModel):
    id: str
    title: str
    canonicalClaim: str | None
    tier: Tier
    status: FactStatus
    jurisdiction: str | None
    authority: str | None
    sourceRef: str | None
    effectiveDate: Date | None
    expiryDate: Date | None
    lastVerifiedAt: Timestamp | None
    consensusRatio: float | None
    consensusVoters: int | None
    consensusSince: Timestamp | None
    version: int
    createdAt: Timestamp
    updatedAt: Timestamp
    provenance: Provenance
    citations: list[str] = Field(description="Citations of the merged proposals, in merge order")
    consensus: FactConsensus

    @classmethod
    def of(cls, fact: fact_records.Fact) -> Fact:
        t = fact.topic
        effective, expiry = _day(t.effective_date), _day(t.expiry_date)
        return cls(
            id=t.id,
            title=t.title,
            canonicalClaim=t.canonical_claim,
            tier=Tier(t.tier),
            status=t.status,  # type: ignore[arg-type]  # REACHED: consensus or stable
            jurisdiction=t.jurisdiction,
            authority=t.authority,
            sourceRef=t.source_ref,
            effectiveDate=effective,
            expiryDate=expiry,
            lastVerifiedAt=iso(t.last_verified_at),
            consensusRatio=t.consensus_ratio,
            consensusVoters=t.consensus_voters,
            consensusSince=iso(t.consensus_since),
            version=t.version,
            createdAt=iso(t.created_at),
            updatedAt=iso(t.updated_at),
            provenance=Provenance(
                sources=[t.source_ref] if t.source_ref else [],
                authority=t.authority,
                jurisdiction=t.jurisdiction,
                effectiveDate=effective,
                expiryDate=expiry,
                lastVerifiedAt=iso(t.last_verified_at),
                createdAt=iso(t.created_at),
            ),
            citations=fact.citations,
            consensus=FactConsensus(
                status=t.status,  # type: ignore[arg-type]
                ratio=t.consensus_ratio,
                voters=t.consensus_voters,
                since=iso(t.consensus_since),
            ),
        )


def _day(d: date | None) -> str | None:
    return d.isoformat() if d else None


class FactPage(BaseModel):
    facts: list[Fact]
    total: int
    limit: int
    offset: int
    hasMore: bool
    creditsRemaining: int
    links: PageLinks = Field(alias="_links")

    @classmethod
    def of(cls, page: fact_records.FactList, credits: int, links: dict[str, str | None]) -> FactPage:
        return cls.model_validate(
            {
                "facts": [Fact.of(f) for f in page.facts],
                "total": page.total,
                "limit": page.limit,
                "offset": page.offset,
                "hasMore": page.has_more,
                "creditsRemaining": credits,
                "_links": links,
            }
        )


class FactDependency(BaseModel):
    factId: str
    relationship: str
    title: str
    tier: Tier
    status: str


class FactParticipation(BaseModel):
    totalParticipants: int
    mergedProposals: int
    totalVotes: int


class FactDetail(BaseModel):
    fact: Fact
    sections: list[SectionNode]
    dependencies: list[FactDependency]
    participation: FactParticipation
    creditsRemaining: int

    @classmethod
    def of(cls, detail: fact_records.FactDetail, credits: int) -> dict[str, Any]:
        """The answer as a dict: its section tree is the consensus area's dicts, which building a
        SectionNode would run through the request-side validators (trimming)."""
        return {
            "fact": Fact.of(detail.fact).model_dump(mode="json", by_alias=True),
            "sections": detail.sections,
            "dependencies": [
                {
                    "factId": d.fact_id,
                    "relationship": d.relationship,
                    "title": d.title,
                    "tier": d.tier,
                    "status": d.status,
                }
                for d in detail.dependencies
            ],
            "participation": FactParticipation(
                totalParticipants=detail.participants,
                mergedProposals=detail.merged_proposals,
                totalVotes=detail.votes,
            ).model_dump(),
            "creditsRemaining": credits,
        }


# --- legislation -------------------------------------------------------------------------------------


class LegislationProvenance(BaseModel):
    """Where the instrument's text came from."""

    sourceRegister: str = Field(description="frl, nsw, qld, wa, sa, tas, oalc, sample or other")
    source: str | None = Field(description="The URL or file read")
    versionDate: Date | None = Field(description="The compilation's (version's) date")
    licence: str | None
    attribution: str | None = Field(description="The credit the source's licence asks for")
    sample: bool = Field(description="Concord's seeded sample: titles and headings, no statutory text")

    @staticmethod
    def fields(p: legislation.Provenance) -> dict[str, Any]:
        return {
            "sourceRegister": p.source_register,
            "source": p.source,
            "versionDate": _day(p.version_date),
            "licence": p.licence,
            "attribution": p.attribution,
            "sample": p.sample,
        }


class LegislationSection(BaseModel):
    sectionId: str = Field(description="Pinpoint such as 's 19', 's 180(1)(a)', 'pt 2 div 1', 'sch 1 cl 2'")
    title: str
    content: str | None
    depth: int
    parentId: str | None
    order: int
    status: str
    amendedBy: str | None
    crossReferences: list[str]
    notes: str | None
    provenance: LegislationProvenance | None = Field(
        description="The instrument's provenance (null: not recorded)"
    )

    @staticmethod
    def fields(s: legislation.Section, provenance: dict[str, Any] | None) -> dict[str, Any]:
        return {
            "sectionId": s.section_id,
            "title": s.title,
            "content": s.content,
            "depth": s.depth,
            "parentId": s.parent_id,
            "order": s.order,
            "status": s.status,
            "amendedBy": s.amended_by,
            "crossReferences": s.cross_references,
            "notes": s.notes,
            "provenance": provenance,
        }


class Amendment(BaseModel):
    title: str
    id: str | None
    commenced: Date | None
    description: str | None
    sections: list[str]

    @staticmethod
    def fields(a: legislation.Amendment) -> dict[str, Any]:
        return {
            "title": a.title,
            "id": a.id,
            "commenced": _day(a.commenced),
            "description": a.description,
            "sections": a.sections,
        }


class Instrument(BaseModel):
    id: str
    jurisdiction: str
    jurisdictionAbbreviation: str
    type: InstrumentTypeField
    title: str
    designation: str | None
    shortTitle: str | None
    year: int | None
    number: str | None
    registerId: str | None
    status: str
    inForce: bool | None
    inForceDate: Date | None
    lastAmendedDate: Date | None
    repealedDate: Date | None
    administeredBy: str | None
    url: str | None
    citation: str
    sectionCount: int
    updatedAt: Timestamp
    provenance: LegislationProvenance | None = Field(
        description="null: not recorded (ingested without provenance)"
    )
    versions: list[Date] = Field(
        default_factory=list, description="One instrument: the compilation dates stored (as-at queries)"
    )
    sections: list[LegislationSection] = Field(
        default_factory=list, description="With include=sections (always on one instrument)"
    )
    amendments: list[Amendment] = Field(default_factory=list, description="With include=amendments")

    @staticmethod
    def answer(i: legislation.Instrument) -> dict[str, Any]:
        """The instrument as this model's wire dict, checked strictly by the operation's Shape as it is
        written: the parts not asked for (sections, amendments, versions) are left out, not sent empty, and
        a section tree of thousands builds no model instances."""
        provenance = LegislationProvenance.fields(i.provenance) if i.provenance else None
        found: dict[str, Any] = {
            "id": i.id,
            "jurisdiction": i.jurisdiction,
            "jurisdictionAbbreviation": i.jurisdiction_abbreviation,
            "type": i.type,
            "title": i.title,
            "designation": i.designation,
            "shortTitle": i.short_title,
            "year": i.year,
            "number": i.number,
            "registerId": i.register_id,
            "status": i.status,
            "inForce": i.in_force,
            "inForceDate": _day(i.in_force_date),
            "lastAmendedDate": _day(i.last_amended_date),
            "repealedDate": _day(i.repealed_date),
            "administeredBy": i.administered_by,
            "url": i.url,
            "citation": i.citation,
            "sectionCount": i.section_count,
            "updatedAt": i.updated_at.isoformat(),
            "provenance": provenance,
        }
        if i.sections is not None:
            found["sections"] = [LegislationSection.fields(s, provenance) for s in i.sections]
        if i.amendments is not None:
            found["amendments"] = [Amendment.fields(a) for a in i.amendments]
        if i.versions is not None:
            found["versions"] = [d.isoformat() for d in i.versions]
        return found


class LegislationPage(BaseModel):
    legislation: list[Instrument]
    total: int
    limit: int
    offset: int
    hasMore: bool
    creditsRemaining: int
    links: PageLinks = Field(alias="_links")

    @staticmethod
    def answer(page: InstrumentPageRecord, credits: int, links: dict[str, str | None]) -> dict[str, Any]:
        return {
            "legislation": [Instrument.answer(i) for i in page.instruments],
            "total": page.total,
            "limit": page.limit,
            "offset": page.offset,
            "hasMore": page.has_more,
            "creditsRemaining": credits,
            "_links": links,
        }


class LegislationDetail(BaseModel):
    legislation: Instrument
    sectionCount: int
    creditsRemaining: int

    @staticmethod
    def answer(i: InstrumentRecord, credits: int) -> dict[str, Any]:
        return {
            "legislation": Instrument.answer(i),
            "sectionCount": i.section_count,
            "creditsRemaining": credits,
        }


class SearchHit(BaseModel):
    docId: str
    docTitle: str
    designation: str | None
    jurisdiction: str
    docType: InstrumentTypeField
    year: int | None
    sectionId: str
    sectionTitle: str
    content: str | None = Field(description="Excerpt around the keywords")
    depth: int
    status: str
    relevanceScore: float
    crossReferences: list[str]
    citation: str
    sourceRef: str | None

    @classmethod
    def of(cls, hit: legislation.Hit) -> SearchHit:
        sec, doc = hit.section, hit.doc
        return cls(
            docId=doc.id,
            docTitle=doc.title,
            designation=doc.designation,
            jurisdiction=doc.jurisdiction,
            docType=doc.type,  # type: ignore[arg-type]  # stored from InstrumentType
            year=doc.year,
            sectionId=sec.section_id,
            sectionTitle=sec.title,
            content=hit.excerpt,
            depth=sec.depth,
            status=sec.status,
            relevanceScore=hit.score,
            crossReferences=sec.cross_references or [],
            citation=hit.citation,
            sourceRef=doc.url,
        )


class LegislationSearch(BaseModel):
    results: list[SearchHit]
    query: str
    keywords: list[str]
    total: int
    limit: int
    offset: int
    creditsRemaining: int
    links: PageLinks = Field(alias="_links")

    @classmethod
    def of(
        cls, found: legislation.SearchResults, credits: int, links: dict[str, str | None]
    ) -> LegislationSearch:
        return cls.model_validate(
            {
                "results": [SearchHit.of(h) for h in found.hits],
                "query": found.query,
                "keywords": found.keywords,
                "total": found.total,
                "limit": found.limit,
                "offset": found.offset,
                "creditsRemaining": credits,
                "_links": links,
            }
        )


class IngestResult(BaseModel):
    created: list[str]
    updated: list[str]
    unchanged: list[str]
    versioned: list[str] = Field(description="Older compilations kept as versions only")
    count: int = Field(description="Instruments created or updated")

    @classmethod
    def of(cls, r: legislation.Ingested) -> IngestResult:
        return cls(
            created=r.created, updated=r.updated, unchanged=r.unchanged, versioned=r.versioned, count=r.count
        )


# --- citation resolution -----------------------------------------------------------------------------


class Resolution(BaseModel):
    resolved: bool
    citation: str = Field(description="The citation as parsed")
    docId: str = Field(description="Legislation id, or topic: followed by a topic id")
    docType: Annotated[InstrumentType | Literal["topic"], SpeltOut(InstrumentType, ("topic",))]
    sectionRef: str | None = Field(
        description="The stored section id of the longest verified part of the pinpoint; null when not even "
        "its first provision could be verified"
    )
    requestedSection: str | None = Field(
        description="The pinpoint asked for, in canonical AGLC form (s 180(1), ss 24–29, sch 1 cl 2)"
    )
    unverifiedPinpoint: str | None = Field(
        description="What of the requested pinpoint the store could not verify ('(1)' of s 180(1) when only "
        "s 180 is stored; the whole range or list unless each of its items is stored); null when all was"
    )
    canonicalTitle: str
    verifiedRef: str = Field(description="Canonical citation with exactly the verified part of the pinpoint")
    inForce: bool | None
    inForceDate: Date | None
    lastAmendedDate: Date | None
    repealedDate: Date | None
    matchTier: Literal["exact", "near-exact"]
    jurisdiction: str | None
    source: Literal["legislation", "topic"]
    free: bool
    asAt: Date | None = Field(description="The date asked for (asAt), null when none was")
    versionDate: Date | None = Field(
        description="The compilation date of the instrument's text the pinpoint was verified against (with "
        "asAt, the compilation in force at that date); null when unknown, and for topics"
    )

    @classmethod
    def of(cls, r: citations.Resolved) -> Resolution:
        return cls(
            resolved=True,
            citation=r.citation,
            docId=r.doc_id,
            docType=r.doc_type,  # type: ignore[arg-type]  # an instrument type, or topic
            sectionRef=r.section_ref,
            requestedSection=r.requested_section,
            unverifiedPinpoint=r.unverified_pinpoint,
            canonicalTitle=r.canonical_title,
            verifiedRef=r.verified_ref,
            inForce=r.in_force,
            inForceDate=_day(r.in_force_date),
            lastAmendedDate=_day(r.last_amended_date),
            repealedDate=_day(r.repealed_date),
            matchTier=r.match_tier,  # type: ignore[arg-type]
            jurisdiction=r.jurisdiction,
            source=r.source,  # type: ignore[arg-type]
            free=True,
            asAt=_day(r.as_at),
            versionDate=_day(r.version_date),
        )


# The error bodies of a citation not resolved (404 citation_not_resolved, citation_ambiguous; the 400
# invalid_citation of a topic proposal's citations): how the citation was read and the instruments or topics
# it may mean. Error bodies are not declared field by field in /openapi.json (errors.HubError allows extras);
# these models are the one place their fields are written, by web/kernel/errors.py's render.


class ParsedCitation(BaseModel):
    kind: Literal["legislation", "standard"]
    title: str
    designation: str | None = Field(description="A standard's designation, in canonical form")
    jurisdiction: str | None
    section: str | None

    @staticmethod
    def answer(p: citations.Parsed) -> dict[str, Any]:
        return {
            "kind": p.kind,
            "title": p.title,
            "designation": p.designation.key if p.designation else None,
            "jurisdiction": p.jurisdiction,
            "section": p.section,
        }


class CitationCandidate(BaseModel):
    docId: str
    docType: InstrumentTypeField
    title: str
    jurisdiction: str
    jurisdictionAbbreviation: str
    verifiedRef: str
    inForce: bool | None

    @staticmethod
    def answer(e: citations.Entry) -> dict[str, Any]:
        return {
            "docId": e.doc_id,
            "docType": e.type,
            "title": e.canonical_title,
            "jurisdiction": e.jurisdiction,
            "jurisdictionAbbreviation": jurisdictions.abbreviation(e.jurisdiction),
            "verifiedRef": e.citation(),
            "inForce": e.in_force,
        }


class TopicCandidate(BaseModel):
    docId: str = Field(description="topic: followed by the topic's id")
    docType: Literal["topic"]
    title: str
    jurisdiction: str | None

    @staticmethod
    def answer(c: citations.TopicCandidate) -> dict[str, Any]:
        return {
            "docId": f"topic:{c.topic_id}",
            "docType": "topic",
            "title": c.title,
            "jurisdiction": c.jurisdiction,
        }


errors.writes(citations.Parsed, ParsedCitation.answer)
errors.writes(citations.Entry, CitationCandidate.answer)
errors.writes(citations.TopicCandidate, TopicCandidate.answer)


# --- legislation ingest (the body as /openapi.json documents it) ----------------------------------------


class InstrumentDoc(legislation.InstrumentIn):
    """An instrument, with the spellings and the id form the domain model checks put into its schema."""

    id: str | None = Field(
        default=None,
        description="Stable id ([a-z0-9._-]); default: jurisdiction + title slug",
        json_schema_extra={"pattern": legislation.DOC_ID.pattern},
    )


class IngestDoc(legislation.IngestBody):
    documents: list[InstrumentDoc] = Field(min_length=1, max_length=1000)  # type: ignore[assignment]


# --- legislation import (multipart form) ----------------------------------------------------------------


class ImportForm(BaseModel):
    """The form fields beside the file of POST /api/axiom/legislation/import."""

    model_config = ConfigDict(extra="forbid")
    sourceRegister: Register | None = Field(
        default=None, description="The register the file came from (a .jsonl defaults to oalc)"
    )
    jurisdiction: str | None = Field(
        default=None, max_length=16, description="AU, AU-NSW … (default: the register's)"
    )
    title: str | None = Field(
        default=None, min_length=3, max_length=500, description="Default: read from the file"
    )
    versionDate: date | None = Field(default=None, description="The compilation's date (YYYY-MM-DD)")
    source: str | None = Field(default=None, max_length=1000, description="The URL the file came from")
    repealed: bool = Field(default=False, description="Record the instrument as repealed (inForce: false)")


class ImportResult(BaseModel):
    kind: FileKind = Field(description="What the file was read as")
    records: int = Field(description="Instruments (corpus records) read from the file")
    created: int
    updated: int
    unchanged: int
    versioned: int = Field(description="Older compilations kept as versions only")
    skipped: int = Field(description="Corpus records left out (not legislation, or unreadable)")
    skipReasons: list[str] = Field(description="Why, for the first 20 left out")
    ids: list[str] = Field(description="The instruments created or updated (up to 100)")

    @classmethod
    def of(cls, p: import_run.Progress) -> ImportResult:
        return cls(
            kind=p.kind,
            records=p.records,
            created=p.created,
            updated=p.updated,
            unchanged=p.unchanged,
            versioned=p.versioned,
            skipped=p.skipped,
            skipReasons=p.skip_reasons,
            ids=p.ids,
        )
