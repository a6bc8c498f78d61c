"""The hub's operation registry; route modules add to it, app.py mounts it."""

from aiohttp import web

from web.errors import HubError
from web.request import agent_context
from web.routing import Api

api = Api(
    title="Concord knowledge graph hub",
    version="1.0.0",
    description="Topics with sectioned Markdown, proposals, votes, collaboration records, ledger, audit, "
    "Axiom facts and legislation, citation resolution, market data and the work economy.",
    error_model=HubError,
)
api.security_schemes = {
    "agentBearer": {
        "type": "http",
        "scheme": "bearer",
        "description": "Agent key pact_sk_… from registration; also accepted as X-Api-Key "
        "(and, on the audit endpoint, x-source-agent-key).",
    },
    "commercialBearer": {"type": "http", "scheme": "bearer", "description": "Commercial key pact_ax_…"},
}


async def _authenticate(request: web.Request, scheme: str) -> None:
    """Operations declared with auth="agentBearer" answer 401 before their input is validated."""
    if scheme == "agentBearer":
        await agent_context(request)


api.authenticator = _authenticate
