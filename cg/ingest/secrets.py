"""Secret hygiene: files that hold credentials are never read into the index, and secrets inside the
files that are read are masked before any text is stored, embedded or full-text indexed.

Two steps, both before the index sees a byte. ``secret_by_name`` and ``secret_by_content`` tell the
walk (cg/ingest/walk.py) which files to skip whole: private keys and keystores, credential files
(``.netrc``, ``.pypirc``, ``.htpasswd``, a service-account JSON, an ``.npmrc`` holding a token),
``*secret*``/``*credential*`` config files, and any file holding a PEM private-key block, a cloud
service-account document, a kubeconfig client key or a Kubernetes ``Secret``. ``Redactor`` masks what
Yelp's detect-secrets recognises in every other text cg keeps (the changed files of a run, in
cg/ingest/pipeline.py's ``plan``; commit messages, in cg/ingest/history.py).

Why detect-secrets: it is maintained, its detectors encode the token formats of the services
(AWS, GitHub, GitLab, Slack, Stripe, SendGrid, npm, PyPI, OpenAI, Twilio, JWT, Basic-auth URLs...) and
its keyword detector knows per file type how a secret is assigned (``password: ...`` in YAML,
``API_KEY = "..."`` in Python), with its own heuristics against false positives. A hand-written list
would lag behind it.

Which of its detectors, and how they are called. Its two high-entropy detectors (any quoted hex
string of entropy > 3, any base64 string > 4.5) are left out: on real code they flag what is not a
secret and cannot be told from one by its shape: digests in test vectors, nonces, encoded fixtures,
blob shas. Measured with ``benchmarks/secret_hygiene.py`` on every file cg indexes in httpx 0.27.2,
requests 2.32.3 and click 8.1.7, they flag 32 strings (23, 9, 0), none of them a credential (digest
auth test vectors, sample nonces). The detectors kept change 57 lines (43, 14, 0), every one a
credential-shaped value in tests, fixtures or docs: the password of a ``user:password@`` URL and
``password="..."`` arguments of the auth tests, which is what a user wants masked. Its private-key
detector matches a PEM header only; here the whole block is masked (the body is the secret). The
public-IP detector is left out: an address is not a credential. The
detectors are called directly (``analyze_string``), not through detect-secrets' scan functions: those
configure global settings, may verify a token over the network, and skip a whole line when it looks
like an indirect reference (``client = Client(api_key="sk_live_...")`` would keep its key); here that
heuristic applies to keyword assignments only, where it belongs (``secret = vault.read("db")``). The
token-format detectors run once over a whole text (their patterns never span lines), the keyword
detector and four keyword-style ones only on lines that name a credential word, so the cost stays a
few regex scans per file (about 0.3 s per MB of text on a loaded machine, only for changed files). An inline
``pragma: allowlist secret`` is not honoured: it says a value may stay in the repository, not that it
may be copied into another store.

A secret is masked in place by a mask of its own length (``<redacted:AWS Access Key>``, padded with
``*``, or ``*`` alone for a short value): line numbers and columns stay those of the file on disk,
which the jedi workers read to resolve calls at the columns the parser reported. A token-format match
is widened to the end of its token (a Stripe key longer than the detector's 24 characters, a JWT's
signature). A file's blob sha stays the sha of its content on disk, so freshness compares with git.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import translate
from functools import cache

# Private keys, keystores and credential files, by file name (lower-cased; fnmatch patterns).
SECRET_FILE_NAMES = (
    # private keys and keystores
    "*.pem",
    "*.key",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.kdbx",
    # credential files of tools and clouds
    "service-account*.json",
    "*-service-account*.json",
    "credentials.json",
    "client_secret*.json",
    ".netrc",
    "_netrc",
    ".pypirc",
    ".htpasswd",
    ".git-credentials",
    ".pgpass",
    ".my.cnf",
    ".dockercfg",
    ".s3cfg",
    ".boto",
    "credentials",  # ~/.aws/credentials
    "terraform.tfstate",
    "terraform.tfstate.backup",
    # dotenv files: the conventional home of an application's secrets
    ".env",
    ".env.*",
    "*.env",
)
# Config files whose name says what they hold: "*secret*"/"*credential*" with one of these extensions.
SECRET_CONFIG_WORDS = ("secret", "credential")
SECRET_CONFIG_EXTENSIONS = frozenset(
    {".yaml", ".yml", ".json", ".toml", ".ini", ".env", ".properties", ".cfg", ".conf", ".xml"}
)

# By content: a PEM (or PuTTY) private key, a cloud credential document, a kubeconfig client key, a
# Kubernetes Secret manifest, an .npmrc holding a registry token.
_PEM_PRIVATE_KEY = re.compile(rb"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|PuTTY-User-Key-File-\d")
_SERVICE_ACCOUNT = re.compile(rb'"type"\s*:\s*"service_account"|"private_key(?:_id)?"\s*:\s*"[^"]')
_KUBECONFIG_KEY = re.compile(rb"^\s*client-key-data\s*:\s*\S", re.MULTILINE)
_K8S_SECRET = re.compile(rb"^kind\s*:\s*[\"']?Secret[\"']?\s*$", re.MULTILINE)
_NPM_TOKEN = re.compile(rb"_authToken\s*=|_auth\s*=|_password\s*=")


# the name patterns as one expression: what ``fnmatchcase`` does per pattern (each translated by
# ``fnmatch.translate``, as fnmatchcase itself does), asked once per file instead of 40 times
_SECRET_NAME = re.compile("|".join(translate(pattern) for pattern in SECRET_FILE_NAMES))


def secret_by_name(path: str) -> bool:
    """Whether a file's name alone says it holds credentials (it is then never read)."""
    name = path.rsplit("/", 1)[-1].lower()
    if _SECRET_NAME.match(name):
        return True
    dot = name.rfind(".")
    extension = name[dot:] if dot > 0 else ""
    return extension in SECRET_CONFIG_EXTENSIONS and any(word in name for word in SECRET_CONFIG_WORDS)


