"""The hub's API: the one place that lists its route modules, security schemes and guards."""

from __future__ import annotations

from web.hub import auth
from web.hub.agents import audit, registration, wallet
from web.hub.axiom import facts, keys, legislation, resolve
from web.hub.market import fuel, products, quotes
from web.hub.review import activity as review_activity
from web.hub.review import escalations as review_escalations
from web.hub.review import proposals as review_proposals
from web.hub.topics import (
    collaboration,
    human,
    intent_objections,
    overview,
    proposals,
    session,
    sessions,
    topics,
    voting,
    withdrawals,
)
from web.hub.topics import comments as topic_comments
from web.hub.topics import invites as topic_invites
from web.hub.topics import locks as topic_locks
from web.hub.work import review, work
from web.kernel import health, pact_profile, wellknown
from web.kernel.errors import HubError
from web.kernel.routing import Api

ROUTE_MODULES = (
    health,
    wellknown,
    pact_profile,
    registration,
    wallet,
    audit,
    overview,
    topics,
    topic_invites,
    proposals,
    voting,
    collaboration,
    topic_locks,
    withdrawals,
    intent_objections,
    session,
    topic_comments,
    human,
    sessions,
    keys,
    facts,
    legislation,
    resolve,
    products,
    fuel,
    quotes,
    work,
    review,
    review_activity,
    review_escalations,
    review_proposals,
)

SECURITY_SCHEMES = {
    "agentBearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "Agent key pact_sk_… from registration; also accepted as X-Api-Key "
        "(and, on the audit endpoint, x-source-agent-key).",
    },
    "commercialBearer": {"type": "http", "scheme": "bearer", "description": "Commercial key pact_ax_…"},
    "staffBearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "Operator-issued staff key staff_sk_…",
    },
}


def build_api() -> Api:
    return Api(
        title="Concord knowledge graph hub",
        version="1.0.0",
        description="Topics with sectioned Markdown, proposals, votes, collaboration records, ledger, audit, "
        "Axiom facts and legislation, citation resolution, market data and the work economy.",
        error_model=HubError,
        tables=[module.routes for module in ROUTE_MODULES],
        security_schemes=SECURITY_SCHEMES,
        guards=auth.GUARDS,
    )
