"""Topics (spec §2 topic create request, §4 Topics, §6, §8): create, list, content, sections, agents,
join and events, each with its 400/401/404/409 paths."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from sqlalchemy import select

from domain.kernel.models import Event

BODY = "# Answer\n\nThe answer is forty-two.\n"


async def create_topic(hub: Any, agent: dict[str, Any], expect: int = 201, **fields: Any) -> dict[str, Any]:
    payload = {"title": f"Topic {uuid.uuid4().hex[:8]}", "content": BODY, "tier": "empirical", **fields}
    resp = await hub.post("/api/pact/topics", headers=agent["headers"], json=payload)
    assert resp.status == expect, await resp.text()
    return await resp.json()


async def events_of(hub: Any, topic_id: str, **params: Any) -> dict[str, Any]:
    resp = await hub.get(f"/api/pact/{topic_id}/events", params={k: str(v) for k, v in params.items()})
    assert resp.status == 200, await resp.text()
    return await resp.json()


# --- create -----------------------------------------------------------------------------------------


async def test_create_with_every_field_of_the_spec_table(hub, register):
    alice = await register("Alice")
    base = await create_topic(hub, alice, title="Base facts")
    topic = await create_topic(
        hub,
        alice,
        title="  Minimum   wage in Australia ",
        content="# Answer\n\nSet annually by the Fair Work Commission.",
        tier="institutional",
        dependsOn=[base["id"]],
        assumptions=["Full-time adult employee", "Award-free"],
        canonicalClaim="The national minimum wage is reviewed each year.",
        jurisdiction="AU-NSW",
        authority="Fair Work Commission",
        sourceRef="Fair Work Act 2009 (Cth) s 285",
        effectiveDate="2024-07-01",
        expiryDate="2025-06-30",
    )
    assert uuid.UUID(topic["id"])
    assert topic["title"] == "Minimum   wage in Australia"
    assert topic["tier"] == "institutional"
    assert topic["status"] == "proposed"
    assert topic["version"] == 1
    assert topic["dependsOn"] == [base["id"]]
    assert topic["assumptions"] == ["Full-time adult employee", "Award-free"]
    assert topic["canonicalClaim"] == "The national minimum wage is reviewed each year."
    assert topic["jurisdiction"] == "AU-NSW"
    assert topic["authority"] == "Fair Work Commission"
    assert topic["sourceRef"] == "Fair Work Act 2009 (Cth) s 285"
    assert topic["effectiveDate"] == "2024-07-01"
    assert topic["expiryDate"] == "2025-06-30"
    assert topic["creatorId"] == alice["agentId"]
    assert topic["participantCount"] == 1
    assert topic["proposalCount"] == 0
    assert topic["createdAt"].endswith("+00:00")
    # Read back the same record on both topic paths.
    for path in (f"/api/pact/topics/{topic['id']}", f"/api/pact/{topic['id']}"):
        resp = await hub.get(path)
        assert resp.status == 200
        # The read adds the legislation its proposals cite (docs/consensus.md): none yet.
        assert await resp.json() == {**topic, "legislationCitations": []}
    content = await (await hub.get(f"/api/pact/{topic['id']}/content")).json()
    assert content["content"] == "# Answer\n\nSet annually by the Fair Work Commission.\n"


async def test_minimal_create_defaults_optional_fields(hub, register):
    topic = await create_topic(hub, await register(), tier="contested")
    assert topic["dependsOn"] == []
    assert topic["assumptions"] == []
    for field in ("canonicalClaim", "jurisdiction", "authority", "sourceRef", "effectiveDate", "expiryDate"):
        assert topic[field] is None


async def test_depends_on_keeps_the_order_given(hub, register):
    agent = await register()
    made = [await create_topic(hub, agent) for _ in range(5)]
    order = [made[3]["id"], made[0]["id"], made[4]["id"], made[1]["id"], made[2]["id"]]
    topic = await create_topic(hub, agent, dependsOn=order)
    assert topic["dependsOn"] == order
    assert (await (await hub.get(f"/api/pact/{topic['id']}")).json())["dependsOn"] == order
    listed = await (await hub.get("/api/pact/topics")).json()
    assert next(t for t in listed["topics"] if t["id"] == topic["id"])["dependsOn"] == order
    resolved = await (await hub.get(f"/api/pact/{topic['id']}/content", params={"resolve": "true"})).json()
    assert [d["id"] for d in resolved["resolvedDependencies"]] == order


async def test_content_is_stored_as_written(hub, register):
    body = "    indented code block first\n\n# Heading\n\nHard break  \nnext line"
    topic = await create_topic(hub, await register(), content=body)
    content = await (await hub.get(f"/api/pact/{topic['id']}/content")).json()
    assert content["content"] == body + "\n"
    tree = (await (await hub.get(f"/api/pact/{topic['id']}/sections")).json())["sections"]
    assert tree[0]["content"] == "    indented code block first"


@pytest.mark.parametrize("tier", ["empirical", "institutional", "derived", "contested"])
async def test_each_tier_is_accepted(hub, register, tier):
    assert (await create_topic(hub, await register(), tier=tier))["tier"] == tier


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tier": "axiom"}, "tier"),
        ({"tier": "Empirical"}, "tier"),
        ({"tier": None}, "tier"),
        ({"tier": 1}, "tier"),
        ({"title": None}, "title"),
        ({"title": "ab"}, "title"),
        ({"title": 12345}, "title"),
        ({"title": "t" * 501}, "title"),
        ({"content": "short"}, "content"),
        ({"content": "  \n\n   x   \n\n     "}, "content"),
        ({"content": ["# A", "text text"]}, "content"),
        ({"content": "x" * 50_001}, "content"),
        ({"dependsOn": "not-a-list"}, "dependsOn"),
        ({"dependsOn": [1]}, "dependsOn.0"),
        ({"dependsOn": [""]}, "dependsOn.0"),
        ({"assumptions": "one"}, "assumptions"),
        ({"assumptions": [None]}, "assumptions.0"),
        ({"canonicalClaim": 5}, "canonicalClaim"),
        ({"jurisdiction": "Australia"}, "jurisdiction"),
        ({"jurisdiction": "AU_NSW"}, "jurisdiction"),
        ({"jurisdiction": "AU "}, "jurisdiction"),
        ({"jurisdiction": 61}, "jurisdiction"),
        ({"authority": ["x"]}, "authority"),
        ({"sourceRef": {"a": 1}}, "sourceRef"),
        ({"effectiveDate": "2024-13-01"}, "effectiveDate"),
        ({"effectiveDate": "yesterday"}, "effectiveDate"),
        ({"expiryDate": "2024-02-30"}, "expiryDate"),
        ({"effectiveDate": "2025-01-02", "expiryDate": "2025-01-01"}, "expiryDate"),
        ({"content": "# Heading\n\nnul \x00 inside"}, "content"),
        ({"assumptions": ["nul\x00"]}, "assumptions"),
    ],
)
async def test_bad_topic_fields_are_400_naming_the_field(hub, register, change, field):
    resp = await hub.post(
        "/api/pact/topics",
        headers=(await register())["headers"],
        json={"title": "A valid title", "content": BODY, "tier": "empirical", **change},
    )
    assert resp.status == 400, await resp.text()
    body = await resp.json()
    assert body["field"].startswith(field.split(".")[0])
    assert body["field"] == field or field.split(".")[0] == field
    assert field.split(".")[0] in body["detail"]


@pytest.mark.parametrize("missing", ["title", "content", "tier"])
async def test_required_fields_are_400_when_missing(hub, register, missing):
    payload = {"title": "A valid title", "content": BODY, "tier": "empirical"}
    del payload[missing]
    resp = await hub.post("/api/pact/topics", headers=(await register())["headers"], json=payload)
    assert resp.status == 400
    body = await resp.json()
    assert body["field"] == missing
    assert "required" in body["detail"].lower()


async def test_non_object_body_is_400(hub, register):
    agent = await register()
    for raw in (b"[]", b"{", b"", b"42"):
        resp = await hub.post(
            "/api/pact/topics", data=raw, headers={**agent["headers"], "Content-Type": "application/json"}
        )
        assert resp.status == 400
        assert (await resp.json())["error"] == "invalid_json"


async def test_depends_on_must_name_existing_topics(hub, register):
    agent = await register()
    real = await create_topic(hub, agent)
    ghost = str(uuid.uuid4())
    for bad in (ghost, "not-a-topic-id", "'; drop table topics; --"):
        resp = await hub.post(
            "/api/pact/topics",
            headers=agent["headers"],
            json={
                "title": f"Depends {bad}",
                "content": BODY,
                "tier": "derived",
                "dependsOn": [real["id"], bad],
            },
        )
        assert resp.status == 400, await resp.text()
        body = await resp.json()
        assert body["field"] == "dependsOn"
        assert bad in body["detail"]
        assert real["id"] not in body["detail"]
        assert body["missing"] == [bad]
    # Repeats collapse and an upper-case id is the same topic.
    topic = await create_topic(hub, agent, dependsOn=[real["id"], real["id"].upper()])
    assert topic["dependsOn"] == [real["id"]]
    listed = await (await hub.get("/api/pact/topics")).json()
    assert len(listed["topics"]) == 2


@pytest.mark.parametrize("second", ["Rates of pay", "rates of pay", "  RATES   OF   PAY "])
async def test_duplicate_title_is_409(hub, register, second):
    agent = await register()
    await create_topic(hub, agent, title="Rates of pay")
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={"title": second, "content": BODY, "tier": "derived"},
    )
    assert resp.status == 409
    body = await resp.json()
    assert body["error"] == "duplicate_topic"
    assert "already exists" in body["detail"]


async def test_concurrent_creates_of_one_title_give_exactly_one_201(hub, register):
    agents = [await register() for _ in range(4)]
    resps = await asyncio.gather(
        *(
            hub.post(
                "/api/pact/topics",
                headers=a["headers"],
                json={"title": "Race title", "content": BODY, "tier": "empirical"},
            )
            for a in agents * 2
        )
    )
    assert sorted(r.status for r in resps) == [201] + [409] * 7
    assert (await (await hub.get("/api/pact/topics")).json())["total"] == 1


# --- list -------------------------------------------------------------------------------------------


async def test_list_filters_by_tier_status_and_jurisdiction_prefix(hub, register, runtime):
    agent = await register()
    made = {
        "au": await create_topic(hub, agent, tier="institutional", jurisdiction="AU"),
        "nsw": await create_topic(hub, agent, tier="institutional", jurisdiction="AU-NSW"),
        "qld": await create_topic(hub, agent, tier="empirical", jurisdiction="AU-QLD"),
        "at": await create_topic(hub, agent, tier="empirical", jurisdiction="AT"),
        "nz": await create_topic(hub, agent, tier="derived", jurisdiction="NZ"),
        "fr": await create_topic(hub, agent, tier="derived", jurisdiction="FR-75"),
        "none": await create_topic(hub, agent, tier="contested"),
    }

    async def ids(**params: Any) -> set[str]:
        resp = await hub.get("/api/pact/topics", params=params)
        assert resp.status == 200, await resp.text()
        body = await resp.json()
        assert body["total"] == len(body["topics"])
        back = {v["id"]: k for k, v in made.items()}
        return {back[t["id"]] for t in body["topics"]}

    assert await ids() == set(made)
    assert await ids(jurisdiction="AU") == {"au", "nsw", "qld"}
    assert await ids(jurisdiction="au") == {"au", "nsw", "qld"}  # a code in any case, as topics take it
    assert await ids(jurisdiction="AU-nsw") == {"nsw"}
    for loose in (" AU", "AU ", "AU_NSW"):  # but as written: no spaces around it (issue 29)
        resp = await hub.get("/api/pact/topics", params={"jurisdiction": loose})
        assert resp.status == 400, await resp.text()
        assert (await resp.json())["field"] == "jurisdiction"
    assert await ids(jurisdiction="AU-NSW") == {"nsw"}
    assert await ids(jurisdiction="AU-N") == set()  # a region code is matched whole
    assert await ids(jurisdiction="FR") == {"fr"}
    assert await ids(jurisdiction="NZ") == {"nz"}
    assert await ids(jurisdiction="US") == set()
    assert await ids(tier="institutional") == {"au", "nsw"}
    assert await ids(tier="empirical", jurisdiction="AU") == {"qld"}
    assert await ids(status="proposed") == set(made)
    assert await ids(status="open") == set()

    # A status set by the consensus engine is filterable too.
    from domain.topics.models import Topic

    async with runtime.db.transaction() as session:
        (await session.get(Topic, made["nz"]["id"])).status = "consensus"
    assert await ids(status="consensus") == {"nz"}
    assert await ids(status="proposed", tier="derived") == {"fr"}

    # Rows the API would refuse (written by an older import, say) never match a shorter prefix.
    async with runtime.db.transaction() as session:
        for code in ("AUS", "AUX-NSW", "AU_NSW"):
            t = await session.get(Topic, made["none"]["id"])
            session.add(
                Topic(
                    title=f"Legacy {code}",
                    title_key=f"legacy {code.lower()}",
                    content=BODY,
                    tier="contested",
                    jurisdiction=code,
                    creator_id=t.creator_id,
                )
            )
    assert await ids(jurisdiction="AU") == {"au", "nsw", "qld"}


async def test_list_limit_defaults_to_50_and_pages_with_offset(hub, register):
    agent = await register()
    made = [(await create_topic(hub, agent, title=f"Paged topic {i:02d}"))["id"] for i in range(55)]
    first = await (await hub.get("/api/pact/topics")).json()
    assert first["limit"] == 50
    assert first["offset"] == 0
    assert first["total"] == 55
    assert len(first["topics"]) == 50
    rest = await (await hub.get("/api/pact/topics", params={"offset": "50"})).json()
    assert len(rest["topics"]) == 5
    seen = [t["id"] for t in first["topics"] + rest["topics"]]
    assert sorted(seen) == sorted(made)
    assert seen == list(reversed(made))  # newest first
    page = await (await hub.get("/api/pact/topics", params={"limit": "7", "offset": "3"})).json()
    assert [t["id"] for t in page["topics"]] == seen[3:10]
    big = await (await hub.get("/api/pact/topics", params={"limit": "200"})).json()
    assert len(big["topics"]) == 55
    past = await (await hub.get("/api/pact/topics", params={"offset": "1000"})).json()
    assert past["topics"] == []
    assert past["total"] == 55


async def test_a_filtered_list_pages_with_its_own_total_and_each_topics_dependencies(hub, register):
    """Every page of a filtered list says how many topics match the filter, an offset past the end too, and
    shows each topic's own dependencies in the order given."""
    agent = await register()
    base = [(await create_topic(hub, agent, tier="derived"))["id"] for _ in range(3)]
    made = [
        (await create_topic(hub, agent, tier="contested", dependsOn=base[n % 3 :] + base[: n % 3]))["id"]
        for n in range(4)
    ]
    for offset, ids in ((0, made[::-1][:3]), (3, made[:1]), (4, []), (999, [])):
        params = {"tier": "contested", "limit": "3", "offset": str(offset)}
        page = await (await hub.get("/api/pact/topics", params=params)).json()
        assert page["total"] == 4, (offset, page)
        assert [t["id"] for t in page["topics"]] == ids
        for t in page["topics"]:
            n = made.index(t["id"])
            assert t["dependsOn"] == base[n % 3 :] + base[: n % 3]
    none = await (await hub.get("/api/pact/topics", params={"tier": "institutional", "offset": "2"})).json()
    assert none["total"] == 0
    assert none["topics"] == []


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
        ({"limit": "-5"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"limit": "1.5"}, "limit"),
        ({"offset": "-1"}, "offset"),
        ({"offset": "x"}, "offset"),
        ({"offset": str(10**30)}, "offset"),
        ({"tier": "axiom"}, "tier"),
        ({"status": "merged"}, "status"),
        ({"jurisdiction": "AUS"}, "jurisdiction"),
        ({"jurisdiction": "A"}, "jurisdiction"),
        ({"jurisdiction": "AU%"}, "jurisdiction"),
        ({"jurisdiction": "\x00"}, "jurisdiction"),
    ],
)
async def test_list_rejects_out_of_range_or_malformed_query(hub, params, field):
    resp = await hub.get("/api/pact/topics", params=params)
    assert resp.status == 400, await resp.text()
    body = await resp.json()
    assert body["field"] == field
    assert field in body["detail"]