def secret_by_content(path: str, data: bytes) -> bool:
    """Whether a file holds a private key or a credential document: it is skipped whole, since no
    part of it is worth the risk of a missed line."""
    name = path.rsplit("/", 1)[-1].lower()
    if b"PRIVATE KEY" in data or b"PuTTY-User-Key-File" in data:
        if _PEM_PRIVATE_KEY.search(data):
            return True
    if name.endswith(".json") and (b"service_account" in data or b"private_key" in data):
        if _SERVICE_ACCOUNT.search(data):
            return True
    if name.endswith((".yaml", ".yml")) or "kubeconfig" in name or name == "config":
        if b"client-key-data" in data and _KUBECONFIG_KEY.search(data):
            return True
        if b"Secret" in data and _K8S_SECRET.search(data):
            return True
    return name == ".npmrc" and _NPM_TOKEN.search(data) is not None


@dataclass(frozen=True)
class Redacted:
    """A text with its secrets masked, and the detector's name for each secret masked."""

    text: str
    found: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.found)


# The token-format detectors kept (see the module docstring for the ones left out and why).
_TOKEN_DETECTORS = (
    "artifactory.ArtifactoryDetector",
    "aws.AWSKeyDetector",
    "azure_storage_key.AzureStorageKeyDetector",
    "basic_auth.BasicAuthDetector",
    "cloudant.CloudantDetector",
    "discord.DiscordBotTokenDetector",
    "github_token.GitHubTokenDetector",
    "gitlab_token.GitLabTokenDetector",
    "ibm_cloud_iam.IbmCloudIamDetector",
    "ibm_cos_hmac.IbmCosHmacDetector",
    "jwt.JwtTokenDetector",
    "mailchimp.MailchimpDetector",
    "npm.NpmDetector",
    "openai.OpenAIDetector",
    "pypi_token.PypiTokenDetector",
    "sendgrid.SendGridDetector",
    "slack.SlackDetector",
    "softlayer.SoftlayerDetector",
    "square_oauth.SquareOAuthDetector",
    "stripe.StripeDetector",
    "telegram_token.TelegramBotTokenDetector",
    "twilio.TwilioKeyDetector",
)
# A detector's match widened to the end of its token: a key longer than the pattern, a JWT signature.
_TOKEN_TAIL = re.compile(r"[\w\-+/=]*")
_JWT_TAIL = re.compile(r"[\w\-+/=.]*")
# A PEM private-key block, masked between its BEGIN and END lines (to the end when it has no END).
_PEM_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY( BLOCK)?-----")
# Detectors whose patterns open with a look-behind and an optional keyword, so a scan tries every
# position of a text: each of their matches names a credential word (key, pw, pass, token) or its
# service's host on its own line, so they run on the lines that do, as the keyword detector does.
_LINE_DETECTORS = frozenset({"CloudantDetector", "IbmCloudIamDetector", "IbmCosHmacDetector", "SoftlayerDetector"})
_LONG_VALUE = re.compile(r"[\w\-]{24}")  # and each of their values is 24 characters or more
# A line worth a keyword look: it names one of the keyword detector's words or the ones above (matched
# in the lower-cased text: a case-insensitive alternation costs three times as much).
_CREDENTIAL_WORDS = r"key|pw|pass|token|secret|contrase|cloudant\.com|softlayer\.com"
_CREDENTIAL_LINE = re.compile(_CREDENTIAL_WORDS)
_CREDENTIAL_LINE_ANY_CASE = re.compile(_CREDENTIAL_WORDS, re.IGNORECASE)  # for non-ASCII text
# What every match of a detector holds, found faster than its pattern (which opens with a look-behind
# or a character class): a text without it is not scanned by that detector.
_GATES = {"ArtifactoryDetector": re.compile(r"AKC|AP[\dA-F]"), "MailchimpDetector": re.compile(r"-us\d")}
# How each cg language assigns a keyword secret, as detect-secrets' file types (else quotes required).
_KEYWORD_FILE_TYPES = {
    "python": "PYTHON",
    "go": "GO",
    "java": "JAVA",
    "javascript": "JAVASCRIPT",
    "typescript": "JAVASCRIPT",
    "yaml": "YAML",
    "toml": "TOML",
    "dockerfile": "CONFIG",
}

