"""The PACT implementation profile (v2.0.3 §15.1): what an app of Concord implements, for
`/.well-known/pact.json`, built from what the app actually routes.

The catalogue below lists PACT's operations by the method and path the specification gives them (§7.1, §4.4,
§13.6, §15.5) or, where it names none, the path Concord serves them on. An app's profile lists the operations
whose method and path shape (placeholder names aside) it routes, and derives the capability flags that stand
for operations from them; so a route added later shows in the profile without the profile being edited.
The flags no route can stand for (a body field checked on every write, a property of the event log) are fixed
below, each with its reason.

`conformanceLevel` is `core` (§15.2). Core is what Concord claims, and `missing_core` says which of the Core
operations an app does not route (tests/test_pact_profile.py holds both apps to it)."""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from domain.consensus.policies import DEFAULT, ApprovalPolicy
from domain.kernel.event_record import EntityType

NAME = "Concord"
SPEC_VERSION = "2.0.3"


class ConformanceLevel(StrEnum):
    """PACT §15.2 (and §17.9's authorization-required)."""

    CORE = "core"
    EXTENDED = "extended"
    AUTHORIZATION_REQUIRED = "authorization-required"


CONFORMANCE_LEVEL = ConformanceLevel.CORE


class PactOperation(StrEnum):
    """PACT's operations, named as §4 names them where it does (`agent.join`), else after their path."""

    AGENT_JOIN = "agent.join"
    AGENT_LEAVE = "agent.leave"
    AGENTS_LIST = "agents.list"
    DOCUMENT_GET = "document.get"
    DOCUMENT_SECTIONS = "document.sections"
    PROPOSAL_CREATE = "proposal.create"
    PROPOSALS_LIST = "proposals.list"
    PROPOSAL_APPROVE = "proposal.approve"
    PROPOSAL_REJECT = "proposal.reject"
    PROPOSAL_OBJECT = "proposal.object"
    PROPOSAL_WITHDRAW = "proposal.withdraw"
    SECTION_LOCK = "section.lock"
    SECTION_UNLOCK = "section.unlock"
    COMMENT_ADD = "comment.add"
    COMMENT_RESOLVE = "comment.resolve"
    ESCALATE_HUMAN = "escalate.human"
    EVENTS_HISTORY = "events.history"
    EVENTS_SUBSCRIBE = "events.subscribe"
    EVENTS_POLL = "events.poll"
    EVENTS_TRANSCRIPT = "events.transcript"
    INTENT_DECLARE = "intent.declare"
    INTENTS_LIST = "intents.list"
    INTENT_OBJECT = "intent.object"
    CONSTRAINT_PUBLISH = "constraint.publish"
    CONSTRAINTS_LIST = "constraints.list"
    CONSTRAINT_WITHDRAW = "constraint.withdraw"
    SALIENCE_SET = "salience.set"
    SALIENCE_MAP = "salience.map"
    HUMAN_ASK = "human.ask"
    HUMAN_RESPONSES = "human.responses"
    HUMAN_RESPOND = "human.respond"
    HUMAN_RESOLVE = "human.resolve"
    AGENT_DONE = "agent.done"
    COMPLETIONS_LIST = "completions.list"
    ESCALATION_BRIEFING = "escalation.briefing"
    RESOLUTION_PRE_VALIDATE = "resolution.pre-validate"
    CASCADE_STATUS = "cascade.status"
    CASCADE_VALIDATE = "cascade.validate"
    FABRIC_STATUS = "fabric.status"
    FABRIC_MANIFEST = "fabric.manifest"
    AGENT_HEARTBEAT = "agent.heartbeat"
    EVENTS_MARK_READ = "events.mark-read"
    AGENT_ONBOARD = "agent.onboard"
    AGENT_JOIN_TOKEN = "agent.join-token"
    MESSAGE_SEND = "message.send"
    MESSAGES_INBOX = "messages.inbox"
    MESSAGE_ACK = "message.ack"
    QUERY_SUBMIT = "query.submit"
    QUERIES_PENDING = "queries.pending"
    QUERY_RESPOND = "query.respond"
    QUERY_ANSWER = "query.answer"
    NEGOTIATIONS_LIST = "negotiations.list"
    NEGOTIATION_POSITION = "negotiation.position"
    NEGOTIATION_SYNTHESIS = "negotiation.synthesis"
    REGISTER_READ = "register.read"
    TIER_INTROSPECT = "tier.introspect"


