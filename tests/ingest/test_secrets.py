"""Secrets stay out of the index: secret-bearing files are skipped whole, secrets in every other file
and in commit messages are masked before anything is stored, embedded or full-text indexed, the run
says how many, and ordinary code (sha-like hex strings included) is left exactly as it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cg.api import open_index
from cg.graph.store import SYMBOL_FIELDS
from cg.ingest.secrets import Redactor, secret_by_content, secret_by_name
from cg.ingest.walk import WalkReport, git_blob_sha, walk
from cg.lexical import analyze_text
from tests.conftest import cg_command
from tests.files import write_tree
from tests.graphdump import dump
from tests.shop_history import GIT_ENV, git

# The secrets planted in the repository (built from parts, so this file holds no whole token).
STRIPE_KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc" + "Ws7Qp2Lz"
AWS_KEY_ID = "AKIA" + "QYLPMN5HFIQR7XLT"
GITHUB_TOKEN = "ghp_" + "R8sJ2kLmN4pQ6tV9wXyZ1aB3cD5eF7gH0iJk"
DB_PASSWORD = "Tr0ub4dor-" + "payments-prod"
BASIC_AUTH_PASSWORD = "wh00ks-" + "s3cret"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "VJTUt9Us8cKj"
SECRETS = (STRIPE_KEY, AWS_KEY_ID, GITHUB_TOKEN, DB_PASSWORD, BASIC_AUTH_PASSWORD, PEM_BODY)
# Ordinary values that look like secrets to an entropy detector and must stay.
EMPTY_BLOB_SHA = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
FIXTURE_DIGEST = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

PEM = f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----\n"

STRIPE_CLIENT = f'''"""The Stripe gateway for card payments."""

from shop.payments.retry import default_retries


class StripeGateway:
    """Charges cards through Stripe.

    The live account key is {STRIPE_KEY} (rotate it every quarter).
    """

    def __init__(self, api_key: str, retries: int) -> None:
        self.api_key = api_key
        self.retries = retries


def live_gateway() -> StripeGateway:
    return StripeGateway(api_key="{STRIPE_KEY}", retries=default_retries())
'''
SETTINGS = f'''"""Deployment settings of the shop."""

AWS_ACCESS_KEY_ID = "{AWS_KEY_ID}"
AWS_SECRET_ACCESS_KEY = "{AWS_KEY_ID}"
INVOICE_BUCKET = "shop-invoices"


def invoice_bucket() -> str:
    return INVOICE_BUCKET
'''
RETRY = f'''"""Retry policy for declined charges and webhook deliveries."""

EMPTY_BLOB_SHA = "{EMPTY_BLOB_SHA}"
WEBHOOK_FIXTURE_DIGEST = "{FIXTURE_DIGEST}"


def default_retries() -> int:
    return 3


def is_empty_blob(sha: str) -> bool:
    """A blob sha of the empty file, as git names it ({EMPTY_BLOB_SHA})."""
    return sha == EMPTY_BLOB_SHA


def webhook_digest_matches(digest: str) -> bool:
    return digest == WEBHOOK_FIXTURE_DIGEST
'''
COMPOSE = f"""services:
  payments:
    image: shop/payments:1.4
    environment:
      - STRIPE_API_KEY={STRIPE_KEY}
      - DATABASE_URL=postgres://payments:{DB_PASSWORD}@db:5432/payments
  db:
    image: postgres:16
    environment:
      POSTGRES_USER: payments
      POSTGRES_PASSWORD: {DB_PASSWORD}
"""
README = f"""# Shop payments

## Deploying

