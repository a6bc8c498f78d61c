"""The `concord` command: serve, web, worker, scheduler, migrate, seed, and the operator commands."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError

from domain.axiom import commands as axiom_commands
from domain.axiom import import_commands as legislation_import
from domain.kernel import event_commands
from domain.kernel.settings import Settings, get_settings
from domain.market import commands as market_commands
from infra import collector, loops, metrics_dir
from infra.machine import Supervised

log = logging.getLogger("concord")


def _logging(settings: Settings) -> None:
    from infra import logs

    logs.configure(settings)


async def _wait_for_stop(lifeline: int | None = None) -> None:
    """Until SIGTERM or SIGINT; a supervised child (`lifeline` given) leaves SIGINT to its parent, which
    stops its children itself (a terminal's Ctrl-C reaches the whole process group)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM,) if lifeline is not None else (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    if lifeline is not None:
        # Only the supervisor can write to this pipe and it never does: readable means end of file, the
        # supervisor is gone, and a child must not outlive it.
        loop.add_reader(lifeline, stop.set)
    try:
        await stop.wait()
    finally:
        if lifeline is not None:
            loop.remove_reader(lifeline)


async def _serve(
    settings: Settings,
    *,
    apps: bool,
    scheduler: bool,
    supervised: Supervised | None = None,
    metrics_port: bool = False,
) -> None:
    collector.pause()  # until the process serves: what it imports and builds now, it keeps
    from aiohttp import web

    from infra.metrics import process_metrics
    from runtime.process import Runtime
    from web.app import create_docs_app, create_hub_app, create_metrics_app
    from web.kernel.server import Runner

    embedded = not settings.redis_url
    if supervised is None:
        rt = await Runtime.start(settings, relay=True, scheduler=scheduler)
    elif supervised.role == "web":
        # With the in-process broker only the background process relays and runs jobs (the web processes
        # ring its doorbell after a commit that added jobs); with Redis every web process relays.
        rt = await Runtime.start(
            settings, relay=not embedded, scheduler=False, worker=False, supervised=supervised
        )
    else:
        rt = await Runtime.start(settings, relay=True, scheduler=scheduler, supervised=supervised)
    runners: list[web.AppRunner] = []
    try:
        if apps:
            for app, port in (
                (create_hub_app(rt), settings.hub_port),
                (create_docs_app(rt), settings.docs_port),
            ):
                runner: web.AppRunner = Runner(app, access_log=None)  # concord.access logs requests
                await runner.setup()
                # Supervised web processes share the ports: the kernel spreads connections over them.
                await web.TCPSite(runner, settings.host, port, reuse_port=supervised is not None).start()
                runners.append(runner)
            if supervised is None:
                log.info(
                    "Concord hub on http://%s:%d, documents on http://%s:%d (%s, %s broker, %s)",
                    settings.host,
                    settings.hub_port,
                    settings.host,
                    settings.docs_port,
                    "SQLite" if settings.is_sqlite else "PostgreSQL",
                    "Redis" if settings.redis_url else "in-process",
                    loops.name(),
                )
        elif metrics_port:
            # `concord scheduler`: its sweep metrics on CONCORD_METRICS_PORT, as a worker pod's are.
            runner = Runner(create_metrics_app(rt), access_log=None)
            await runner.setup()
            runners.append(runner)
            try:
                await web.TCPSite(runner, settings.host, settings.metrics_port).start()
                log.info("scheduler metrics on http://%s:%d/metrics", settings.host, settings.metrics_port)
            except OSError as exc:
                # A second scheduler on the machine (a standby) finds the port taken: it still stands for
                # the leader lock, which matters more than its samples.
                log.warning("scheduler metrics not served on port %d: %s", settings.metrics_port, exc)
        collector.settle()
        await _wait_for_stop(supervised.lifeline if supervised is not None else None)
    finally:
        for runner in runners:
            await runner.cleanup()
        process_metrics().flush()  # the last requests' samples, before the process goes
        await rt.stop()


def _preload_served() -> None:
    """What a served process runs, imported by the supervisor before it forks its children."""
    import runtime.process  # noqa: F401
    import web.app  # noqa: F401


def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    """`serve` and `web`: one process, or a supervisor and its children (infra/supervisor.py)."""
    from infra.supervisor import process_count, supervise

    with_scheduler = args.command == "serve"

    def supervised_child(supervised: Supervised) -> int:
        """A child forked by the supervisor: a web process, or the background one."""
        web_role = supervised.role == "web"
        loops.run(
            settings,
            _serve(settings, apps=web_role, scheduler=with_scheduler and not web_role, supervised=supervised),
        )
        return 0

    _require_migrated(settings)  # by the supervisor, once, for all of its children
    processes = process_count(settings, args.processes)
    if processes > 1:
        return supervise(settings, args.command, processes, supervised_child, _preload_served)
    metrics_dir.configure(settings)
    loops.run(settings, _serve(settings, apps=True, scheduler=with_scheduler))
    return 0


def _add_serve_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    for name, what in (
        ("serve", "both apps, scheduler and (without Redis) in-process workers"),
        ("web", "both apps only (production web process)"),
    ):
        cmd = sub.add_parser(name, help=what)
        cmd.add_argument(
            "--processes",
            type=_positive,
            default=None,
            metavar="N",
            help="web processes sharing the ports (default: CONCORD_WEB_PROCESSES, else one per CPU this "
            "process may use: its affinity's cores, capped by its cgroups' CPU quota); "
            "above 1, a parent process supervises them",
        )


def _add_worker_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cmd = sub.add_parser(
        "worker",
        help="background job workers on Redis (production): a group of processes, each restarted if it dies",
    )
    cmd.add_argument(
        "--processes",
        type=_positive,
        default=None,
        metavar="N",
        help="worker processes (default: one per CPU this process may use: its affinity's cores, capped by "
        "its cgroups' CPU quota)",
    )
    cmd.add_argument(
        "--threads",
        type=_positive,
        default=None,
        metavar="T",
        help="job threads of each process (default: CONCORD_WORKER_THREADS)",
    )
    cmd.add_argument(
        "--shutdown-timeout",
        type=_positive,
        default=600,
        metavar="SECONDS",
        help="on SIGTERM, how long running jobs may take to finish before they are cut off (and run again "
        "elsewhere); default 600",
    )
    cmd.add_argument(
        "--metrics",
        action="store_true",
        help="one more process serving the group's job metrics on CONCORD_HOST:CONCORD_METRICS_PORT",
    )
    cmd.add_argument(
        "--alive-file",
        type=Path,
        default=None,
        metavar="PATH",
        help="touched every 5 s while the group runs (removed when it stops); a liveness probe runs "
        "`python -m workers.liveness PATH`",
    )


def cmd_worker(settings: Settings, args: argparse.Namespace) -> int:
    """`worker`: the group's parent (workers/group.py), or one of its processes (workers/process.py)."""
    if not settings.redis_url:
        raise SystemExit(
            "concord worker: CONCORD_REDIS_URL is not set; without Redis, `concord serve` runs the jobs in "
            "its own process"
        )
    _require_migrated(settings)
    from infra.cpus import cores
    from workers.group import Options, run_group

    options = Options(
        processes=args.processes if args.processes is not None else cores(),
        threads=args.threads if args.threads is not None else settings.worker_threads,
        shutdown_seconds=float(args.shutdown_timeout),
        metrics=args.metrics,
        alive_file=args.alive_file,
    )
    return run_group(settings, options)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return value


def cmd_migrate(settings: Settings) -> None:
    from migrations import upgrade

    upgrade(settings.db_url)
    log.info("database migrated: %s", settings.db_url.split("@")[-1])


def cmd_seed(settings: Settings) -> None:
    from domain import wiring
    from domain.kernel import seeding
    from domain.kernel.db import Database

    async def run() -> None:
        db = Database(settings.db_url)
        try:
            for name, count in await seeding.seed_all(db, wiring.SEEDERS):
                log.info("seeded %s: %d rows", name, count)
        finally:
            await db.dispose()

    asyncio.run(run())


def _add_staff_key_commands(keys_sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    staff_cmd = keys_sub.add_parser("create-staff", help="create a staff key (printed once, stored hashed)")
    staff_cmd.add_argument("--name", required=True, help="who the key is for")
    staff_cmd.add_argument(
        "--role",
        action="append",
        required=True,
        metavar="ROLE",
        help="curator (deferred work) or reviewer (escalations, objected proposals); repeat it or give "
        "curator,reviewer for both",
    )
    keys_sub.add_parser("list-staff", help="list staff keys (never the secrets)")
    revoke = keys_sub.add_parser("revoke-staff", help="revoke a staff key by id")
    revoke.add_argument("id")


def cmd_staff_keys(settings: Settings, args: argparse.Namespace) -> int:
    import json

    from domain.kernel.commands import with_database
    from domain.kernel.context import SYSTEM
    from domain.kernel.db import Database
    from domain.people import staff

    async def run(db: Database) -> None:
        if args.keys_command == "create-staff":
            async with db.transaction() as session:
                created = await staff.create(session, name=args.name, roles=args.role)
            print(created["apiKey"])
            print(
                f"id {created['id']} · staff {created['name']} · roles {','.join(created['roles'])} · "
                "store the key now: it is shown once",
                file=sys.stderr,
            )
        elif args.keys_command == "list-staff":
            async with db.read() as session:
                for row in await staff.list_keys(session):
                    print(json.dumps(row))
        elif args.keys_command == "revoke-staff":
            async with db.transaction() as session:
                print(json.dumps(await staff.revoke(session, SYSTEM, args.id)))

    return asyncio.run(with_database(settings, run))


def cmd_ingest_legislation(settings: Settings, path: str) -> None:
    import json

    from domain.axiom import legislation
    from domain.kernel.context import SYSTEM
    from domain.kernel.db import Database
    from domain.kernel.errors import DomainError

    try:
        docs = legislation.parse_documents(json.loads(Path(path).read_text(encoding="utf-8")))
    except (OSError, ValueError, DomainError) as exc:
        raise SystemExit(f"concord legislation ingest: {path}: {exc}") from None

    async def run() -> legislation.Ingested:
        db = Database(settings.db_url)
        try:
            async with db.transaction() as session:
                return await legislation.ingest(session, SYSTEM, docs)
        finally:
            await db.dispose()

    result = asyncio.run(run())
    print(
        f"ingested {path}: {len(result.created)} created, {len(result.updated)} updated, "
        f"{len(result.unchanged)} unchanged"
    )


def _add_service_key_commands(keys_sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    create = keys_sub.add_parser("create", help="create a svc_sk_ service key (printed once)")
    create.add_argument("--org", required=True, help="organisation the key belongs to (created if new)")
    create.add_argument(
        "--scopes",
        default="documents:read,documents:write,comments:read,comments:write,tap:read,tap:write",
        help="comma-separated scopes (spec §5); default: all",
    )
    create.add_argument("--name", default=None, help="a label for the key")
    create.add_argument(
        "--principal",
        default=None,
        help="the DID the key acts for (did:web:org.example): its agents' principal_id in PACT sessions, "
        "and whom cross-organisation disclosure compares (docs/pact.md)",
    )
    keys_sub.add_parser("list", help="list service keys (never the secrets)")
    revoke = keys_sub.add_parser("revoke", help="revoke a service key by id")
    revoke.add_argument("id")


def cmd_service_keys(settings: Settings, args: argparse.Namespace) -> int:
    import json

    from domain.documents import servicekeys
    from domain.kernel.commands import with_database
    from domain.kernel.context import SYSTEM
    from domain.kernel.db import Database

    async def run(db: Database) -> None:
        if args.keys_command == "create":
            scopes = servicekeys.parse_scopes(args.scopes)
            async with db.transaction() as session:
                made = await servicekeys.create(
                    session,
                    SYSTEM,
                    org_name=args.org,
                    scopes=scopes,
                    name=args.name,
                    principal=args.principal,
                )
            print(made["apiKey"])
            print(
                f"id {made['id']} · organisation {made['organisation']} · scopes "
                f"{','.join(made['scopes'])} · store the key now: it is shown once",
                file=sys.stderr,
            )
        elif args.keys_command == "list":
            async with db.read() as session:
                for row in await servicekeys.list_keys(session):
                    print(json.dumps(row))
        elif args.keys_command == "revoke":
            async with db.transaction() as session:
                row = await servicekeys.revoke(session, SYSTEM, args.id)
            print(json.dumps(row))

    return asyncio.run(with_database(settings, run))


def _add_user_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    users_sub = sub.add_parser(
        "users", help="people of an organisation who sign in to the document API"
    ).add_subparsers(dest="users_command", required=True)
    create = users_sub.add_parser(
        "create", help="add a person; the password is read from standard input, never the command line"
    )
    create.add_argument("--org", required=True, help="organisation of the person (created if new)")
    create.add_argument("--email", required=True, help="the person's email address (sign-in name)")
    create.add_argument(
        "--scopes",
        default="documents:read,documents:write,comments:read,comments:write,tap:read,tap:write",
        help="comma-separated document API scopes (spec §5), as for service keys; default: all",
    )
    listing = users_sub.add_parser("list", help="list the people of an organisation (never a password)")
    listing.add_argument("--org", required=True)
    disable = users_sub.add_parser("disable", help="refuse a person's sign-ins and end their sessions")
    disable.add_argument("email")
    disable.add_argument("--org", required=True)
    enable = users_sub.add_parser(
        "enable", help="let a disabled person sign in again (their ended sessions stay ended)"
    )
    enable.add_argument("email")
    enable.add_argument("--org", required=True)


def _read_password() -> str:
    """The password from standard input: prompted for (twice) on a terminal, else its first line."""
    import getpass

    if sys.stdin.isatty():
        first = getpass.getpass("password: ")
        if getpass.getpass("again: ") != first:
            raise SystemExit("error: the two passwords differ")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def cmd_users(settings: Settings, args: argparse.Namespace) -> int:
    import json

    from domain.kernel.commands import with_database
    from domain.kernel.context import SYSTEM
    from domain.kernel.db import Database
    from domain.people import users

    async def run(db: Database) -> None:
        if args.users_command == "create":
            password = _read_password()
            async with db.transaction() as session:
                made = await users.create(
                    session,
                    SYSTEM,
                    org_name=args.org,
                    email=args.email,
                    password=password,
                    scopes=args.scopes,
                )
            print(json.dumps(made))
        elif args.users_command == "list":
            async with db.read() as session:
                for row in await users.list_users(session, args.org):
                    print(json.dumps(row))
        elif args.users_command == "disable":
            async with db.transaction() as session:
                print(json.dumps(await users.disable(session, SYSTEM, org_name=args.org, email=args.email)))
        elif args.users_command == "enable":
            async with db.transaction() as session:
                print(json.dumps(await users.enable(session, SYSTEM, org_name=args.org, email=args.email)))

    return asyncio.run(with_database(settings, run))


def _add_pact_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    pact_sub = sub.add_parser("pact", help="PACT protocol tools").add_subparsers(
        dest="pact_command", required=True
    )
    lab = pact_sub.add_parser(
        "lab",
        help="the conformance lab: the document app with PACT's vector fixtures, on loopback only "
        "(accepts X-Pact-Principal; never part of `serve`)",
    )
    lab.add_argument("--port", type=_positive, required=True, help="port to listen on")
    lab.add_argument("--host", default="127.0.0.1", help="a loopback address (anything else is refused)")
    lab.add_argument(
        "--data-dir", default=None, help="its data directory (default: a temporary one, removed)"
    )


def cmd_pact_lab(args: argparse.Namespace) -> int:
    from web.lab import serve

    try:
        serve.require_loopback(args.host)
    except serve.NotLoopback as exc:
        print(f"concord pact lab: {exc}", file=sys.stderr)
        return 2
    return serve.run(args.host, args.port, args.data_dir)


def make_parser() -> argparse.ArgumentParser:
    """Every command and its options (deploy/ tests read the commands the manifests run with it)."""
    parser = argparse.ArgumentParser(prog="concord", description="Concord consensus server")
    sub = parser.add_subparsers(dest="command", required=True)
    _add_serve_commands(sub)
    _add_worker_command(sub)
    sub.add_parser("scheduler", help="the scheduler only (one leader at a time)")
    sub.add_parser("migrate", help="apply database migrations")
    sub.add_parser("seed", help="load reference data (idempotent)")
    market_commands.add_parser(sub)
    axiom_commands.add_parser(sub)
    event_commands.add_parser(sub)
    keys_parser = sub.add_parser("keys", help="service keys (document API) and staff keys")
    keys_sub = keys_parser.add_subparsers(dest="keys_command", required=True)
    _add_staff_key_commands(keys_sub)
    _add_service_key_commands(keys_sub)
    _add_user_commands(sub)
    _add_pact_commands(sub)
    leg_cmd = sub.add_parser("legislation", help="legislation store").add_subparsers(
        dest="leg_command", required=True
    )
    ingest_cmd = leg_cmd.add_parser("ingest", help="ingest instruments from a JSON file ({documents: [...]})")
    ingest_cmd.add_argument("file", help="path of the JSON file")
    legislation_import.add_parser(leg_cmd)
    return parser


def _behind(settings: Settings) -> list[str]:
    """The migrations of this code the database lacks; none when it cannot be reached to tell."""
    import migrations

    try:
        return asyncio.run(migrations.missing(settings.db_url))
    except (OSError, SQLAlchemyError) as exc:
        log.warning("could not check the database's migrations: %s", exc)
        return []


def _require_migrated(settings: Settings) -> None:
    """A server, scheduler or worker group refuses to start on a database that lacks this code's migrations
    (every request or job would fail on a missing table or column); one a newer Concord migrated further is
    fine, and one out of reach is left to the process's own retries and readiness."""
    from migrations import not_migrated

    behind = _behind(settings)
    if behind:
        raise SystemExit(f"concord: {not_migrated(settings.db_url, behind)}")


def _refusal(exc: ValidationError) -> str:
    """What is wrong with the environment's CONCORD_* values, one line per variable."""
    lines = []
    for error in exc.errors():
        where = "_".join(str(part) for part in error["loc"][:1]).upper()
        lines.append(f"error: CONCORD_{where}: {error['msg']}" if where else f"error: {error['msg']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    try:
        settings = get_settings()
    except ValidationError as exc:
        print(_refusal(exc), file=sys.stderr)
        return 2
    _logging(settings)
    try:
        return _dispatch(settings, args)
    except SQLAlchemyError:
        # An operator command on a database never migrated (or not since an upgrade) fails on a missing
        # table: say so, instead of the driver's traceback.
        behind = _behind(settings)
        if not behind:
            raise
        from migrations import not_migrated

        print(f"error: {not_migrated(settings.db_url, behind)}", file=sys.stderr)
        return 2


def _dispatch(settings: Settings, args: argparse.Namespace) -> int:
    if args.command == "migrate":
        cmd_migrate(settings)
    elif args.command == "seed":
        cmd_seed(settings)
    elif args.command in ("fuel", "market"):
        return market_commands.run(settings, args)
    elif args.command == "axiom":
        return axiom_commands.run(settings, args)
    elif args.command == "events":
        return event_commands.run(settings, args)
    elif args.command == "keys" and args.keys_command in ("create-staff", "list-staff", "revoke-staff"):
        return cmd_staff_keys(settings, args)
    elif args.command == "users":
        return cmd_users(settings, args)
    elif args.command == "legislation" and args.leg_command == "ingest":
        cmd_ingest_legislation(settings, args.file)
    elif args.command == "legislation" and args.leg_command == "import":
        return legislation_import.run(settings, args)
    elif args.command in ("serve", "web"):
        return cmd_serve(settings, args)
    elif args.command == "worker":
        return cmd_worker(settings, args)
    elif args.command == "scheduler":
        _require_migrated(settings)
        metrics_dir.configure(settings)
        loops.run(settings, _serve(settings, apps=False, scheduler=True, metrics_port=True))
    elif args.command == "keys" and args.keys_command in ("create", "list", "revoke"):
        return cmd_service_keys(settings, args)
    elif args.command == "pact" and args.pact_command == "lab":
        return cmd_pact_lab(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
