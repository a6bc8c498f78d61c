"""People of an organisation on the document API: created by the operator's command, signed in with
email and password, acting with a short-lived access token and their scopes, refreshing (each refresh
token once) and signing out (spec/document-api.md §5.2)."""

from __future__ import annotations

import asyncio
import io
import json
from datetime import timedelta

import jwt
import pytest

from tests.documents_support import make_key, upload_ready
from tests.people.conftest import PASSWORD


async def test_cli_creates_a_person_who_signs_in_and_uploads(docs, runtime, create_user, login):
    made = await create_user(email="  Ada@Example.ORG ")
    assert made["email"] == "ada@example.org"
    assert made["organisation"] == "Acme"
    assert "password" not in json.dumps(made).lower()

    pair = await login(email="ADA@example.org")
    assert pair["tokenType"] == "Bearer"
    assert pair["expiresIn"] == 15 * 60
    assert pair["refreshToken"].startswith("crt_")
    assert pair["refreshToken"] != pair["accessToken"]
    assert pair["user"]["email"] == "ada@example.org"
    claims = jwt.decode(pair["accessToken"], options={"verify_signature": False})
    assert claims["sub"] == made["id"]
    assert claims["aud"] == "concord-documents"
    assert claims["iss"] == "concord"
    assert claims["exp"] - claims["iat"] == 15 * 60
    assert {"org", "scopes", "jti", "sid"} <= claims.keys()

    doc = await upload_ready(docs, pair, b"# Plan\n\nHello.\n", "plan.md", title="Plan")
    resp = await docs.get("/api/documents", headers=pair["headers"])
    assert resp.status == 200
    assert [d["id"] for d in (await resp.json())["data"]] == [doc["id"]]

    # The person acts inside the organisation: its service keys see the document, another's do not.
    acme = await make_key(runtime, org="Acme")
    assert (await docs.get(f"/api/documents/{doc['id']}", headers=acme["headers"])).status == 200
    globex = await make_key(runtime, org="Globex")
    assert (await docs.get(f"/api/documents/{doc['id']}", headers=globex["headers"])).status == 404

    # Events and audit entries name the person, as an Individual.
    resp = await docs.get(f"/api/tap/{doc['id']}/events?after=0", headers=pair["headers"])
    assert resp.status == 200
    uploaded = (await resp.json())["events"][0]
    assert uploaded["type"] == "pact.document.uploaded"
    assert uploaded["actorKind"] == "Individual"
    assert uploaded["agentName"] == "ada@example.org"
    from sqlalchemy import select

    from domain.kernel.models import AuditEntry

    async with runtime.db.read() as session:
        ops = {
            row.op: row.actor_id
            for row in await session.scalars(select(AuditEntry).where(AuditEntry.actor_id == made["id"]))
        }
    assert "people.session.login" in ops


async def test_api_keys_keep_working_beside_tokens(docs, runtime, create_user, login):
    key = await make_key(runtime)
    await create_user()
    await login()
    for headers in (key["headers"], {"Authorization": f"Bearer {key['apiKey']}"}):
        assert (await docs.get("/api/documents", headers=headers)).status == 200


