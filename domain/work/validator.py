"""The price-observation validator: a background job (reached through the outbox) that decides a
submission. Checks, each recorded as {check, result: pass|defer|reject, detail}:

- domain: the URL's host belongs to the retailer's web domain (otherwise rejected, and the URL is never
  contacted: the retailer domains are the allow-list);
- url: HEAD on the page (GET where HEAD is refused), bounded redirects and time, never a private address
  unless the operator allows it. 2xx passes; 404/410 rejects; anything else (a WAF's 403, 429, 5xx, a
  timeout) is inconclusive, not invalid, so a curator looks;
- sanity: the two prices imply a pack size in a plausible range;
- duplicate: the same product (GTIN, else URL) at the same retailer already submitted recently rejects;
  a GTIN the catalogue maps to another item key defers;
- retailer: the first observation ever from a retailer defers;
- median: the unit price within ±tolerance of the item key's recent median passes; further away, or too
  few recent observations to know, defers.

Any reject → rejected (a price defect); else any defer → deferred (credits held); else accepted (credits
paid, observation recorded as crowd-sourced market data). The URL is checked with no transaction open (the
job's `prepare` step); the other checks and the outcome are made under the submission's row lock in the
transaction that marks the job done, only if it is still validating, so a duplicate delivery of the job
changes nothing."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Annotated, Any
from urllib.parse import urlsplit

from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit, outbox
from domain.kernel.clock import utcnow
from domain.kernel.context import SYSTEM
from domain.kernel.db import Database
from domain.kernel.outbox import Job
from domain.kernel.sqlutil import for_update
from domain.kernel.vocabulary import SpeltOut
from domain.market import outbound
from domain.market.models import PriceObservation, Product, QuoteItem, Retailer
from domain.market.retailers import host_belongs
from domain.work import observation_stored, outcomes, work_events
from domain.work.models import WorkAssignment, WorkSubmission
from domain.work.observations import Observation
from domain.work.settings import get_work_settings

VALIDATOR = "validator"
PACK_RANGE = (0.001, 100_000.0)  # canonical units per pack: 1 g of something to 100 t


class Verdict(StrEnum):
    """What one check of a submission found."""

    PASS = "pass"
    DEFER = "defer"  # inconclusive: a curator decides
    REJECT = "reject"


VerdictField = Annotated[Verdict, SpeltOut(Verdict)]


@dataclass(frozen=True)
class Finding:
    check: str
    result: Verdict
    detail: str
    code: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "result": self.result, "detail": self.detail, "code": self.code}


def check_domain(url: str, retailer: Retailer) -> Finding:
    host = urlsplit(url).hostname or ""
    if host_belongs(host, retailer.domain):
        return Finding("domain", Verdict.PASS, f"{host} belongs to {retailer.name} ({retailer.domain})")
    return Finding(
        "domain",
        Verdict.REJECT,
        f"{host} is not on {retailer.name}'s domain {retailer.domain}; the URL was not contacted",
        "domain_mismatch",
    )


async def check_url(url: str, retailer: Retailer) -> Finding:
    try:
        page = await outbound.probe(url)
    except outbound.FetchError as exc:
        if exc.kind in ("blocked_address", "invalid_url"):
            return Finding("url", Verdict.REJECT, exc.detail, "url_refused")
        return Finding("url", Verdict.DEFER, f"inconclusive ({exc.kind}): {exc.detail}", f"url_{exc.kind}")
    how = f"{page.method} {page.status}" + (
        f" after {page.redirects} redirect(s) to {page.url}" if page.redirects else ""
    )
    final_host = urlsplit(page.url).hostname or ""
    if not host_belongs(final_host, retailer.domain):
        return Finding(
            "url", Verdict.DEFER, f"{how}: the page moved off the retailer's domain", "redirect_off_domain"
        )
    if 200 <= page.status < 300:
        return Finding("url", Verdict.PASS, how)
    if page.status in (404, 410):
        return Finding("url", Verdict.REJECT, f"{how}: the product page does not exist", "url_not_found")
    return Finding(
        "url",
        Verdict.DEFER,
        f"{how}: inconclusive (bot protection or a server error)",
        f"url_http_{page.status}",
    )


def check_sanity(obs: Observation, unit: str) -> Finding:
    pack = obs.price_cents / obs.unit_price_cents
    lo, hi = PACK_RANGE
    if not lo <= pack <= hi:
        return Finding(
            "sanity",
            Verdict.REJECT,
            f"priceCents {obs.price_cents} at unitPriceCents {obs.unit_price_cents} per {unit} means "
            f"a pack of {pack:g} {unit}, outside {lo:g} to {hi:g}",
            "price_inconsistent",
        )
    return Finding("sanity", Verdict.PASS, f"a pack of {pack:g} {unit}")


async def check_duplicate(session: AsyncSession, sub: WorkSubmission, obs: Observation) -> Finding:
    window = utcnow() - timedelta(hours=get_work_settings().duplicate_hours)
    earlier = await session.scalar(
        select(WorkSubmission.id)
        .where(
            WorkSubmission.id != sub.id,
            WorkSubmission.retailer_slug == sub.retailer_slug,
            WorkSubmission.product_key == sub.product_key,
            WorkSubmission.created_at >= window,
            or_(
                WorkSubmission.status.in_(("accepted", "deferred")),
                # one being validated right now counts if it came first
                and_(WorkSubmission.status == "validating", WorkSubmission.created_at < sub.created_at),
            ),
        )
        .limit(1)
    )
    if earlier is not None:
        return Finding(
            "duplicate",
            Verdict.REJECT,
            f"this product at {sub.retailer_slug} was already submitted within "
            f"{get_work_settings().duplicate_hours:g} h (submission {earlier})",
            "duplicate",
        )
    ean = obs.ean
    if ean:
        other = await session.scalar(
            select(Product.item_key)
            .where(
                Product.ean.in_(outcomes.ean_forms(ean)),
                Product.item_key.is_not(None),
                Product.item_key != sub.item_key,
            )
            .limit(1)
        )
        if other is not None:
            return Finding(
                "duplicate",
                Verdict.DEFER,
                f"GTIN {ean} is catalogued under item key {other}",
                "ean_other_item",
            )
    return Finding("duplicate", Verdict.PASS, "not seen before")


async def check_retailer(session: AsyncSession, retailer: Retailer) -> Finding:
    seen = await session.scalar(
        select(PriceObservation.id)
        .join(Product, Product.id == PriceObservation.product_id)
        .where(Product.retailer_slug == retailer.slug)
        .limit(1)
    )
    if seen is None:
        return Finding(
            "retailer", Verdict.DEFER, f"the first observation from {retailer.name}", "first_from_retailer"
        )
    return Finding("retailer", Verdict.PASS, f"{retailer.name} has observations")


async def check_median(session: AsyncSession, obs: Observation, item: QuoteItem) -> Finding:
    cfg = get_work_settings()
    since = utcnow() - timedelta(days=cfg.median_days)
    rates = (
        await session.scalars(
            select(PriceObservation.unit_price_cents)
            .join(Product, Product.id == PriceObservation.product_id)
            .where(
                Product.item_key == item.key,
                PriceObservation.unit == item.unit,
                PriceObservation.unit_price_cents.is_not(None),
                PriceObservation.in_stock.is_(True),
                PriceObservation.observed_at >= since,
            )
            .order_by(PriceObservation.observed_at.desc())
            .limit(1000)
        )
    ).all()
    values = [float(r) for r in rates if r is not None]
    if len(values) < cfg.median_min_observations:
        return Finding(
            "median",
            Verdict.DEFER,
            f"{len(values)} observation(s) of {item.key} in {cfg.median_days} days: too few for a median",
            "no_median",
        )
    median = statistics.median(values)
    distance = abs(obs.unit_price_cents - median) / median
    detail = (
        f"{obs.unit_price_cents} c/{item.unit} against a {cfg.median_days}-day median of {median:.0f} "
        f"({len(values)} observations): {distance:.0%} away"
    )
    if distance > cfg.median_tolerance:
        return Finding(
            "median", Verdict.DEFER, f"{detail}, beyond ±{cfg.median_tolerance:.0%}", "far_from_median"
        )
    return Finding("median", Verdict.PASS, detail)


def decide(findings: list[Finding]) -> tuple[str, str, str]:
    """(status, defect reason, notes) from the findings."""
    rejects = [f for f in findings if f.result == Verdict.REJECT]
    defers = [f for f in findings if f.result == Verdict.DEFER]
    if rejects:
        return "rejected", rejects[0].code, "rejected: " + "; ".join(f.detail for f in rejects)
    if defers:
        return "deferred", "", "deferred for a curator: " + "; ".join(f.detail for f in defers)
    return "accepted", "", "accepted: " + "; ".join(f"{f.check} ok" for f in findings)


async def prepare_validation(db: Database, payload: dict[str, Any]) -> Finding | None:
    """The URL check, with no transaction open (no lock is held while a slow site answers): the page is
    contacted only when the URL is on the retailer's domain. None when there is nothing to contact."""
    async with db.read() as session:
        sub = await session.get(WorkSubmission, payload.get("submission_id"))
        if sub is None or sub.status != "validating":
            return None
        url = observation_stored.product_url(sub.submission)
        retailer = await session.get(Retailer, sub.retailer_slug)
    if retailer is None or check_domain(url, retailer).result != Verdict.PASS:
        return None
    return await check_url(url, retailer)