# --- content, sections ------------------------------------------------------------------------------


async def test_content_is_markdown_and_resolve_inlines_transitive_dependencies(hub, register):
    agent = await register()
    c = await create_topic(hub, agent, title="Leaf C", content="# C\n\nLeaf content C.")
    b = await create_topic(
        hub, agent, title="Middle B", content="# B\n\nMiddle content B.", dependsOn=[c["id"]]
    )
    d = await create_topic(hub, agent, title="Side D", content="# D\n\nSide content D.", dependsOn=[c["id"]])
    a = await create_topic(
        hub, agent, title="Top A", content="# A\n\nTop content A.", dependsOn=[b["id"], d["id"]]
    )

    plain = await (await hub.get(f"/api/pact/{a['id']}/content")).json()
    assert plain["content"] == "# A\n\nTop content A.\n"
    assert plain["topicId"] == a["id"]
    assert plain["version"] == 1
    assert "resolvedDependencies" not in plain
    for false in ("false", "0", "no"):
        same = await (await hub.get(f"/api/pact/{a['id']}/content", params={"resolve": false})).json()
        assert same["content"] == plain["content"]

    resp = await hub.get(f"/api/pact/{a['id']}/content", params={"resolve": "true"})
    assert resp.status == 200
    full = await resp.json()
    text = full["content"]
    assert text.startswith("# A\n\nTop content A.\n")
    for piece in ("Middle content B.", "Side content D.", "Leaf content C."):
        assert text.count(piece) == 1  # the diamond's shared leaf is inlined once
    assert text.index("Middle content B.") < text.index("Leaf content C.")
    deps = {(x["id"], x["depth"]) for x in full["resolvedDependencies"]}
    assert deps == {(b["id"], 1), (d["id"], 1), (c["id"], 2)}
    assert all(x["title"] and x["tier"] and x["status"] for x in full["resolvedDependencies"])
    # A topic without dependencies resolves to itself.
    leaf = await (await hub.get(f"/api/pact/{c['id']}/content", params={"resolve": "1"})).json()
    assert leaf["content"] == "# C\n\nLeaf content C.\n"
    assert leaf["resolvedDependencies"] == []
    bad = await hub.get(f"/api/pact/{a['id']}/content", params={"resolve": "perhaps"})
    assert bad.status == 400
    assert (await bad.json())["field"] == "resolve"


