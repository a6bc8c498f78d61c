"""OAuth 2.1 for MCP clients on the document API (the MCP authorization spec): discovery (RFC 9728, RFC
8414), the Bearer challenge on 401/403, dynamic client registration (RFC 7591), the authorization code
with PKCE S256 through the sign-in and consent page, the token endpoint (codes once, refresh tokens
rotated), and /mcp acting for the person with the scopes granted. The official MCP SDK client drives the
whole flow itself (OAuthClientProvider), its redirect handler following the consent page over HTTP."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import httpx2
import jwt
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests.documents_support import make_key
from tests.people.conftest import PASSWORD
from tests.people.oauth_support import (
    REDIRECT,
    authorize_url,
    code_for,
    consent,
    exchange,
    hidden_fields,
    offered_scopes,
    pkce,
    query_of,
    register,
    token,
)

READ_ONLY = "documents:read,tap:read"


def base_of(docs: Any) -> str:
    return str(docs.make_url("")).rstrip("/")


async def signed_in_client(docs: Any, create_user: Any, scopes: str | None = None) -> dict[str, Any]:
    """A person, a registered public client, and the token response of a full authorization."""
    await create_user() if scopes is None else await create_user(scopes=scopes)
    client = await register(docs)
    verifier, challenge = pkce()
    code = await code_for(docs, client, challenge)
    resp = await exchange(docs, client, code, verifier)
    assert resp.status == 200, await resp.text()
    return {"client": client, "tokens": await resp.json()}


# ---- discovery and the challenge -------------------------------------------------------------------


async def test_discovery_names_the_mcp_resource_and_the_authorization_server(docs, settings, monkeypatch):
    base = base_of(docs)
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        resp = await docs.get(path)
        assert resp.status == 200
        prm = await resp.json()
        assert prm["resource"] == f"{base}/mcp"
        assert prm["authorization_servers"] == [base]
        assert prm["bearer_methods_supported"] == ["header"]
        assert "tap:write" in prm["scopes_supported"]
    meta = await (await docs.get("/.well-known/oauth-authorization-server")).json()
    assert meta["issuer"] == base
    assert meta["authorization_endpoint"] == f"{base}/oauth/authorize"
    assert meta["token_endpoint"] == f"{base}/oauth/token"
    assert meta["registration_endpoint"] == f"{base}/oauth/register"
    assert meta["response_types_supported"] == ["code"]
    assert meta["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert "none" in meta["token_endpoint_auth_methods_supported"]

    # Behind a proxy the configured public address is the one named.
    monkeypatch.setattr(settings, "public_url", "https://docs.example.org/")
    prm = await (await docs.get("/.well-known/oauth-protected-resource/mcp")).json()
    assert prm["resource"] == "https://docs.example.org/mcp"
    assert prm["authorization_servers"] == ["https://docs.example.org"]


async def test_the_hub_says_oauth_is_on_the_document_api(hub):
    for path in ("/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource"):
        resp = await hub.get(path)
        assert resp.status == 404
        body = await resp.json()
        assert body["error"] == "oauth_not_on_this_app"
        assert "document API" in body["detail"]


async def test_a_401_names_the_resource_metadata_and_a_403_the_missing_scope(docs, runtime):
    base = base_of(docs)
    mcp_meta = f'resource_metadata="{base}/.well-known/oauth-protected-resource/mcp"'
    resp = await docs.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert resp.status == 401
    assert resp.headers["WWW-Authenticate"] == f"Bearer {mcp_meta}"

    resp = await docs.post("/mcp", json={}, headers={"Authorization": "Bearer eyJx.eyJ4.c2ln"})
    assert resp.status == 401
    assert resp.headers["WWW-Authenticate"] == f'Bearer error="invalid_token", {mcp_meta}'

    rest_meta = f'resource_metadata="{base}/.well-known/oauth-protected-resource"'
    resp = await docs.get("/api/documents")
    assert resp.status == 401
    assert resp.headers["WWW-Authenticate"] == f"Bearer {rest_meta}"

    key = await make_key(runtime, scopes="comments:read")
    resp = await docs.get("/api/documents", headers=key["headers"])
    assert resp.status == 403
    assert resp.headers["WWW-Authenticate"] == (
        f'Bearer error="insufficient_scope", scope="documents:read", {rest_meta}'
    )
    # Anonymous operations never challenge.
    resp = await docs.post("/api/auth/login", json={"email": "x@example.org", "password": "nope"})
    assert resp.status == 401
    assert "WWW-Authenticate" not in resp.headers


# ---- registration -----------------------------------------------------------------------------------


async def test_registration_of_public_and_confidential_clients(docs, runtime):
    public = await register(
        docs, redirect_uris=["http://localhost:3334/cb", "https://app.example/cb?x=1"], scope="tap:read"
    )
    assert public["client_id"].startswith("cid_")
    assert "client_secret" not in public
    assert public["token_endpoint_auth_method"] == "none"
    assert public["grant_types"] == ["authorization_code", "refresh_token"]
    assert public["scope"] == "tap:read"

    resp = await docs.post("/oauth/register", json={"redirect_uris": ["https://app.example/cb"]})
    assert resp.status == 201
    secret_client = await resp.json()
    assert secret_client["token_endpoint_auth_method"] == "client_secret_basic"  # RFC 7591's default
    assert secret_client["client_secret"].startswith("ccs_")
    assert resp.headers["Cache-Control"].startswith("no-store")
    from domain.people.models import OAuthClient

    async with runtime.db.read() as session:
        row = await session.get(OAuthClient, secret_client["client_id"])
    assert row is not None
    assert row.secret_hash
    assert secret_client["client_secret"] not in row.secret_hash


async def test_a_loopback_redirect_uri_may_name_another_port(docs, create_user):
    """RFC 8252 §7.3: a local app listens on the port the system gives it when the sign-in starts, so a
    loopback redirect URI (http to localhost, 127.0.0.1 or [::1]) matches whatever its port; everything
    else (scheme, host, path, query) exactly. The code is bound to the URI the request named."""
    await create_user()
    client = await register(
        docs,
        redirect_uris=["http://127.0.0.1/callback", "http://localhost:3334/cb", "http://[::1]:8000/cb"],
    )
    for asked in ("http://127.0.0.1:53682/callback", "http://localhost:49152/cb", "http://[::1]/cb"):
        verifier, challenge = pkce()
        resp = await consent(docs, client, challenge, redirect_uri=asked)
        assert resp.status == 303, await resp.text()
        assert resp.headers["Location"].startswith(asked + "?")
        code = query_of(resp.headers["Location"])["code"]
        wrong = await exchange(docs, client, code, verifier)  # the registered URI: not the request's
        assert (await wrong.json())["error"] == "invalid_grant"
        verifier, challenge = pkce()
        resp = await consent(docs, client, challenge, redirect_uri=asked)
        code = query_of(resp.headers["Location"])["code"]
        resp = await exchange(docs, {**client, "redirect_uris": [asked]}, code, verifier)
        assert resp.status == 200, await resp.text()
    _, challenge = pkce()
    for asked in (
        "http://127.0.0.1:5000/other",  # another path
        "http://localhost:5000/callback",  # another host than the one registered with that path
        "http://127.0.0.2:5000/callback",
        "https://127.0.0.1:5000/callback",  # another scheme
        "http://127.0.0.1:5000/callback?x=1",  # another query
        "http://localhost:3334/cb/",
    ):
        resp = await docs.get(authorize_url(client, challenge, redirect_uri=asked), allow_redirects=False)
        assert resp.status == 400, asked
        assert "Location" not in resp.headers
    https = await register(docs, redirect_uris=["https://app.example:8443/cb"])
    resp = await docs.get(
        authorize_url(https, challenge, redirect_uri="https://app.example:9443/cb"), allow_redirects=False
    )
    assert resp.status == 400  # not loopback: the port is part of the match


async def test_a_redirect_uri_registered_before_the_loopback_rule_is_not_used(docs, create_user, runtime):
    from domain.kernel.clock import utcnow
    from domain.people.models import OAuthClient

    async with runtime.db.transaction() as session:
        session.add(
            OAuthClient(
                id="cid_old_loopback",
                redirect_uris=["http://127.0.0.2/cb"],
                grant_types=["authorization_code", "refresh_token"],
                token_endpoint_auth_method="none",
                created_at=utcnow(),
            )
        )
    _, challenge = pkce()
    old = {"client_id": "cid_old_loopback", "redirect_uris": ["http://127.0.0.2/cb"]}
    for url in (authorize_url(old, challenge), authorize_url(old, challenge, redirect_uri=None)):  # type: ignore[arg-type]
        resp = await docs.get(url, allow_redirects=False)
        assert resp.status == 400, await resp.text()
        assert "did not register" in await resp.text()


async def test_bad_registrations_get_rfc_7591_errors(docs, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 100)  # every attempt counts
    bad = [
        ({}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://app.example/cb"]}, "invalid_redirect_uri"),  # http, not loopback
        # Loopback as documented: localhost, 127.0.0.1 and [::1], no other spelling of the loopback range.
        ({"redirect_uris": ["http://127.0.0.2/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://127.1/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://2130706433/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://[::ffff:127.0.0.1]/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://[0:0:0:0:0:0:0:1]/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://localhost.localdomain/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://localhost./cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://app.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["/relative"]}, "invalid_redirect_uri"),
        ({"redirect_uris": "https://app.example/cb"}, "invalid_client_metadata"),
        ({"redirect_uris": [REDIRECT], "grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({"redirect_uris": [REDIRECT], "grant_types": ["refresh_token"]}, "invalid_client_metadata"),
        ({"redirect_uris": [REDIRECT], "response_types": ["token"]}, "invalid_client_metadata"),
        (
            {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "private_key_jwt"},
            "invalid_client_metadata",
        ),
        ({"redirect_uris": [REDIRECT], "scope": "tap:read admin"}, "invalid_client_metadata"),
        ({"redirect_uris": [REDIRECT], "client_name": 5}, "invalid_client_metadata"),
    ]
    for body, error in bad:
        resp = await docs.post("/oauth/register", json=body)
        assert resp.status == 400, body
        found = await resp.json()
        assert found["error"] == error, (body, found)
        assert found["error_description"]
    resp = await docs.post("/oauth/register", data=b"not json", headers={"Content-Type": "application/json"})
    assert resp.status == 400
    assert (await resp.json())["error"] == "invalid_client_metadata"


async def test_registration_is_rate_limited(docs, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 2)
    for _ in range(2):
        await register(docs)
    resp = await docs.post("/oauth/register", json={"redirect_uris": [REDIRECT]})
    assert resp.status == 429
    assert (await resp.json())["error"] == "slow_down"
    assert int(resp.headers["Retry-After"]) >= 1


# ---- the full flow, and the MCP SDK driving it ------------------------------------------------------


async def test_authorization_code_flow_gives_a_token_for_the_mcp_resource(docs, create_user, runtime):
    from domain.people import user_sessions

    found = await signed_in_client(docs, create_user)
    tokens = found["tokens"]
    assert tokens["token_type"] == "Bearer"
    assert tokens["refresh_token"].startswith("crt_")
    assert tokens["scope"].split() == [
        "documents:read",
        "documents:write",
        "comments:read",
        "comments:write",
        "tap:read",
        "tap:write",
    ]
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["aud"] == f"{base_of(docs)}/mcp"
    # The REST API takes it too (same server, same scopes), like a sign-in's token.
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    assert (await docs.get("/api/documents", headers=headers)).status == 200
    # A token for another server's resource is refused, however well signed.
    secret = user_sessions.signing_secret(runtime.settings)
    forged = jwt.encode({**claims, "aud": "https://elsewhere.example/mcp"}, secret, algorithm="HS256")
    resp = await docs.get("/api/documents", headers={"Authorization": f"Bearer {forged}"})
    assert resp.status == 401
    assert (await resp.json())["code"] == "invalid_token"


async def test_the_mcp_sdk_client_signs_in_through_oauth_and_calls_tools(docs, create_user, runtime):
    await create_user()
    url = str(docs.make_url("/mcp"))
    base = base_of(docs)
    landed: asyncio.Future[AuthorizationCodeResult] = asyncio.get_running_loop().create_future()

    class Memory:
        def __init__(self) -> None:
            self.tokens: OAuthToken | None = None
            self.client: OAuthClientInformationFull | None = None

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.client

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            self.client = client_info

    async def follow_consent_page(authorization_url: str) -> None:
        """What the person does in a browser: open the page, sign in, allow."""
        async with httpx2.AsyncClient(follow_redirects=False) as browser:
            page = await browser.get(authorization_url)
            assert page.status_code == 200, page.text
            assert "SDK Desk Client" in page.text
            form = {**hidden_fields(page.text), "email": "ada@example.org", "password": PASSWORD}
            resp = await browser.post(f"{base}/oauth/authorize", data={**form, "decision": "approve"})
            assert resp.status_code == 303, resp.text
            back = query_of(resp.headers["location"])
            landed.set_result(
                AuthorizationCodeResult(code=back["code"], state=back["state"], iss=back["iss"])
            )

    async def callback() -> AuthorizationCodeResult:
        return await landed

    storage = Memory()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata.model_validate(
            {
                "client_name": "SDK Desk Client",
                "redirect_uris": [REDIRECT],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": "none",
            }
        ),
        storage=storage,
        redirect_handler=follow_consent_page,
        callback_handler=callback,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert "pact_propose" in names
            result = await client.call_tool("pact_list_documents", {})
            assert not result.is_error, result.content
    assert storage.client is not None
    assert storage.client.client_id.startswith("cid_")
    assert storage.tokens is not None
    assert "tap:write" in (storage.tokens.scope or "")


async def test_a_person_without_write_scope_gets_a_read_only_token(docs, create_user, runtime):
    found = await signed_in_client(docs, create_user, scopes=READ_ONLY)
    tokens = found["tokens"]
    assert tokens["scope"] == "documents:read tap:read"
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
        async with Client(streamable_http_client(str(docs.make_url("/mcp")), http_client=http)) as client:
            assert not (await client.call_tool("pact_list_documents", {})).is_error
            result = await client.call_tool(
                "pact_propose",
                {"documentId": "doc-x", "sectionId": "sec:a", "content": "New.", "summary": "Try."},
            )
            assert result.is_error
            assert json.loads(result.content[0].text)["error"] == "insufficient_scope"  # type: ignore[union-attr]
    resp = await docs.post("/api/documents", headers=headers, data={"title": "x"})
    assert resp.status == 403
    assert 'error="insufficient_scope", scope="documents:write"' in resp.headers["WWW-Authenticate"]


async def test_scopes_asked_are_narrowed_to_those_the_person_holds(docs, create_user):
    await create_user(scopes=READ_ONLY)
    client = await register(docs)
    verifier, challenge = pkce()
    code = await code_for(docs, client, challenge, scope="tap:read tap:write")
    tokens = await (await exchange(docs, client, code, verifier)).json()
    assert tokens["scope"] == "tap:read"
    # Asking only for what the person lacks gets nothing: access_denied back at the client.
    resp = await consent(docs, client, challenge, scope="tap:write")
    assert resp.status == 303
    assert query_of(resp.headers["Location"])["error"] == "access_denied"


async def test_the_person_unticks_scopes_on_the_consent_page(docs, create_user):
    await create_user()
    client = await register(docs)
    verifier, challenge = pkce()
    page = await docs.get(authorize_url(client, challenge, scope="documents:read documents:write tap:read"))
    text = await page.text()
    # Every scope asked is offered, ticked: posting the page as it stands grants all of them.
    assert offered_scopes(text) == ["documents:read", "documents:write", "tap:read"]
    assert hidden_fields(text)["grant"] == offered_scopes(text)
    code = await code_for(
        docs, client, challenge, scope="documents:read documents:write tap:read", grant=["documents:read"]
    )
    resp = await exchange(docs, client, code, verifier)
    tokens = await resp.json()
    assert tokens["scope"] == "documents:read"  # RFC 6749 §5.1: what was granted, narrower than asked
    claims = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert claims["scopes"] == ["documents:read"]
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}
    assert (await docs.get("/api/documents", headers=headers)).status == 200
    resp = await docs.post("/api/documents", headers=headers, data={"title": "x"})
    assert resp.status == 403
    assert 'scope="documents:write"' in resp.headers["WWW-Authenticate"]


async def test_unticking_every_scope_denies_and_a_forged_scope_is_refused(docs, create_user):
    await create_user(scopes=READ_ONLY)
    client = await register(docs)
    _, challenge = pkce()
    resp = await consent(docs, client, challenge, scope="tap:read", grant=[])
    assert resp.status == 303
    back = query_of(resp.headers["Location"])
    assert back["error"] == "access_denied"
    assert back["state"] == "state-123"
    # A scope that was not offered (the client did not ask it), or no scope at all: the page again, 400.
    for forged in (["tap:read", "tap:write"], ["tap:read", "documents:read"], ["everything"]):
        resp = await consent(docs, client, challenge, scope="tap:read", grant=forged)
        assert resp.status == 400, forged
        assert "Location" not in resp.headers
        assert "not offered to this application" in await resp.text()
    # Ticked, but not held by the person: nothing to grant, access_denied.
    resp = await consent(docs, client, challenge, scope="tap:read tap:write", grant=["tap:write"])
    assert resp.status == 303
    assert query_of(resp.headers["Location"])["error"] == "access_denied"


async def test_a_refresh_with_scope_narrows_the_new_access_token(docs, create_user):
    await create_user()
    client = await register(docs)
    cid = client["client_id"]
    verifier, challenge = pkce()
    code = await code_for(docs, client, challenge, grant=["documents:read", "documents:write", "tap:read"])
    tokens = await (await exchange(docs, client, code, verifier)).json()
    assert tokens["scope"] == "documents:read documents:write tap:read"
    refresh_token = tokens["refresh_token"]

    async def refresh(**form: str) -> Any:
        return await token(
            docs, grant_type="refresh_token", refresh_token=refresh_token, client_id=cid, **form
        )

    # Outside the grant (unticked on the consent page), or unknown: invalid_scope, the token stays usable.
    for scope, words in (
        ("documents:read tap:write", "not granted to this client: tap:write"),
        ("nonsense", "unknown scope"),
    ):
        resp = await refresh(scope=scope)
        assert resp.status == 400
        body = await resp.json()
        assert body["error"] == "invalid_scope"
        assert words in body["error_description"]
    resp = await refresh(scope="tap:read documents:read")
    assert resp.status == 200, await resp.text()
    narrow = await resp.json()
    assert narrow["scope"] == "documents:read tap:read"
    claims = jwt.decode(narrow["access_token"], options={"verify_signature": False})
    assert claims["scopes"] == ["documents:read", "tap:read"]
    headers = {"Authorization": f"Bearer {narrow['access_token']}"}
    assert (await docs.get("/api/documents", headers=headers)).status == 200
    assert (await docs.post("/api/documents", headers=headers, data={"title": "x"})).status == 403
    # Omitted: the whole grant again (the narrowing was for that access token only).
    refresh_token = narrow["refresh_token"]
    resp = await refresh()
    assert (await resp.json())["scope"] == "documents:read documents:write tap:read"


# ---- refusals at the token endpoint ----------------------------------------------------------------


async def test_token_refusals(docs, create_user, clock):
    await create_user()
    client = await register(docs)
    verifier, challenge = pkce()

    async def refused(resp: Any, status: int, error: str) -> None:
        body = await resp.json()
        assert resp.status == status, body
        assert body["error"] == error, body
        assert resp.headers["Cache-Control"].startswith("no-store")

    code = await code_for(docs, client, challenge)
    await refused(await exchange(docs, client, code, pkce()[0]), 400, "invalid_grant")  # wrong verifier
    await refused(
        await exchange(docs, client, code, verifier, redirect_uri="http://127.0.0.1:9/other"),
        400,
        "invalid_grant",
    )
    await refused(
        await exchange(docs, client, code, verifier, resource="https://elsewhere.example/mcp"),
        400,
        "invalid_target",
    )
    await refused(
        await exchange(docs, client, code, verifier, client_id="cid_unknown"), 401, "invalid_client"
    )
    other = await register(docs)
    await refused(await exchange(docs, other, code, verifier), 400, "invalid_grant")  # another client's code
    await refused(await exchange(docs, client, code, "short"), 400, "invalid_request")
    await refused(
        await token(docs, grant_type="password", client_id=client["client_id"]), 400, "unsupported_grant_type"
    )
    await refused(
        await token(docs, grant_type="authorization_code", client_id=client["client_id"]),
        400,
        "invalid_request",
    )
    await refused(await token(docs, grant_type="authorization_code", code=code), 401, "invalid_client")
    resp = await docs.post("/oauth/token", json={"grant_type": "authorization_code"})
    await refused(resp, 400, "invalid_request")  # not form-encoded

    # The code still works after those refusals: once.
    first = await exchange(docs, client, code, verifier, resource=f"{base_of(docs)}/mcp")
    assert first.status == 200, await first.text()
    issued = await first.json()
    await refused(await exchange(docs, client, code, verifier), 400, "invalid_grant")
    # The reuse revoked what the first exchange gave (someone else may hold the code).
    headers = {"Authorization": f"Bearer {issued['access_token']}"}
    assert (await docs.get("/api/documents", headers=headers)).status == 401

    # A code is short-lived: past its minute it is refused.
    code = await code_for(docs, client, challenge)
    clock.advance(timedelta(seconds=61))
    resp = await exchange(docs, client, code, verifier)
    await refused(resp, 400, "invalid_grant")
    assert "expired" in (await resp.json())["error_description"]


async def test_a_refresh_grant_retried_in_parallel_gets_the_same_tokens(docs, create_user):
    found = await signed_in_client(docs, create_user)
    cid, tokens = found["client"]["client_id"], found["tokens"]

    async def again() -> Any:
        resp = await token(
            docs, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=cid
        )
        return resp.status, await resp.json()

    answers = await asyncio.gather(again(), again(), again())
    assert [status for status, _ in answers] == [200] * 3, answers
    assert answers[0][1] == answers[1][1] == answers[2][1]
    new = answers[0][1]
    assert new["refresh_token"] != tokens["refresh_token"]
    headers = {"Authorization": f"Bearer {new['access_token']}"}
    assert (await docs.get("/api/documents", headers=headers)).status == 200
    resp = await token(docs, grant_type="refresh_token", refresh_token=new["refresh_token"], client_id=cid)
    assert resp.status == 200, await resp.text()


async def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_grant(docs, create_user, clock):
    found = await signed_in_client(docs, create_user)
    client, tokens = found["client"], found["tokens"]
    cid = client["client_id"]
    resp = await token(docs, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=cid)
    assert resp.status == 200, await resp.text()
    second = await resp.json()
    assert second["refresh_token"] != tokens["refresh_token"]
    assert second["scope"] == tokens["scope"]
    # The person's own refresh endpoint does not take a client's refresh token, nor another client.
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": second["refresh_token"]})
    assert resp.status == 401
    other = await register(docs)
    resp = await token(
        docs, grant_type="refresh_token", refresh_token=second["refresh_token"], client_id=other["client_id"]
    )
    assert (await resp.json())["error"] == "invalid_grant"
    # The first refresh token again, after the grace for retries: the whole grant ends.
    clock.advance(timedelta(seconds=6))
    resp = await token(docs, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=cid)
    assert resp.status == 400
    assert (await resp.json())["error"] == "invalid_grant"
    headers = {"Authorization": f"Bearer {second['access_token']}"}
    assert (await docs.get("/api/documents", headers=headers)).status == 401
    resp = await token(docs, grant_type="refresh_token", refresh_token=second["refresh_token"], client_id=cid)
    assert (await resp.json())["error"] == "invalid_grant"


async def test_a_confidential_client_authenticates_with_its_secret(docs, create_user):
    await create_user()
    resp = await docs.post("/oauth/register", json={"redirect_uris": [REDIRECT], "client_name": "Basic"})
    client = await resp.json()
    verifier, challenge = pkce()
    code = await code_for(docs, client, challenge)
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
    }
    import base64

    wrong = base64.b64encode(f"{client['client_id']}:ccs_wrong".encode()).decode()
    resp = await docs.post("/oauth/token", data=form, headers={"Authorization": f"Basic {wrong}"})
    assert resp.status == 401
    assert (await resp.json())["error"] == "invalid_client"
    resp = await docs.post("/oauth/token", data={**form, "client_id": client["client_id"]})
    assert resp.status == 401  # no secret at all
    right = base64.b64encode(f"{client['client_id']}:{client['client_secret']}".encode()).decode()
    resp = await docs.post("/oauth/token", data=form, headers={"Authorization": f"Basic {right}"})
    assert resp.status == 200, await resp.text()


# ---- refusals at the authorization endpoint --------------------------------------------------------


async def test_authorization_refusals_that_cannot_go_back_are_pages(docs, create_user):
    client = await register(docs)
    _, challenge = pkce()
    for url in (
        authorize_url({**client, "client_id": "cid_nobody"}, challenge),
        authorize_url(client, challenge, redirect_uri="https://evil.example/cb"),
        authorize_url(client, challenge, redirect_uri=REDIRECT + "/"),  # exact match only
    ):
        resp = await docs.get(url, allow_redirects=False)
        assert resp.status == 400
        assert "Location" not in resp.headers
        assert resp.content_type == "text/html"
        assert "cannot go on" in await resp.text()


async def test_refusals_of_the_request_are_pages_never_redirects(docs, create_user):
    """RFC 9700 §4.11.2: anyone can register a client with their own https redirect URI, so a refusal sent
    there would make this server an open redirector. Until the request is known good, every refusal is a
    page (escaped, in the OAuth pages' layout), whoever registered the URI; the page names the error."""
    attacker = await register(docs, redirect_uris=["https://attacker.example/landing"])
    client = await register(docs)
    _, challenge = pkce()
    cases = [
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge": "too-short"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"response_type": None}, "invalid_request"),
        ({"scope": "tap:read <script>alert(1)</script>"}, "invalid_scope"),
        ({"resource": "https://elsewhere.example/mcp"}, "invalid_target"),
    ]
    for registered in (attacker, client):
        for params, error in cases:
            url = authorize_url(registered, challenge, **params)  # type: ignore[arg-type]
            for resp in (
                await docs.get(url, allow_redirects=False),
                await docs.post(  # the consent form, forged with the same request
                    "/oauth/authorize",
                    data={**query_of(url), "decision": "approve"},
                    allow_redirects=False,
                ),
            ):
                text = await resp.text()
                assert resp.status == 400, (params, text)
                assert "Location" not in resp.headers
                assert resp.content_type == "text/html"
                assert "cannot go on" in text
                assert error in text, (params, text)
                assert "<script>alert" not in text
                assert 'class="error" role="alert"' in text  # the OAuth pages' own layout
                assert "no-store" in resp.headers["Cache-Control"]
    page = await (await docs.get(authorize_url(client, challenge, scope="tap:read <b>x</b>"))).text()
    assert "&lt;b&gt;x&lt;/b&gt;" in page


async def test_a_good_request_still_goes_back_with_the_persons_refusal(docs, create_user):
    """Once the request is known good and the person decided, her refusal goes back to the client."""
    await create_user()
    attacker = await register(docs, redirect_uris=["https://attacker.example/landing"])
    _, challenge = pkce()
    resp = await consent(docs, attacker, challenge, decision="deny")
    assert resp.status == 303
    assert resp.headers["Location"].startswith("https://attacker.example/landing?")
    assert query_of(resp.headers["Location"])["error"] == "access_denied"


async def test_the_consent_form_denies_checks_credentials_and_csrf(docs, create_user):
    await create_user()
    client = await register(docs)
    _, challenge = pkce()
    resp = await consent(docs, client, challenge, decision="deny", password="")
    assert resp.status == 303
    assert query_of(resp.headers["Location"])["error"] == "access_denied"

    resp = await consent(docs, client, challenge, password="wrong password")
    assert resp.status == 401
    page = await resp.text()
    assert "Wrong email or password" in page
    assert 'value="ada@example.org"' in page  # the address stays filled in

    page = await docs.get(authorize_url(client, challenge))
    fields = hidden_fields(await page.text())
    form = {
        **fields,
        "csrf": "forged",
        "email": "ada@example.org",
        "password": PASSWORD,
        "decision": "approve",
    }
    resp = await docs.post("/oauth/authorize", data=form, allow_redirects=False)
    assert resp.status == 403
    assert "stale" in await resp.text()
    # A tampered redirect URI in the form is checked again, as on the page.
    form = {
        **fields,
        "redirect_uri": "https://evil.example/cb",
        "email": "ada@example.org",
        "password": PASSWORD,
        "decision": "approve",
    }
    resp = await docs.post("/oauth/authorize", data=form, allow_redirects=False)
    assert resp.status == 400
    assert "Location" not in resp.headers


async def test_api_keys_keep_working_on_mcp(docs, runtime):
    key = await make_key(runtime)
    for headers in (key["headers"], {"Authorization": f"Bearer {key['apiKey']}"}):
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=60)) as http:
            async with Client(streamable_http_client(str(docs.make_url("/mcp")), http_client=http)) as client:
                assert not (await client.call_tool("pact_list_documents", {})).is_error


