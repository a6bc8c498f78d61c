async def test_health(hub, docs):
    for client in (hub, docs):
        resp = await client.get("/healthz")
        assert resp.status == 200
        assert resp.headers["X-Request-Id"]
        resp = await client.get("/readyz")
        assert resp.status == 200, await resp.text()
        assert (await resp.json())["database"] == "ok"


async def test_register_and_create_topic(hub, register):
    agent = await register("Alice")
    assert agent["apiKey"].startswith("pact_sk_")
    assert agent["balance"] == 1000
    resp = await hub.post(
        "/api/pact/topics",
        headers=agent["headers"],
        json={
            "title": "Minimum wage in Australia",
            "content": "# Answer\n\nIt is set annually.\n",
            "tier": "institutional",
            "jurisdiction": "au-nsw",
        },
    )
    assert resp.status == 201, await resp.text()
    topic = await resp.json()
    assert topic["jurisdiction"] == "AU-NSW"
    resp = await hub.get(f"/api/pact/{topic['id']}/sections")
    assert (await resp.json())["sections"][0]["sectionId"] == "sec:answer"


async def test_ready_while_a_write_holds_the_database(hub, docs, runtime, register):
    """A busy database is not an unreachable one: /readyz answers while a write transaction is open (on
    SQLite the ping took the write lock, so it waited out the busy timeout and then answered 503)."""
    from sqlalchemy import text

    await register("Holder")
    async with runtime.db.transaction() as session:
        await session.execute(text("UPDATE agents SET name = name"))  # the write lock, held until commit
        for client in (hub, docs):
            resp = await client.get("/readyz")
            assert resp.status == 200, await resp.text()
            assert (await resp.json())["database"] == "ok"