SECTIONED = """Preamble before any heading.

# Budget

Overview text.

## Line Items

Items text.

### Personnel

Staff.

## Line Items

Second list.

## Line-Items

Third.

#### Deep Note

Skipped two levels.

# Risks & Issues

```
# not a heading inside a fence
## nor this
```

> # nor a quoted one

- # nor a list item

Setext Title
============

Under setext.

# §2.1 Risk_Factors
"""


def _flatten(nodes: list[dict[str, Any]]) -> list[tuple[str, str, int]]:
    out = []
    for n in nodes:
        out.append((n["sectionId"], n["title"], n["level"]))
        out.extend(_flatten(n["children"]))
    return out


async def test_sections_are_a_tree_with_design_ids(hub, register):
    topic = await create_topic(hub, await register(), content=SECTIONED)
    resp = await hub.get(f"/api/pact/{topic['id']}/sections")
    assert resp.status == 200
    body = await resp.json()
    assert body["topicId"] == topic["id"]
    tree = body["sections"]
    assert [n["sectionId"] for n in tree] == [
        "sec:_root",
        "sec:budget",
        "sec:risks-issues",
        "sec:setext-title",
        "sec:21-risk-factors",
    ]
    assert _flatten(tree) == [
        ("sec:_root", "", 0),
        ("sec:budget", "Budget", 1),
        ("sec:budget:line-items", "Line Items", 2),
        ("sec:budget:line-items:personnel", "Personnel", 3),
        ("sec:budget:line-items-2", "Line Items", 2),
        ("sec:budget:line-items-3", "Line-Items", 2),
        ("sec:budget:line-items-3:deep-note", "Deep Note", 3),
        ("sec:risks-issues", "Risks & Issues", 1),
        ("sec:setext-title", "Setext Title", 1),
        ("sec:21-risk-factors", "§2.1 Risk_Factors", 1),
    ]
    budget = tree[1]
    assert budget["content"] == "Overview text."
    assert budget["heading"] == "Budget"
    assert [c["sectionId"] for c in budget["children"]] == [
        "sec:budget:line-items",
        "sec:budget:line-items-2",
        "sec:budget:line-items-3",
    ]
    assert budget["children"][0]["content"] == "Items text."  # its own body, not its children's
    assert tree[0]["content"] == "Preamble before any heading."
    risks = tree[2]
    assert risks["children"] == []
    assert "# not a heading inside a fence" in risks["content"]
    assert "> # nor a quoted one" in risks["content"]


