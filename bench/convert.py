"""Conversion benchmark: converts every shared fixture (../shared/fixtures/documents) to Markdown and
prints documents/s and MiB/s per type.

    .venv/bin/python -m bench.convert [--seconds 1.0] [--dir PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

from domain.documents import convert
from domain.documents.detect import Unsupported, detect
from domain.documents.errors import ConversionError

DEFAULT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "documents"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="folder of documents to convert")
    parser.add_argument("--seconds", type=float, default=1.0, help="minimum time spent on each file")
    args = parser.parse_args(argv)
    if not args.dir.is_dir():
        print(f"no fixtures at {args.dir}", file=sys.stderr)
        return 1
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])  # docs, bytes, seconds
    print(f"{'file':<58} {'type':<9} {'KiB':>8} {'ms/doc':>9}")
    for path in sorted(p for p in args.dir.iterdir() if p.is_file()):
        try:
            kind = detect(path, path.name).kind
        except Unsupported as exc:
            print(f"{path.name:<58} skipped: {exc.reason}")
            continue
        data = path.read_bytes()
        runs, started = 0, time.perf_counter()
        while True:
            try:
                convert.to_markdown(kind, data)
            except ConversionError as exc:
                print(f"{path.name:<58} failed: {exc.reason}")
                break
            runs += 1
            elapsed = time.perf_counter() - started
            if elapsed >= args.seconds and runs >= 3:
                break
        if not runs:
            continue
        t = totals[kind]
        t[0] += runs
        t[1] += runs * len(data)
        t[2] += elapsed
        print(f"{path.name:<58} {kind:<9} {len(data) / 1024:>8.1f} {1000 * elapsed / runs:>9.2f}")
    print()
    print(f"{'type':<9} {'documents/s':>12} {'MiB/s':>8}")
    for kind, (docs, size, seconds) in sorted(totals.items()):
        print(f"{kind:<9} {docs / seconds:>12.1f} {size / seconds / 1048576:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
