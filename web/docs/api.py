"""The document API: the one place that lists its route modules, its security scheme and its guard."""

from typing import Any

from domain.consensus.policies import ApprovalPolicy
from domain.documents.library import MAX_TAGS
from web.docs import auth
from web.docs.agents import (
    agents,
    completions,
    human,
    intent_objections,
    invites,
    proposals,
    session_reads,
    withdrawals,
)
from web.docs.agents import comments as agent_comments
from web.docs.agents import sessions as pact_sessions
from web.docs.documents import comments
from web.docs.documents import library as documents
from web.docs.oauth import endpoints as oauth
from web.docs.oauth import pages as oauth_pages
from web.docs.people import sessions
from web.docs.sharing import links as sharing
from web.docs.sharing import pages as share_pages
from web.kernel import health, pact_profile
from web.kernel.errors import Problem
from web.kernel.routing import Api
from web.kernel.wire import APPROVAL_POLICY_TEXT, SELF_APPROVAL_TEXT

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
_TAG = r"[\w .:/+-]{0,64}"
_TAGS_PATTERN = rf"^{_TAG}(?:,{_TAG}){{0,{MAX_TAGS - 1}}}$"
UPLOAD_TYPES = ("text/markdown", "text/plain", "text/html", "application/pdf", DOCX)


class DocsApi(Api):
    """Adds what pydantic bodies cannot say: the multipart upload and the binary download."""

    def _document(self) -> dict[str, Any]:
        spec = super()._document()
        upload = {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file"],
                        "properties": {
                            "file": {"type": "string", "format": "binary", "minLength": 1},
                            "title": {"type": "string", "pattern": "^[^\\u0000]*$"},  # no NUL: 400
                            "tags": {
                                "type": "string",
                                "description": "Comma-separated tags: letters, digits, spaces, .:/+-_",
                                "pattern": _TAGS_PATTERN,
                            },
                            "approvalPolicy": {
                                "type": "string",
                                "enum": [p.value for p in ApprovalPolicy],
                                "default": ApprovalPolicy.CONCORD_DEFAULT.value,
                                "description": APPROVAL_POLICY_TEXT,
                            },
                            "allowSelfApproval": {
                                "type": "boolean",
                                "default": False,
                                "description": SELF_APPROVAL_TEXT,
                            },
                        },
                        # No other field is read; one whose name aiohttp cannot parse is a 400.
                        "additionalProperties": False,
                    },
                    # The file's type is read from its bytes: these are the formats converted (any other,
                    # or an empty or corrupt file, is refused with 415 or 422).
                    "encoding": {"file": {"contentType": ", ".join(UPLOAD_TYPES)}},
                }
            },
        }
        for path, item in spec["paths"].items():
            if path == "/api/documents" and "post" in item:
                item["post"]["requestBody"] = upload
            if path.endswith("/download") and "get" in item:
                item["get"]["responses"]["200"]["content"] = {
                    DOCX: {"schema": {"type": "string", "format": "binary"}}
                }
                item["get"]["responses"]["200"]["headers"] = {
                    "X-Characters-Replaced": {
                        "description": "Characters of the text a Word file cannot hold (control characters, "
                        "U+FFFE, U+FFFF), written as visible ones; absent when there were none",
                        "schema": {"type": "integer", "minimum": 1},
                    }
                }
        oauth_pages.document(spec)
        return spec


ROUTE_MODULES = (
    health,
    pact_profile,
    oauth,
    oauth_pages,
    sessions,
    documents,
    sharing,
    share_pages,
    comments,
    agents,
    session_reads,
    completions,
    agent_comments,
    invites,
    proposals,
    withdrawals,
    intent_objections,
    human,
    pact_sessions,
)


def build_api() -> Api:
    return DocsApi(
        title="Concord document collaboration API",
        version="1.0.0",
        description="Documents converted to sectioned Markdown, share links, comments, agents proposing, "
        "voting, locking sections and escalating; MCP server.",
        error_model=Problem,
        error_content_type="application/problem+json",
        tables=[module.routes for module in ROUTE_MODULES],
        security_schemes={
            "apiKey": {
                "type": "apiKey",
                "in": "header",
                "name": "X-Api-Key",
                "description": "Service key svc_sk_…; also accepted as Authorization: Bearer, as is a "
                "person's access token (JWT) from POST /api/auth/login or from the OAuth token endpoint "
                "(POST /oauth/token). A 401 carries WWW-Authenticate: Bearer resource_metadata=….",
            },
        },
        guards=auth.GUARDS,
    )