@dataclass(frozen=True)
class OperationSpec:
    operation: PactOperation
    method: str
    path: str  # as the specification writes it; Concord's own where `spec_path` is False
    section: str  # where the specification defines it
    core: bool  # part of what conformanceLevel core claims (see CORE below)
    spec_path: bool = True

    @property
    def shape(self) -> tuple[str, str]:
        return self.method, path_shape(self.path)


_R = "/api/pact/{documentId}"

# Core: every endpoint §7.1 lists for the unmediated protocol and for PACT Live that serves §15.2's Core
# primitives (join, leave, intent, constrain, propose, object, escalate, done, poll, event sourcing) and what
# they depend on. §7.1 also lists the v2.0.3 session layer (§4.4) and the resolution workflow's briefing,
# pre-validation and cascade endpoints, which §15.2 does not name: listed here, not claimed (docs/pact.md).
CATALOGUE: tuple[OperationSpec, ...] = (
    OperationSpec(PactOperation.AGENT_JOIN, "POST", f"{_R}/join", "§4.1, §7.1", True),
    OperationSpec(PactOperation.AGENT_LEAVE, "DELETE", f"{_R}/leave", "§4.1, §7.1", True),
    OperationSpec(PactOperation.DOCUMENT_GET, "GET", f"{_R}/content", "§4.2, §7.1", True),
    OperationSpec(PactOperation.DOCUMENT_SECTIONS, "GET", f"{_R}/sections", "§4.2, §7.1", True),
    OperationSpec(PactOperation.AGENTS_LIST, "GET", f"{_R}/agents", "§7.1", True),
    OperationSpec(PactOperation.PROPOSAL_CREATE, "POST", f"{_R}/proposals", "§4.3, §7.1", True),
    OperationSpec(PactOperation.PROPOSALS_LIST, "GET", f"{_R}/proposals", "§4.2, §7.1", True),
    OperationSpec(
        PactOperation.PROPOSAL_APPROVE, "POST", f"{_R}/proposals/{{id}}/approve", "§4.3, §7.1", True
    ),
    OperationSpec(PactOperation.PROPOSAL_REJECT, "POST", f"{_R}/proposals/{{id}}/reject", "§4.3, §7.1", True),
    OperationSpec(PactOperation.PROPOSAL_WITHDRAW, "DELETE", f"{_R}/proposals/{{id}}", "§4.3, §7.1", True),
    OperationSpec(
        PactOperation.SECTION_LOCK, "POST", f"{_R}/sections/{{sectionId}}/lock", "§4.3, §7.1", True
    ),
    OperationSpec(
        PactOperation.SECTION_UNLOCK, "DELETE", f"{_R}/sections/{{sectionId}}/lock", "§4.3, §7.1", True
    ),
    OperationSpec(PactOperation.COMMENT_ADD, "POST", f"{_R}/comments", "§4.3, §7.1", True),
    OperationSpec(PactOperation.ESCALATE_HUMAN, "POST", f"{_R}/escalate", "§4.3, §7.1", True),
    OperationSpec(PactOperation.EVENTS_HISTORY, "GET", f"{_R}/events", "§4.2, §7.1", True),
    OperationSpec(PactOperation.INTENT_DECLARE, "POST", f"{_R}/intents", "§10.2, §7.1", True),
    OperationSpec(PactOperation.INTENTS_LIST, "GET", f"{_R}/intents", "§7.1", True),
    OperationSpec(PactOperation.INTENT_OBJECT, "POST", f"{_R}/intents/{{id}}/object", "§10.2, §7.1", True),
    OperationSpec(PactOperation.CONSTRAINT_PUBLISH, "POST", f"{_R}/constraints", "§10.3, §7.1", True),
    OperationSpec(PactOperation.CONSTRAINTS_LIST, "GET", f"{_R}/constraints", "§7.1", True),
    OperationSpec(
        PactOperation.CONSTRAINT_WITHDRAW, "DELETE", f"{_R}/constraints/{{id}}", "§10.3, §7.1", True
    ),
    OperationSpec(PactOperation.SALIENCE_SET, "POST", f"{_R}/salience", "§10.4, §7.1", True),
    OperationSpec(PactOperation.SALIENCE_MAP, "GET", f"{_R}/salience", "§10.4, §7.1", True),
    OperationSpec(
        PactOperation.PROPOSAL_OBJECT, "POST", f"{_R}/proposals/{{id}}/object", "§10.5, §7.1", True
    ),
    OperationSpec(PactOperation.EVENTS_POLL, "GET", f"{_R}/poll", "§7.1", True),
    OperationSpec(PactOperation.HUMAN_ASK, "POST", f"{_R}/ask-human", "§7.1", True),
    OperationSpec(PactOperation.HUMAN_RESPONSES, "GET", f"{_R}/human-responses", "§7.1", True),
    OperationSpec(
        PactOperation.HUMAN_RESPOND, "POST", f"{_R}/human-responses/{{queryId}}/respond", "§7.1", True
    ),
    OperationSpec(PactOperation.AGENT_DONE, "POST", f"{_R}/done", "§7.1", True),
    OperationSpec(PactOperation.COMPLETIONS_LIST, "GET", f"{_R}/completions", "§7.1", True),
    OperationSpec(PactOperation.HUMAN_RESOLVE, "POST", f"{_R}/resolve", "§7.1", True),
    # Listed by §7.1, not part of the Core claim.
    OperationSpec(
        PactOperation.ESCALATION_BRIEFING, "GET", f"{_R}/escalation-briefing/{{escalationId}}", "§7.1", False
    ),
    OperationSpec(PactOperation.RESOLUTION_PRE_VALIDATE, "POST", f"{_R}/pre-validate", "§7.1", False),
    OperationSpec(PactOperation.CASCADE_STATUS, "GET", f"{_R}/cascade-status", "§7.1", False),
    OperationSpec(PactOperation.CASCADE_VALIDATE, "POST", f"{_R}/cascade-validate", "§7.1", False),
    OperationSpec(PactOperation.FABRIC_STATUS, "GET", f"{_R}/_status", "§4.4.1", False),
    OperationSpec(PactOperation.FABRIC_MANIFEST, "GET", f"{_R}/manifest", "§4.4.2", False),
    OperationSpec(PactOperation.AGENT_HEARTBEAT, "POST", f"{_R}/_heartbeat", "§4.4.3", False),
    OperationSpec(PactOperation.EVENTS_MARK_READ, "POST", f"{_R}/mark-read", "§4.4.4", False),
    OperationSpec(PactOperation.AGENT_ONBOARD, "POST", f"{_R}/_onboard", "§4.4.5", False),
    # Elsewhere in the specification.
    OperationSpec(PactOperation.AGENT_JOIN_TOKEN, "POST", f"{_R}/join-token", "Quick Start", False),
    OperationSpec(PactOperation.TIER_INTROSPECT, "POST", "/api/pact/_probe/tier", "§15.5", False),
    OperationSpec(PactOperation.MESSAGE_SEND, "POST", f"{_R}/messages", "§13.6", False),
    OperationSpec(PactOperation.MESSAGES_INBOX, "GET", f"{_R}/messages/inbox", "§13.6", False),
    OperationSpec(PactOperation.MESSAGE_ACK, "POST", f"{_R}/messages/{{messageId}}/ack", "§13.6", False),
    OperationSpec(PactOperation.QUERY_SUBMIT, "POST", f"{_R}/queries", "§13.6", False),
    OperationSpec(PactOperation.QUERIES_PENDING, "GET", f"{_R}/queries/pending", "§13.6", False),
    OperationSpec(PactOperation.QUERY_RESPOND, "POST", f"{_R}/queries/{{queryId}}/respond", "§13.6", False),
    OperationSpec(PactOperation.QUERY_ANSWER, "GET", f"{_R}/queries/{{queryId}}/answer", "§13.6", False),
    OperationSpec(PactOperation.NEGOTIATIONS_LIST, "GET", f"{_R}/negotiations", "§13.6", False),
    OperationSpec(
        PactOperation.NEGOTIATION_POSITION, "POST", f"{_R}/negotiations/{{id}}/position", "§13.6", False
    ),
    OperationSpec(
        PactOperation.NEGOTIATION_SYNTHESIS, "GET", f"{_R}/negotiations/{{id}}/synthesis", "§13.6", False
    ),
    OperationSpec(PactOperation.REGISTER_READ, "GET", f"{_R}/register", "§13.6", False),
    # Operations the specification names without a path: the paths Concord serves them on.
    OperationSpec(
        PactOperation.EVENTS_SUBSCRIBE, "GET", f"{_R}/events/stream", "§4.2, §7.2", False, spec_path=False
    ),
    OperationSpec(
        PactOperation.COMMENT_RESOLVE, "PUT", "/api/comments/{id}/resolve", "§4.3", False, spec_path=False
    ),
    # The reference CLI's `transcript` (§4.4's active-session transcript; the CLI's path).
    OperationSpec(
        PactOperation.EVENTS_TRANSCRIPT, "GET", f"{_R}/transcript", "§4.4, §7.3", False, spec_path=False
    ),
)
CORE: tuple[OperationSpec, ...] = tuple(spec for spec in CATALOGUE if spec.core)