async def test_the_cli_refuses_bad_input_and_lists_and_disables(
    docs, runtime, create_user, login, capsys, monkeypatch
):
    import concord_cli

    await create_user()

    async def run(argv, password=PASSWORD):
        monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
        code = await asyncio.to_thread(concord_cli.main, argv)
        return code, capsys.readouterr()

    code, out = await run(["users", "create", "--org", "Acme", "--email", "bob@example.org"], "too short")
    assert code == 2
    assert "password: at least 12 characters" in out.err
    code, out = await run(["users", "create", "--org", "Acme", "--email", "not-an-address"])
    assert code == 2
    assert "email" in out.err
    code, out = await run(
        ["users", "create", "--org", "Acme", "--email", "b@example.org", "--scopes", "root"]
    )
    assert code == 2
    assert "scope" in out.err
    code, out = await run(["users", "create", "--org", "Acme", "--email", "ADA@example.org"])
    assert code == 2
    assert "already" in out.err
    # The same address in another organisation is another person.
    code, out = await run(["users", "create", "--org", "Globex", "--email", "ada@example.org"])
    assert code == 0, out.err

    code, out = await run(["users", "list", "--org", "Acme"])
    assert code == 0
    listed = [json.loads(line) for line in out.out.splitlines()]
    assert [row["email"] for row in listed] == ["ada@example.org"]
    assert "hash" not in out.out

    # Two organisations share the address and the password: the sign-in names one.
    resp = await docs.post("/api/auth/login", json={"email": "ada@example.org", "password": PASSWORD})
    assert resp.status == 400
    body = await resp.json()
    assert body["field"] == "organisation"
    assert body["organisations"] == ["Acme", "Globex"]
    pair = await login(organisation="acme")
    assert pair["user"]["organisation"] == "Acme"

    code, out = await run(["users", "disable", "ADA@example.org", "--org", "Acme"])
    assert code == 0, out.err
    assert json.loads(out.out)["disabledAt"]
    resp = await docs.get("/api/documents", headers=pair["headers"])
    assert resp.status == 401
    assert (await resp.json())["code"] == "invalid_token"
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": pair["refreshToken"]})
    assert resp.status == 401
    # Acme's Ada is disabled; the address now signs in to Globex alone.
    assert (await login())["user"]["organisation"] == "Globex"
    code, out = await run(["users", "disable", "nobody@example.org", "--org", "Acme"])
    assert code == 2

    # Enabled again, Ada signs in to Acme afresh; the session the disable ended stays ended.
    code, out = await run(["users", "enable", "ada@example.org", "--org", "Acme"])
    assert code == 0, out.err
    assert json.loads(out.out)["disabledAt"] is None
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": pair["refreshToken"]})
    assert resp.status == 401
    again = await login(organisation="acme")
    assert (await docs.get("/api/documents", headers=again["headers"])).status == 200
    code, out = await run(["users", "enable", "nobody@example.org", "--org", "Acme"])
    assert code == 2
    assert "nobody@example.org" in out.err


async def test_wrong_email_or_password_answers_the_same(docs, create_user):
    await create_user()
    answers = []
    for body in (
        {"email": "ada@example.org", "password": "wrong password!"},
        {"email": "nobody@example.org", "password": PASSWORD},
        {"email": "ada@example.org", "password": PASSWORD, "organisation": "Globex"},
    ):
        resp = await docs.post("/api/auth/login", json=body)
        assert resp.status == 401
        assert resp.content_type == "application/problem+json"
        got = await resp.json()
        answers.append((got["code"], got["detail"]))
    assert len(set(answers)) == 1
    assert answers[0][0] == "invalid_credentials"
    resp = await docs.post("/api/auth/login", json={"email": "ada@example.org"})
    assert resp.status == 400
    assert (await resp.json())["field"] == "password"
    resp = await docs.post("/api/auth/login", json={"email": "ada@example.org", "password": "x" * 5000})
    assert resp.status == 400


async def test_scopes_of_the_person_apply(docs, create_user, login):
    await create_user(scopes="documents:read")
    pair = await login()
    assert pair["scopes"] == ["documents:read"]
    assert (await docs.get("/api/documents", headers=pair["headers"])).status == 200
    resp = await docs.post("/api/documents", headers=pair["headers"], data=b"x")
    assert resp.status == 403
    body = await resp.json()
    assert body["code"] == "insufficient_scope"
    assert body["requiredScope"] == "documents:write"
    resp = await docs.get("/api/comments/search", headers=pair["headers"])
    assert resp.status == 403


async def test_tampered_foreign_and_expired_tokens_get_401(docs, runtime, create_user, login, clock):
    await create_user()
    pair = await login()
    token = pair["accessToken"]
    head, payload, signature = token.split(".")

    async def code_of(bearer):
        resp = await docs.get("/api/documents", headers={"Authorization": f"Bearer {bearer}"})
        assert resp.status == 401, await resp.text()
        assert resp.content_type == "application/problem+json"
        return (await resp.json())["code"]

    claims = jwt.decode(token, options={"verify_signature": False})
    widened = jwt.encode({**claims, "scopes": ["documents:write"], "sub": "someone"}, "guessed-" * 6, "HS256")
    assert await code_of(widened) == "invalid_token"
    assert await code_of(f"{head}.{widened.split('.')[1]}.{signature}") == "invalid_token"
    flipped = signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")
    assert await code_of(f"{head}.{payload}.{flipped}") == "invalid_token"

    from domain.people import user_sessions as sessions

    secret = sessions.signing_secret(runtime.settings)
    other_audience = jwt.encode({**claims, "aud": "concord-hub"}, secret, "HS256")
    assert await code_of(other_audience) == "invalid_token"
    unsigned = jwt.encode(claims, "", "none")
    assert await code_of(unsigned) == "invalid_token"

    clock.advance(timedelta(minutes=14))
    assert (await docs.get("/api/documents", headers=pair["headers"])).status == 200
    clock.advance(timedelta(minutes=2))
    assert await code_of(token) == "token_expired"
    # The refresh token still buys a new pair.
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": pair["refreshToken"]})
    assert resp.status == 200
    fresh = await resp.json()
    resp = await docs.get("/api/documents", headers={"Authorization": f"Bearer {fresh['accessToken']}"})
    assert resp.status == 200