async def validate(session: AsyncSession, payload: dict[str, Any]) -> None:
    """Decide the submission in the transaction that marks the job done, from the checks made here (under
    the submission's row lock) and the URL check made before (`prepare_validation`)."""
    sub = await session.scalar(
        for_update(select(WorkSubmission).where(WorkSubmission.id == payload.get("submission_id")))
    )
    if sub is None or sub.status != "validating":
        return  # a duplicate delivery after the outcome was written
    assignment = await session.scalar(
        for_update(select(WorkAssignment).where(WorkAssignment.id == sub.assignment_id))
    )
    if assignment is None:
        return
    obs = observation_stored.read(sub.submission)
    retailer = await session.get(Retailer, sub.retailer_slug)
    item = await session.get(QuoteItem, sub.item_key)
    if retailer is None or item is None:  # removed since the submission was checked
        findings = [
            Finding("reference", Verdict.DEFER, "the retailer or item key no longer exists", "reference_gone")
        ]
    else:
        domain = check_domain(obs.product_url, retailer)
        findings = [
            domain,
            check_sanity(obs, item.unit),
            await check_duplicate(session, sub, obs),
            await check_retailer(session, retailer),
            await check_median(session, obs, item),
        ]
        if domain.result == Verdict.PASS:
            url = payload.get(outbox.PREPARED)
            if not isinstance(url, Finding):  # the retailer's domain changed since the URL was checked
                url = Finding(
                    "url", Verdict.DEFER, "the URL was not checked: the retailer changed", "url_unchecked"
                )
            findings.insert(1, url)
    sub.checks = [f.as_dict() for f in findings]
    status, reason, notes = decide(findings)
    if status == "accepted":
        await outcomes.accept(session, sub, assignment, by=VALIDATOR, notes=notes)
    elif status == "deferred":
        await outcomes.defer(session, sub, by=VALIDATOR, notes=notes)
    else:
        await outcomes.reject(session, sub, assignment, by=VALIDATOR, reason=reason, notes=notes)
    audit.record(
        session,
        SYSTEM,
        f"work.validate.{status}",
        "work_submission",
        sub.id,
        after=work_events.validated(sub, status),
    )


async def validator_failed(session: AsyncSession, payload: dict[str, Any], reason: str) -> None:
    """The job gave up (retries exhausted): a person decides instead of the submission waiting for ever."""
    sub = await session.scalar(
        for_update(select(WorkSubmission).where(WorkSubmission.id == payload.get("submission_id")))
    )
    if sub is not None and sub.status == "validating":
        sub.checks = [
            Finding(
                "validator", Verdict.DEFER, f"the validator failed: {reason}", "validator_failed"
            ).as_dict()
        ]
        await outcomes.defer(
            session, sub, by=VALIDATOR, notes=f"deferred for a curator: the validator failed ({reason})"
        )


VALIDATE_JOB = Job(
    "work.validate_price_observation", validate, on_failure=validator_failed, prepare=prepare_validation
)