def path_shape(path: str) -> str:
    """A path with every placeholder unnamed: `/api/pact/{docId}/join` and `/api/pact/{topicId}/join` are the
    same operation's path."""
    return re.sub(r"\{[^}]*\}", "{}", path).rstrip("/") or "/"


@dataclass(frozen=True)
class RoutedOperation:
    """An operation of the catalogue as an app serves it: on the app's own path."""

    spec: OperationSpec
    path: str


def routed_operations(routes: Iterable[tuple[str, str]]) -> list[RoutedOperation]:
    """The catalogue's operations among `routes` (method, path), in the catalogue's order, each on the app's
    path for it: the `/api/pact/` one where the app answers on several (the document API's `/api/tap/`
    paths have `/api/pact/` aliases)."""
    paths: dict[tuple[str, str], list[str]] = {}
    for method, path in routes:
        paths.setdefault((method.upper(), path_shape(path)), []).append(path)
    found: list[RoutedOperation] = []
    for spec in CATALOGUE:
        candidates = paths.get(spec.shape)
        if candidates:
            pact = [p for p in candidates if p.startswith("/api/pact/")]
            found.append(RoutedOperation(spec, (pact or candidates)[0]))
    return found


def missing_core(routes: Iterable[tuple[str, str]]) -> list[OperationSpec]:
    """The Core operations an app with these routes does not serve."""
    served = {r.spec.operation for r in routed_operations(routes)}
    return [spec for spec in CORE if spec.operation not in served]