async def test_sections_without_preamble_have_no_root(hub, register):
    topic = await create_topic(hub, await register(), content="## Only Level Two\n\nText here.\n## Second\n")
    tree = (await (await hub.get(f"/api/pact/{topic['id']}/sections")).json())["sections"]
    assert _flatten(tree) == [("sec:only-level-two", "Only Level Two", 1), ("sec:second", "Second", 1)]


async def test_text_without_headings_is_one_root_section(hub, register):
    topic = await create_topic(hub, await register(), content="Just a paragraph of text.")
    tree = (await (await hub.get(f"/api/pact/{topic['id']}/sections")).json())["sections"]
    assert tree == [
        {
            "sectionId": "sec:_root",
            "title": "",
            "heading": "",
            "level": 0,
            "content": "Just a paragraph of text.",
            "children": [],
        }
    ]


# --- agents, join -----------------------------------------------------------------------------------


async def test_join_is_idempotent_and_records_one_event(hub, register):
    alice, bob = await register("Alice"), await register("Bob")
    topic = await create_topic(hub, alice)
    resp = await hub.post(f"/api/pact/{topic['id']}/join", headers=bob["headers"], json={})
    assert resp.status == 200, await resp.text()
    first = await resp.json()
    assert first["topicId"] == topic["id"]
    assert first["agentId"] == first["registrationId"] == bob["agentId"]  # PACT's name for it too
    assert first["agentName"] == "Bob"
    assert first["role"] == "collaborator"
    assert first["alreadyJoined"] is False
    # Again, without a body this time, and with an unrelated field.
    again = await hub.post(f"/api/pact/{topic['id']}/join", headers=bob["headers"])
    assert again.status == 200
    again_body = await again.json()
    assert again_body["alreadyJoined"] is True
    assert again_body["joinedAt"] == first["joinedAt"]
    third = await hub.post(f"/api/pact/{topic['id']}/join", headers=bob["headers"], json={"x": 1})
    assert third.status == 200
    # The creator is already a participant.
    own = await (await hub.post(f"/api/pact/{topic['id']}/join", headers=alice["headers"])).json()
    assert own["alreadyJoined"] is True
    assert own["role"] == "creator"

    evs = (await events_of(hub, topic["id"]))["events"]
    assert [e["type"] for e in evs] == ["pact.topic.proposed", "pact.agent.joined"]
    assert evs[1]["agentId"] == bob["agentId"]
    assert evs[1]["agentName"] == "Bob"

    agents = await (await hub.get(f"/api/pact/{topic['id']}/agents")).json()
    assert [(a["agentName"], a["role"], a["isActive"]) for a in agents] == [
        ("Alice", "creator", True),
        ("Bob", "collaborator", True),
    ]
    listed = await (await hub.get(f"/api/pact/topics/{topic['id']}")).json()
    assert listed["participantCount"] == 2


