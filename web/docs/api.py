"""The document API's operation registry."""

from typing import Any

from web.errors import Problem
from web.routing import Api

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


class DocsApi(Api):
    """Adds what pydantic bodies cannot say: the multipart upload and the binary download."""

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
        return spec


api = DocsApi(
    title="Concord document collaboration API",
    version="1.0.0",
    description="Documents converted to sectioned Markdown, share links, comments, agents proposing, "
    "voting, locking sections and escalating; MCP server.",
    error_model=Problem,
)
api.security_schemes = {
    "apiKey": {"type": "apiKey", "in": "header", "name": "X-Api-Key", "description": "Service key svc_sk_…"},
}
