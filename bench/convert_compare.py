"""Concord's conversion against MarkItDown: time and structure kept, per file and per type.

Converts the shared fixtures (../shared/fixtures/documents) and the documents the tests build
(tests/built_documents.py, tests/built_layouts.py) with Concord and with MarkItDown, and prints for each
file the milliseconds per conversion of both (the median of 5 rounds taken in turn), their ratio, and
the structure each kept: headings, list items, table rows and non-blank lines, against a ground truth
where the test builder gives one.

MarkItDown is never a dependency of Concord: it runs in the benchmark's own environment, a subprocess
of that venv's Python. Make it once:

    python -m venv .bench-venv && .bench-venv/bin/pip install 'markitdown[pdf,docx]'
    .venv/bin/python -m bench.convert_compare [--seconds 1.0] [--markitdown .bench-venv/bin/python]

Without that environment (or where PyPI cannot be reached), the script says so and prints Concord's side.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from domain.documents import convert
from domain.documents.detect import Unsupported, detect
from domain.documents.errors import ConversionError

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = ROOT.parent / "shared" / "fixtures" / "documents"
DEFAULT_PEER = ROOT / ".bench-venv" / "bin" / "python"
ROUNDS = 5

# Runs in the benchmark venv: reads "seconds<TAB>path" a line, converts the file repeatedly for that
# long, answers one JSON line; so each file is timed by both sides in turn, under the same load.
_PEER = """
import json, sys, time
from markitdown import MarkItDown
md = MarkItDown(enable_plugins=False)
print("ready", flush=True)
for line in sys.stdin:
    seconds, path = line.rstrip("\\n").split("\\t", 1)
    seconds = float(seconds)
    runs, started, text, error = 0, time.perf_counter(), "", None
    while True:
        try:
            text = md.convert(path).text_content
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"[:200]
            break
        runs += 1
        if time.perf_counter() - started >= seconds and runs >= 1:
            break
    elapsed = time.perf_counter() - started
    print(json.dumps({"ms": 1000 * elapsed / max(runs, 1), "text": text, "error": error}), flush=True)
"""


@dataclass
class Structure:
    headings: int
    items: int
    rows: int
    lines: int

    @classmethod
    def of(cls, md: str) -> Structure:
        # A table's separator row is not a line of the document.
        lines = [ln for ln in md.splitlines() if ln.strip() and not re.match(r"\|[\s:|-]+\|$", ln.strip())]
        return cls(
            headings=sum(bool(re.match(r"#{1,6} ", ln)) for ln in lines),
            items=sum(bool(re.match(r"\s*(?:[-*+]|\d+[.)])\s", ln)) for ln in lines),
            rows=sum(ln.lstrip().startswith("|") for ln in lines),
            lines=len(lines),
        )

    def __str__(self) -> str:
        return f"{self.headings:>3}h {self.items:>3}i {self.rows:>3}r {self.lines:>4}l"


def _truth() -> dict[str, Structure]:
    """What the tests' builders put into their documents (rows count the header row)."""
    from tests import built_documents as docs
    from tests import built_layouts as lay

    return {
        "built.docx": Structure(4, 4, len(docs.COSTS), 0),
        "built.pdf": Structure(3, 2, len(docs.PDF_ROWS), 0),
        "receipt.pdf": Structure(
            0, 0, len(lay.ITEMS), len(lay.STORE) + len(lay.ITEMS) + len(lay.RECEIPT_FOOTER)
        ),
        "till-receipt.pdf": Structure(
            0, 0, len(lay.ITEMS), len(lay.STORE) + len(lay.ITEMS) + len(lay.RECEIPT_FOOTER)
        ),
        "two-columns.pdf": Structure(1, 0, 0, 3),
        "running-heads.pdf": Structure(0, len(lay.BULLETS), 0, len(lay.BULLETS) + 2),
        "sparse-table.pdf": Structure(0, 0, len(lay.SPARSE), 0),
        "letterhead.pdf": Structure(1, 0, 0, 0),
        "form.pdf": Structure(
            len(lay.FORM_HEADINGS), 0, 0, len(lay.FORM_HEADINGS) + len(lay.FORM_LABELS) + 2
        ),
        "paper.pdf": Structure(2, 0, 0, 5),
        "hyphenated.pdf": Structure(1, 0, 0, 2),
    }


def _documents(fixtures: Path, built: Path) -> list[Path]:
    from tests import built_documents as docs
    from tests import built_layouts as lay

    (built / "built.docx").write_bytes(docs.docx_bytes())
    (built / "built.pdf").write_bytes(docs.pdf_bytes())
    for name, build in lay.BUILDERS.items():
        (built / name).write_bytes(build())
    found = sorted(p for p in fixtures.iterdir() if p.is_file()) if fixtures.is_dir() else []
    return found + sorted(built.iterdir())