async def test_concurrent_joins_of_one_agent_count_once(hub, register):
    alice, bob = await register(), await register()
    topic = await create_topic(hub, alice)
    resps = await asyncio.gather(
        *(hub.post(f"/api/pact/{topic['id']}/join", headers=bob["headers"]) for _ in range(10))
    )
    assert [r.status for r in resps] == [200] * 10
    bodies = [await r.json() for r in resps]
    assert sum(not b["alreadyJoined"] for b in bodies) == 1
    evs = (await events_of(hub, topic["id"]))["events"]
    assert [e["type"] for e in evs].count("pact.agent.joined") == 1


async def test_join_rejects_a_non_object_body(hub, register):
    agent = await register()
    topic = await create_topic(hub, agent)
    resp = await hub.post(
        f"/api/pact/{topic['id']}/join",
        data=b"[1]",
        headers={**agent["headers"], "Content-Type": "application/json"},
    )
    assert resp.status == 400
    assert (await resp.json())["error"] == "invalid_json"


# --- events -----------------------------------------------------------------------------------------


async def test_events_page_with_after_and_limit(hub, register):
    owner = await register()
    topic = await create_topic(hub, owner)
    joiners = [await register() for _ in range(6)]
    for j in joiners:
        assert (await hub.post(f"/api/pact/{topic['id']}/join", headers=j["headers"])).status == 200

    everything = await events_of(hub, topic["id"])
    ids = [e["id"] for e in everything["events"]]
    assert ids == list(range(1, 8))
    assert everything["hasMore"] is False
    assert everything["nextCursor"] == "7"
    first = everything["events"][0]
    assert first["type"] == "pact.topic.proposed"
    assert first["agentId"] == owner["agentId"]
    assert first["sequenceNumber"] == 1
    assert first["createdAt"].endswith("+00:00")
    assert [e["agentId"] for e in everything["events"][1:]] == [j["agentId"] for j in joiners]

    page = await events_of(hub, topic["id"], limit=3)
    assert [e["id"] for e in page["events"]] == [1, 2, 3]
    assert page["hasMore"] is True
    page = await events_of(hub, topic["id"], after=page["nextCursor"], limit=3)
    assert [e["id"] for e in page["events"]] == [4, 5, 6]
    page = await events_of(hub, topic["id"], after=page["nextCursor"], limit=3)
    assert [e["id"] for e in page["events"]] == [7]
    assert page["hasMore"] is False
    tail = await events_of(hub, topic["id"], after=7)
    assert tail["events"] == []
    assert tail["nextCursor"] == "7"
    assert tail["hasMore"] is False
    assert [e["id"] for e in (await events_of(hub, topic["id"], after=5))["events"]] == [6, 7]