async def test_expired_codes_are_purged_after_the_retention_period(docs, create_user, runtime, clock):
    from domain import wiring
    from domain.kernel import sweeps

    item = next(s for s in wiring.SWEEPS if s.name == "people.purge_user_sessions")
    await create_user()
    client = await register(docs)
    _, challenge = pkce()
    await code_for(docs, client, challenge)  # never exchanged
    assert await sweeps.run(runtime.db, item, "test") == 0
    clock.advance(timedelta(days=8))
    assert await sweeps.run(runtime.db, item, "test") == 1
    assert await sweeps.run(runtime.db, item, "test") == 0


async def test_the_mcp_discovery_document_points_to_oauth(docs):
    body = await (await docs.get("/.well-known/mcp.json")).json()
    base = base_of(docs)
    assert body["auth"]["header"] == "X-Api-Key"
    assert body["auth"]["oauth"] == {
        "protectedResourceMetadata": f"{base}/.well-known/oauth-protected-resource/mcp",
        "authorizationServer": base,
    }


async def test_revocation_ends_the_grant(docs, create_user):
    found = await signed_in_client(docs, create_user)
    client, tokens = found["client"], found["tokens"]
    cid = client["client_id"]
    meta = await (await docs.get("/.well-known/oauth-authorization-server")).json()
    assert meta["revocation_endpoint"] == f"{base_of(docs)}/oauth/revoke"
    headers = {"Authorization": f"Bearer {tokens['access_token']}"}

    # Unknown tokens are no error (RFC 7009 §2.2); another client's token is refused.
    resp = await docs.post("/oauth/revoke", data={"token": "crt_unknown", "client_id": cid})
    assert resp.status == 200
    assert await resp.json() == {}
    other = await register(docs)
    resp = await docs.post(
        "/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": other["client_id"]}
    )
    assert resp.status == 400
    assert (await resp.json())["error"] == "invalid_request"
    assert (await docs.get("/api/documents", headers=headers)).status == 200

    # Revoking the access token ends the grant: it and the refresh token stop working.
    resp = await docs.post(
        "/oauth/revoke",
        data={"token": tokens["access_token"], "token_type_hint": "access_token", "client_id": cid},
    )
    assert resp.status == 200
    assert (await docs.get("/api/documents", headers=headers)).status == 401
    resp = await token(docs, grant_type="refresh_token", refresh_token=tokens["refresh_token"], client_id=cid)
    assert (await resp.json())["error"] == "invalid_grant"
    resp = await docs.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": cid})
    assert resp.status == 200  # already revoked: still fine
    resp = await docs.post("/oauth/revoke", data={"client_id": cid})
    assert (await resp.json())["error"] == "invalid_request"