def _concord(path: Path, seconds: float) -> tuple[float, str, str | None]:
    kind = detect(path, path.name).kind
    data = path.read_bytes()
    runs, started, text = 0, time.perf_counter(), ""
    while True:
        try:
            text = convert.to_markdown(kind, data)
        except ConversionError as exc:
            return 0.0, "", exc.reason
        runs += 1
        if time.perf_counter() - started >= seconds and runs >= 1:
            return 1000 * (time.perf_counter() - started) / runs, text, None


class _Peer:
    """MarkItDown in its own venv, as a subprocess answering one file at a time."""

    def __init__(self, python: Path) -> None:
        self.proc = subprocess.Popen(
            [str(python), "-c", _PEER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise RuntimeError(err.strip().splitlines()[-1] if err.strip() else "no answer")

    def convert(self, path: Path, seconds: float) -> dict[str, object]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write(f"{seconds}\t{path}\n")
        self.proc.stdin.flush()
        answer: dict[str, object] = json.loads(self.proc.stdout.readline())
        return answer

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def _peer(python: Path) -> tuple[_Peer | None, str | None]:
    if not python.exists():
        return None, (
            f"MarkItDown's environment {python} is missing: make it with "
            "`python -m venv .bench-venv && .bench-venv/bin/pip install 'markitdown[pdf,docx]'` "
            "(PyPI must be reachable); only Concord's side is printed."
        )
    try:
        return _Peer(python), None
    except RuntimeError as exc:
        return None, f"MarkItDown could not start ({exc}); only Concord's side is printed."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="folder of fixtures to convert")
    parser.add_argument("--seconds", type=float, default=1.0, help="minimum time per file and side")
    parser.add_argument("--markitdown", type=Path, default=DEFAULT_PEER, help="python of MarkItDown's venv")
    args = parser.parse_args(argv)
    truth = _truth()
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for path in _documents(args.dir, Path(tmp)):
            try:
                detect(path, path.name)
            except Unsupported:
                continue
            paths.append(path)
        peer, note = _peer(args.markitdown)
        if note:
            print(note)
        print(
            f"{'file':<52} {'type':<8} {'concord ms':>10} {'peer ms':>8} {'ratio':>6}  "
            f"{'concord structure':<19} {'markitdown':<19} {'truth':<19}"
        )
        per_type: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
        for path in paths:
            kind = detect(path, path.name).kind
            # Both sides in turn, a few rounds each, the median kept: the machine's load changes by the
            # second, and this way it weighs on both alike.
            ours_ms, theirs_ms = [], []
            text, error, other = "", None, None
            for _ in range(ROUNDS):
                ms, text, error = _concord(path, args.seconds / ROUNDS)
                ours_ms.append(ms)
                if peer is not None:
                    other = peer.convert(path, args.seconds / ROUNDS)
                    theirs_ms.append(float(str(other["ms"])))
            ms = statistics.median(ours_ms)
            if other is not None:
                other["ms"] = statistics.median(theirs_ms)
            ours = "failed: " + error if error else str(Structure.of(text))
            theirs, pms, ratio = "", "", ""
            if other is not None:
                theirs = "failed" if other["error"] else str(Structure.of(str(other["text"])))
                pms = f"{float(str(other['ms'])):.1f}"
                if not error and not other["error"]:
                    ratio = f"{float(str(other['ms'])) / ms:.2f}x"
                    t = per_type[kind]
                    t[0] += ms
                    t[1] += float(str(other["ms"]))
                    t[2] += 1
            expected = str(truth[path.name]) if path.name in truth else ""
            print(
                f"{path.name[:52]:<52} {kind:<8} {ms:>10.1f} {pms:>8} {ratio:>6}  {ours:<19} {theirs:<19} "
                f"{expected:<19}"
            )
        if peer is not None:
            peer.close()
        if per_type:
            print()
            head = f"{'type':<9} {'files':>5} {'concord ms':>11} {'markitdown ms':>14}"
            print(f"{head} {'markitdown/concord':>19}")
            for kind, (ours_total, peer_total, n) in sorted(per_type.items()):
                share = peer_total / ours_total
                print(f"{kind:<9} {int(n):>5} {ours_total:>11.1f} {peer_total:>14.1f} {share:>18.2f}x")
    print(
        "\nstructure: h headings, i list items, r table rows (header included), l non-blank lines;"
        " truth 0 means not counted for that file"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