CI pushes images with the token {GITHUB_TOKEN}; webhooks are delivered to
https://hooks:{BASIC_AUTH_PASSWORD}@webhooks.shop.example/stripe.
"""
SERVICE_ACCOUNT = json.dumps(
    {
        "type": "service_account",
        "project_id": "shop-invoices",
        "private_key_id": "4b1d9c0e7f",
        "private_key": PEM,
        "client_email": "invoices@shop-invoices.iam.gserviceaccount.com",
    },
    indent=2,
)
SECRETS_YAML = f"stripe:\n  live_key: {STRIPE_KEY}\nwebhook_signing_secret: {BASIC_AUTH_PASSWORD}\n"
SIGNING_KEY_MODULE = f'"""The webhook signing key, for local runs."""\n\nSIGNING_KEY = """{PEM}"""\n'
COMMIT_MESSAGE = (
    "Rotate the payments credentials\n\n"
    f"The old key {AWS_KEY_ID} leaked in a CI log; CI now uses {GITHUB_TOKEN}.\n"
    "Invoices and coupons are unaffected."
)

# Expected: skipped whole, by name or by content.
SKIPPED = [
    "config/secrets.yaml",  # by name: *secret* config
    "deploy/billing.json",  # by content: a service-account document
    "deploy/service-account.json",  # by name
    "shop/payments/signing_key.py",  # by content: a PEM private key
]


@pytest.fixture(scope="module")
def hostile_shop(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    """A small shop with secrets in the forms a real repository holds them, in git, indexed once:
    (repo, the `cg index --json` summary, the text summary of a second, full run)."""
    repo = tmp_path_factory.mktemp("secrets") / "shop"
    write_tree(
        repo,
        {
            "shop/__init__.py": "",
            "shop/payments/__init__.py": "",
            "shop/payments/retry.py": RETRY,
            "shop/payments/stripe_client.py": STRIPE_CLIENT,
            "shop/settings.py": SETTINGS,
        },
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Import the shop payments service", when=1_750_000_000)
    write_tree(
        repo,
        {
            "docker-compose.yml": COMPOSE,
            "README.md": README,
            "config/secrets.yaml": SECRETS_YAML,
            "deploy/service-account.json": SERVICE_ACCOUNT,
            "deploy/billing.json": SERVICE_ACCOUNT,
            "shop/payments/signing_key.py": SIGNING_KEY_MODULE,
            ".env": f"STRIPE_API_KEY={STRIPE_KEY}\n",
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", COMMIT_MESSAGE, when=1_760_000_000)
    summary = json.loads(cg_command("index", str(repo), "--json", env=GIT_ENV).stdout)
    text = cg_command("index", str(repo), "--full", env=GIT_ENV).stdout
    return repo, summary, text


def _all_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple, set)):
        return [s for v in value for s in _all_strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _all_strings(v)]
    return []


def test_no_secret_is_anywhere_in_the_graph(hostile_shop) -> None:
    repo, _, _ = hostile_shop
    with open_index(repo) as session:
        graph = dump(session.store)
    stored = "\n".join(s for rows in graph.values() for row in rows for s in _all_strings(row))
    assert "redacted" in stored  # the masks are there ...
    for secret in SECRETS:
        assert secret not in stored  # ... and no secret: text, search_text, docstrings, messages, config values
        assert secret.lower() not in stored.lower()  # nor as the full-text index lower-cases it
    # the string literals' own full-text field holds the masks, analyzed like any indexed text
    literals = "\n".join(row[SYMBOL_FIELDS.index("literals")] or "" for row in graph["Symbol"])
    assert analyze_text("redacted") in literals.split()  # "redact": words are stemmed
    for secret in SECRETS:
        assert analyze_text(secret) not in literals
    # nor in anything cg keeps on disk (the database files, the saved state)
    for path in (repo / ".cg").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(secret.encode() in data for secret in SECRETS), path


def test_search_and_cypher_find_no_secret(hostile_shop) -> None:
    repo, _, _ = hostile_shop
    for secret in SECRETS:
        for args in (("search", secret), ("search", secret, "--docs")):
            out = cg_command(*args, "--json", "--repo", str(repo)).stdout
            assert secret not in out
    rows = json.loads(
        cg_command(
            "cypher",
            "MATCH (c:Commit) RETURN c.subject, c.message, c.search_text",
            "--json",
            "--repo",
            str(repo),
        ).stdout
    )
    messages = " ".join(str(cell) for row in rows for cell in row.values())
    assert "Rotate the payments credentials" in messages and "Invoices and coupons are unaffected" in messages
    assert AWS_KEY_ID not in messages and GITHUB_TOKEN not in messages
    assert "<redacted" in messages


def test_secret_bearing_files_are_not_in_the_graph(hostile_shop) -> None:
    repo, summary, _ = hostile_shop
    files = json.loads(
        cg_command("cypher", "MATCH (f:File) RETURN f.id ORDER BY f.id", "--json", "--repo", str(repo)).stdout
    )
    indexed = [row["f.id"] for row in files]
    assert not set(SKIPPED) & set(indexed)
    assert ".env" not in indexed
    assert {"README.md", "docker-compose.yml", "shop/settings.py", "shop/payments/stripe_client.py"} <= set(indexed)
    assert sorted(summary["secret_files"]) == sorted([*SKIPPED, ".env"])


def test_the_run_reports_what_it_skipped_and_redacted(hostile_shop) -> None:
    repo, summary, text = hostile_shop
    assert summary["redacted_files"] == {
        "README.md": 2,  # the GitHub token, the webhook URL's password
        "docker-compose.yml": 3,  # the Stripe key, the URL's password, POSTGRES_PASSWORD
        "shop/payments/stripe_client.py": 2,  # the docstring's key, the argument's key
        "shop/settings.py": 2,  # both AWS constants
    }
    (commit,) = summary["redacted_commits"]
    assert summary["redacted_commits"][commit] == 2
    assert summary["secrets_redacted"] == 11
    assert "secret-bearing (keys, credentials), skipped: 5 (.env; config/secrets.yaml; deploy/billing.json" in text
    assert (
        "secrets redacted before storing: 11 (README.md; docker-compose.yml; shop/settings.py;"
        f" shop/payments/stripe_client.py; commit {commit})"
    ) in text


def test_ordinary_code_and_positions_are_intact(hostile_shop) -> None:
    repo, _, _ = hostile_shop
    with open_index(repo) as session:
        store = session.store
        rows = store._read(
            "MATCH (s:Symbol) WHERE s.path = 'shop/payments/retry.py' OR s.path = 'shop/payments/stripe_client.py' "
            "RETURN s.qualname, s.start_line, s.text, s.docstring"
        )
        by_name = {r[0]: r for r in rows}
        shas = dict(store.file_shas())
        calls = store._read(
            "MATCH (a:Symbol)-[c:CALLS]->(b:Symbol) WHERE a.qualname = 'shop.payments.stripe_client.live_gateway' "
            "RETURN b.qualname, c.line"
        )
    retry = by_name["shop.payments.retry.is_empty_blob"]
    assert EMPTY_BLOB_SHA in retry[2] and EMPTY_BLOB_SHA in retry[3]  # sha-like hex is code, not a secret
    assert "redacted" not in by_name["shop.payments.retry.webhook_digest_matches"][2]
    assert FIXTURE_DIGEST in (repo / "shop/payments/retry.py").read_text()
    # the redacted file keeps its lines: definitions start where they do on disk
    disk = (repo / "shop/payments/stripe_client.py").read_text().splitlines()
    gateway = by_name["shop.payments.stripe_client.live_gateway"]
    assert disk[gateway[1] - 1].startswith("def live_gateway")
    assert "<redacted:Stripe Access Key" in gateway[2]
    assert len(gateway[2]) == len("\n".join(disk[gateway[1] - 1 : gateway[1] + 1]))
    # and its columns: the call after the masked key on the same line still resolves
    assert ("shop.payments.retry.default_retries", gateway[1] + 1) in {tuple(c) for c in calls}
    # the blob sha is the file's own on disk, not the redacted text's
    assert shas["shop/payments/stripe_client.py"] == git_blob_sha(
        (repo / "shop/payments/stripe_client.py").read_bytes()
    )


# -- the rules, one by one ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "deploy/tls/server.pem",
        "deploy/tls/server.key",
        "home/.ssh/id_ed25519",
        "home/.ssh/id_rsa.pub",
        "android/release.keystore",
        "certs/client.p12",
        "gcp/service-account-invoices.json",
        "gcp/invoices-service-account.json",
        "credentials.json",
        ".netrc",
        ".pypirc",
        "nginx/.htpasswd",
        "config/secrets.yaml",
        "config/Secrets.YML",
        "k8s/payments-secret.yaml",
        "config/credentials.toml",
        "config/db_credentials.ini",
        "app/secret.properties",
        ".env",
        ".env.production",
    ],
)
def test_secret_files_by_name(path: str) -> None:
    assert secret_by_name(path)


@pytest.mark.parametrize(
    "path",
    ["shop/secrets.py", "shop/payments/credentials.py", "docs/secrets.md", "config/settings.yaml", ".npmrc", "keys.go"],
)
def test_code_and_docs_about_secrets_are_not_skipped_by_name(path: str) -> None:
    assert not secret_by_name(path)  # code is read (and redacted); .npmrc only by its content


def test_secret_files_by_content() -> None:
    assert secret_by_content("shop/fixtures.py", f'KEY = """{PEM}"""'.encode())
    assert secret_by_content("deploy/billing.json", SERVICE_ACCOUNT.encode())
    assert secret_by_content("k8s/payments.yaml", b"apiVersion: v1\nkind: Secret\ndata:\n  key: c2VjcmV0\n")
    assert secret_by_content("kubeconfig", b"users:\n- name: ci\n  user:\n    client-key-data: LS0tLS1CRUdJTi\n")
    assert secret_by_content(".npmrc", b"//registry.npmjs.org/:_authToken=npm_abc123\n")
    assert not secret_by_content(".npmrc", b"save-exact=true\n")
    assert not secret_by_content("k8s/deploy.yaml", b"kind: Deployment\nspec:\n  secretName: payments\n")
    assert not secret_by_content("docs/tls.md", b"Keep the PRIVATE KEY of the webhook signer in the vault.\n")


def test_masks_keep_length_lines_and_unrelated_text() -> None:
    redactor = Redactor()
    text = f'charge(api_key="{STRIPE_KEY}", idempotency=make_key())\nSHA = "{EMPTY_BLOB_SHA}"\n'
    out = redactor.redact(text, "python")
    assert out.found == ("Stripe Access Key",)
    assert len(out.text) == len(text) and out.text.count("\n") == text.count("\n")
    assert out.text.index("make_key") == text.index("make_key")
    assert EMPTY_BLOB_SHA in out.text and STRIPE_KEY not in out.text
    # a PEM block in a message: every line of the body masked, the lines kept
    message = f"Rotate the webhook key\n\n{PEM}thanks"
    out = redactor.redact(message)
    assert PEM_BODY not in out.text and out.text.splitlines()[0] == "Rotate the webhook key"
    assert out.text.count("\n") == message.count("\n") and out.text.endswith("thanks")


@pytest.mark.parametrize(
    ("language", "line", "secret"),
    [
        ("yaml", "POSTGRES_PASSWORD: hunter2-prod", "hunter2-prod"),
        ("yaml", "  - DATABASE_URL=postgres://shop:s3cret-pw@db/shop", "s3cret-pw"),
        ("python", 'DB_PASSWORD = "coupons-2024!"', "coupons-2024!"),
        ("python", 'slack = "xoxb-1234567890-abcdefghijkl"', "xoxb-1234567890-abcdefghijkl"),
        ("toml", 'webhook_secret = "whsec_9a8b7c6d"', "whsec_9a8b7c6d"),
        (
            "",
            "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJpbnZvaWNlcyJ9.c2lnbmF0dXJlLXZhbHVl",
            "c2lnbmF0dXJl",
        ),
    ],
)
def test_detected_forms(language: str, line: str, secret: str) -> None:
    out = Redactor().redact(line, language)
    assert secret not in out.text and len(out.text) == len(line)


@pytest.mark.parametrize(
    ("language", "line"),
    [
        ("python", 'password = get_password("payments")'),  # an indirect reference, no value
        ("yaml", "password: ${POSTGRES_PASSWORD}"),  # a template
        ("yaml", "api_key: {{ stripe_api_key }}"),
        ("python", 'BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"'),
        ("python", 'secret_id = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"'),  # a uuid
        ("python", "def refund(invoice, password_policy):"),
        ("", '"stripeWebhookSecretEnv": "STRIPE_WEBHOOK_SECRET"'),  # names the variable that holds it
    ],
)
def test_not_secrets(language: str, line: str) -> None:
    assert Redactor().redact(line, language).text == line


# -- .cgignore -------------------------------------------------------------------------------------


def test_cgignore_beside_gitignore_nested_and_negated(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            ".gitignore": "*.log.py\n",
            ".cgignore": "fixtures/\nshop/generated_*.py\nshop/coupons/generated_*.py\n",
            "shop/billing.py": "x = 1\n",
            "shop/generated_client.py": "x = 1\n",
            "shop/app.log.py": "x = 1\n",
            "fixtures/invoices.py": "x = 1\n",
            # a nested .cgignore adds rules for its folder and brings back what a parent left out
            "shop/coupons/.cgignore": "legacy.py\n!generated_codes.py\n",
            "shop/coupons/legacy.py": "x = 1\n",
            "shop/coupons/codes.py": "x = 1\n",
            "shop/coupons/generated_codes.py": "x = 1\n",
            "shop/webhooks/.cgignore": "!*.log.py\n",
            "shop/webhooks/delivery.log.py": "x = 1\n",
        },
    )
    found = [f.path for f in walk(tmp_path, WalkReport())]
    assert found == [
        "shop/billing.py",
        "shop/coupons/codes.py",
        "shop/coupons/generated_codes.py",
        "shop/webhooks/delivery.log.py",
    ]


def test_examples_shop_cgignore_keeps_the_answer_key_out() -> None:
    shop = Path(__file__).resolve().parents[2] / "examples" / "shop"
    assert (shop / "QUESTIONS.yaml").is_file()
    assert "QUESTIONS.yaml" not in [f.path for f in walk(shop, WalkReport())]


def test_the_name_rules_decide_as_fnmatch_does_pattern_by_pattern() -> None:
    """The patterns are asked as one expression; the reference is ``fnmatchcase`` per pattern, on
    every name in this repository and on names built around each pattern's edges."""
    from fnmatch import fnmatchcase

    from cg.ingest.secrets import SECRET_CONFIG_EXTENSIONS, SECRET_CONFIG_WORDS, SECRET_FILE_NAMES

    def reference(path: str) -> bool:
        name = path.rsplit("/", 1)[-1].lower()
        if any(fnmatchcase(name, pattern) for pattern in SECRET_FILE_NAMES):
            return True
        dot = name.rfind(".")
        extension = name[dot:] if dot > 0 else ""
        return extension in SECRET_CONFIG_EXTENSIONS and any(word in name for word in SECRET_CONFIG_WORDS)

    root = Path(__file__).resolve().parents[2]
    names = {p.name for p in root.rglob("*") if ".venv" not in p.parts and ".git" not in p.parts}
    for pattern in SECRET_FILE_NAMES:
        core = pattern.replace("*", "")
        for variant in (
            core,
            "x" + core,
            core + "x",
            core + ".bak",
            "." + core,
            core.upper(),
            "a/" + core,
            core + "\n",
        ):
            names.add(variant)
        names.add(pattern.replace("*", "prod"))
        names.add(pattern.replace("*", ""))
    assert len(names) > 1000
    assert sum(reference(n) for n in names) > 50
    for name in names:
        assert secret_by_name(name) == reference(name), name
