"""Secret hygiene on real code: what the detectors flag, and what redaction costs an index run.

Detection: every file cg indexes in httpx 0.27.2, requests 2.32.3 and click 8.1.7 (pinned sdists in
benchmarks/data, fetched by benchmarks/ingest.py) is scanned by cg's redactor (cg/ingest/secrets.py)
and, for comparison, by the two high-entropy detectors of detect-secrets it leaves out (with the same
false-positive filters); each finding is listed with its file and line, so a reader can judge them.

Cost: `cg index --rebuild` in this process on httpx and requests with redaction and with it switched
off (the redactor replaced by one that returns every text as it is), interleaved, three runs each
after a warm-up, embedding cache warm; the median wall time of each and the redactor's own time.

    python benchmarks/secret_hygiene.py         # writes the "Secret hygiene" section of benchmarks/RESULTS.md
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from ingest import fetch_sdist  # noqa: E402
from results import machine_line, model_line, write_section  # noqa: E402

DETECTION = [("httpx", "0.27.2"), ("requests", "2.32.3"), ("click", "8.1.7")]
TIMED = [("httpx", "0.27.2"), ("requests", "2.32.3")]
RUNS = 3


def _sources(repo: Path):
    from cg.ingest.walk import WalkReport, walk

    report = WalkReport()
    return list(walk(repo, report)), report


def _line_of(text: str, value: str) -> int:
    return text[: text.find(value)].count("\n") + 1


def detection(repo: Path) -> dict:
    """The redactor's findings and the left-out high-entropy detectors' findings, each as "path:line kind"."""
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString

    from cg.ingest.secrets import Redactor

    redactor = Redactor()
    entropy = (Base64HighEntropyString(limit=4.5), HexHighEntropyString(limit=3.0))
    sources, report = _sources(repo)
    kept: list[str] = []  # path:line of each line the redactor changed
    kinds: Counter[str] = Counter()
    left_out: list[str] = []
    chars = 0
    started = time.perf_counter()
    for source in sources:
        text = source.data.decode("utf-8")
        chars += len(text)
        out = redactor.redact(text, source.language)
        if out.count:
            pairs = zip(text.splitlines(), out.text.splitlines(), strict=True)
            kept.extend(f"{source.path}:{i}" for i, (a, b) in enumerate(pairs, 1) if a != b)
            kinds.update(out.found)
    seconds = time.perf_counter() - started
    for source in sources:
        text = source.data.decode("utf-8")
        for line_no, line in enumerate(text.splitlines(), 1):
            for detector in entropy:
                for value in detector.analyze_string(line):
                    over = detector.calculate_shannon_entropy(value) > detector.entropy_limit
                    if over and not redactor._not_a_secret(value):
                        left_out.append(f"{source.path}:{line_no} {detector.secret_type} {value[:24]}")
    return {
        "files": len(sources),
        "mb": chars / 1e6,
        "skipped": report.secret_files,
        "kept": kept,
        "kinds": kinds,
        "left_out": left_out,
        "seconds": seconds,
    }


class _Off:
    """A redactor that keeps every text: the run without redaction."""

    def redact(self, text: str, language: str = ""):
        from cg.ingest.secrets import Redacted

        return Redacted(text)


def timed_runs(repo: Path) -> tuple[list[float], list[float]]:
    """Interleaved `index --rebuild` wall times with and without redaction, after one warm-up run."""
    from cg.api import open_index
    from cg.ingest import history, pipeline

    def run(redacting: bool) -> float:
        real = pipeline.redactor, history.redactor
        if not redacting:
            pipeline.redactor = history.redactor = lambda: _Off()  # type: ignore[assignment]
        try:
            started = time.perf_counter()
            with open_index(repo, "kuzu", read_only=False, create=True) as session:
                session.index(full=True)
            return time.perf_counter() - started
        finally:
            pipeline.redactor, history.redactor = real

    run(True)  # warm-up: the embedding cache, the model, the detectors' imports
    on: list[float] = []
    off: list[float] = []
    for _ in range(RUNS):
        off.append(run(False))
        on.append(run(True))
    return on, off


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="cg-bench-secrets-"))
    # the default embedding cache: the model's one-time export is not part of what is measured
    try:
        found = {}
        for name, version in DETECTION:
            found[f"{name} {version}"] = detection(fetch_sdist(name, version))
            d = found[f"{name} {version}"]
            print(f"{name}: {len(d['kept'])} redacted, {len(d['left_out'])} high-entropy", flush=True)
        timings = {}
        for name, version in TIMED:
            repo = work / name
            shutil.copytree(fetch_sdist(name, version), repo, ignore=shutil.ignore_patterns(".cg", "__pycache__"))
            timings[f"{name} {version}"] = timed_runs(repo)
            on, off = timings[f"{name} {version}"]
            print(f"{name}: on {statistics.median(on):.2f}s off {statistics.median(off):.2f}s", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = [
        machine_line(),
        "",
        "Detection: every file cg indexes, scanned by cg's redactor (detect-secrets' token-format and keyword",
        "detectors, cg/ingest/secrets.py) and by the two high-entropy detectors it leaves out (base64 > 4.5,",
        "hex > 3.0, with the same false-positive filters). Skipped = files the walk leaves out whole as",
        "secret-bearing (by name or content).",
        "",
        "| project | files | MB | skipped whole | redacted | high-entropy (left out) | redactor s |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, d in found.items():
        lines.append(
            f"| {label} | {d['files']} | {d['mb']:.2f} | {len(d['skipped'])} | {len(d['kept'])} "
            f"| {len(d['left_out'])} | {d['seconds']:.3f} |"
        )
    lines += ["", "What the redactor masks (by detector; the lines it changed):", ""]
    for label, d in found.items():
        lines += [f"- {label}: {dict(d['kinds']) or 'nothing'}" + (f"; {', '.join(d['kept'])}" if d["kept"] else "")]
    lines += ["", "What the high-entropy detectors would flag, by kind of file (the first few, to judge):", ""]
    for label, d in found.items():
        kinds = Counter("test" if "test" in item.split(":")[0] else "source/docs" for item in d["left_out"])
        shown = "; ".join(d["left_out"][:4])
        lines.append(f"- {label}: {dict(kinds)}; e.g. {shown}")
    lines += [
        "",
        f"Cost: `index --rebuild` in one process on the embedded store, {RUNS} runs each way interleaved after a",
        "warm-up (embedding cache warm, so the redactor's share is not hidden behind the model). Model: "
        + model_line()
        + ".",
        "",
        "| project | with redaction s (median) | without s (median) | difference |",
        "|---|---|---|---|",
    ]
    for label, (on, off) in timings.items():
        a, b = statistics.median(on), statistics.median(off)
        lines.append(f"| {label} | {a:.2f} | {b:.2f} | {a - b:+.2f} s ({(a - b) / b:+.1%}) |")
    write_section("Secret hygiene (benchmarks/secret_hygiene.py)", "\n".join(lines))
    print("results written to benchmarks/RESULTS.md")


if __name__ == "__main__":
    main()
