"""`concord legislation import PATH...`: register files (DOCX, EPUB, XHTML, PDF: one instrument each) and
corpus JSONL files (streamed, resumable from their checkpoint, progress on stderr) into the store."""

from __future__ import annotations

import argparse
import asyncio
import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from domain.axiom.provenance import Register
from domain.kernel import jurisdictions
from domain.kernel.commands import with_database
from domain.kernel.context import SYSTEM
from domain.kernel.db import Database
from domain.kernel.errors import DomainError
from domain.kernel.settings import Settings

if TYPE_CHECKING:  # the importers (DOCX, PDF, EPUB readers) load only when this command runs
    from domain.axiom import importers


def add_parser(leg_cmd: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = leg_cmd.add_parser(
        "import",
        help="import instruments from register files (.docx, .epub, .xhtml, .pdf) or corpus .jsonl files",
    )
    cmd.add_argument("paths", nargs="+", metavar="PATH", help="files to import")
    cmd.add_argument(
        "--register",
        default=None,
        choices=[r.value for r in Register if r is not Register.SAMPLE],
        help="the register the files came from (attribution and licence follow it)",
    )
    cmd.add_argument("--jurisdiction", help="AU, AU-NSW … (default: the register's)")
    cmd.add_argument("--title", help="the instrument's title (default: read from the file)")
    cmd.add_argument("--version-date", type=date.fromisoformat, help="the compilation's date, YYYY-MM-DD")
    cmd.add_argument("--source", help="the URL the file was downloaded from (default: its name)")
    cmd.add_argument("--repealed", action="store_true", help="record the instrument as repealed")
    cmd.add_argument("--batch", type=int, default=None, help="instruments per transaction (default: 100)")
    cmd.add_argument("--restart", action="store_true", help="ignore a corpus's checkpoint and start again")


def _facts(args: argparse.Namespace, path: Path) -> importers.FileFacts:
    from domain.axiom import importers

    code = jurisdictions.normalise(args.jurisdiction) if args.jurisdiction else None
    return importers.FileFacts(
        register=Register(args.register) if args.register else Register.OTHER,
        jurisdiction=code,
        title=args.title,
        version_date=args.version_date,
        source=args.source or path.name,
        repealed=args.repealed,
    )


def run(settings: Settings, args: argparse.Namespace) -> int:
    return asyncio.run(_run(settings, args))


async def _run(settings: Settings, args: argparse.Namespace) -> int:
    from domain.axiom import import_run

    batch = import_run.DEFAULT_BATCH if args.batch is None else max(1, args.batch)
    failures = 0

    async def work(db: Database) -> None:
        nonlocal failures
        for raw in args.paths:
            path = Path(raw)
            try:
                facts = _facts(args, path)
                progress = await import_run.import_path(
                    db,
                    SYSTEM,
                    path,
                    facts,
                    restart=args.restart,
                    batch=batch,
                    report=lambda p: print(p.line(), file=sys.stderr, flush=True),
                )
                if progress.resumed_from:
                    print(f"{path}: resumed at byte {progress.resumed_from}", file=sys.stderr)
                for reason in progress.skip_reasons:
                    print(f"{path}: skipped {reason}", file=sys.stderr)
                print(progress.line())
            except DomainError as exc:
                failures += 1
                print(f"concord legislation import: {exc.detail}", file=sys.stderr)

    code = await with_database(settings, work)
    return code or (1 if failures else 0)