async def test_offline_access_is_accepted_and_asks_for_nothing_more(docs, create_user):
    await create_user(scopes=READ_ONLY)
    client = await register(docs)
    verifier, challenge = pkce()
    code = await code_for(docs, client, challenge, scope="tap:read offline_access")
    tokens = await (await exchange(docs, client, code, verifier)).json()
    assert tokens["scope"] == "tap:read"
    assert tokens["refresh_token"]


async def test_nul_characters_are_refused_everywhere(docs, create_user):
    await create_user()
    client = await register(docs)
    _, challenge = pkce()
    resp = await docs.get(authorize_url(client, challenge, state="a\x00b"), allow_redirects=False)
    assert resp.status == 400
    assert "NUL" in await resp.text()
    page = await docs.get(authorize_url(client, challenge))
    form = {**hidden_fields(await page.text()), "email": "ada\x00@example.org", "password": "x"}
    resp = await docs.post("/oauth/authorize", data={**form, "decision": "approve"}, allow_redirects=False)
    assert resp.status == 400
    resp = await token(
        docs, grant_type="refresh_token", refresh_token="crt_\x00", client_id=client["client_id"]
    )
    assert (await resp.json())["error"] == "invalid_request"
    resp = await docs.post("/oauth/register", json={"redirect_uris": [REDIRECT], "client_name": "a\x00"})
    assert (await resp.json())["error"] == "invalid_client_metadata"