async def test_event_limit_defaults_to_50(hub, register, settings, monkeypatch):
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    owner = await register()
    topic = await create_topic(hub, owner)
    for i in range(54):
        resp = await hub.post(
            f"/api/pact/{topic['id']}/escalate", headers=owner["headers"], json={"message": f"question {i}"}
        )
        assert resp.status == 201
    page = await events_of(hub, topic["id"])
    assert len(page["events"]) == 50
    assert page["hasMore"] is True
    rest = await events_of(hub, topic["id"], after=page["nextCursor"])
    assert [e["id"] for e in rest["events"]] == list(range(51, 56))


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"after": "-1"}, "after"),
        ({"after": "evt_"}, "after"),
        ({"after": "event_3"}, "after"),
        ({"after": str(2**63)}, "after"),
        ({"after": "evt_2147483648"}, "after"),
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
        ({"limit": "many"}, "limit"),
    ],
)
async def test_events_reject_bad_cursor_or_limit(hub, register, params, field):
    topic = await create_topic(hub, await register())
    resp = await hub.get(f"/api/pact/{topic['id']}/events", params=params)
    assert resp.status == 400, await resp.text()
    assert (await resp.json())["field"] == field


async def test_events_stay_ordered_gap_free_and_unique_under_concurrent_writers(
    hub, register, settings, monkeypatch, runtime
):
    """Many agents join and escalate at once while a reader pages with `after`: every page the reader
    gets continues exactly where the previous one stopped, and the whole stream is 1..N."""
    monkeypatch.setattr(settings, "rate_limit_register", 1000)
    owner = await register()
    topic = await create_topic(hub, owner)
    tid = topic["id"]
    agents = await asyncio.gather(*(register() for _ in range(12)))

    async def writer(agent: dict[str, Any]) -> None:
        assert (await hub.post(f"/api/pact/{tid}/join", headers=agent["headers"])).status == 200
        for n in range(3):
            resp = await hub.post(
                f"/api/pact/{tid}/escalate", headers=agent["headers"], json={"message": f"q{n}"}
            )
            assert resp.status == 201, await resp.text()

    writers_done = asyncio.Event()
    seen: list[int] = []

    async def reader() -> None:
        cursor = 0
        while True:
            done = writers_done.is_set()
            page = await events_of(hub, tid, after=cursor, limit=7)
            got = [e["id"] for e in page["events"]]
            assert got == list(range(cursor + 1, cursor + 1 + len(got))), (cursor, got)
            seen.extend(got)
            cursor = int(page["nextCursor"])
            if done and not page["hasMore"]:
                return
            await asyncio.sleep(0)

    read = asyncio.create_task(reader())
    await asyncio.gather(*(writer(a) for a in agents))
    writers_done.set()
    await read

    expected = 1 + len(agents) * 4
    assert seen == list(range(1, expected + 1))
    full = []
    cursor = "0"
    while True:
        page = await events_of(hub, tid, after=cursor, limit=10)
        full.extend(page["events"])
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            break
    assert [e["id"] for e in full] == list(range(1, expected + 1))
    types = [e["type"] for e in full]
    assert types.count("pact.agent.joined") == len(agents)
    assert types.count("pact.escalation.created") == len(agents) * 3
    async with runtime.db.read() as session:
        rows = (await session.scalars(select(Event.seq).where(Event.stream == f"topic:{tid}"))).all()
    assert sorted(rows) == list(range(1, expected + 1))