async def test_refresh_rotates_and_a_reused_token_ends_the_session(docs, create_user, login, clock):
    await create_user()
    first = await login()
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": first["refreshToken"]})
    assert resp.status == 200
    assert resp.headers["Cache-Control"] == "no-store"
    second = await resp.json()
    assert second["refreshToken"] != first["refreshToken"]
    assert second["accessToken"] != first["accessToken"]
    second_headers = {"Authorization": f"Bearer {second['accessToken']}"}
    assert (await docs.get("/api/documents", headers=second_headers)).status == 200

    # The first refresh token again, after the grace for retries: someone holds a copy, so the whole
    # session ends.
    clock.advance(timedelta(seconds=6))
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": first["refreshToken"]})
    assert resp.status == 401
    assert (await resp.json())["code"] == "refresh_token_reused"
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": second["refreshToken"]})
    assert resp.status == 401
    resp = await docs.get("/api/documents", headers=second_headers)
    assert resp.status == 401
    assert (await resp.json())["code"] == "invalid_token"

    resp = await docs.post("/api/auth/refresh", json={"refreshToken": "crt_unknown"})
    assert resp.status == 401
    assert (await resp.json())["code"] == "invalid_refresh_token"
    resp = await docs.post("/api/auth/refresh", json={})
    assert resp.status == 400

    # A refresh token lives 30 days.
    third = await login()
    clock.advance(timedelta(days=30, minutes=1))
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": third["refreshToken"]})
    assert resp.status == 401
    assert (await resp.json())["code"] == "refresh_token_expired"


async def refresh(docs, token: str) -> tuple[int, dict]:
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": token})
    return resp.status, await resp.json()


async def test_a_refresh_retried_in_parallel_gets_the_same_pair(docs, create_user, login, runtime):
    """A client that sends its refresh again (a retry on a timeout, two tabs) within the grace
    (CONCORD_REFRESH_REUSE_GRACE_SECONDS, 5 s) gets the very pair the first one got: not a second pair,
    not an ended session."""
    from sqlalchemy import select

    from domain.people.models import RefreshToken

    await create_user()
    first = await login()
    answers = await asyncio.gather(*(refresh(docs, first["refreshToken"]) for _ in range(4)))
    assert [status for status, _ in answers] == [200] * 4, answers
    pair = answers[0][1]
    assert all(body == pair for _, body in answers)
    assert pair["refreshToken"] != first["refreshToken"]
    # Later, one more retry: still that pair.
    assert await refresh(docs, first["refreshToken"]) == (200, pair)
    # The session goes on: the pair works and rotates as usual.
    headers = {"Authorization": f"Bearer {pair['accessToken']}"}
    assert (await docs.get("/api/documents", headers=headers)).status == 200
    status, third = await refresh(docs, pair["refreshToken"])
    assert status == 200, third
    assert third["refreshToken"] not in (pair["refreshToken"], first["refreshToken"])
    # One new refresh token per use, and none is stored in clear.
    async with runtime.db.read() as session:
        rows = (await session.scalars(select(RefreshToken))).all()
    assert len(rows) == 3
    stored = json.dumps([[str(v) for v in vars(r).values()] for r in rows])
    for token in (first["refreshToken"], pair["refreshToken"], third["refreshToken"]):
        assert token not in stored
        assert token.removeprefix("crt_") not in stored