class Capability(StrEnum):
    """Capability flags of the profile: §15.1's well-known ones, then Concord's own."""

    MEDIATED_COMMUNICATION = "mediatedCommunication"
    INFORMATION_BARRIERS = "informationBarriers"
    STRUCTURED_NEGOTIATION = "structuredNegotiation"
    INVITE_TOKENS = "inviteTokens"
    AUTHORIZATION_PROOF = "authorizationProof"
    AGENT_IDENTITY_TRANSFER = "agentIdentityTransfer"
    DID_DOCUMENT_PINNING = "didDocumentPinning"
    RECOVERY_SINGLE_CHANNEL = "recoverySingleChannel"
    ATOMIC_ONBOARD = "atomicOnboard"
    MANIFEST = "manifest"
    SESSION_AWARENESS = "sessionAwareness"
    PUSH_DELIVERY = "pushDelivery"
    SESSIONS = "sessions"
    # Concord's: what a client may rely on beyond the well-known flags.
    REALTIME_EVENTS = "realtimeEvents"  # §7.2: a per-resource event stream (Server-Sent Events)
    HASH_CHAINED_EVENTS = "hashChainedEvents"  # §6.4: every event carries prev_hash
    SIGNED_LOG_ROOTS = "signedLogRoots"  # §6.4: pact.log.root events signed by endpoints.logSigningKey
    TIER_INTROSPECTION = "tierIntrospection"  # §15.5: POST /api/pact/_probe/tier


