"""Plain records that flow from ingest to the stores. No behaviour, no database.

Ids are built from qualified names, never from byte offsets, so an edit elsewhere in a file
changes no id: ``shop/payments/retry.py::RetryPolicy.delay_for``. A module's own symbol (the code
between its definitions) is ``<path>::<module>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

MODULE_MARKER = "<module>"


def symbol_id(path: str, scope: str) -> str:
    """The stable id of a definition: repo-relative path plus its scope chain inside the file."""
    return f"{path}::{scope or MODULE_MARKER}"


# Symbol kinds that are graph nodes but not retrieval units (see ``Symbol.retrievable``).
NOT_RETRIEVABLE = frozenset({"lambda"})
# Kinds whose members are methods and whose big bodies become skeleton chunks.
CONTAINER_KINDS = frozenset({"class", "interface", "struct", "trait", "enum"})


@dataclass(frozen=True)
class FileRecord:
    path: str  # repo-relative, forward slashes; also the File node's id
    language: str
    kind: str  # source | test | docs | config
    blob_sha: str  # git's blob sha1 of the content, so it matches `git hash-object`
    loc: int
    module: str = ""  # dotted module name for Python files
    committed_at: int = 0  # unix seconds of the newest commit touching the file (0: none, or no git)


@dataclass(frozen=True)
class Symbol:
    id: str
    name: str
    qualname: str  # dotted, importable where possible: shop.payments.retry.RetryPolicy.delay_for
    # module | class | function | method | lambda (Python) | constant (Python UPPER_CASE) | interface | struct
    # | enum | trait | type (Go, Java, Rust, TypeScript) | config (a YAML/TOML/JSON key, a Dockerfile stage, a SQL
    # statement)
    kind: str
    path: str
    start_line: int  # 1-based, inclusive; includes decorators and the leading comment
    end_line: int
    signature: str
    docstring: str
    text: str  # the definition's source as written (decorators and leading comment included)
    parent_id: str  # the enclosing definition's id ("" for a module symbol)
    scope: tuple[str, ...] = ()  # human scope chain: ("class WebhookHandler", "method handle_x")
    header: str = ""  # generated context header (path, scope chain, imports the body uses)
    search_text: str = ""  # the lexical arm's analyzed tokens
    literals: str = ""  # the analyzed string literals of its own code, one literal a line (cg.ingest.chunk)
    def_line: int = 0  # line of the name after def/class (where jedi points); not stored
    decorators: tuple[str, ...] = ()  # decorator expressions as written: ("property",), ("router.route",)
    # Where the text may be split into fragments: (0-based line index into ``text``, nesting depth),
    # the first line of every statement of the body (depth 1) and of the blocks inside it (2, 3).
    split_points: tuple[tuple[int, int], ...] = ()

    @property
    def chunk_text(self) -> str:
        """What gets embedded: the header, then the code."""
        return f"{self.header}\n{self.text}" if self.header else self.text

    @property
    def retrievable(self) -> bool:
        """Whether search can return it: a vector, a full-text entry, a line in the file's table of
        contents. A lambda is a node of the call graph only: its few tokens sit inside its enclosing
        definition, whose chunk is what a question should find, and a vector of ``lambda r: r.total``
        would be noise that costs a model call."""
        return self.kind not in NOT_RETRIEVABLE


@dataclass(frozen=True)
class Chunk:
    """A retrieval unit that is not a whole definition: a fragment of an oversize definition, the
    skeleton of a large class, or a file's table of contents. Search hits on a chunk count for
    its owner symbol."""

    id: str  # owner id + "#fragment-2" / "#skeleton" / "<path>::<toc>"
    owner_id: str
    kind: str  # fragment | skeleton | toc
    path: str
    start_line: int
    end_line: int
    text: str
    search_text: str = ""


@dataclass(frozen=True)
class External:
    """A target outside the repository: a library, a builtin, or a name nobody could resolve."""

    id: str  # full dotted name when known (stripe.Event, builtins.print), else the expression
    name: str
    resolved: bool = True


class ResolvedBy(StrEnum):
    """How an edge's target was found: the one vocabulary ingest writes and queries rank by.

    A ``StrEnum``, so the stored property is the plain word (``c.resolved_by = 'jedi'`` in Cypher) and
    a value read back from either store compares equal to its member. ``confidence`` is the default
    weight of each way: a resolver may lower it on one edge (a name found through a type annotation is
    less sure than one found in scope) but never raise it, and queries order edges by ``rank`` (the
    most trusted first), so a call jedi proved outranks one matched by a unique name.
    """

    JEDI = "jedi"  # jedi's goto/infer followed the call to a definition
    SCIP = "scip"  # the language's own compiler named it, through its SCIP indexer (cg/ingest/resolve/scip.py)
    IMPORT = "import"  # the name is imported, the import says from where
    NAME = "name"  # scope, self/cls, a builtin, a type annotation or a package: a named resolution
    SATISFIES = "satisfies"  # a Go method reached through an interface the receiver type satisfies
    UNIQUE = "unique"  # the only definition of that name in the repository (a guess, marked as one)
    DISPATCH = "dispatch"  # an override a call through its base method may run (impact's walk)
    INSTANCE = "instance"  # code that makes an instance, taken to call its ``__call__`` (impact's walk)
    AMBIGUOUS = "ambiguous"  # several definitions could be meant: none is guessed
    UNRESOLVED = "unresolved"  # nobody could say
    NONE = ""  # edges that are facts of the source, not resolutions (DEFINES)

    @property
    def confidence(self) -> float:
        return _CONFIDENCE[self]

    @property
    def resolved(self) -> bool:
        """Whether the edge names its target (an External with a full dotted name counts)."""
        return self not in (ResolvedBy.AMBIGUOUS, ResolvedBy.UNRESOLVED)

    @property
    def rank(self) -> int:
        """Sort key for queries: 0 for the most trusted way, larger for less trusted ones."""
        return _RANK[self]


_CONFIDENCE = {
    ResolvedBy.JEDI: 1.0,
    ResolvedBy.SCIP: 1.0,
    ResolvedBy.IMPORT: 0.95,
    ResolvedBy.NAME: 0.9,
    ResolvedBy.SATISFIES: 0.7,
    ResolvedBy.UNIQUE: 0.6,
    ResolvedBy.DISPATCH: 0.5,
    ResolvedBy.INSTANCE: 0.4,
    ResolvedBy.AMBIGUOUS: 0.0,
    ResolvedBy.UNRESOLVED: 0.0,
    ResolvedBy.NONE: 1.0,
}
# The order queries have always walked edges in (cg/queries/expand.py): jedi (and a compiler's SCIP
# answer, its peer for the other languages), import, name, unique, then the rest, ambiguous and
# unresolved last.
_RANK = {
    ResolvedBy.JEDI: 0,
    ResolvedBy.SCIP: 0,
    ResolvedBy.IMPORT: 1,
    ResolvedBy.NAME: 2,
    ResolvedBy.UNIQUE: 3,
    ResolvedBy.SATISFIES: 4,
    ResolvedBy.DISPATCH: 4,
    ResolvedBy.NONE: 4,
    ResolvedBy.INSTANCE: 5,
    ResolvedBy.AMBIGUOUS: 9,
    ResolvedBy.UNRESOLVED: 9,
}


def edge_rank(resolved_by: str) -> int:
    """``ResolvedBy.rank`` of a stored value; an unknown word ranks with the middle ones."""
    try:
        return ResolvedBy(resolved_by).rank
    except ValueError:
        return 4


@dataclass(frozen=True)
class Edge:
    type: str  # DEFINES | CALLS | INHERITS | IMPORTS | DECORATES (an in-repo decorator -> what it decorates)
    src: str
    dst: str
    src_label: str  # File | Symbol
    dst_label: str  # File | Symbol | External
    line: int = 0
    resolved_by: str = ResolvedBy.NONE  # a ResolvedBy word
    confidence: float = 1.0
    candidates: int = 0  # an ambiguous target: how many in-repo definitions the name could mean


@dataclass
class FileExtraction:
    """Everything one file yields before resolution; raw call sites still carry their expressions."""

    file: FileRecord
    symbols: list[Symbol] = field(default_factory=list)
    imports: list[ImportRecord] = field(default_factory=list)
    calls: list[CallSite] = field(default_factory=list)
    bases: list[BaseRef] = field(default_factory=list)
    assignments: list[TypedName] = field(default_factory=list)
    attribute_reads: list[AttributeRead] = field(default_factory=list)
    decorations: list[Decoration] = field(default_factory=list)
    callable_values: list[CallableValue] = field(default_factory=list)
    exports: dict[str, str] = field(default_factory=dict)  # exported name -> local name (ES modules)
    warnings: list[str] = field(default_factory=list)
    # names that mean the same at every place of the file (Python: bound once at module level, or a
    # builtin never bound; cg/ingest/languages/python.py ``certain_names``)
    certain_names: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ImportRecord:
    """One imported binding: ``from ..payments import retry as r`` -> module='payments', name='retry',
    alias='r', level=2. ``import os.path`` -> module='os.path', name='', alias=''."""

    module: str
    name: str
    alias: str
    level: int
    line: int
    column: int = 0  # 0-based column of the imported name (what jedi is asked about)

    @property
    def local_name(self) -> str:
        if self.alias:
            return self.alias
        if self.name:
            return self.name
        if "/" in self.module:  # a Go import path binds its last element: "net/http" -> http
            return self.module.rstrip("/").rsplit("/", 1)[-1]
        return self.module.split(".")[0]


@dataclass(frozen=True)
class CallSite:
    caller_id: str
    callee: str  # the callee expression as written: self.gateway.charge, schedule_payment_retry
    line: int  # line of the callee's last name (``charge`` in ``self.gateway.charge(...)``)
    # call | new | decorator | callback | value (the callee is an expression: ask its value) | with | iter
    # | next (a protocol method of the value runs: __enter__/__exit__, __iter__/__next__) | raise (`raise X`)
    # | operator (an operator, a subscript or a builtin such as len() runs the dunder named in ``protocol``)
    via: str = "call"
    column: int = 0  # 0-based column of that name
    arity: int = -1  # number of arguments, where overloads are told apart by it (-1: not counted)
    # via="decorator": the id of the decorated definition. The caller is the scope that runs the `def`
    # (module, class body, enclosing function); the resolver emits CALLS caller -> decorator and
    # DECORATES decorator -> this id from the same targets.
    decorates: str = ""
    # via="operator": the dunder methods the operator runs on the value, the first its class defines
    # winning (``x += y``: "__iadd__ __add__"); the callee is the value's expression
    protocol: str = ""


@dataclass(frozen=True)
class Decoration:
    """One decorator applied to one definition, for the resolver's wrapper semantics.

    ``@retry_on_decline`` above ``def charge_invoice`` runs, in the scope that defines it,
    ``charge_invoice = retry_on_decline(charge_invoice)``; ``@router.route("/webhooks/stripe")`` first
    calls the factory ``router.route("/webhooks/stripe")`` and then applies what it returns. Stacked
    decorators apply bottom-up: ``order`` 0 is the one nearest the ``def`` (applied first to the function
    itself), 1 the next above it (applied to what 0 returned), and so on. The name the ``def`` binds is
    what the top one (the highest ``order``) returns. The ``CallSite`` with ``via="decorator"`` at the
    same (line, column) is the call of ``expr`` itself."""

    scope_id: str  # who applies it: the module, class or function whose body holds the `def`
    decorated_id: str  # the decorated definition
    expr: str  # the decorator's callee as written, arguments elided: retry_on_decline, router.route
    line: int  # line and 0-based column of expr's last name (what jedi is asked about)
    column: int
    order: int  # 0 = nearest the def, applied first
    factory: bool  # written with arguments: expr(...) is called first and its result is the decorator


@dataclass(frozen=True)
class CallableValue:
    """A lambda written where a value goes: bound to a name, or handed to a call.

    ``sort_key = lambda invoice: invoice.due_date`` -> target ``sort_key``, slot ``""``;
    ``sorted(invoices, key=lambda i: i.total)`` -> target ``sorted``, slot ``key``;
    ``retry(lambda: gateway.charge(invoice))`` -> target ``retry``, slot ``0`` (the position). Lets a
    resolver give a call of ``sort_key(...)``, or of the parameter the lambda lands in, the lambda as
    its target."""

    symbol_id: str  # the lambda
    scope_id: str  # the scope the binding or the call is written in
    target: str  # the bound name (``sort_key``, ``self.on_paid``) or the called expression (``sorted``)
    slot: str  # "" for a binding; a keyword or a 0-based position for an argument
    line: int


@dataclass(frozen=True)
class BaseRef:
    class_id: str
    expr: str
    line: int
    column: int = 0


@dataclass(frozen=True)
class AttributeRead:
    """``obj.total`` read, not called: an edge when ``total`` turns out to be a property; with ``store``,
    ``obj.total = x`` (an edge to the property's setter)."""

    scope_id: str
    attr: str
    line: int
    column: int
    expr: str = ""  # the whole read as written (``self.debug``), for the name resolver when jedi has no answer
    store: bool = False  # assigned (``self.debug = True``): a property's setter runs, not its getter


@dataclass(frozen=True)
class TypedName:
    """A name whose type the source states: a parameter annotation, ``x = Cls(...)`` or
    ``self.x = Cls(...)``/``self.x = param`` in a method. Scope is the defining symbol's id;
    names starting with ``self.`` are attributes of the enclosing class."""

    scope_id: str
    name: str
    type_expr: str


@dataclass(frozen=True)
class DocSection:
    """A README/markdown/reStructuredText section, split at headings: the "why" beside the code. The
    symbols it names become MENTIONS edges, computed by the pipeline once every file is parsed
    (cg/ingest/docs.py ``MentionIndex``), not kept on the record."""

    id: str  # path::Heading > Subheading (``~2`` on a repeated heading)
    path: str
    title: str
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    text: str
    search_text: str = ""

    @property
    def embed_text(self) -> str:
        return f"{self.path} > {' > '.join(self.heading_path)}\n{self.text}" if self.heading_path else self.text


@dataclass(frozen=True)
class CommitRecord:
    """One commit of recent history. ``touches`` are (path, symbol id or "") pairs: the files its diff
    changed and the definitions whose line ranges (in that commit's version of the file) its hunks
    overlap."""

    id: str  # the full sha
    short: str
    author: str
    committed_at: int
    subject: str
    message: str
    search_text: str = ""
    touches: tuple[tuple[str, str], ...] = ()
