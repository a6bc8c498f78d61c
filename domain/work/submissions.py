"""Submitting work. Everything the request can be judged on is checked first, under the assignment's row
lock (whose assignment, its state, every rule of the submission), so a refused request writes nothing
and leaves the assignment as it was. A price observation then waits for the validator job; an
applicability spot-check is decided at once."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from domain.kernel import audit, outbox
from domain.kernel.clock import utcnow
from domain.kernel.context import Context
from domain.kernel.errors import BadRequest, Conflict, Forbidden, NotFound
from domain.kernel.ids import canonical_id
from domain.kernel.sqlutil import for_update
from domain.work import observation_stored, observations, outcomes, work_events
from domain.work.claims import PRICE, SPOTCHECK
from domain.work.models import DefectKind, WorkAssignment, WorkDefect, WorkSubmission
from domain.work.validator import VALIDATE_JOB

MAX_SUBMISSION_BYTES = 64_000
MAX_DEFECTS = 100


def product_key(obs: observations.Observation) -> str:
    """The product's identity at its retailer: its GTIN, else its URL without query or fragment."""
    if obs.ean:
        return f"gtin:{obs.ean}"
    parts = urlsplit(obs.product_url)
    path = parts.path.rstrip("/") or "/"
    return urlunsplit(("", (parts.hostname or "").lower(), path, "", ""))[:400]


async def _locked_assignment(session: AsyncSession, assignment_id: str) -> WorkAssignment:
    key = canonical_id(assignment_id)
    row: WorkAssignment | None = None
    if key:
        row = await session.scalar(for_update(select(WorkAssignment).where(WorkAssignment.id == key)))
    if row is None:
        raise NotFound(f"assignment {assignment_id!r} not found", code="assignment_not_found")
    return row


def _check_state(row: WorkAssignment, agent_id: str) -> None:
    if row.status == "resolved":
        raise Conflict(f"assignment {row.id} is already resolved", code="already_resolved")
    if row.agent_id != agent_id:
        if row.agent_id is None:
            raise Conflict(
                f"assignment {row.id} is not claimed: claim it first (POST /api/work/claim)",
                code="not_claimed",
            )
        raise Forbidden(f"assignment {row.id} is claimed by another agent", code="not_your_assignment")
    if row.status == "submitted":
        raise Conflict(f"assignment {row.id} already has a submission", code="already_submitted")
    if row.expires_at <= utcnow():
        raise Conflict(
            f"the lease on assignment {row.id} ran out; claim the work again", code="lease_expired"
        )


def _spotcheck_defects(submission: dict[str, Any]) -> list[dict[str, Any]]:
    raw = submission.get("defects", [])
    if not isinstance(raw, list):
        raise BadRequest(
            "submission.defects: must be a list of objects",
            code="validation_error",
            field="submission.defects",
        )
    if len(raw) > MAX_DEFECTS:
        raise BadRequest(
            f"submission.defects: at most {MAX_DEFECTS} defects",
            code="validation_error",
            field="submission.defects",
        )
    found = []
    for n, item in enumerate(raw):
        where = f"submission.defects.{n}"
        if not isinstance(item, dict):
            raise BadRequest(f"{where}: must be an object", code="validation_error", field=where)
        text = next(
            (item[k] for k in ("description", "detail", "summary") if isinstance(item.get(k), str)), None
        )
        if not text or not text.strip():
            raise BadRequest(
                f"{where}: give a description (what is wrong)",
                code="validation_error",
                field=f"{where}.description",
            )
        labels: dict[str, str | None] = {}
        for name in ("scenario", "cluster"):
            value = item.get(name, submission.get(name))
            if value is not None and (not isinstance(value, str) or len(value) > 200):
                raise BadRequest(
                    f"{where}.{name}: must be a string of at most 200 characters",
                    code="validation_error",
                    field=f"{where}.{name}",
                )
            labels[name] = value
        found.append({"detail": text.strip()[:5000], "data": item, **labels})
    return found


async def submit(
    session: AsyncSession,
    ctx: Context,
    *,
    assignment_id: str,
    submission: Any,
    observation: Callable[[dict[str, Any]], observations.Observation],
) -> WorkSubmission:
    """`submission` as sent; `observation` reads a price observation from it (its request model: a 400 naming
    the field it refuses), once the assignment is known to be the caller's and open."""
    actor = ctx.require_actor()
    if not isinstance(submission, dict):
        raise BadRequest("submission: must be a JSON object", code="validation_error", field="submission")
    if len(json.dumps(submission)) > MAX_SUBMISSION_BYTES:
        raise BadRequest(
            f"submission: larger than {MAX_SUBMISSION_BYTES} bytes",
            code="validation_error",
            field="submission",
        )
    row = await _locked_assignment(session, assignment_id)
    _check_state(row, actor.id)
    now = utcnow()
    sub = WorkSubmission(
        assignment_id=row.id,
        agent_id=actor.id,
        agent_name=actor.name,
        work_type=row.work_type,
        reward_credits=row.reward_credits,
        status="validating",
        created_at=now,
    )
    defects: list[dict[str, Any]] = []
    if row.work_type == PRICE:
        obs = observation(submission)
        item, retailer = await observations.check(session, obs, assigned_key=row.item_key)
        sub.submission = observation_stored.stored(obs)
        sub.item_key, sub.retailer_slug, sub.product_key = item.key, retailer.slug, product_key(obs)
    elif row.work_type == SPOTCHECK:
        defects = _spotcheck_defects(submission)
        sub.submission = submission
    else:  # pragma: no cover - claims only hand out supported types
        raise Conflict(f"work type {row.work_type} cannot be submitted", code="unsupported_work_type")
    session.add(sub)
    row.status, row.submitted_at = "submitted", now
    await session.flush()
    if row.work_type == PRICE:
        outbox.enqueue(session, VALIDATE_JOB, {"submission_id": sub.id})
    else:
        sub.defect_ids = await _record_defects(session, sub, row, defects)
        count = len(defects)
        await outcomes.accept(
            session, sub, row, by="spot-check", notes=f"accepted: {count} defect(s) recorded"
        )
    audit.record(
        session,
        ctx,
        "work.submit",
        "work_submission",
        sub.id,
        after=work_events.submitted(row, sub),
    )
    return sub


async def _record_defects(
    session: AsyncSession, sub: WorkSubmission, row: WorkAssignment, defects: list[dict[str, Any]]
) -> list[str]:
    ids = []
    for found in defects:
        defect = WorkDefect(
            kind=DefectKind.APPLICABILITY,
            submission_id=sub.id,
            assignment_id=row.id,
            agent_id=sub.agent_id,
            agent_name=sub.agent_name,
            reason="reported",
            detail=found["detail"],
            scenario=found["scenario"],
            cluster=found["cluster"],
            data=found["data"],
            status="open",
            created_at=utcnow(),
        )
        session.add(defect)
        await session.flush()
        ids.append(defect.id)
    return ids


async def get(session: AsyncSession, ctx: Context, submission_id: str) -> WorkSubmission:
    """The caller's own submission (another agent's is not found, not forbidden: ids are not probed)."""
    actor = ctx.require_actor()
    key = canonical_id(submission_id)
    sub = await session.get(WorkSubmission, key) if key else None
    if sub is None or sub.agent_id != actor.id:
        raise NotFound(f"submission {submission_id!r} not found", code="submission_not_found")
    return sub


def credits_held(sub: WorkSubmission) -> int:
    """The reward waiting on the validator or a curator (none once the submission is decided)."""
    return sub.reward_credits if sub.status in ("deferred", "validating") else 0
