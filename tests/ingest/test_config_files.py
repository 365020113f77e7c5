"""Configuration, Dockerfiles and SQL as ``config`` symbols split by their own structure, language
detection by name and shebang, and the chunker's output for the braced languages."""

from __future__ import annotations

from pathlib import Path

from cg.ingest.chunk import chunk_file
from cg.ingest.languages import Extractors
from cg.ingest.walk import WalkReport, detect_language, git_blob_sha, walk
from cg.model import FileRecord

POLYGLOT = Path(__file__).resolve().parents[1] / "fixtures" / "polyglot"


def extract(rel: str, language: str, root: Path = POLYGLOT, data: bytes | None = None):
    data = (root / rel).read_bytes() if data is None else data
    record = FileRecord(rel, language, "config", git_blob_sha(data), data.count(b"\n"))
    return Extractors().get(language).extract(record, data)


def units(ex) -> dict[str, tuple[int, int]]:
    return {s.name: (s.start_line, s.end_line) for s in ex.symbols if s.kind == "config"}


def test_yaml_top_level_keys_with_their_comments():
    ex = extract("deploy/docker-compose.yml", "yaml")
    assert units(ex) == {"services": (1, 13), "volumes": (15, 16)}
    services = next(s for s in ex.symbols if s.name == "services")
    assert services.id == "deploy/docker-compose.yml::services"
    assert services.docstring == "Local stack: the payments service, its database and the webhook worker."
    assert "STRIPE_WEBHOOK_SECRET: whsec_local_only" in services.text
    assert services.parent_id == "deploy/docker-compose.yml::<module>"
    # nested keys are where an oversize section may be cut: `payments:` and `worker:` first
    assert (2, 1) in services.split_points and (9, 1) in services.split_points


def test_toml_tables_json_keys_sql_statements_and_docker_stages():
    assert units(extract("invoice-cli/Cargo.toml", "toml")) == {
        "package": (1, 4),
        "dependencies": (6, 6),
        "profile.release": (8, 9),
    }
    package = extract("payments-web/package.json", "json")
    assert list(units(package)) == ["name", "version", "scripts", "dependencies", "config"]
    assert "STRIPE_WEBHOOK_SECRET" in next(s.text for s in package.symbols if s.name == "config")
    sql = extract("db/migrations/001_invoices.sql", "sql")
    assert units(sql) == {"invoices": (1, 6), "payment_retries": (8, 12), "payment_retries_due": (14, 14)}
    assert next(s for s in sql.symbols if s.name == "invoices").docstring == "Invoices and their payment attempts."
    docker = extract("payments-go/Dockerfile", "dockerfile")
    assert units(docker) == {"build": (1, 5), "runtime": (7, 12)}
    runtime = next(s for s in docker.symbols if s.name == "runtime")
    assert runtime.signature == "FROM debian:bookworm-slim AS runtime"
    assert "PAYMENTS_RETRY_MAX_ATTEMPTS" in runtime.text


def test_a_config_file_that_does_not_parse_still_indexes():
    ex = extract("broken.yaml", "yaml", data=b"retry:\n  max: [1, 2\nwebhooks: {secret: x\n")
    assert list(units(ex)) == ["retry", "webhooks"]


def test_keys_sharing_one_line_end_where_they_start():
    """A minified JSON document holds every key on line 1: each is cited 1-1, never 1-0."""
    data = b'{"type": "service_account", "project_id": "shop-invoices", "client_email": "invoices@shop"}'
    ex = extract("deploy/invoices-sa.json", "json", data=data)
    assert units(ex) == {"type": (1, 1), "project_id": (1, 1), "client_email": (1, 1)}
    assert all(s.end_line >= s.start_line for s in ex.symbols)
    assert units(extract("deploy/empty.json", "json", data=b"")) == {}


def test_language_by_extension_name_and_shebang(tmp_path: Path):
    assert detect_language("billing.ts", b"") == "typescript"
    assert detect_language("Dockerfile", b"FROM alpine\n") == "dockerfile"
    assert detect_language("Dockerfile.worker", b"FROM alpine\n") == "dockerfile"
    assert detect_language("retry-worker", b"#!/usr/bin/env node\nrun()\n") == "javascript"
    assert detect_language("reconcile", b"#!/usr/bin/python3 -u\nmain()\n") == "python"
    assert detect_language("deploy", b"#!/bin/bash\necho\n") is None
    (tmp_path / "package-lock.json").write_text("{}\n")
    (tmp_path / "notes.txt").write_text("payments\n")
    (tmp_path / "deploy").write_text("#!/bin/sh\nexit 0\n")
    (tmp_path / "settings.yaml").write_text("retry: 3\n")
    report = WalkReport()
    assert [f.path for f in walk(tmp_path, report)] == ["settings.yaml"]
    assert report.other_text == 2 and report.ignored == 1  # the lock file is skipped on purpose


def test_braced_languages_get_headers_fragments_and_skeletons():
    body = "\n".join(f"\tif err := step{i}(ctx); err != nil {{\n\t\treturn err\n\t}}" for i in range(60))
    source = (
        'package billing\n\nimport "context"\n\n'
        "// Reconcile walks every open invoice.\n"
        f"func Reconcile(ctx context.Context) error {{\n{body}\n\treturn nil\n}}\n"
    ).encode()
    record = FileRecord("billing/reconcile.go", "go", "source", git_blob_sha(source), source.count(b"\n"))
    unit = chunk_file(Extractors().get("go").extract(record, source), budget=256)
    reconcile = next(s for s in unit.symbols if s.name == "Reconcile")
    assert reconcile.header.splitlines() == [
        "# file: billing/reconcile.go",
        "# scope: module billing > function Reconcile",
        '# uses: import "context"',
    ]
    fragments = [c for c in unit.chunks if c.kind == "fragment"]
    assert len(fragments) >= 2
    for fragment in fragments:  # each repeats the signature and the doc comment, cut between statements
        lines = fragment.text.splitlines()
        assert "func Reconcile(ctx context.Context) error {" in lines
        assert "    // Reconcile walks every open invoice." in lines
        marker = next(i for i, line in enumerate(lines) if line.startswith("    // ... (fragment "))
        assert lines[marker + 1].startswith("\tif err := step")

    methods = "\n".join(
        f"  /** Step {i}. */\n  step{i}(invoice: Invoice): void {{\n    audit({i});\n  }}" for i in range(40)
    )
    source = f"/** Collects invoices. */\nexport class Collector {{\n{methods}\n}}\n".encode()
    record = FileRecord("web/collector.ts", "typescript", "source", git_blob_sha(source), source.count(b"\n"))
    unit = chunk_file(Extractors().get("typescript").extract(record, source), budget=256)
    skeleton = [c for c in unit.chunks if c.kind == "skeleton"]
    assert skeleton and skeleton[0].text.splitlines()[2:5] == [
        "// Collects invoices.",
        "export class Collector {",
        "    // Step 0.",
    ]
    assert "    step0(invoice: Invoice): void;" in skeleton[0].text