async def test_a_retry_after_the_grace_or_after_the_new_token_was_used_ends_the_session(
    docs, create_user, login, clock
):
    await create_user()
    # After the grace: reuse, as before.
    first = await login()
    status, pair = await refresh(docs, first["refreshToken"])
    assert status == 200
    clock.advance(timedelta(seconds=6))
    status, body = await refresh(docs, first["refreshToken"])
    assert (status, body["code"]) == (401, "refresh_token_reused")
    assert (await refresh(docs, pair["refreshToken"]))[0] == 401
    # Within the grace, but the new refresh token was used already: the holder moved on, so this is a copy.
    first = await login()
    status, pair = await refresh(docs, first["refreshToken"])
    status, third = await refresh(docs, pair["refreshToken"])
    assert status == 200
    status, body = await refresh(docs, first["refreshToken"])
    assert (status, body["code"]) == (401, "refresh_token_reused")
    headers = {"Authorization": f"Bearer {third['accessToken']}"}
    assert (await docs.get("/api/documents", headers=headers)).status == 401


async def test_no_grace_when_it_is_set_to_zero(docs, create_user, login, settings, monkeypatch):
    monkeypatch.setattr(settings, "refresh_reuse_grace_seconds", 0)
    await create_user()
    first = await login()
    assert (await refresh(docs, first["refreshToken"]))[0] == 200
    status, body = await refresh(docs, first["refreshToken"])
    assert (status, body["code"]) == (401, "refresh_token_reused")


async def test_logout_with_the_refresh_token_or_the_access_token(docs, create_user, login):
    await create_user()
    pair = await login()
    resp = await docs.post("/api/auth/logout", json={"refreshToken": pair["refreshToken"]})
    assert resp.status == 200
    assert (await resp.json())["loggedOut"] is True
    assert (await docs.get("/api/documents", headers=pair["headers"])).status == 401
    resp = await docs.post("/api/auth/refresh", json={"refreshToken": pair["refreshToken"]})
    assert resp.status == 401
    # Again: nothing more to end, still an answer.
    resp = await docs.post("/api/auth/logout", json={"refreshToken": pair["refreshToken"]})
    assert resp.status == 200

    other = await login()
    resp = await docs.post("/api/auth/logout", headers=other["headers"])
    assert resp.status == 200
    assert (await docs.get("/api/documents", headers=other["headers"])).status == 401
    resp = await docs.post("/api/auth/logout", headers=other["headers"])
    assert resp.status == 401
    resp = await docs.post("/api/auth/logout")
    assert resp.status == 401
    assert (await resp.json())["field"] == "refreshToken"
    resp = await docs.post("/api/auth/logout", json={"refreshToken": "crt_unknown"})
    assert resp.status == 401


@pytest.mark.parametrize("per", ["address", "email"])
async def test_sign_ins_are_rate_limited(docs, create_user, settings, monkeypatch, per):
    monkeypatch.setattr(settings, "rate_limit_login", 3)
    monkeypatch.setattr(settings, "trusted_proxy_header", "X-Forwarded-For")
    await create_user()
    for attempt in range(3):
        address = "198.51.100.7" if per == "address" else f"198.51.100.{attempt + 10}"
        email = f"guess{attempt}@example.org" if per == "address" else "ada@example.org"
        resp = await docs.post(
            "/api/auth/login",
            json={"email": email, "password": "wrong password!"},
            headers={"X-Forwarded-For": address},
        )
        assert resp.status == 401
    address = "198.51.100.7" if per == "address" else "198.51.100.99"
    email = "ada@example.org"
    resp = await docs.post(
        "/api/auth/login", json={"email": email, "password": PASSWORD}, headers={"X-Forwarded-For": address}
    )
    assert resp.status == 429
    assert int(resp.headers["Retry-After"]) >= 1
    assert (await resp.json())["code"] == "rate_limited"
    # Someone else, from elsewhere, still signs in.
    resp = await docs.post(
        "/api/auth/login",
        json={"email": "nobody@example.org", "password": PASSWORD},
        headers={"X-Forwarded-For": "203.0.113.1"},
    )
    assert resp.status == 401


async def test_the_signing_secret_is_kept_under_the_data_dir(runtime, tmp_path, monkeypatch):
    import os
    import stat

    from domain.people import user_sessions as sessions

    settings = runtime.settings.model_copy(update={"data_dir": tmp_path / "var", "jwt_secret": None})
    first = sessions.signing_secret(settings)
    path = tmp_path / "var" / "jwt-secret"
    assert path.read_text().strip() == first
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    sessions._secret_in.cache_clear()
    assert sessions.signing_secret(settings) == first  # a restart reads it back
    configured = settings.model_copy(update={"jwt_secret": "from-the-environment"})
    assert sessions.signing_secret(configured) == "from-the-environment"
