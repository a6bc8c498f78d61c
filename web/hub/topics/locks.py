"""Section locks on a topic (PACT v2.0.3 §4.3): what the PACT CLI's `lock` and `unlock` send."""

from __future__ import annotations

from aiohttp import web

from domain.topics import locks
from web.hub.auth import agent_context
from web.hub.topics.schemas import TopicLockBody
from web.kernel.access import Agent
from web.kernel.locks import Lock, Unlocked
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()

TAG = ["Collaboration"]
AUTH = {401: "Missing or invalid agent key", 403: "Join the topic first"}


@routes.route(
    "POST",
    "/api/pact/{topicId}/sections/{sectionId}/lock",
    summary="Lock a section for up to 60 s (ttlSeconds, default 60); lock it again to renew",
    tags=TAG,
    body=TopicLockBody,
    body_optional=True,
    response=Lock,
    access=Agent(),
    errors={
        **AUTH,
        404: "Topic or section not found",
        409: "The section is locked by another agent (section_locked, with lockedBy and expiresAt)",
    },
)
async def lock_section(request: web.Request, body: TopicLockBody) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        lock = await locks.lock_section(
            session,
            ctx,
            request.match_info["topicId"],
            section_id=request.match_info["sectionId"],
            ttl_seconds=body.ttlSeconds,
        )
    return Lock.of(lock)


@routes.route(
    "DELETE",
    "/api/pact/{topicId}/sections/{sectionId}/lock",
    summary="Release your lock on a section (holder only)",
    tags=TAG,
    response=Unlocked,
    access=Agent(),
    errors={
        401: "Missing or invalid agent key",
        403: "Join the topic first, or the lock is another agent's (not_lock_holder)",
        404: "Topic not found, or the section is not locked (lock_not_found)",
    },
)
async def unlock_section(request: web.Request) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        released = await locks.unlock_section(
            session, ctx, request.match_info["topicId"], section_id=request.match_info["sectionId"]
        )
    return Unlocked.of(released)
