"""A topic's PACT session operations beside the seed's: leave, poll, the transcript and the completions
(PACT v2.0.3 §7.1, §4.4), as the PACT CLI calls them. Reads are anonymous, as the topic's event list is."""

from __future__ import annotations

from aiohttp import web

from domain.kernel import event_views
from domain.topics import leaving, lifecycle
from domain.topics import store as topics
from web.hub.auth import agent_context
from web.hub.topics.read_models import TopicLeft
from web.kernel.access import Agent
from web.kernel.completions import CompletionList
from web.kernel.events import Poll, PollQuery, Transcript, TranscriptQuery
from web.kernel.replies import Answer
from web.kernel.request import runtime
from web.kernel.routing import Routes

routes = Routes()

TAGS = ["Topics"]
NOT_FOUND = {404: "Topic not found"}


def _topic(request: web.Request) -> str:
    return request.match_info["topicId"]


@routes.route(
    "DELETE",
    "/api/pact/{topicId}/leave",
    summary="Leave the topic: listed inactive, no longer counted; joining again restores the agent",
    tags=TAGS,
    response=TopicLeft,
    access=Agent(),
    errors={401: "Missing or invalid agent key", 403: "Not joined (or already left)", **NOT_FOUND},
)
async def leave(request: web.Request) -> Answer:
    ctx = agent_context(request)
    async with runtime(request).db.transaction() as session:
        left = await leaving.leave(session, ctx, _topic(request))
    return TopicLeft.of(left)


@routes.route(
    "GET",
    "/api/pact/{topicId}/poll",
    summary="Changes since a cursor: {since, changes, cursor}, as the document API's poll",
    tags=TAGS,
    query=PollQuery,
    response=Poll,
    errors=NOT_FOUND,
)
async def poll(request: web.Request, query: PollQuery) -> Answer:
    async with runtime(request).db.read() as session:
        topic = await topics.get(session, _topic(request))
        page = await event_views.poll(
            session, topics.stream(topic.id), since=query.since, section_id=query.sectionId, limit=query.limit
        )
    return Poll.of(page)


@routes.route(
    "GET",
    "/api/pact/{topicId}/transcript",
    summary="The event log since a cursor, each event with a one-line summary: {events, latestEventId}",
    tags=TAGS,
    query=TranscriptQuery,
    response=Transcript,
    errors=NOT_FOUND,
)
async def transcript(request: web.Request, query: TranscriptQuery) -> Answer:
    async with runtime(request).db.read() as session:
        topic = await topics.get(session, _topic(request))
        found = await event_views.transcript(
            session, topics.stream(topic.id), since=query.since, limit=query.limit
        )
    return Transcript.of(found)


@routes.route(
    "GET",
    "/api/pact/{topicId}/completions",
    summary="The agents' done signals, one per agent, oldest first",
    tags=TAGS,
    response=CompletionList,
    errors=NOT_FOUND,
)
async def completions(request: web.Request) -> Answer:
    async with runtime(request).db.read() as session:
        found = await lifecycle.completions_of(session, _topic(request))
    return CompletionList.of(found)