# A keyword value that is the name of an environment variable, not a secret (ours, beside detect-secrets'
# filters: config files name the variable a secret is read from).
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")

Span = tuple[int, int, str]  # start, end, the detector's name for the secret


class Redactor:
    """Masks the secrets detect-secrets finds in a text, keeping its length, lines and columns."""

    def __init__(self) -> None:
        import importlib

        from detect_secrets.filters import heuristic
        from detect_secrets.plugins import keyword
        from detect_secrets.util.filetype import FileType

        detectors = []
        for dotted in _TOKEN_DETECTORS:
            module, cls = dotted.rsplit(".", 1)
            detectors.append(getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)())
        self._text_detectors = [d for d in detectors if type(d).__name__ not in _LINE_DETECTORS]
        self._line_detectors = [d for d in detectors if type(d).__name__ in _LINE_DETECTORS]
        self._keyword = keyword.KeywordDetector()
        self._tables = {
            language: keyword.REGEX_BY_FILETYPE.get(FileType[kind], keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)
            for language, kind in _KEYWORD_FILE_TYPES.items()
        }
        self._default_table = keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
        self._heuristic = heuristic

    def redact(self, text: str, language: str = "") -> Redacted:
        """``text`` with every secret masked in place; ``language`` (cg's name for the file's language)
        picks how keyword assignments are written. A text with no secret is returned as it is."""
        spans: list[Span] = list(self._private_keys(text))
        for detector in self._text_detectors:
            gate = _GATES.get(type(detector).__name__)
            if gate is None or gate.search(text):
                spans.extend(self._tokens(detector, text, 0))
        table = self._tables.get(language, self._default_table)
        for offset, line in _credential_lines(text):
            if _LONG_VALUE.search(line):
                for detector in self._line_detectors:
                    spans.extend(self._tokens(detector, line, offset))
            spans.extend(self._keywords(line, offset, table))
        if not spans:
            return Redacted(text)
        return _mask(text, spans)

    def _tokens(self, detector, text: str, offset: int) -> Iterator[Span]:
        """A token-format detector's findings, placed where its patterns matched."""
        tail = _JWT_TAIL if detector.secret_type == "JSON Web Token" else _TOKEN_TAIL
        for pattern in detector.denylist:
            for match in pattern.finditer(text):
                found = match.group(0)  # the detector's own reading of its match: its groups, a JWT's validity
                for value in set(detector.analyze_string(found)):
                    if value and not self._not_a_secret(value):
                        start = match.start() + found.find(value)
                        end = start + len(value)
                        widened = tail.match(text, end)  # the tail patterns match the empty string too
                        yield offset + start, offset + (widened.end() if widened else end), detector.secret_type

    def _private_keys(self, text: str) -> Iterator[Span]:
        if "PRIVATE KEY" not in text:
            return
        for begin in _PEM_BEGIN.finditer(text):
            end_marker = f"-----END {begin.group(1)}PRIVATE KEY{begin.group(2) or ''}-----"
            end = text.find(end_marker, begin.end())
            yield begin.end(), end if end >= 0 else len(text), "Private Key"

    def _keywords(self, line: str, offset: int, table: dict) -> Iterator[Span]:
        """A ``password = "..."``-style assignment on one line, as detect-secrets reads it for the file type."""
        line = line.rstrip()  # as detect-secrets scans it
        for pattern, group in table.items():
            match = pattern.search(line)
            if match is None:
                continue
            value = match.group(group)
            h = self._heuristic
            if (
                value
                and not self._not_a_secret(value)
                and not h.is_likely_id_string(value, line)
                and not h.is_indirect_reference(line)  # secret = vault.read("db"): no value on this line
                and not _ENV_NAME.fullmatch(value)  # "secretEnv": "STRIPE_WEBHOOK_SECRET" names where it lives
            ):
                yield offset + match.start(group), offset + match.end(group), self._keyword.secret_type
            return  # detect-secrets takes the first pattern that matches a line

    def _not_a_secret(self, value: str) -> bool:
        """detect-secrets' own filters against values that only look like secrets."""
        h = self._heuristic
        return (
            h.is_templated_secret(value)
            or h.is_prefixed_with_dollar_sign(value)
            or h.is_sequential_string(value)
            or h.is_potential_uuid(value)
            or h.is_not_alphanumeric_string(value)
        )


