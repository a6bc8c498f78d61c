"""Everything the processes run besides requests, listed in one place: the background jobs (workers declare
one Dramatiq actor per entry), the periodic sweeps (the scheduler runs them) and the reference-data seeders
(`concord seed`). Nothing registers itself on import."""

from __future__ import annotations

from domain.axiom import bulk as axiom_bulk
from domain.axiom import seed as axiom_seed
from domain.consensus import escalations, intents
from domain.consensus import sessions as pact_sessions
from domain.documents import blobs as document_blobs
from domain.documents import library
from domain.documents import locks as document_locks
from domain.documents import proposals as document_proposals
from domain.documents import sharing as document_sharing
from domain.kernel import log_roots, sweeps
from domain.kernel.outbox import Job
from domain.kernel.seeding import Seeder
from domain.kernel.settings import get_settings
from domain.kernel.sweeps import Sweep
from domain.market import cart, fuel_ingest, quote_rates, scrape
from domain.market import seed as market_seed
from domain.market.settings import get_market_settings
from domain.people import staff_sessions, user_sessions
from domain.review import escalations as review_escalations
from domain.topics import consensus as topic_consensus
from domain.topics import lifecycle as topic_lifecycle
from domain.topics import locks as topic_locks
from domain.work import claims as work_claims
from domain.work import validator as work_validator

JOBS: dict[str, Job] = {
    job.name: job
    for job in (
        library.CONVERT_JOB,
        escalations.NOTIFY_JOB,
        escalations.CLOSED_JOB,
        review_escalations.ANSWER_JOB,
        cart.CART_JOB,
        scrape.SCRAPE_JOB,
        fuel_ingest.INGEST_JOB,
        work_validator.VALIDATE_JOB,
        axiom_bulk.FINISH_JOB,
    )
}

SWEEPS: tuple[Sweep, ...] = (
    Sweep(
        "outbox.requeue_stale",
        min(60.0, get_settings().job_resend_after_seconds / 2),
        sweeps.requeue_stale_jobs,
    ),
    Sweep("topics.expire_proposals", 5, topic_consensus.expire_proposals),
    Sweep("topics.stabilise", 60, topic_lifecycle.stabilise),
    Sweep("topics.expire_locks", 5, topic_locks.expire_locks),
    Sweep("documents.expire_locks", 5, document_locks.expire_locks),
    Sweep("documents.expire_proposals", 10, document_proposals.expire_proposals),
    # Intents of topics and documents whose TTL ran out with no objection (reads say so before it runs).
    Sweep("intents.accept_due", 5, intents.accept_due),
    # Agents' questions to people (ask-human) nobody answered by their timeout.
    Sweep("escalations.expire_questions", 5, escalations.expire_questions),
    Sweep("market.mark_stale_observations", 3600, quote_rates.mark_stale),
    Sweep("market.refresh_stale_prices", 900, scrape.refresh_stale),
    Sweep("market.fuel_ingest", get_market_settings().fuel_ingest_minutes * 60, fuel_ingest.schedule_ingest),
    Sweep("work.expire_leases", 60, work_claims.expire_leases),
    Sweep("work.create_price_assignments", 900, work_claims.create_price_assignments),
    # Each stream's events get a signed root once its window has been open CONCORD_LOG_ROOT_HOURS.
    Sweep("events.sign_log_roots", 3600, log_roots.sign_due),
    # A corpus import that died mid-way: its deferred full-text indexing is finished (also at start).
    Sweep("axiom.finish_bulk_imports", 300, axiom_bulk.sweep),
    # Housekeeping: rows kept for CONCORD_RETENTION_DAYS after they stop mattering.
    Sweep("kernel.purge_history", 3600, sweeps.purge_history),
    Sweep("pact.purge_heartbeats", 600, pact_sessions.purge_heartbeats),
    Sweep("people.purge_sessions", 3600, staff_sessions.purge),
    Sweep("people.purge_user_sessions", 3600, user_sessions.purge),
    Sweep("documents.purge_share_access", 3600, document_sharing.purge_access),
    # Uploads left without their document row, once CONCORD_ORPHAN_BLOB_GRACE_MINUTES have passed.
    Sweep("documents.purge_orphan_blobs", 3600, document_blobs.purge_orphans),
)

SEEDERS: tuple[Seeder, ...] = (
    Seeder("legislation", axiom_seed.seed_legislation),
    Seeder("market.catalogue", market_seed.seed_catalogue),
    Seeder("market.fuel", market_seed.seed_fuel),
)
