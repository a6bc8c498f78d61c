"""The document API: the one place that lists its route modules, its security scheme and its guard."""

from typing import Any

from web.docs import agents, auth, comments, documents, proposals, sessions, share_pages, sharing
from web.kernel import health, wellknown
from web.kernel.errors import Problem
from web.kernel.routing import Api

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


class DocsApi(Api):
    """Adds what pydantic bodies cannot say: the multipart upload, the binary download and the
    problem+json media type of the error bodies."""

    def openapi(self) -> dict[str, Any]:
        spec = super().openapi()
        upload = {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "required": ["file"],
                        "properties": {
                            "file": {"type": "string", "format": "binary"},
                            "title": {"type": "string"},
                            "tags": {"type": "string", "description": "Comma-separated tags."},
                        },
                    }
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
            for operation in item.values():
                for status, response in operation["responses"].items():
                    if int(status) >= 400:
                        response["content"] = {
                            "application/problem+json": response["content"]["application/json"]
                        }
        return spec


ROUTE_MODULES = (health, wellknown, sessions, documents, sharing, share_pages, comments, agents, proposals)


def build_api() -> Api:
    return DocsApi(
        title="Concord document collaboration API",
        version="1.0.0",
        description="Documents converted to sectioned Markdown, share links, comments, agents proposing, "
        "voting, locking sections and escalating; MCP server.",
        error_model=Problem,
        tables=[module.routes for module in ROUTE_MODULES],
        security_schemes={
            "apiKey": {
                "type": "apiKey",
                "in": "header",
                "name": "X-Api-Key",
                "description": "Service key svc_sk_…; also accepted as Authorization: Bearer, as is a "
                "person's access token (JWT) from POST /api/auth/login.",
            },
        },
        guards=auth.GUARDS,
    )