def _credential_lines(text: str) -> Iterator[tuple[int, str]]:
    """(offset, line without its break) of each line of ``text`` that names a credential word."""
    ascii_text = text.isascii()  # then lower() keeps every offset
    gate = _CREDENTIAL_LINE if ascii_text else _CREDENTIAL_LINE_ANY_CASE
    done = -1
    for match in gate.finditer(text.lower() if ascii_text else text):
        if match.start() <= done:
            continue
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        done = end = len(text) if end < 0 else end
        yield start, text[start:end]


def _mask(text: str, spans: list[tuple[int, int, str]]) -> Redacted:
    """Replace each span (overlapping ones merged) by a same-length mask; line breaks stay."""
    merged: list[list] = []
    for start, end, kind in sorted(spans):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        elif end > start:
            merged.append([start, end, kind])
    out: list[str] = []
    last = 0
    for start, end, kind in merged:
        out.append(text[last:start])
        out.append(_same_length_mask(text[start:end], kind))
        last = end
    out.append(text[last:])
    return Redacted("".join(out), tuple(kind for _, _, kind in merged))


def _same_length_mask(secret: str, kind: str) -> str:
    """``<redacted:KIND>`` padded with ``*`` to the secret's length (``<redacted>`` or ``*`` when it is
    shorter); the secret's line breaks are kept, so no line moves."""
    if "\n" in secret:
        return "\n".join(_same_length_mask(line, kind) for line in secret.split("\n"))
    n = len(secret)
    mask = next((label for label in (f"<redacted:{kind}>", "<redacted>") if len(label) <= n), "")
    return mask[:-1] + "*" * (n - len(mask)) + ">" if mask else "*" * n


@cache
def redactor() -> Redactor:
    """One Redactor per process (building it imports and compiles the detectors)."""
    return Redactor()
