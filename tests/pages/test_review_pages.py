"""The review desk over HTTP, without a browser: sign-in and its cookies (HttpOnly, SameSite=Strict,
Path=/review, expiring), the form token on every POST (403 page without it), roles (403 page for the other
role's page), decisions through the forms with a 303 and a flash, the domain's refusals as readable pages,
sign-out ending the session server-side, and everything escaped."""

from __future__ import annotations

import re
from datetime import timedelta

from sqlalchemy import select

from domain.people.models import StaffSession
from tests.pages.support import (
    csrf_of,
    deferred_submission,
    objected_escalation,
    section_escalation,
    sign_in,
    staff_key,
)


def _cookie_header(resp, name):
    found = [v for v in resp.headers.getall("Set-Cookie", []) if v.startswith(f"{name}=")]
    assert found, (name, resp.headers.getall("Set-Cookie", []))
    return found[-1]


async def test_sign_in_sets_a_strict_http_only_expiring_cookie_and_stores_only_its_hash(hub, runtime):
    key = await staff_key(runtime, "Rey Reviewer", ("reviewer",))
    form = await hub.get("/review/")
    assert form.status == 200
    assert form.content_type == "text/html"
    assert "Content-Security-Policy" in form.headers
    page = await form.text()
    assert '<html lang="en">' in page
    assert '<label for="key">Staff key</label>' in page
    assert "<main" in page
    signin_cookie = _cookie_header(form, "concord_review_signin")
    assert "HttpOnly" in signin_cookie
    assert "SameSite=Strict" in signin_cookie

    resp = await hub.post("/review/sign-in", data={"key": key, "csrf": csrf_of(page)}, allow_redirects=False)
    assert resp.status == 303
    assert resp.headers["Location"] == "/review/"
    cookie = _cookie_header(resp, "concord_review")
    assert "HttpOnly" in cookie
    assert "SameSite=Strict" in cookie
    assert "Path=/review" in cookie
    assert "Max-Age=28800" in cookie  # 8 hours by default
    token = cookie.split(";")[0].split("=", 1)[1]
    async with runtime.db.read() as session:
        rows = (await session.scalars(select(StaffSession))).all()
    assert len(rows) == 1
    assert rows[0].token_hash != token
    assert token not in rows[0].token_hash
    queue = await hub.get("/review/")
    body = await queue.text()
    assert "Signed in as Rey Reviewer." in body  # the flash
    assert "Open escalations" in body
    assert "Deferred work submissions" not in body  # a reviewer sees only the reviewers' queue
    assert "Signed in as Rey Reviewer." not in await (await hub.get("/review/")).text()  # once


async def test_a_bad_key_and_a_forged_sign_in_form_are_refused_as_pages(hub, runtime, aiohttp_client):
    form = await hub.get("/review/")
    token = csrf_of(await form.text())
    bad = await hub.post("/review/sign-in", data={"key": "staff_sk_" + "0" * 48, "csrf": token})
    assert bad.status == 401
    assert bad.content_type == "text/html"
    assert "That key was not accepted: invalid staff key." in await bad.text()
    agent_key = await hub.post("/review/sign-in", data={"key": "pact_sk_x", "csrf": token})
    assert agent_key.status in (401, 403)
    forged = await hub.post("/review/sign-in", data={"key": "staff_sk_x", "csrf": "made-up"})
    assert forged.status == 403
    assert "sign-in form had expired" in await forged.text()


async def test_a_post_without_the_form_token_is_403_and_changes_nothing(hub, docs, runtime, team):
    esc, _pid = await objected_escalation(docs, team)
    key = await staff_key(runtime, "Rey Reviewer", ("reviewer",))
    csrf = await sign_in(hub, key)
    for data in (
        {"answer": "yes"},
        {"answer": "yes", "csrf": "not-the-token"},
        {"answer": "yes", "csrf": ""},
    ):
        resp = await hub.post(f"/review/escalations/{esc}/answer", data=data)
        assert resp.status == 403
        assert resp.content_type == "text/html"
        assert "form token" in await resp.text()
    out = await hub.post("/review/sign-out", data={})
    assert out.status == 403
    page = await (await hub.get(f"/review/escalations/{esc}")).text()
    assert "Your answer" in page  # still open
    assert csrf_of(page) == csrf  # one token per session