# Flags that stand for operations: true when the app routes every one of them.
CAPABILITY_OPERATIONS: dict[Capability, frozenset[PactOperation]] = {
    Capability.MEDIATED_COMMUNICATION: frozenset(
        {
            PactOperation.MESSAGE_SEND,
            PactOperation.MESSAGES_INBOX,
            PactOperation.MESSAGE_ACK,
            PactOperation.QUERY_SUBMIT,
            PactOperation.QUERIES_PENDING,
            PactOperation.QUERY_RESPOND,
            PactOperation.QUERY_ANSWER,
            PactOperation.REGISTER_READ,
        }
    ),
    Capability.STRUCTURED_NEGOTIATION: frozenset(
        {
            PactOperation.NEGOTIATIONS_LIST,
            PactOperation.NEGOTIATION_POSITION,
            PactOperation.NEGOTIATION_SYNTHESIS,
        }
    ),
    Capability.INVITE_TOKENS: frozenset({PactOperation.AGENT_JOIN_TOKEN}),
    Capability.ATOMIC_ONBOARD: frozenset({PactOperation.AGENT_ONBOARD}),
    Capability.MANIFEST: frozenset({PactOperation.FABRIC_MANIFEST}),
    Capability.SESSION_AWARENESS: frozenset(
        {PactOperation.FABRIC_STATUS, PactOperation.AGENT_HEARTBEAT, PactOperation.EVENTS_MARK_READ}
    ),
    Capability.REALTIME_EVENTS: frozenset({PactOperation.EVENTS_SUBSCRIBE}),
    Capability.TIER_INTROSPECTION: frozenset({PactOperation.TIER_INTROSPECT}),
}
# Flags no route stands for, as the code stands. Change one here when the code behind it changes.
FIXED_CAPABILITIES: dict[Capability, bool] = {
    # Classification, clearance, graduated disclosure (§13.8): none; a resource's members read all of it.
    Capability.INFORMATION_BARRIERS: False,
    # §17.6: an `authorization_proof` on a write is neither verified nor required (it is ignored).
    Capability.AUTHORIZATION_PROOF: False,
    # §23: an agent's key cannot be moved to another operator or recovered.
    Capability.AGENT_IDENTITY_TRANSFER: False,
    Capability.DID_DOCUMENT_PINNING: False,  # §17.4: no principals, no did:web documents to pin
    Capability.RECOVERY_SINGLE_CHANNEL: False,  # §23.5b
    Capability.PUSH_DELIVERY: False,  # v2.1: events reach agents by poll, event list and stream only
    Capability.SESSIONS: False,  # v2.1 §19–20
    # Every event is written with its prev_hash, in the transaction that writes it (domain/kernel/journal.py).
    Capability.HASH_CHAINED_EVENTS: True,
    # A sweep signs each active stream at least daily (domain/kernel/log_roots.py).
    Capability.SIGNED_LOG_ROOTS: True,
}


def capabilities(operations: Iterable[PactOperation]) -> dict[Capability, bool]:
    """Every flag, in the vocabulary's order: derived from the routed operations where operations stand
    for it, else fixed."""
    served = set(operations)
    flags: dict[Capability, bool] = {}
    for flag in Capability:
        needed = CAPABILITY_OPERATIONS.get(flag)
        flags[flag] = needed <= served if needed is not None else FIXED_CAPABILITIES[flag]
    return flags


@dataclass(frozen=True)
class RetentionPolicy:
    """§6.3."""

    minimum_days: int
    indefinite: bool
    tombstone_after: int | None