# --- 404s -------------------------------------------------------------------------------------------

MISSING_IDS = [
    "5f0c2f0e-3b1d-4c8e-9a57-2d1e6b7c4a90",  # well-formed, never issued (fixed: xdist workers collect alike)
    "not-a-uuid",
    "x" * 300,
    "%00",
    "1%20OR%201%3D1",
    "%E2%98%83",
    "..%2F..%2Fetc",
]


@pytest.mark.parametrize("topic_id", MISSING_IDS)
@pytest.mark.parametrize("suffix", ["", "/content", "/sections", "/agents", "/events"])
async def test_unknown_or_malformed_topic_is_404(hub, topic_id, suffix):
    resp = await hub.get(f"/api/pact/{topic_id}{suffix}")
    assert resp.status == 404, await resp.text()
    body = await resp.json()
    assert body["error"] in ("topic_not_found", "not_found")
    assert body["detail"]


@pytest.mark.parametrize("topic_id", MISSING_IDS)
async def test_join_or_escalate_on_unknown_topic_is_404(hub, register, topic_id):
    agent = await register()
    for op in ("join", "escalate"):
        resp = await hub.post(f"/api/pact/{topic_id}/{op}", headers=agent["headers"], json={"message": "m"})
        assert resp.status == 404, await resp.text()
        assert (await resp.json())["error"] in ("topic_not_found", "not_found")


async def test_topics_by_id_path_for_unknown_topic_is_404(hub):
    resp = await hub.get(f"/api/pact/topics/{uuid.uuid4()}")
    assert resp.status == 404
    assert (await resp.json())["error"] == "topic_not_found"
