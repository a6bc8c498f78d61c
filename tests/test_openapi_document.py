"""Each app's OpenAPI document is built once per process and shared by every app built from the same
declarations (issue 32: building it per app was most of each test's set-up); a caller of `openapi()` gets
a copy of its own, and other declarations get a document of their own."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from web.docs import api as docs_api
from web.hub import api as hub_api
from web.kernel.routing import Api, Routes


async def _fake(_request: web.Request) -> web.Response:  # never called: the route is only declared
    raise AssertionError


async def test_apps_built_twice_serve_one_document(aiohttp_client: Any, runtime: Any) -> None:
    from web.app import create_docs_app, create_hub_app

    for create, build in ((create_hub_app, hub_api.build_api), (create_docs_app, docs_api.build_api)):
        first, second = await aiohttp_client(create(runtime)), await aiohttp_client(create(runtime))
        served = [await (await client.get("/openapi.json")).json() for client in (first, second)]
        assert served[0] == served[1] == build().document()
        assert build().document() is build().document()
        for client in (first, second):  # the pages rendered from it, once, say the same on both apps
            reference = await client.get("/docs/plain")
            assert reference.status == 200
            assert served[0]["info"]["title"] in await reference.text()


def test_a_copy_is_the_callers_and_the_documents_addition_is_kept() -> None:
    api = docs_api.build_api()
    copy = api.openapi()
    assert copy == api.document()
    copy["paths"].clear()
    copy["info"]["title"] = "changed"
    again = docs_api.build_api().openapi()
    assert again["paths"]
    assert again["info"]["title"] != "changed"
    # What the documents app adds to the declarations (the multipart upload) is in the shared document.
    assert any("multipart/form-data" in str(methods) for methods in again["paths"].values())


def test_other_declarations_get_a_document_of_their_own() -> None:
    base = hub_api.build_api()
    extra = Routes()
    extra.route("GET", "/api/pact/_probe/added", summary="added later", tags=["Test"])(_fake)
    tables = [module.routes for module in hub_api.ROUTE_MODULES] + [extra]
    added = Api(
        base.title,
        base.version,
        base.description,
        base.error_model,
        tables=tables,
        security_schemes=base.security_schemes,
        guards=base.guards,
    )
    assert "/api/pact/_probe/added" in added.document()["paths"]
    assert "/api/pact/_probe/added" not in base.document()["paths"]
    assert added.document() is not base.document()
