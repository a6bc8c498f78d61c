"""The hub's operation registry; route modules add to it, app.py mounts it."""

from web.errors import HubError
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
        "description": "Agent key pact_sk_… from registration",
    },
    "commercialBearer": {"type": "http", "scheme": "bearer", "description": "Commercial key pact_ax_…"},
}