async def test_each_role_sees_its_own_queue_and_a_403_page_for_the_other(hub, docs, runtime, team):
    esc, pid = await objected_escalation(docs, team)
    curator = await staff_key(runtime, "Cora Curator", ("curator",))
    await sign_in(hub, curator)
    body = await (await hub.get("/review/")).text()
    assert "Deferred work submissions" in body
    assert "Open escalations" not in body
    for path in (f"/review/escalations/{esc}", f"/review/proposals/{pid}"):
        resp = await hub.get(path)
        assert resp.status == 403
        assert "This page is for staff with the reviewer role" in await resp.text()
    csrf = csrf_of(body)
    resp = await hub.post(
        f"/review/proposals/{pid}/decide", data={"csrf": csrf, "decision": "approve", "note": "x"}
    )
    assert resp.status == 403


async def test_a_reviewer_answers_an_escalation_and_approves_its_proposal_through_the_form(
    hub, docs, runtime, team
):
    esc, pid = await objected_escalation(docs, team)
    csrf = await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    queue = await (await hub.get("/review/")).text()
    assert f'href="/review/escalations/{esc}"' in queue
    assert f'href="/review/proposals/{pid}"' in queue
    page = await (await hub.get(f"/review/escalations/{esc}")).text()
    assert "Less money, spent &lt;carefully&gt; &amp; audited." in page  # escaped
    assert "<carefully>" not in page
    assert "Money." in page  # the section as it reads now, beside the proposal

    missing = await hub.post(f"/review/escalations/{esc}/answer", data={"csrf": csrf, "answer": "  "})
    assert missing.status == 400
    assert "write an answer" in await missing.text()

    resp = await hub.post(
        f"/review/escalations/{esc}/answer",
        data={"csrf": csrf, "answer": "Yes, <b>cut</b> it.", "decision": "approve"},
        allow_redirects=False,
    )
    assert resp.status == 303
    assert resp.headers["Location"] == "/review/"
    after = await (await hub.get("/review/")).text()
    # the flash names the item and links it
    assert (
        f'Answer sent to <a href="/review/escalations/{esc}">“Can we cut the budget like this?”</a>; '
        "the proposal was approved." in after
    )
    assert f'href="/review/escalations/{esc}"' not in after.split("</form>", 2)[-1]  # only the flash links it
    assert "No escalations waiting." in after
    item = await (await hub.get(f"/review/escalations/{esc}")).text()
    assert "Yes, &lt;b&gt;cut&lt;/b&gt; it." in item
    assert "The proposal was approved." in item  # the decision stays on the answered escalation's page

    again = await hub.post(f"/review/escalations/{esc}/answer", data={"csrf": csrf, "answer": "again"})
    assert again.status == 409
    text = await again.text()
    assert "This was not recorded" in text
    assert "already answered" in text
    decided = await hub.post(
        f"/review/proposals/{pid}/decide", data={"csrf": csrf, "decision": "reject", "note": "late"}
    )
    assert decided.status == 409
    assert "already decided" in await decided.text()
    unknown = await hub.get("/review/escalations/00000000-0000-0000-0000-000000000000")
    assert unknown.status == 404
    assert unknown.content_type == "text/html"


async def test_a_reviewer_decides_an_objected_proposal_with_a_note(hub, docs, runtime, team):
    _esc, pid = await objected_escalation(docs, team)
    csrf = await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    page = await (await hub.get(f"/review/proposals/{pid}")).text()
    assert "breaks the grant&#x27;s terms" in page
    assert 'class="side-by-side"' in page
    no_note = await hub.post(f"/review/proposals/{pid}/decide", data={"csrf": csrf, "decision": "reject"})
    assert no_note.status == 400
    resp = await hub.post(
        f"/review/proposals/{pid}/decide",
        data={"csrf": csrf, "decision": "reject", "note": "Keep the budget."},
        allow_redirects=False,
    )
    assert resp.status == 303
    assert (
        f'Proposal <a href="/review/proposals/{pid}">“s”</a> rejected.'
        in await (await hub.get("/review/")).text()
    )
    api = await hub.get(
        f"/api/review/proposals/{pid}",
        headers={"Authorization": f"Bearer {await staff_key(runtime, 'R2', ('reviewer',))}"},
    )
    assert (await api.json())["status"] == "rejected"


