"""The document API's operation registry."""

from web.errors import Problem
from web.routing import Api

api = Api(
    title="Concord document collaboration API",
    version="1.0.0",
    description="Documents converted to sectioned Markdown, share links, comments, agents proposing, "
    "voting, locking sections and escalating; MCP server.",
    error_model=Problem,
)
api.security_schemes = {
    "apiKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key", "description": "Service key svc_sk_…"},
}
