"""Answer serialisation (run on demand: `python -m bench.answers [--rounds N]`).

An operation writes its handler's value through its response model (web/kernel/replies.py `Shape`: a strict
check, then pydantic's JSON writer). This prints, per body, the microseconds of one `Shape.dump` beside the
baseline it replaced (`json.dumps` of the same value, as `json_response` wrote it), their ratio, and the
same for a model instance. The bodies are invented topic lists of 1, 50 and 200 topics (the list's page
sizes) and a proposal page. A cached read pays this once per cache fill, never per request."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from web.hub.api import build_api
from web.hub.topics.read_models import ProposalPage
from web.hub.topics.schemas import TopicList
from web.kernel.replies import Shape


def topic(i: int) -> dict[str, Any]:
    return {
        "id": f"00000000-0000-4000-8000-{i:012d}",
        "title": f"Invented topic number {i} about the measurement of things",
        "tier": "empirical",
        "status": "open",
        "version": 3,
        "canonicalClaim": None,
        "jurisdiction": "AU-NSW",
        "authority": None,
        "sourceRef": None,
        "effectiveDate": None,
        "expiryDate": None,
        "assumptions": ["an assumption", "another one"],
        "dependsOn": [],
        "creatorId": f"10000000-0000-4000-8000-{i:012d}",
        "approvalPolicy": "concord-default",
        "allowSelfApproval": False,
        "consensusRatio": 0.5,
        "consensusSince": None,
        "lastVerifiedAt": None,
        "participantCount": 4,
        "proposalCount": 12,
        "createdAt": "2026-11-27T10:00:00.123456Z",
        "updatedAt": "2026-11-27T10:05:00.654321Z",
    }


def proposal(i: int) -> dict[str, Any]:
    return {
        "id": f"20000000-0000-4000-8000-{i:012d}",
        "proposalId": f"20000000-0000-4000-8000-{i:012d}",
        "resourceType": "topic",
        "resourceId": "00000000-0000-4000-8000-000000000001",
        "sectionId": "sec:answer",
        "status": "pending",
        "summary": "Tighten the wording",
        "newContent": "The text, reworded.\n" * 20,
        "citations": [],
        "proposalType": None,
        "baseVersion": 3,
        "authorId": "10000000-0000-4000-8000-000000000001",
        "authorName": "agent one",
        "ttl": 300,
        "approveCount": 1,
        "rejectCount": 0,
        "objectCount": 0,
        "createdAt": "2026-11-27T10:00:00.123456Z",
        "expiresAt": "2026-11-27T10:05:00.123456Z",
        "resolvedAt": None,
    }


def shape_of(path: str) -> Shape:
    op = next(o for o in build_api().operations if o.method == "GET" and o.path == path)
    assert op.shape is not None
    return op.shape


def per_call_us(fn: Callable[[], object], calls: int) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - started) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds; each row is its median")
    parser.add_argument("--calls", type=int, default=2000, help="calls per round")
    args = parser.parse_args()
    topics, proposals = shape_of("/api/pact/topics"), shape_of("/api/pact/{topicId}/proposals")
    cases: list[tuple[str, Shape, Any]] = [
        (
            f"topic list of {n}",
            topics,
            {"topics": [topic(i) for i in range(n)], "total": n, "limit": n, "offset": 0},
        )
        for n in (1, 50, 200)
    ]
    page = {
        "topicId": "t",
        "proposals": [proposal(i) for i in range(50)],
        "total": 50,
        "limit": 50,
        "offset": 0,
    }
    cases.append(("proposal page of 50", proposals, page))
    instances = [
        ("topic list of 50, a model instance", topics, TopicList.model_validate(cases[1][2])),
        ("proposal page of 50, a model instance", proposals, ProposalPage.model_validate(page)),
    ]
    print(f"{'body':<40} {'bytes':>8} {'json.dumps µs':>14} {'Shape.dump µs':>14} {'ratio':>6}")
    for name, shape, value in [*cases, *instances]:
        b, o = compare(shape, value, args.rounds, args.calls)
        print(f"{name:<40} {len(shape.dump(value)):>8} {b:>14.1f} {o:>14.1f} {o / b:>6.2f}")


def compare(shape: Shape, value: Any, rounds: int, calls: int) -> tuple[float, float]:
    """The median µs per call of json.dumps of the plain value and of the shape's dump of the value."""
    plain = value if isinstance(value, dict) else value.model_dump(mode="json")
    base, ours = [], []
    for _ in range(rounds):
        base.append(
            per_call_us(lambda: json.dumps(plain, separators=(",", ":"), default=str).encode(), calls)
        )
        ours.append(per_call_us(lambda: shape.dump(value), calls))
    return statistics.median(base), statistics.median(ours)


if __name__ == "__main__":
    main()