async def test_a_curator_accepts_and_rejects_deferred_work_through_the_forms(
    hub, market, register, shop, fast, runtime
):
    first = await deferred_submission(hub, register, shop, "ok-one")
    second = await deferred_submission(hub, register, shop, "ok-two")
    csrf = await sign_in(hub, await staff_key(runtime, "Cora Curator", ("curator",)))
    queue = await (await hub.get("/review/")).text()
    assert "2 deferred submissions waiting" in queue
    assert "far_from_median" in queue
    page = await (await hub.get(f"/review/work/{first['submissionId']}")).text()
    assert f'href="http://127.0.0.1:{shop.port}/p/ok-one"' in page
    assert "The validator's notes" in page
    resp = await hub.post(
        f"/review/work/{first['submissionId']}/accept",
        data={"csrf": csrf, "accept-note": "checked the shelf"},
        allow_redirects=False,
    )
    assert resp.status == 303
    accepted = await (await hub.get("/review/")).text()
    assert f'<a href="/review/work/{first["submissionId"]}">' in accepted
    assert "accepted: credits paid." in accepted
    no_reason = await hub.post(f"/review/work/{second['submissionId']}/reject", data={"csrf": csrf})
    assert no_reason.status == 400
    rejected = await hub.post(
        f"/review/work/{second['submissionId']}/reject",
        data={"csrf": csrf, "reject-note": "wrong pack size"},
        allow_redirects=False,
    )
    assert rejected.status == 303
    twice = await hub.post(
        f"/review/work/{first['submissionId']}/reject", data={"csrf": csrf, "reject-note": "x"}
    )
    assert twice.status == 409
    assert "already decided" in await twice.text()
    assert "No deferred submissions waiting." in await (await hub.get("/review/")).text()


async def test_sign_out_ends_the_session_for_good_and_sessions_expire(hub, runtime, clock, aiohttp_client):
    key = await staff_key(runtime, "Rey Reviewer", ("reviewer",))
    csrf = await sign_in(hub, key)
    token = next(c.value for c in hub.session.cookie_jar if c.key == "concord_review")
    resp = await hub.post("/review/sign-out", data={"csrf": csrf}, allow_redirects=False)
    assert resp.status == 303
    assert (
        "Max-Age=0" in _cookie_header(resp, "concord_review")
        or "expires" in _cookie_header(resp, "concord_review").lower()
    )
    # The old cookie, presented again, no longer works.
    hub.session.cookie_jar.update_cookies({"concord_review": token}, hub.make_url("/review/"))
    again = await hub.get("/review/")
    assert "Sign in to the review desk" in await again.text()
    assert "signed out" in await again.text()
    post = await hub.post("/review/sign-out", data={"csrf": csrf})
    assert post.status == 401

    # A new session lasts the configured hours, then the desk asks to sign in again.
    await sign_in(hub, key)
    clock.advance(timedelta(hours=8, minutes=1))
    expired = await hub.get("/review/")
    assert "expired" in await expired.text()
    assert "Sign in to the review desk" in await expired.text()


async def test_the_home_pages_and_the_reference(hub, docs):
    for client in (hub, docs):
        home = await client.get("/")
        assert home.status == 200
        text = await home.text()
        assert '<html lang="en">' in text
        assert 'href="/docs"' in text
        assert 'href="/openapi.json"' in text
        ref = await client.get("/docs/plain")  # the reference without script (/docs is Swagger UI)
        assert ref.status == 200
        body = await ref.text()
        assert "<script" not in body
        assert "http" not in body.split("<body>")[0].replace("http-equiv", "")
        spec = await (await client.get("/openapi.json")).json()
        for path in list(spec["paths"])[:5]:
            assert f"<code>{path}</code>" in body
        css = await client.get("/assets/concord.css")
        assert css.status == 200
        assert css.content_type == "text/css"
    assert "docs/review.md" in await (await hub.get("/")).text()
    assert 'href="/review/"' in await (await hub.get("/")).text()
    assert "docs/documents.md" in await (await docs.get("/")).text()