# Concord deletes no event and no resource (no code path does; tests/test_pact_profile.py checks the sources),
# so a resource's events are kept for as long as the database is: indefinitely, which is at least §6.3's
# recommended 365 days. What an operator's backups and restores keep is the operator's (deploy/README.md).
RETENTION = RetentionPolicy(minimum_days=365, indefinite=True, tombstone_after=None)


@dataclass(frozen=True)
class ResourceType:
    """A resource type an app serves (§14.1, §14.3), as the profile declares it."""

    type: str  # PACT's type identifier (the registry's)
    entity_type: EntityType  # what its events carry as entityType
    field_schema: str
    proposal_payload: str
    content_format: str
    terminal_states: tuple[str, ...]
    apply_semantics: str
    approval_policies: tuple[ApprovalPolicy, ...]
    default_approval_policy: ApprovalPolicy


FIELD_SCHEMA = (
    "sec:{slug} from a Markdown heading; a child section is sec:{slug}:{child-slug} (PACT's "
    "sec:{slug}/{child-slug} is accepted as the same section); sec:_root is the text before the first heading"
)


def document_type(proposal_payload: str) -> ResourceType:
    """The document API's resource type; `proposal_payload` is its proposal body (the web model's fields)."""
    return ResourceType(
        type="document",
        entity_type=EntityType.DOCUMENT,
        field_schema=FIELD_SCHEMA,
        proposal_payload=proposal_payload,
        content_format="text/markdown",
        terminal_states=("Merged",),
        apply_semantics="Text replacement within a Markdown section: an accepted proposal's content replaces "
        "the section's own text (up to the next heading), the document's version goes up, the other pending "
        "proposals on that section are superseded, and a Word upload's download carries the change.",
        approval_policies=tuple(ApprovalPolicy),
        default_approval_policy=DEFAULT,
    )


def topic_type(proposal_payload: str) -> ResourceType:
    """The hub's resource type: a topic is PACT's `fact` (§14.5: "join a topic"), a knowledge claim written
    as sectioned Markdown; `proposal_payload` is its proposal body (the web model's fields)."""
    return ResourceType(
        type="fact",
        entity_type=EntityType.TOPIC,
        field_schema=FIELD_SCHEMA,
        proposal_payload=proposal_payload,
        content_format="text/markdown",
        terminal_states=("Merged",),
        apply_semantics="Text replacement within a section of the topic's Markdown: a merged proposal's "
        "newContent replaces the section's own text (up to the next heading), the topic's version goes up "
        "and the other pending proposals on that section are superseded; the topic's own status (proposed, "
        "open, consensus, stable, challenged) follows its votes and done signals.",
        approval_policies=tuple(ApprovalPolicy),
        default_approval_policy=DEFAULT,
    )


def payload_shape(fields: Iterable[tuple[str, bool]]) -> str:
    """A proposal payload as the registry writes one: `{ sectionId, newContent, summary, reasoning? }` from
    (name, required) pairs."""
    names = [name if required else f"{name}?" for name, required in fields]
    return "{ " + ", ".join(names) + " }"


@dataclass(frozen=True)
class Endpoints:
    rest: str
    realtime: str
    log_signing_key: str


@dataclass(frozen=True)
class Profile:
    name: str
    version: str
    spec_version: str
    conformance_level: ConformanceLevel
    resource_types: tuple[ResourceType, ...]
    capabilities: dict[Capability, bool]
    retention_policy: RetentionPolicy
    endpoints: Endpoints
    operations: tuple[RoutedOperation, ...]


def implementation_version() -> str:
    """Concord's version (the installed package's)."""
    try:
        return importlib.metadata.version("concord")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def build(routes: Iterable[tuple[str, str]], resource_type: ResourceType, endpoints: Endpoints) -> Profile:
    """The profile of an app that routes `routes` (method, path) and serves `resource_type`."""
    operations = tuple(routed_operations(routes))
    return Profile(
        name=NAME,
        version=implementation_version(),
        spec_version=SPEC_VERSION,
        conformance_level=CONFORMANCE_LEVEL,
        resource_types=(resource_type,),
        capabilities=capabilities(op.spec.operation for op in operations),
        retention_policy=RETENTION,
        endpoints=endpoints,
        operations=operations,
    )
