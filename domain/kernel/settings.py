"""Settings read from CONCORD_* environment variables; one object shared by every process kind."""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from domain.kernel.signing_keys import parse_private_key


class EventLoop(StrEnum):
    """The event loop a serving process (`concord serve`, `web`, `scheduler`) runs on."""

    UVLOOP = "uvloop"  # libuv's, through uvloop: the default
    ASYNCIO = "asyncio"  # the standard library's


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="CONCORD_", extra="ignore")

    data_dir: Path = Field(default=Path("var"), description="Directory for the SQLite file and blobs.")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy async URL; default: SQLite file `<data_dir>/concord.db`."
    )
    db_pool_size: int = Field(
        default=25,
        ge=1,
        le=1000,
        description="PostgreSQL connections each process keeps open once it has needed them; a request that "
        "finds them all busy waits for one. Size it for the concurrent requests one process serves. "
        "Processes × (pool + overflow) must stay below the server's max_connections.",
    )
    db_max_overflow: int = Field(
        default=0,
        ge=0,
        le=1000,
        description="Extra PostgreSQL connections per process beyond the pool, each opened for one request "
        "and closed after it (a connection setup per request: raise the pool instead).",
    )
    redis_url: str | None = Field(
        default=None,
        description="Redis URL for the Dramatiq broker and shared rate limits; unset: in-process.",
    )
    queue_namespace: str = Field(default="concord", description="Prefix of the Dramatiq queues in Redis.")
    redis_max_connections: int = Field(
        default=50,
        ge=1,
        description="Redis connections a web process keeps for rate limits; a request that finds them all "
        "busy waits for one (up to `CONCORD_REDIS_TIMEOUT_SECONDS`).",
    )
    redis_timeout_seconds: float = Field(
        default=2.0,
        gt=0,
        le=60,
        description="Bound on each Redis call of a web process (connect, answer, wait for a free "
        "connection); past it, or with Redis down, rate limits count per process until Redis answers "
        "again (README, Redis trouble).",
    )
    host: str = Field(default="127.0.0.1", description="Address both apps listen on.")
    web_processes: int = Field(
        default=0,
        ge=0,
        description="Web processes that `concord serve` and `concord web` start, sharing both ports "
        "(SO_REUSEPORT) under one supervising parent; 0: one per usable CPU, the cores of the process's CPU "
        "affinity capped by its cgroup CPU quota, rounded up (`--processes` overrides).",
    )
    hub_port: int = Field(default=8080, description="Port of the knowledge-graph hub.")
    docs_port: int = Field(default=8081, description="Port of the document API.")
    public_url: str | None = Field(default=None, description="External base URL of the hub, for links.")
    trusted_proxy_header: str | None = Field(
        default=None,
        description="Header a trusted proxy sets with the client address (e.g. X-Forwarded-For); "
        "its last entry is taken. Unset: the socket peer address.",
    )
    country_header: str | None = Field(
        default=None,
        description="Header a trusted proxy sets with the client's ISO country code (e.g. CF-IPCountry).",
    )
    rate_limit_register: int = Field(default=10, ge=1, description="Registrations per minute per client.")
    rate_limit_keys: int = Field(
        default=10, ge=1, description="Commercial keys created per minute per client."
    )
    rate_limit_login: int = Field(
        default=10,
        ge=1,
        description="Document API sign-ins (POST /api/auth/login) per minute per client address, and as "
        "many per email address.",
    )
    rate_limit_share_codes: int = Field(
        default=5,
        ge=1,
        description="Share-link one-time code requests (the API's and the review page's) per minute per "
        "client address.",
    )
    rate_limit_share_confirms: int = Field(
        default=10, ge=1, description="Share-link code confirmations per minute per client address."
    )
    share_link_codes_per_hour: int = Field(
        default=30,
        ge=1,
        description="Code requests one share link takes in an hour, from every client and for every address "
        "together (counted whether or not a mail goes out, so the answer never tells a listed address from "
        "another).",
    )
    share_link_wrong_codes_per_hour: int = Field(
        default=20,
        ge=1,
        description="Wrong codes one share link takes in an hour, from every client and for every address "
        "together; past it the link refuses every confirmation (429) until the hour has passed. This bounds "
        "the chance of guessing a code on a link (20 an hour: 1 in 50,000 an hour).",
    )
    share_mail_per_domain_per_hour: int = Field(
        default=100,
        ge=1,
        description="Code requests for the addresses of one mail domain in an hour, over every share link: "
        "the most one-time code mails Concord sends to a domain.",
    )
    jwt_secret: str | None = Field(
        default=None,
        min_length=32,
        description="Secret (HS256) signing the document API's access tokens; give every web process the "
        "same one (at least 32 characters). Unset: generated once and kept in `<data_dir>/jwt-secret` "
        "(mode 0600).",
    )
    log_signing_key: str | None = Field(
        default=None,
        description="Ed25519 private key signing the event log's daily roots (`pact.log.root`, PACT §6.4): "
        "PKCS#8 PEM, or the base64 of its 32-byte seed or of its PKCS#8 DER; give every process the same "
        "one. Unset: generated once and kept in `<data_dir>/log-signing-key.pem` (mode 0600).",
    )
    log_root_hours: int = Field(
        default=24,
        ge=1,
        le=24,
        description="Hours a stream's window stays open before its events get a signed root (PACT asks "
        "for one at least daily); only streams with events since their last root get one.",
    )
    access_token_minutes: int = Field(
        default=15, ge=1, le=1440, description="Lifetime of a signed-in person's access token (JWT)."
    )
    # Argon2id's cost (RFC 9106). The defaults are argon2-cffi's (64 MiB, 3 passes, 4 lanes); a small machine
    # may lower them (OWASP's floor: 19 MiB with 2 passes). A stored hash keeps the parameters it was made
    # with and still verifies; a person's next sign-in re-hashes it with these.
    password_hash_memory_kib: int = Field(
        default=65536,
        ge=8,
        le=4_194_304,
        description="Argon2id memory cost of a person's password hash, in KiB (at least 8 per lane).",
    )
    password_hash_time_cost: int = Field(
        default=3, ge=1, le=100, description="Argon2id passes over that memory."
    )
    password_hash_parallelism: int = Field(
        default=4, ge=1, le=64, description="Argon2id lanes (threads) of one hash."
    )
    refresh_token_days: int = Field(
        default=30, ge=1, description="Lifetime of a refresh token; each one is replaced when used."
    )
    refresh_reuse_grace_seconds: float = Field(
        default=5.0,
        ge=0,
        le=60,
        description="How long after a refresh token is used the same token still answers, with the very "
        "pair its first use got (a client retrying a refresh, or sending two at once, keeps its session); "
        "later, or once the new refresh token was used, presenting it again ends the session. 0: never.",
    )
    max_body_bytes: int = Field(default=1_048_576, ge=1024, description="Largest JSON request body accepted.")
    max_upload_bytes: int = Field(
        default=26_214_400, ge=1024, description="Largest document upload accepted."
    )
    starting_balance: int = Field(
        default=1000, ge=0, description="Tokens granted to a newly registered agent."
    )
    escalation_webhook_url: str | None = Field(
        default=None,
        description="URL that receives a JSON POST for every escalation and for its answer; "
        "unset: review queue only.",
    )
    human_query_max_seconds: int = Field(
        default=3600,
        ge=10,
        le=86_400,
        description="The longest an agent's question to a person (`POST .../ask-human`) waits for its "
        "answer before it times out, in seconds; an agent asking for longer (its `timeoutSeconds`, up to "
        "86,400) gets this much, and the answer says so.",
    )
    review_session_hours: float = Field(
        default=8.0,
        gt=0,
        le=24 * 30,
        description="How long a sign-in to the review pages (`/review/`) lasts; signing out ends it sooner.",
    )
    smtp_url: str | None = Field(
        default=None,
        description="SMTP server for mail (share-link one-time codes): smtp://[user:password@]host:port, "
        "smtps:// for TLS, smtp+starttls:// for STARTTLS. Unset: mails are written as .eml files to "
        "`<data_dir>/mail/`.",
    )
    mail_from: str = Field(
        default="concord@localhost", description="Sender address of the mails Concord sends."
    )
    outbound_allow_private: bool = Field(
        default=False,
        description="Allow every outgoing connection (market pages and feeds, submitted URLs, the escalation "
        "webhook, SMTP) to reach loopback, private and other non-public addresses: tests and labs only.",
    )
    outbound_trusted_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated host names (or addresses) of your own services that the escalation "
        "webhook and the SMTP server may be on although they resolve to loopback or private addresses "
        "(e.g. `reviews.internal,localhost`). Never applies to market pages, submitted URLs, feeds or "
        "redirects.",
    )
    mcp_allowed_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated browser origins (e.g. `https://app.example`) allowed to call the MCP "
        "endpoint besides its own origin; requests without an Origin header (desktop and server clients) "
        "are always allowed. On a loopback bind the Host header must be a loopback name or the host of one "
        "of these. Anything else gets 403 before authentication (DNS-rebinding guard).",
    )
    mcp_watch_seconds: float = Field(
        default=2.0,
        gt=0,
        le=60,
        description="How often a document process looks for changes to the documents that MCP clients "
        "listen to (`subscriptions/listen`), in seconds, besides looking at once when an event of one of "
        "them arrives; only while someone listens.",
    )
    sse_heartbeat_seconds: float = Field(
        default=15.0,
        gt=0,
        le=300,
        description="Seconds between the `: keep-alive` comments an event stream (`GET "
        "/api/pact/{id}/events/stream`) sends while no event comes, so proxies keep the connection open; a "
        "stream whose client went away is noticed at its next one.",
    )
    sse_max_connections: int = Field(
        default=2000,
        ge=1,
        le=100_000,
        description="Event streams one web process serves at once; one more is refused with 503 and "
        "`Retry-After` (the client tries again, perhaps on another process).",
    )
    sse_max_per_client: int = Field(
        default=32,
        ge=1,
        le=100_000,
        description="Event streams one client (its key, else its address) may hold open on one web process; "
        "one more is refused with 429 and `Retry-After`, so one client cannot take a process's places.",
    )
    sse_queue_events: int = Field(
        default=256,
        ge=1,
        le=100_000,
        description="Events an event stream may have waiting for a slow client; one more ends that stream "
        "(the client resumes with `Last-Event-ID`), so a slow client never holds up the others.",
    )
    sse_max_seconds: float = Field(
        default=900.0,
        ge=1,
        le=86_400,
        description="How long one event stream lasts before the server ends it (the client reconnects with "
        "`Last-Event-ID` and its access is checked again): a revoked key keeps no stream longer than this.",
    )
    sse_check_seconds: float = Field(
        default=2.0,
        gt=0,
        le=60,
        description="How often a web process with open event streams compares the streams' counters with "
        "what it delivered, catching events whose notice never reached it (written by a `concord` command, "
        "or while Redis was away); only while streams are open.",
    )
    worker_threads: int = Field(
        default=4,
        ge=1,
        description="Job threads of the in-process worker (embedded mode), and of each `concord worker` "
        "process unless `--threads` says otherwise.",
    )
    convert_memory_mb: int = Field(
        default=1024,
        ge=64,
        description="Memory (address space) one document conversion may use, in MB; each conversion runs "
        "in a child process of its own with this limit, and a document that needs more ends `failed`.",
    )
    convert_cpu_seconds: int = Field(
        default=120,
        ge=1,
        description="CPU time one document conversion may use, in seconds; a document that needs more ends "
        "`failed`. A conversion is also stopped after four times this in wall-clock time plus 30 seconds.",
    )
    job_max_retries: int = Field(default=8, ge=0, description="Retries of a failing background job.")
    job_min_backoff_ms: int = Field(default=1000, ge=0, description="First retry delay of a failing job.")
    worker_heartbeat_timeout_seconds: float = Field(
        default=10.0,
        ge=2,
        le=3600,
        description="A worker process (Redis) silent this long counts as dead: the jobs it had taken are "
        "put back on the queue for another worker within seconds (a live worker beats about once a second).",
    )
    worker_frozen_after_seconds: float = Field(
        default=30.0,
        ge=6,
        le=3600,
        description="`concord worker`: a worker process of the group that has not beaten this long (it "
        "beats every 2 s from a thread of its own, whatever its jobs do) is frozen: the group's parent, "
        "looking every 5 s, kills it and starts another.",
    )
    job_resend_after_seconds: float = Field(
        default=900.0,
        ge=10,
        description="A job sent to the broker but neither finished nor running this long is sent again (its "
        "message was lost with the broker, e.g. Redis restarted without persistence); jobs take effect "
        "once, so a redundant send costs only a no-op run.",
    )
    relay_interval_seconds: float = Field(default=2.0, gt=0, description="Outbox relay poll interval.")
    topic_approvals_to_open: int = Field(
        default=3,
        ge=1,
        description="Topic votes 'approve' that move a proposed topic to open (the same "
        "number of rejections rejects it).",
    )
    consensus_min_aligned: int = Field(
        default=0,
        ge=0,
        description="Aligned done signals a topic needs for consensus; 0: the tier's base "
        "(empirical 3, institutional 3, derived 4, contested 5).",
    )
    stable_after_days: float = Field(
        default=30, gt=0, description="Days in consensus before a topic is stable."
    )
    intent_ttl_seconds: int = Field(
        default=60,
        ge=1,
        le=86_400,
        description="Seconds an intent on a topic or document section stays open to objections; with none, "
        "it is then accepted (PACT §10.2; 60 s is PACT's default objection window, §10.5). Applies to "
        "intents declared after a change.",
    )
    min_agent_age_seconds: int = Field(
        default=0, ge=0, description="Anti-abuse: an agent younger than this may not vote (0: off)."
    )
    review_duty: int = Field(
        default=0,
        ge=0,
        description="Anti-abuse: reviews of others' proposals needed per proposal after the first (0: off).",
    )
    civic_duty: int = Field(
        default=0,
        ge=0,
        description="Anti-abuse: topic votes needed per topic created after the first (0: off).",
    )
    pact_heartbeat_timeout_seconds: int = Field(
        default=60,
        ge=1,
        le=86_400,
        description="PACT sessions: a member whose last heartbeat (or join) is older than this many seconds "
        "is shown with liveness `stale` by `_status`, `manifest` and `_heartbeat`; it is never evicted.",
    )
    read_cache_seconds: float = Field(
        default=1.0,
        ge=0,
        description="How long writes made on other machines (or by other commands) may take to show in "
        "cached hub reads (topic content, sections, lists); writes through any web process of the same "
        "`concord serve`/`concord web` show at once, whichever process answers. 0: no cache.",
    )
    retention_days: float = Field(
        default=7,
        gt=0,
        le=3650,
        description="Days that finished housekeeping rows are kept before the hourly sweeps delete them: "
        "ended or expired sign-in sessions and refresh tokens, expired share-link codes and sessions, "
        "sweep runs, finished background jobs (failed jobs stay until an operator clears them).",
    )
    orphan_blob_grace_minutes: float = Field(
        default=60,
        gt=0,
        le=10080,
        description="Minutes a stored upload may stay without its document row before the hourly "
        "sweep deletes it (a web process that died between writing the file and committing the row "
        "leaves one); an upload still in flight is younger than this.",
    )
    sweep_interval_scale: float = Field(
        default=1.0, gt=0, description="Multiplier on every sweep interval (tests use a small one)."
    )
    event_loop: EventLoop = Field(
        default=EventLoop.UVLOOP,
        description="Event loop of the serving processes (`concord serve`, `web`, `scheduler`): `uvloop` "
        "(libuv's, the default: each request costs the web process less CPU) or `asyncio` (the standard "
        "library's, for a debugger or a profiler that needs it). A supervising parent always runs asyncio's.",
    )
    log_level: str = Field(default="INFO", description="Python logging level.")
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="`text`: one readable line per record; `json`: one JSON object per line (`time`, "
        "`level`, `logger`, `message`, `request_id` and the record's fields), for log collectors.",
    )
    metrics_dir: Path | None = Field(
        default=None,
        description="Directory where every process of the machine (web, scheduler, `dramatiq` workers) "
        "writes its Prometheus samples, so that `/metrics` on any web process shows them all; empty it "
        "when the machine starts. Unset: each process counts its own (under the supervisor of "
        "`--processes N`, its shared directory).",
    )
    metrics_port: int = Field(
        default=9191,
        ge=1,
        le=65535,
        description="Port of /metrics where no web app runs: a worker machine's (`dramatiq workers.main "
        "--fork-function workers.exposition:serve`) and `concord scheduler`'s, on `CONCORD_HOST`.",
    )
    metrics_token: str | None = Field(
        default=None,
        min_length=16,
        description="When set, `/metrics` answers only `Authorization: Bearer <token>` (401 otherwise). "
        "Unset: anyone who reaches the port may scrape, so keep /metrics off the public internet.",
    )
    build_revision: str | None = Field(
        default=None,
        max_length=64,
        description="The source revision this build was made from (the image sets it from its `REVISION` "
        "build argument), shown as the `revision` label of `concord_build_info`; unset: `unknown`.",
    )

    @field_validator(
        "database_url",
        "redis_url",
        "escalation_webhook_url",
        "public_url",
        "smtp_url",
        "jwt_secret",
        "log_signing_key",
        "metrics_dir",
        "metrics_token",
        "build_revision",
        mode="before",
    )
    @classmethod
    def _empty_is_unset(cls, v: object) -> object:
        return None if v == "" else v

    @field_validator("log_signing_key")
    @classmethod
    def _ed25519_key(cls, v: str | None) -> str | None:
        """A key that cannot sign is refused when the settings load, not at the first daily root."""
        if v is not None:
            parse_private_key(v)
        return v

    @model_validator(mode="after")
    def _argon2_memory_per_lane(self) -> Settings:
        """Argon2 needs 8 KiB of memory a lane: a setting it would refuse stops the process at start."""
        if self.password_hash_memory_kib < 8 * self.password_hash_parallelism:
            raise ValueError(
                "password_hash_memory_kib: at least 8 KiB a lane "
                f"({8 * self.password_hash_parallelism} for {self.password_hash_parallelism} lanes)"
            )
        return self

    @field_validator("outbound_trusted_hosts", "mcp_allowed_origins", mode="before")
    @classmethod
    def _host_list(cls, v: object) -> object:
        """Comma-separated in the environment (the guard compares them in their `normal_host` form)."""
        items = v.split(",") if isinstance(v, str) else v
        if not isinstance(items, list | tuple):
            return v
        return [str(h).strip() for h in items if str(h).strip()]

    @property
    def db_url(self) -> str:
        if self.database_url:
            url = self.database_url
            # Accept the plain URLs operators are used to and pick the async drivers.
            if url.startswith("postgresql://") or url.startswith("postgres://"):
                url = "postgresql+asyncpg://" + url.split("://", 1)[1]
            elif url.startswith("sqlite:///"):
                url = "sqlite+aiosqlite:///" + url[len("sqlite:///") :]
            return url
        return f"sqlite+aiosqlite:///{(self.data_dir / 'concord.db').resolve()}"

    @property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def mail_dir(self) -> Path:
        return self.data_dir / "mail"

    @property
    def is_sqlite(self) -> bool:
        return self.db_url.startswith("sqlite")


@lru_cache
def get_settings() -> Settings:
    return Settings()