async def test_an_escalation_naming_a_section_shows_the_proposals_open_on_it(hub, runtime, register):
    """A person answering an escalation about a section sees what the agents propose for it (text, diff,
    votes, objections' reasons), and only that: not another section's proposals nor decided ones; once it
    is answered, the page shows the answer rather than proposals that may have moved on."""
    esc, ids = await section_escalation(hub, register)
    csrf = await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    page = await (await hub.get(f"/review/escalations/{esc}")).text()
    assert "Proposed on this section, not decided yet" in page
    assert "2 proposals are open on this section." in page
    assert page.index("Shorten it") < page.index("Add it")  # oldest first
    assert "The answer, &lt;short&gt; &amp; sweet." in page  # escaped
    assert "<short>" not in page
    assert "drops the &lt;caveat&gt; we agreed" in page  # the objection's reason
    assert "0 approvals, 0 rejections, 1 objection" in page
    assert "<ins" in page
    assert "<del" in page
    assert "The first answer." in page  # the section as it reads now
    assert "Empty it" not in page  # rejected
    assert "Close the discussion" not in page  # another section
    for key in ("changes", "objections", "votes"):  # each heading's id once, so each label names its own
        assert page.count(f'id="{key}-1"') == 1
        assert page.count(f'id="{key}-2"') == 1

    resp = await hub.post(
        f"/review/escalations/{esc}/answer",
        data={"csrf": csrf, "answer": "Add the caveat."},
        allow_redirects=False,
    )
    assert resp.status == 303
    answered = await (await hub.get(f"/review/escalations/{esc}")).text()
    assert "Add the caveat." in answered
    assert "Proposed on this section" not in answered


async def test_a_reviewer_decides_a_pending_topic_proposal_from_the_escalation_page(hub, runtime, register):
    """PACT §9.2 through the pages: the escalation about a section links each proposal open there to its own
    page, where a person may decide it even while the agents still vote (the page says the decision overrides
    them); approving merges it, the rival on the section is superseded, and the escalation no longer lists
    either."""
    esc, ids = await section_escalation(hub, register)
    csrf = await sign_in(hub, await staff_key(runtime, "Rey Reviewer", ("reviewer",)))
    page = await (await hub.get(f"/review/escalations/{esc}")).text()
    assert f'<a href="/review/proposals/{ids["short"]}">Decide this pending proposal</a>' in page
    assert f'<a href="/review/proposals/{ids["longer"]}">Decide this pending proposal</a>' in page

    pending = await hub.get(f"/review/proposals/{ids['longer']}")
    assert pending.status == 200
    text = await pending.text()
    assert "<title>Pending proposal" in text
    assert re.search(r'Pending proposal on the topic “<a href="/review/topics/[0-9a-f-]{36}">Topic ', text)
    assert "your decision overrides their votes" in text
    assert 'action="/review/proposals/' + ids["longer"] + '/decide"' in text

    resp = await hub.post(
        f"/review/proposals/{ids['longer']}/decide",
        data={"csrf": csrf, "decision": "approve", "note": "The caveat stays."},
        allow_redirects=False,
    )
    assert resp.status == 303, await resp.text()
    assert (
        f'Proposal <a href="/review/proposals/{ids["longer"]}">“Add it”</a> approved.'
        in await (await hub.get("/review/")).text()
    )
    decided = await (await hub.get(f"/review/proposals/{ids['longer']}")).text()
    assert "This proposal is merged: there is nothing to decide." in decided
    assert "/decide" not in decided
    rival = await (await hub.get(f"/review/proposals/{ids['short']}")).text()
    assert "This proposal is superseded: there is nothing to decide." in rival
    again = await (await hub.get(f"/review/escalations/{esc}")).text()
    assert "Proposed on this section" not in again  # nothing open there any more
    assert "The first answer, with its caveat." in again  # the section as it reads now
    late = await hub.post(
        f"/review/proposals/{ids['short']}/decide",
        data={"csrf": csrf, "decision": "approve", "note": "Too late."},
    )
    assert late.status == 409
    assert "already decided" in await late.text()

    # The history shows what the person decided, on a topic as on a document, and filters by resource.
    from tests.pages.test_review_desk_lists import questions

    history = await (await hub.get("/review/history")).text()
    assert questions(history, "proposals") == ["Add it"]
    assert ">topic: Topic " in history
    assert "The caveat stays." in history
    assert questions(await (await hub.get("/review/history?resource=topic")).text(), "proposals") == [
        "Add it"
    ]
    assert questions(await (await hub.get("/review/history?resource=document")).text(), "proposals") == []
    waiting_topics = await (await hub.get("/review/?resource=topic&kind=proposal")).text()
    assert "Objected document proposals" not in waiting_topics  # a topic's reach the desk as escalations
