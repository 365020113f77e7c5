"""The Python resolver: jedi's answers first (cg/ingest/resolve/jedi_resolver.py), then name lookup.

Order, as Python itself looks names up: the local scope chain (nested definitions), the module,
then the file's imports, then builtins. ``self.m()``/``cls.m()`` look up the enclosing class and its
in-repo bases (a linearised MRO); ``super().m()`` starts after the class. Receivers whose type the
source states are followed one step: a parameter annotation (``policy: RetryPolicy``), a constructor
assignment (``queue = JobQueue()``) or an attribute set in a method (``self.gateway = gateway`` with
``gateway: PaymentGateway``). Whatever is not found becomes an ``External`` node: with its full
dotted name when an import says where it comes from (``resolved_by='import'``), else marked
unresolved. On top of both, the rules in docs/callgraph.md: decorators reach their wrappers and back
(flow.py), statements reach the dunder methods they run, ``self.m()`` reaches the overrides of ``m``
(``dispatch``), and a method called on an untyped parameter is guessed only when its name is unique in
the repository and no builtin type has it (``unique``): a wrong edge costs more than a missing one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from cg.ingest.languages.base import module_code
from cg.ingest.languages.python import LANGUAGE
from cg.ingest.resolve.flow import Decorator, DefinitionFacts, definition_facts
from cg.ingest.resolve.jedi_resolver import JediResults
from cg.model import (
    AttributeRead,
    CallSite,
    Decoration,
    Edge,
    External,
    FileExtraction,
    ImportRecord,
    ResolvedBy,
    Symbol,
    symbol_id,
)

BUILTINS = LANGUAGE.builtins
_LAMBDA_ID = re.compile(r"<lambda@-?\d+:(\d+)>(?:~\d+)?$")  # a lambda's id ends in its line offset and column
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")  # a decorator written as a plain dotted name
_WRAPPERS = re.compile(r"^(?:typing\.)?(?:Optional|Type|ClassVar|Final|Annotated)\[(.*)\]$")


def is_property(sym: Symbol) -> bool:
    return any(d.rsplit(".", 1)[-1] in ("property", "cached_property") for d in sym.decorators)


def property_names(extractions: list[FileExtraction]) -> frozenset[str]:
    """Names of methods decorated ``@property`` (or ``@cached_property``) anywhere in the repo."""
    return frozenset(sym.name for ex in extractions for sym in ex.symbols if is_property(sym))


def jedi_names(extractions: list[FileExtraction]) -> frozenset[str]:
    """The names that make a site worth asking jedi about: properties (a read of ``obj.total`` may run a
    getter) and the dunder methods the repository's classes define (``a + b`` may run ``__add__``)."""
    dunders = {
        sym.name
        for ex in extractions
        for sym in ex.symbols
        if sym.kind == "method" and sym.name.startswith("__") and sym.name.endswith("__")
    }
    return property_names(extractions) | dunders


def defines_edges(ex: FileExtraction) -> list[Edge]:
    """File -> module symbol and top-level definitions, definition -> what it encloses."""
    edges = []
    for sym in ex.symbols:
        if sym.kind == "module" or sym.parent_id.endswith("::<module>"):
            edges.append(Edge("DEFINES", ex.file.path, sym.id, "File", "Symbol", sym.start_line))
        else:
            edges.append(Edge("DEFINES", sym.parent_id, sym.id, "Symbol", "Symbol", sym.start_line))
    return edges


class EdgeSink:
    """The edges leaving one file, each (type, source, target) once, and the Externals they reach."""

    def __init__(self, ex: FileExtraction) -> None:
        self.path = ex.file.path
        self.edges = defines_edges(ex)
        self.externals: dict[str, External] = {}
        self.seen: set[tuple[str, str, str]] = set()

    def add(
        self,
        kind: str,
        src: str,
        src_label: str,
        dst: str,
        dst_label: str,
        line: int,
        how: tuple[ResolvedBy, float],
        **extra,
    ) -> None:
        """``how`` is (resolved_by, confidence); an External target is named resolved unless ``resolved_by``
        says it is not."""
        resolved_by, confidence = how
        if dst_label == "External":
            self.externals.setdefault(dst, External(dst, dst.rsplit(".", 1)[-1], resolved_by.resolved))
        key = (kind, src, dst)
        if key in self.seen or (kind == "IMPORTS" and dst == self.path):
            return
        self.seen.add(key)
        self.edges.append(Edge(kind, src, dst, src_label, dst_label, line, resolved_by.value, confidence, **extra))

    def result(self) -> tuple[list[Edge], list[External]]:
        return self.edges, list(self.externals.values())


def decorator_targets(targets: list[Target]) -> list[Target]:
    """The in-repo definitions a decorator expression names, from the targets of its call: a DECORATES
    edge leaves each of them (decorator -> decorated). A class used as a decorator is the decorator, not
    the ``__init__`` its call also reaches; a library decorator (an External) gets no edge."""
    classes = {t.symbol.id for t in targets if t.symbol is not None and t.symbol.kind == "class"}
    return [
        t
        for t in targets
        if t.label == "Symbol"
        and t.symbol is not None
        and not (t.symbol.name == "__init__" and t.symbol.parent_id in classes)
    ]


@dataclass(frozen=True)
class Target:
    id: str
    label: str  # Symbol | External | File
    resolved_by: str
    symbol: Symbol | None = None


# How each internal resolution step is reported on an edge: (resolved_by, confidence).
PUBLIC_RESOLUTION: dict[str, tuple[ResolvedBy, float]] = {
    "jedi": (ResolvedBy.JEDI, ResolvedBy.JEDI.confidence),
    "import": (ResolvedBy.IMPORT, ResolvedBy.IMPORT.confidence),
    "scope": (ResolvedBy.NAME, ResolvedBy.NAME.confidence),
    "self": (ResolvedBy.NAME, ResolvedBy.NAME.confidence),
    "builtin": (ResolvedBy.NAME, ResolvedBy.NAME.confidence),
    "annotation": (ResolvedBy.NAME, 0.8),  # a stated type, not a definition in scope: a step less sure
    "unresolved": (ResolvedBy.UNRESOLVED, ResolvedBy.UNRESOLVED.confidence),
    "dispatch": (ResolvedBy.DISPATCH, ResolvedBy.DISPATCH.confidence),
    "flow": (ResolvedBy.NAME, 0.8),  # a function value followed through a decorator's parameter
    "unique": (ResolvedBy.UNIQUE, ResolvedBy.UNIQUE.confidence),
}


@dataclass(frozen=True)
class Application:
    """A decorator applied to a function: the definition whose parameter receives the function, that
    parameter, and the nested function it returns in its place (None: it returns the function itself,
    or cg cannot tell, and a call of the decorated name runs the function)."""

    holder: Symbol
    parameter: str
    wrapper: Symbol | None
    # how the wrapper names the function when it is not the holder's closure: a class decorator's
    # ``__call__`` runs ``self.fn``, which its ``__init__`` stored ("": the wrapper calls it by ``parameter``)
    held_as: str = ""


# Method names a value of a builtin type also has: a call of one on an untyped parameter is never guessed.
_BUILTIN_TYPES = (object, list, dict, set, frozenset, str, bytes, bytearray, int, float, tuple)
_BUILTIN_METHODS = frozenset(name for kind in _BUILTIN_TYPES for name in dir(kind))
# ``self.<name> =`` (or ``self.<name>: T =``); the word boundary before ``self`` is checked by hand
# (``_assigned_attributes``): written into the pattern it cost the literal-prefix search, 7x slower
_ASSIGNED_ATTRIBUTE = re.compile(r"self\.(\w+)\s*(?::[^=\n]*)?=(?!=)")
_FILLED_CONTAINER = re.compile(r"\.(\w+)\.(?:append|appendleft|add|insert|extend)\(")


def _assigned_attributes(text: str) -> list[str]:
    return [
        m.group(1)
        for m in _ASSIGNED_ATTRIBUTE.finditer(text)
        if m.start() == 0 or not (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_")
    ]


IMPLICIT = frozenset({"with", "iter", "next", "raise", "operator"})  # CallSite.via of code that runs dunders


@dataclass(frozen=True)
class BodyFacts:
    """What the name resolver reads of one definition's body (``body_inputs``); equal before and after an
    edit when the edit cannot move another file's edge through it."""

    facts: DefinitionFacts | None  # without the loops' lines; None when the text counts whole
    loops: tuple[tuple[str, str], ...]  # (variable, expression) of each loop
    assigned: tuple[str, ...]  # a class's ``self.<name> =``
    filled: tuple[str, ...]  # the containers a function fills
    calls_super: bool
    lambdas: tuple[tuple[str, str, str], ...]  # (lambda id, target, slot) of the lambdas it binds or hands on
    applied: tuple[tuple[str, str, int, bool], ...]  # (decorated id, expression, order, factory) it applies
    text: str = ""  # the whole text, for a module's own code or a text that does not parse on its own

    def shared(self) -> frozenset[tuple[str, ...]]:
        """What the body does that code elsewhere meets with no edge between them, each fact led by the
        attribute it goes through: the containers it fills (``hooks.listeners.append(ReceiptMailer())``:
        a loop over ``self.listeners`` in another file dispatches to what was appended), the registries
        it writes, the attributes it stores a parameter or a lambda in, the ``self.<name>`` a class
        assigns. cg/ingest/freshness.py ``affected`` compares them before and after an edit and
        re-resolves every file that writes ``.<name>`` for a fact that changed: the definition's callers
        are not the files that can resolve differently."""
        out: set[tuple[str, ...]] = {(t.rpartition(".")[2], "lambda", t) for _, t, slot in self.lambdas if slot == ""}
        out.update((name, "filled") for name in self.filled)
        out.update((name, "assigned") for name in self.assigned)
        if self.facts is not None:
            out.update((c.rpartition(".")[2], "appended", c, value) for c, value in self.facts.appended)
            out.update((c.rpartition(".")[2], "registered", p, c) for p, c in self.facts.registered)
            out.update((attribute, "stored", p) for p, attribute in self.facts.stored)
        return frozenset(f for f in out if f[0].isidentifier())


def body_inputs(ex: FileExtraction) -> dict[str, BodyFacts]:
    """Per definition of ``ex``, what this resolver (without jedi) reads of its body when it resolves
    *other* files; an incremental run compares it before and after an edit (cg/ingest/freshness.py
    ``affected``) to tell whether the callers of a definition whose body changed can resolve
    differently. Everything ``Resolver`` takes from a definition's text goes through the facts below:
    ``definition_facts`` (decorators, parameters, what it returns, what it stores, registers,
    appends, binds, loops over, gets by name), the ``self.<name> =`` a class body assigns, the
    containers a function fills, whether it calls ``super()``; and from the file's records those
    scoped to it that come from a body and that ``interface`` does not compare: the lambdas it binds
    or hands on (``CallableValue``) and the decorators it applies, without their lines (a line moved
    by an edit above is no change a caller can see). A module's own code (between its definitions)
    and a definition whose text does not parse on its own keep their whole text, so any change to
    them counts. Why: a body edit used to re-resolve every
    file with an edge into the definition (jedi infers through bodies: what ``make()`` returns decides
    what ``make().run()`` calls), 11 of Django's files for a one-line edit of ``capfirst``, about a
    quarter of the edit's time; the name resolver only reads these facts, so an edit that keeps them
    cannot move a caller's edge. Any new read of a definition's text in this module must be added
    here: tests/ingest/test_incremental.py compares incremental runs with full rebuilds."""
    lambdas: dict[str, list[tuple[str, str, str]]] = {}
    for v in ex.callable_values:
        lambdas.setdefault(v.scope_id, []).append((v.symbol_id, v.target, v.slot))
    applied: dict[str, list[tuple[str, str, int, bool]]] = {}
    for d in ex.decorations:
        applied.setdefault(d.scope_id, []).append((d.decorated_id, d.expr, d.order, d.factory))
    out: dict[str, BodyFacts] = {}
    for sym in ex.symbols:
        facts = definition_facts(sym.text) if sym.kind != "module" else None
        out[sym.id] = BodyFacts(
            replace(facts, loops=()) if facts is not None else None,  # a loop's lines: read for its own sites only
            tuple((variable, expression) for variable, expression, _, _ in facts.loops) if facts else (),
            tuple(_assigned_attributes(sym.text)) if sym.kind == "class" else (),
            tuple(sorted(set(_FILLED_CONTAINER.findall(sym.text)))),
            "super(" in sym.text,
            tuple(lambdas.get(sym.id, ())),
            tuple(applied.get(sym.id, ())),
            # a module's own code (its markers' line numbers aside), or a text that does not parse: whole
            (module_code(sym.text) if sym.kind == "module" else sym.text) if facts is None else "",
        )
    return out


def _callable_value(target: Target) -> bool:
    """Whether an argument handed to a higher-order builtin (``sorted(rows, key=...)``) names code it
    will run: a function, method, lambda or class, in the repository or a library. A variable (``max(delay,
    0.0)``) or a name nobody resolved is a value, never a call."""
    if target.symbol is not None:
        return target.symbol.kind in ("function", "method", "class", "lambda")
    return target.label == "External" and target.resolved_by != "unresolved"


class Resolver:
    def __init__(self, extractions: list[FileExtraction], jedi: JediResults | None = None) -> None:
        self.jedi = jedi
        self.by_def_line: dict[tuple[str, int], Symbol] = {}
        self.lambdas: dict[tuple[str, int], list[tuple[int, Symbol]]] = {}  # (path, line) -> (column, lambda)
        self.property_names = property_names(extractions)
        self.by_id: dict[str, Symbol] = {}
        self.by_qualname: dict[str, Symbol] = {}
        self.children: dict[str, dict[str, Symbol]] = {}
        self.module_of_path: dict[str, str] = {}
        self.file_of_module: dict[str, str] = {}
        self.bindings: dict[str, dict[str, str]] = {}  # path -> local name -> absolute dotted target
        self.star_imports: dict[str, list[str]] = {}
        self.types: dict[str, dict[str, str]] = {}  # scope id -> name -> type expression
        self.bases: dict[str, list[str]] = {}  # class id -> base expressions
        self.decorations: dict[str, list[Decoration]] = {}  # decorated id -> its decorators, top to bottom
        self.callable_values = [value for ex in extractions for value in ex.callable_values]
        self._stored_lambdas: dict[tuple[str, str], list[Symbol]] | None = None
        for ex in extractions:
            path = ex.file.path
            self.module_of_path[path] = ex.file.module
            if ex.file.module:
                self.file_of_module[ex.file.module] = path
            for sym in ex.symbols:
                self.by_id[sym.id] = sym
                if sym.def_line:
                    self.by_def_line[(sym.path, sym.def_line)] = sym
                position = _LAMBDA_ID.search(sym.id) if sym.kind == "lambda" else None
                if position is not None:
                    self.lambdas.setdefault((sym.path, sym.start_line), []).append((int(position.group(1)), sym))
                self.by_qualname.setdefault(sym.qualname, sym)
                if sym.parent_id:
                    self.children.setdefault(sym.parent_id, {})[sym.name] = sym
            for typed in ex.assignments:
                self.types.setdefault(typed.scope_id, {}).setdefault(typed.name, typed.type_expr)
            for base in ex.bases:
                self.bases.setdefault(base.class_id, []).append(base.expr)
            for dec in sorted(ex.decorations, key=lambda d: -d.order):
                self.decorations.setdefault(dec.decorated_id, []).append(dec)
        for ex in extractions:
            table: dict[str, str] = {}
            stars: list[str] = []
            for imp in ex.imports:
                target = self.absolute(ex.file, imp)
                if imp.name == "*":
                    stars.append(target)
                elif imp.name:
                    table[imp.local_name] = f"{target}.{imp.name}" if target else imp.name
                elif imp.alias:
                    table[imp.alias] = imp.module
                else:  # `import a.b` binds `a`
                    root = imp.module.split(".")[0]
                    table.setdefault(root, root)
            self.bindings[ex.file.path] = table
            self.star_imports[ex.file.path] = stars
        self._mro_cache: dict[str, list[Symbol]] = {}
        self._mro_pending = 0  # linearisations under way: their classes' MROs are provisional
        # (class id, member name, skip_self) -> what ``member`` found, once no MRO is provisional
        self._member_cache: dict[tuple[str, str, bool], Symbol | None] = {}
        self._typing: set[tuple[str, str]] = set()
        self._below: dict[str, list[Symbol]] | None = None  # class id -> the classes naming it as a direct base
        self._subclasses: dict[str, list[Symbol]] = {}
        self._by_member: dict[str, set[str]] | None = None
        self._beside_cache: dict[str, set[str]] = {}
        self._overrides_cache: dict[tuple[str, str], list[tuple[Symbol, Symbol]]] = {}
        self._by_method_name: dict[str, list[Symbol]] | None = None
        self._container_values: dict[str, list[tuple[Symbol, bool]]] = {}
        self._container_index: tuple[dict[str, set[str]], dict[str, list[Symbol]]] | None = None
        self._descriptors: frozenset[str] | None = None  # class attributes bound to descriptors (__get__)
        self._setters: dict[str, Symbol] | None = None  # a property's qualname -> its setter
        self._setter_attrs: frozenset[str] = frozenset()  # the names those setters have
        self._decorated: tuple[dict[str, Symbol], dict[str, dict[str, list[Symbol]]]] | None = None
        self._registries: dict[tuple[str, str], list[Symbol]] = {}  # filled with _decorated

    # -- imports ---------------------------------------------------------------------------------
    def absolute(self, file, imp: ImportRecord) -> str:
        if imp.level == 0:
            return imp.module
        package = file.module.split(".") if file.module else []
        if not file.path.endswith("__init__.py"):
            package = package[:-1]
        if imp.level > 1:
            package = package[: len(package) - (imp.level - 1)]
        return ".".join(p for p in (*package, imp.module) if p)

    def import_target(self, file, imp: ImportRecord) -> Target:
        for target in self._jedi(file.path, imp.line, imp.column):
            if target.symbol is not None and target.symbol.kind == "module":
                return Target(target.symbol.path, "File", "jedi", target.symbol)
            if target.label == "Symbol" or imp.name:
                return target
        base = self.absolute(file, imp)
        dotted = f"{base}.{imp.name}" if imp.name and imp.name != "*" else base
        found = self.lookup_dotted(dotted)
        if found is not None:
            if found.kind == "module":
                return Target(found.path, "File", "import", found)
            return Target(found.id, "Symbol", "import", found)
        return Target(dotted, "External", "import")

    def lookup_dotted(self, dotted: str) -> Symbol | None:
        """``shop.payments.retry.RetryPolicy.delay_for`` -> that Symbol; also re-exports through a
        package's ``__init__`` (``shop.payments.schedule_payment_retry``), followed a few hops."""
        for _ in range(5):
            sym = self.by_qualname.get(dotted)
            if sym is not None:
                return sym
            head, _, attr = dotted.rpartition(".")
            if not head:
                return None
            owner = self.lookup_dotted_direct(head)
            if owner is None:
                return None
            if owner.kind == "class":
                return self.member(owner, attr)
            if owner.kind != "module":
                return None
            rebound = self.bindings.get(owner.path, {}).get(attr)
            if rebound is None or rebound == dotted:
                return None
            dotted = rebound
        return None

    def lookup_dotted_direct(self, dotted: str) -> Symbol | None:
        sym = self.by_qualname.get(dotted)
        if sym is not None or "." not in dotted:
            return sym
        return self.lookup_dotted(dotted)

    # -- classes ---------------------------------------------------------------------------------
    def direct_bases(self, cls: Symbol) -> list[Symbol]:
        parent = self.by_id.get(cls.parent_id)
        out = []
        for expr in self.bases.get(cls.id, []):
            base = self.resolve_expr(expr, parent) if parent else None
            if base is not None and base.symbol is not None and base.symbol.kind == "class":
                out.append(base.symbol)
        return out

    def mro(self, cls: Symbol) -> list[Symbol]:
        """Python's C3 linearisation over the in-repo bases (bases outside the repo are left out);
        an inconsistent hierarchy falls back to depth-first order."""
        cached = self._mro_cache.get(cls.id)
        if cached is not None:
            return cached
        self._mro_cache[cls.id] = [cls]  # while computing: a base that refers back sees the class alone
        self._mro_pending += 1
        try:
            order = self._linearise(cls)
        finally:
            self._mro_pending -= 1
        self._mro_cache[cls.id] = order
        return order

    def _linearise(self, cls: Symbol) -> list[Symbol]:
        bases = self.direct_bases(cls)
        sequences = [list(self.mro(b)) for b in bases] + [list(bases)]
        order: list[Symbol] = [cls]
        while any(sequences):
            sequences = [seq for seq in sequences if seq]
            head = next(
                (seq[0] for seq in sequences if not any(seq[0].id in (s.id for s in other[1:]) for other in sequences)),
                None,
            )
            if head is None:  # not linearisable: keep what we have, then the rest depth-first
                for seq in sequences:
                    order.extend(s for s in seq if all(s.id != o.id for o in order))
                break
            order.append(head)
            sequences = [seq[1:] if seq[0].id == head.id else seq for seq in sequences]
        return order

    def overrides(self, method: Symbol, base_method: Symbol) -> bool:
        """Whether ``method`` is ``base_method`` redefined in a subclass of its class."""
        if method.id == base_method.id or method.name != base_method.name:
            return False
        owner, base_owner = self.by_id.get(method.parent_id), self.by_id.get(base_method.parent_id)
        if owner is None or base_owner is None or owner.kind != "class":
            return False
        return any(k.id == base_owner.id for k in self.mro(owner)[1:])

    def member(self, cls: Symbol, name: str, skip_self: bool = False) -> Symbol | None:
        """What ``cls.name`` finds along the MRO. Remembered: class-hierarchy dispatch asks it of every
        subclass of a class for each ``self.m()`` call (Django's base classes have hundreds), 440,000
        times for 14 re-resolved files; not while an MRO is being computed, when one may be partial."""
        key = (cls.id, name, skip_self)
        if key in self._member_cache:
            return self._member_cache[key]
        found = None
        for klass in self.mro(cls)[1 if skip_self else 0 :]:
            found = self.children.get(klass.id, {}).get(name)
            if found is not None:
                break
        if not self._mro_pending:
            self._member_cache[key] = found
        return found

    def enclosing_method(self, sym: Symbol | None) -> Symbol | None:
        """The method whose body holds ``sym`` (itself, or a lambda or closure inside it); None when a
        class body or the module comes first."""
        while sym is not None and sym.kind != "class":
            if sym.kind == "method":
                return sym
            sym = self.by_id.get(sym.parent_id)
        return None

    def enclosing_class(self, sym: Symbol | None) -> Symbol | None:
        method = self.enclosing_method(sym)
        if method is not None:
            return self.by_id.get(method.parent_id)
        while sym is not None and sym.kind != "class":
            sym = self.by_id.get(sym.parent_id)
        return sym

    # -- types -----------------------------------------------------------------------------------
    def type_of(self, type_expr: str, scope: Symbol) -> Symbol | None:
        """The in-repo class a type expression names, if it names exactly one."""
        key = (type_expr, scope.id)
        if key in self._typing:  # `x = x.copy()`, `self.a = self.a`: a cycle names no type
            return None
        self._typing.add(key)
        try:
            return self._type_of(type_expr, scope)
        finally:
            self._typing.discard(key)

    def _type_of(self, type_expr: str, scope: Symbol) -> Symbol | None:
        expr = type_expr.strip().strip("\"'")
        match = _WRAPPERS.match(expr)
        if match:
            expr = match.group(1).split(",")[0].strip()
        if "|" in expr:
            options = [p.strip() for p in expr.split("|") if p.strip() != "None"]
            if len(options) != 1:
                return None
            expr = options[0]
        if expr.startswith("call:"):
            # `ConfigAttribute[bool]("TESTING")` constructs a ConfigAttribute: the subscript is a generic alias
            target = self.resolve_expr(expr[5:].removesuffix("[]"), scope)
            if target is None or target.symbol is None:
                return None
            if target.symbol.kind == "class":
                return target.symbol
            if target.symbol.kind in ("function", "method"):
                return self.return_type(target.symbol)
            return None
        if "[" in expr or "(" in expr:
            return None
        target = self.resolve_expr(expr, scope)
        if target is not None and target.symbol is not None and target.symbol.kind == "class":
            return target.symbol
        return None

    def attribute_type(self, cls: Symbol, attr: str) -> Symbol | None:
        for klass in self.mro(cls):
            table = self.types.get(klass.id, {})
            expr = table.get(f"self.{attr}") or table.get(attr)
            if expr is not None:
                return self.type_of(expr, klass)
        return None

    def module_variable(self, module: Symbol, attr: str) -> Target | None:
        """A module-level variable: typed (``router = Router()``) -> that class; else nothing to call."""
        expr = self.types.get(module.id, {}).get(attr)
        if expr is not None:
            klass = self.type_of(expr, module)
            if klass is not None:
                return Target(klass.id, "Symbol", "annotation", klass)
        return None

    def return_type(self, func: Symbol) -> Symbol | None:
        _, arrow, annotation = func.signature.rpartition(")")
        annotation = annotation.strip()
        if not annotation.startswith("->"):
            return None
        parent = self.by_id.get(func.parent_id)
        return self.type_of(annotation[2:].strip(), parent) if parent is not None else None

    def typed_name(self, name: str, scope: Symbol) -> tuple[str, Symbol] | None:
        current: Symbol | None = scope
        while current is not None:
            found = self.types.get(current.id, {}).get(name)
            if found is not None:
                return found, current
            if current.kind == "class":  # past a class body (a method's `self.` attributes) only the module's
                module = self.by_id.get(symbol_id(current.path, ""))
                current = module if module is not None and module.id != current.id else None
            else:
                current = self.by_id.get(current.parent_id)
        return None

    # -- names and expressions -------------------------------------------------------------------
    def resolve_name(self, name: str, scope: Symbol) -> Target | None:
        current: Symbol | None = scope
        first = True
        while current is not None:
            # a class body's names are visible in the class body only, not in its methods
            if current.kind != "class" or first:
                found = self.children.get(current.id, {}).get(name)
                if found is not None:
                    return Target(found.id, "Symbol", "scope", found)
            first = False
            current = self.by_id.get(current.parent_id)
        bound = self.bindings.get(scope.path, {}).get(name)
        if bound is not None:
            found = self.lookup_dotted(bound)
            if found is not None:
                return Target(found.id, "Symbol", "import", found)
            module, _, attr = bound.rpartition(".")
            owner = self.by_qualname.get(module)
            if owner is not None and owner.kind == "module":  # `from .routes import router`
                return self.module_variable(owner, attr)
            return Target(bound, "External", "import")
        for star in self.star_imports.get(scope.path, []):
            found = self.lookup_dotted(f"{star}.{name}")
            if found is not None:
                return Target(found.id, "Symbol", "import", found)
        if name in BUILTINS:
            return Target(f"builtins.{name}", "External", "builtin")
        return None

    def resolve_expr(self, expr: str, scope: Symbol) -> Target | None:
        if expr.startswith("<lambda"):  # a lambda its scope runs at once (the Python extractor's label)
            found = self.children.get(scope.id, {}).get(expr)
            return Target(found.id, "Symbol", "scope", found) if found is not None else None
        if expr.startswith("super()."):
            cls = self.enclosing_class(scope)
            member_name = expr[len("super().") :]
            if cls is not None and "." not in member_name:
                found = self.member(cls, member_name, skip_self=True)
                if found is not None:
                    return Target(found.id, "Symbol", "self", found)
            return None
        parts = expr.split(".")
        if any(not p.removesuffix("()").isidentifier() for p in parts):
            return None
        head, rest = parts[0], parts[1:]
        if head.endswith("()"):  # `create_app().service`: the call's result, then its attributes
            called = self.resolve_name(head[:-2], scope)
            instance = self.instance_of(called)
            if instance is None:
                return None
            return self._walk(instance, rest, scope)
        if head in ("self", "cls") and rest:
            cls = self.enclosing_class(scope)
            if cls is None:
                return None
            member = self.member(cls, rest[0])
            if member is not None:
                return self._walk(Target(member.id, "Symbol", "self", member), rest[1:], scope)
            typed = self.typed_name(f"self.{rest[0]}", cls)
            if typed is not None and len(rest) > 1:
                klass = self.type_of(typed[0], typed[1])
                if klass is not None:
                    return self._walk(Target(klass.id, "Symbol", "annotation", klass), rest[1:], scope)
            return None
        if rest:
            typed = self.typed_name(head, scope)
            if typed is not None and self._shadowed_by_type(head, scope):
                klass = self.type_of(typed[0], typed[1])
                if klass is not None:
                    return self._walk(Target(klass.id, "Symbol", "annotation", klass), rest, scope)
                return None
        target = self.resolve_name(head, scope)
        if target is None:
            typed = self.typed_name(head, scope) if rest else None  # `store = Storage()` at module level
            klass = self.type_of(*typed) if typed is not None else None
            if klass is None:
                return None
            target = Target(klass.id, "Symbol", "annotation", klass)
        return self._walk(target, rest, scope)

    def _shadowed_by_type(self, name: str, scope: Symbol) -> bool:
        """A typed local (parameter or assignment) wins over a module-level or imported name."""
        typed = self.typed_name(name, scope)
        return typed is not None and typed[1].kind != "module"

    def instance_of(self, called: Target | None) -> Target | None:
        """What calling ``called`` returns, as far as the source says: a class's instance, or the
        class a function's return annotation names."""
        if called is None or called.symbol is None:
            return None
        if called.symbol.kind == "class":
            return called
        if called.symbol.kind in ("function", "method"):
            klass = self.return_type(called.symbol)
            if klass is not None:
                return Target(klass.id, "Symbol", "annotation", klass)
        return None

    def _walk(self, target: Target, rest: list[str], scope: Symbol) -> Target | None:
        for part in rest:
            attr = part.removesuffix("()")
            if part != attr:
                instance = self.instance_of(self._walk(target, [attr], scope))
                if instance is None:
                    return None
                target = instance
                continue
            if target.label == "External":
                target = Target(f"{target.id}.{attr}", "External", target.resolved_by)
                continue
            sym = target.symbol
            if sym is None:
                return None
            if sym.kind == "module":
                found = self.lookup_dotted(f"{sym.qualname}.{attr}")
                if found is None:
                    variable = self.module_variable(sym, attr)
                    if variable is None:
                        return None
                    target = variable
                    continue
            elif sym.kind == "class":
                found = self.member(sym, attr)
                if found is None:  # an attribute whose type the class states: `service: PaymentService`
                    klass = self.attribute_type(sym, attr)
                    if klass is None:
                        return None
                    target = Target(klass.id, "Symbol", "annotation", klass)
                    continue
            else:
                return None
            if found is None:
                return None
            target = Target(found.id, "Symbol", target.resolved_by, found)
        return target

    # -- decorators (docs/callgraph.md, "Functions as values") ------------------------------------
    def application(self, decorator: Decorator, scope: Symbol) -> Application | None:
        """What applying ``decorator`` (as written in ``scope``) does, when it is a repository function:
        ``@logged`` hands the function to ``logged``; ``@retry(times=3)`` hands it to the nested function
        ``retry`` returns."""
        found = self.resolve_expr(decorator.expr, scope)
        holder = found.symbol if found is not None else None
        if holder is not None and holder.kind == "class":
            if not decorator.factory:
                return self.class_application(holder)
            holder = self.member(holder, "__call__")  # `@RateLimit(per_minute=60)`: the instance is applied
        elif holder is not None and decorator.factory and holder.kind in ("function", "method"):
            holder = self._returned_nested(holder)
        if holder is None or holder.kind not in ("function", "method"):
            return None
        facts = definition_facts(holder.text)
        if facts is None or not facts.parameters:
            return None
        parameters = facts.parameters
        if holder.kind == "method" and parameters[0] in ("self", "cls"):
            parameters = parameters[1:]
        if not parameters:
            return None
        wrapper = None if facts.returns_parameter else self._returned_nested(holder)
        return Application(holder, parameters[0], wrapper)

    def class_application(self, cls: Symbol) -> Application | None:
        """``@memoized def exchange_rate``: ``memoized(exchange_rate)`` hands the function to ``__init__``,
        the name then holds the instance, and a call of it runs ``__call__``, which runs the function
        through the attribute ``__init__`` stored it in (``self.fn``). Only for a class of the repository
        that defines ``__call__``: without one the instance is not called."""
        init, dunder = self.member(cls, "__init__"), self.member(cls, "__call__")
        facts = definition_facts(init.text) if init is not None else None
        if init is None or dunder is None or facts is None or len(facts.parameters) < 2:
            return None
        parameter = facts.parameters[1]
        attribute = next((attr for param, attr in facts.stored if param == parameter), "")
        return Application(init, parameter, dunder, f"self.{attribute}" if attribute else "")

    def _returned_nested(self, func: Symbol) -> Symbol | None:
        """The one function defined inside ``func`` that ``func`` returns (``return wrapper``,
        ``return functools.update_wrapper(wrapper, f)``), if there is exactly one."""
        facts = definition_facts(func.text)
        if facts is None:
            return None
        nested = [
            c for c in self.children.get(func.id, {}).values() if c.kind == "function" and c.name in facts.returned
        ]
        return nested[0] if len(nested) == 1 else None

    def factory_results(self, factories: list[Target]) -> list[Target]:
        """What the scope applies after calling a decorator factory (``@route("/invoices")``): the
        function the factory returns (``route.decorator``), or for a class (``@Cache(ttl=60)``) its
        instance's ``__call__``. The scope calls it with the decorated definition, so it is a call too."""
        out = []
        for factory in factories:
            sym = factory.symbol
            if sym is None:
                continue
            made = self._returned_nested(sym) if sym.kind in ("function", "method") else None
            if sym.kind == "class":
                made = self.member(sym, "__call__")
            if made is not None:
                out.append(Target(made.id, "Symbol", "flow", made))
        return out

    def decorated(self) -> tuple[dict[str, Symbol], dict[str, dict[str, list[Symbol]]]]:
        """For every decorated function in the repository: the definition a call of its name enters
        (the outermost wrapper, or itself), and, per wrapper or decorator holding the function as a
        parameter, what a call of that parameter runs (the next wrapper inward, or the function)."""
        if self._decorated is not None:
            return self._decorated
        entry: dict[str, Symbol] = {}
        param_calls: dict[str, dict[str, list[Symbol]]] = {}
        listed: set[tuple[str, str, str]] = set()
        for func in sorted(self.by_id.values(), key=lambda s: s.id):
            if not func.decorators or func.kind not in ("function", "method", "class"):
                continue
            decorators = self.decorators_of(func)
            scope = self.by_id.get(func.parent_id)
            if decorators is None or scope is None:
                continue
            applied = [self.application(d, scope) for d in decorators]
            inner: Symbol = func  # decorators apply bottom-up: each one receives what the one below made
            for app in reversed([a for a in applied if a is not None]):
                held = [(app.holder, app.parameter)]
                if app.wrapper is not None and (app.held_as or app.wrapper.parent_id == app.holder.id):
                    held.append((app.wrapper, app.held_as or app.parameter))
                for holder, parameter in held:
                    if (holder.id, parameter, inner.id) not in listed:  # a set: one holder may run hundreds
                        listed.add((holder.id, parameter, inner.id))
                        param_calls.setdefault(holder.id, {}).setdefault(parameter, []).append(inner)
                held_facts = definition_facts(app.holder.text)
                for parameter, container in held_facts.registered if held_facts is not None else ():
                    key = self.registry_key(container, app.holder) if parameter == app.parameter else None
                    entries = self._registries.setdefault(key, []) if key is not None else []
                    if key is not None and all(s.id != inner.id for s in entries):
                        entries.append(inner)
                if app.wrapper is not None:
                    inner = app.wrapper
            if inner.id != func.id:
                entry[func.id] = inner
        self._decorated = (entry, param_calls)
        return self._decorated

    def decorators_of(self, func: Symbol) -> tuple[Decorator, ...] | None:
        """``func``'s decorators as written, top to bottom. When each is a plain dotted name, from the
        extractor's records: what parsing the definition again would give (``ast.unparse`` of a dotted
        name is that name), without the parse, which was most of this whole-repository pass (3.8 s of
        Django's 3,600 decorated definitions, paid again by every one-file edit). Otherwise (``@get_router().route``,
        whose records elide the arguments) from the parsed text; None when it does not parse."""
        written = self.decorations.get(func.id, [])
        if written and all(_DOTTED.fullmatch(d.expr) for d in written):
            return tuple(Decorator(d.expr, d.factory) for d in written)
        facts = definition_facts(func.text)
        return facts.decorators if facts is not None else None

    def registry_key(self, container: str, scope: Symbol) -> tuple[str, str] | None:
        """Where a registry lives, the same whether written where a decorator fills it or where a caller
        reads it: ``self.routes`` -> (the enclosing class, ``self.routes``); ``ROUTES``, an imported
        ``REGISTRY`` or ``hooks.REGISTRY`` -> (the file of the module that defines it, the name)."""
        head, _, rest = container.partition(".")
        if head == "self":
            cls = self.enclosing_class(scope)
            return (cls.id, container) if cls is not None and rest.isidentifier() else None
        bound = self.bindings.get(scope.path, {}).get(head)
        if not rest:
            if bound is None:
                return (scope.path, head)
            module, _, name = bound.rpartition(".")
            path = self.file_of_module.get(module)
            return (path, name) if path is not None else None
        path = self.file_of_module.get(bound) if bound is not None else None
        return (path, rest) if path is not None and rest.isidentifier() else None

    def registry_targets(self, call: CallSite, caller: Symbol) -> list[Target]:
        """``ROUTES[path]()``, ``self.routes[path](view)``: a registry a decorator fills with the functions
        (or classes) it decorates runs one of them; each is a possible target. In a class, the registry
        may be an attribute of a base class (``self.routes`` set up by ``App``)."""
        container = call.callee.removesuffix("[]")
        if call.via != "value" or container == call.callee or "[" in container or "(" in container:
            return []
        self.decorated()
        keys = [self.registry_key(container, caller)]
        cls = self.enclosing_class(caller) if container.startswith("self.") else None
        if cls is not None:
            keys = [(klass.id, container) for klass in self.mro(cls)]
        found = [s for key in keys if key is not None for s in self._registries.get(key, [])]
        return [Target(s.id, "Symbol", "flow", s) for s in found]

    def flow_targets(self, call: CallSite, caller: Symbol) -> list[Target]:
        """A call of a decorator's parameter (``fn(*args)`` in ``wrapper``, ``self.fn(*args)`` in a class
        decorator's ``__call__``) runs the functions it decorates."""
        head, _, attribute = call.callee.partition(".")
        if not (call.callee.isidentifier() or (head == "self" and attribute.isidentifier())):
            return self.registry_targets(call, caller)
        param_calls = self.decorated()[1]
        runs = param_calls.get(caller.id, {}).get(call.callee, [])
        if runs and call.callee in param_calls.get(caller.parent_id, {}):  # a wrapper inside its decorator
            own = definition_facts(caller.text)
            if own is None or call.callee in own.parameters:  # its own parameter of that name shadows it
                return []
        return [Target(s.id, "Symbol", "flow", s) for s in runs]

    def stored_lambdas(self, call: CallSite, caller: Symbol) -> list[Target]:
        """``self._check = check or (lambda payment: True)`` in a method: a call of ``self._check`` in a
        method of that class, or of a subclass, may run the lambda (jedi often infers only the values its
        callers pass for ``check``). Only ``self.`` attributes: the binding and the call share the object."""
        head, _, attribute = call.callee.partition(".")
        if head != "self" or not attribute.isidentifier():
            return []
        cls = self.enclosing_class(caller)
        if cls is None:
            return []
        if self._stored_lambdas is None:
            index: dict[tuple[str, str], list[Symbol]] = {}
            for value in self.callable_values:
                owner = self.enclosing_class(self.by_id.get(value.scope_id))
                lam = self.by_id.get(value.symbol_id)
                if value.slot == "" and value.target.startswith("self.") and owner is not None and lam is not None:
                    index.setdefault((owner.id, value.target), []).append(lam)
            self._stored_lambdas = index
        found = [lam for klass in self.mro(cls) for lam in self._stored_lambdas.get((klass.id, call.callee), [])]
        return [Target(lam.id, "Symbol", "flow", lam) for lam in found]

    def entered(self, target: Target) -> Target:
        """Calling a decorated function runs the wrapper its decorator returned."""
        if target.symbol is None or target.symbol.kind not in ("function", "method"):
            return target
        wrapper = self.decorated()[0].get(target.symbol.id)
        return target if wrapper is None else Target(wrapper.id, "Symbol", target.resolved_by, wrapper)

    # -- edges -----------------------------------------------------------------------------------
    def edges(self, ex: FileExtraction) -> tuple[list[Edge], list[External]]:
        """All edges leaving one file: DEFINES, IMPORTS, CALLS and INHERITS; and the DECORATES edges into
        its definitions, which resolving its decorator lines finds (the file owns them: cg/graph/cypher.py)."""
        sink = EdgeSink(ex)
        path = ex.file.path

        def add(kind: str, src: str, src_label: str, target: Target, line: int) -> None:
            sink.add(kind, src, src_label, target.id, target.label, line, PUBLIC_RESOLUTION[target.resolved_by])

        factories = {(d.decorated_id, d.line, d.column) for d in ex.decorations if d.factory}
        for imp in ex.imports:
            add("IMPORTS", path, "File", self.import_target(ex.file, imp), imp.line)
        for call in ex.calls:
            caller = self.by_id.get(call.caller_id)
            if caller is None:
                continue
            targets = self.call_targets(call, caller)
            for target in [*targets, *self.dispatch_targets(call, caller, targets)]:
                add("CALLS", caller.id, "Symbol", target, call.line)
            if call.decorates:
                if (call.decorates, call.line, call.column) in factories:
                    for made in self.factory_results(decorator_targets(targets)):
                        add("CALLS", caller.id, "Symbol", made, call.line)
                for target in decorator_targets(targets):
                    add(
                        "DECORATES",
                        target.id,
                        "Symbol",
                        Target(call.decorates, "Symbol", target.resolved_by),
                        call.line,
                    )
        for read in ex.attribute_reads:
            if read.store:
                for setter, how in self.setters_run(read, path):
                    add("CALLS", read.scope_id, "Symbol", Target(setter.id, "Symbol", how, setter), read.line)
                continue
            if read.attr in self.descriptor_names():
                scope = self.by_id.get(read.scope_id)
                runs = self.descriptor_getter(read, scope) if scope is not None else None
                if runs is not None:
                    add("CALLS", read.scope_id, "Symbol", runs, read.line)
            if read.attr not in self.property_names:
                continue
            getters = self.getters_at(read, path)
            for getter, how in getters:
                add("CALLS", read.scope_id, "Symbol", Target(getter.id, "Symbol", how, getter), read.line)
        for base in ex.bases:
            cls = self.by_id.get(base.class_id)
            parent = self.by_id.get(cls.parent_id) if cls else None
            if cls is None or parent is None:
                continue
            found = [
                t
                for t in self._jedi(path, base.line, base.column)
                if t.label == "External" or (t.symbol is not None and t.symbol.kind == "class")
            ]
            base_target = found[0] if found else self.resolve_expr(base.expr, parent)
            add("INHERITS", cls.id, "Symbol", base_target or Target(base.expr, "External", "unresolved"), base.line)
        return sink.result()

    def implicit_targets(self, call: CallSite, caller: Symbol) -> list[Target]:
        """The repository's protocol methods a statement runs on a value: ``with`` -> ``__enter__`` and
        ``__exit__``, ``for``/``iter()``/``yield from`` -> ``__iter__`` (and ``__next__`` when the class
        is its own iterator), ``next()`` -> ``__next__``, ``raise X`` -> ``X``'s constructor. The value's
        class comes from jedi's inference, else from a type the source states; nothing is guessed."""
        if call.via == "raise":
            found = [t for t in self._jedi(caller.path, call.line, call.column) if t.symbol is not None]
            if not found:
                named = self.resolve_expr(call.callee, caller)
                found = [named] if named is not None and named.resolved_by != "annotation" else []
            classes = [t for t in found if t.symbol is not None and t.symbol.kind == "class"]
            return [t2 for t in classes for t2 in (t, *self._constructor(t))]
        if call.via == "operator":
            return self.operator_targets(call, caller)
        instances = self._jedi(caller.path, call.line, call.column, instances=True)
        classes = [t for t in instances if t.symbol is not None and t.symbol.kind == "class"]
        if not classes and not instances:
            named = self.resolve_expr(call.callee, caller)
            if (
                named is not None
                and named.symbol is not None
                and named.symbol.kind == "class"
                and (named.resolved_by == "annotation" or call.callee.endswith("()"))
            ):
                classes = [named]
        protocol = {"with": ("__enter__", "__exit__"), "iter": ("__iter__", "__next__"), "next": ("__next__",)}
        out: list[Target] = []
        for cls in classes:
            if cls.symbol is None:
                continue
            for name in protocol.get(call.via, ()):
                method = self.member(cls.symbol, name)
                if method is not None and all(t.id != method.id for t in out):
                    out.append(Target(method.id, "Symbol", cls.resolved_by, method))
        return out

    def operator_targets(self, call: CallSite, caller: Symbol) -> list[Target]:
        """The dunder an operator, a subscript or a builtin like ``len()`` runs on its operand: the first
        of ``call.protocol``'s methods that the operand's class defines or inherits. The operand must be
        an *instance* of a repository class, as jedi infers it or as an annotation states it: ``Ledger[int]``
        on the class itself is a generic alias, not ``__getitem__``. Builtin operands are left alone."""
        names = call.protocol.split()
        classes = self._instance_classes(caller.path, call.line, call.column)
        if not classes and self.jedi is not None and self.jedi.get(caller.path, call.line, call.column):
            return []  # jedi knows the operand (an int, a str, a class): nothing of the repository runs
        if not classes:
            stated = self.stated_class(call.callee, caller)
            classes = [stated] if stated is not None else []
        out: list[Target] = []
        for cls in classes:
            if cls.symbol is None:
                continue
            method = next((m for name in names if (m := self.member(cls.symbol, name)) is not None), None)
            if method is not None and all(t.id != method.id for t in out):
                out.append(Target(method.id, "Symbol", cls.resolved_by, method))
        return out

    def descriptor_names(self) -> frozenset[str]:
        """Names of class attributes whose value is an instance of a repository class defining ``__get__``
        (``testing = ConfigAttribute("TESTING")`` in a class body): reading one through an instance or the
        class runs that ``__get__``."""
        if self._descriptors is None:
            names = set()
            for scope_id, table in self.types.items():
                owner = self.by_id.get(scope_id)
                if owner is None or owner.kind != "class":
                    continue
                for name, type_expr in table.items():
                    if "." in name:
                        continue  # `self.x = Desc()` lives in the instance: no descriptor protocol
                    klass = self.type_of(type_expr, owner)
                    if klass is not None and self.member(klass, "__get__") is not None:
                        names.add(name)
            self._descriptors = frozenset(names)
        return self._descriptors

    def descriptor_getter(self, read: AttributeRead, scope: Symbol) -> Target | None:
        """The ``__get__`` a read of ``self.testing`` (or ``app.testing`` on a typed ``app``) runs: the first
        class in the receiver's MRO that has the name, if it binds it to a descriptor (a method or property
        of that name found first wins, as at run time for a non-data descriptor's class attribute)."""
        receiver, _, attr = read.expr.rpartition(".")
        if not receiver or attr != read.attr:
            return None
        how = "self"
        if receiver in ("self", "cls"):
            cls = self.enclosing_class(scope)
        else:
            stated = self.stated_class(receiver, scope)
            cls, how = (stated.symbol, "annotation") if stated is not None else (None, how)
        if cls is None:
            return None
        for klass in self.mro(cls):
            if self.children.get(klass.id, {}).get(attr) is not None:
                return None  # a method, property or nested class of that name
            type_expr = self.types.get(klass.id, {}).get(attr)
            if type_expr is not None:
                descriptor = self.type_of(type_expr, klass)
                getter = self.member(descriptor, "__get__") if descriptor is not None else None
                return Target(getter.id, "Symbol", how, getter) if getter is not None else None
        return None

    def stated_class(self, expr: str, scope: Symbol) -> Target | None:
        """The repository class the source states for the value ``expr``: a parameter's or a local's
        annotation or constructor (``ledger: Ledger``, ``ledger = Ledger()``), ``self.ledger``'s in the
        class, or a constructor call written in place (``Ledger()``)."""
        typed = None
        if expr.isidentifier():
            typed = self.typed_name(expr, scope)
        elif expr.startswith("self.") and expr[5:].isidentifier():
            cls = self.enclosing_class(scope)
            typed = self.typed_name(expr, cls) if cls is not None else None
        elif expr.endswith("()") and expr[:-2].replace(".", "").isidentifier():
            named = self.resolve_expr(expr[:-2], scope)
            if named is not None and named.symbol is not None and named.symbol.kind == "class":
                return Target(named.symbol.id, "Symbol", named.resolved_by, named.symbol)
        klass = self.type_of(*typed) if typed is not None else None
        return Target(klass.id, "Symbol", "annotation", klass) if klass is not None and klass.kind == "class" else None

    def _instance_classes(self, path: str, line: int, column: int) -> list[Target]:
        """The repository classes of which jedi says the value at (line, column) is an instance."""
        if self.jedi is None:
            return []
        out: list[Target] = []
        for _full, rel, def_line, kind, name, _col in self.jedi.get(path, line, column) or ():
            sym = self.by_def_line.get((rel, def_line)) if rel and kind == "instance" else None
            if sym is not None and sym.kind == "class" and sym.name == name and all(t.id != sym.id for t in out):
                out.append(Target(sym.id, "Symbol", "jedi", sym))
        return out

    def unique_method(self, call: CallSite, caller: Symbol) -> list[Target]:
        """``order.finalize()`` on a parameter or a local nobody typed, where jedi has no answer: when the
        repository's methods of that name are one family (one class's method and the overrides of it
        in its subclasses), no module-level function has the name, and no builtin type has a method of
        that name (``append``, ``get``, ``items`` could be a list's or a dict's), the family, marked
        ``unique`` (a guess, with its lower confidence). The receiver must be a parameter of the caller
        or an enclosing function, or a name the caller's own body binds, so a module or class of that
        name is ruled out. The receiver may be an attribute chain off such a name
        (``app.service.charge_invoice(invoice)`` on a pytest fixture ``app``): what the attributes hold
        is as unknown as the name itself, and the method's name decides alike. The receiver may also
        be what a repository function or method returns (``Lexer.get_default_instance().get_tokens(sql)``,
        sqlparse's whole lexing path, whose singleton jedi infers as the ``None`` it starts as): its
        value is as unknown as an untyped parameter's. What a library call returns is not guessed
        (``JSONDecoder().raw_decode(text)``): a library's objects have methods of any name."""
        if self._returned_by_repository(call, caller):
            name = call.callee.rsplit(".", 1)[-1]
            family = [] if name in _BUILTIN_METHODS else self._method_family(name)
            return [Target(m.id, "Symbol", "unique", m) for m in family]
        head, _, rest = call.callee.partition(".")
        name = rest.rsplit(".", 1)[-1]
        if not all(part.isidentifier() for part in rest.split(".")) or head in ("self", "cls"):
            return []
        if name in _BUILTIN_METHODS:
            return []
        family = self._method_family(name)
        if not family or self.typed_name(head, caller) is not None:
            return []
        scope: Symbol | None = caller
        while scope is not None and scope.kind in ("function", "method", "lambda"):
            facts = definition_facts(scope.text)
            if facts is not None and (head in facts.parameters or (scope is caller and head in facts.locals)):
                return [Target(m.id, "Symbol", "unique", m) for m in family]
            scope = self.by_id.get(scope.parent_id)
        return []

    def _returned_by_repository(self, call: CallSite, caller: Symbol) -> bool:
        """Whether the call's receiver is the value a repository function or method returns, maybe
        through attributes: ``Lexer.get_default_instance().get_tokens`` or ``self.session().cart.add``
        (one call in the chain, no arguments left in the callee text)."""
        receiver, dot, name = call.callee.rpartition(".")
        called, paren, attributes = receiver.rpartition("()")
        if not (dot and paren and name.isidentifier()) or "(" in called or called in ("super", "type"):
            return False
        if not all(part.isidentifier() for part in called.split(".")):
            return False
        if attributes and not all(part.isidentifier() for part in attributes.removeprefix(".").split(".")):
            return False
        found = self.resolve_expr(called, caller)
        return found is not None and found.symbol is not None and found.symbol.kind in ("function", "method")

    def _method_family(self, name: str) -> list[Symbol]:
        """The methods named ``name`` when they are one class's and its subclasses' overrides (root
        first), else none."""
        candidates = self._methods_named().get(name, [])
        owner_of = {m.id: self.by_id.get(m.parent_id) for m in candidates}
        owners = {m_id: owner for m_id, owner in owner_of.items() if owner is not None}
        if not candidates or len(owners) != len(candidates):
            return []

        def below(method: Symbol, other: Symbol) -> bool:
            return any(k.id == owners[other.id].id for k in self.mro(owners[method.id])[1:])

        roots = [m for m in candidates if not any(below(m, o) for o in candidates if o.id != m.id)]
        if len(roots) != 1 or not all(m is roots[0] or below(m, roots[0]) for m in candidates):
            return []
        return [roots[0], *(m for m in candidates if m is not roots[0])]

    def getattr_targets(self, call: CallSite, caller: Symbol) -> list[Target]:
        """``func = getattr(self, "_process_" + kind, self._process_default)`` then ``func(tlist)``: the
        methods of ``self``'s class (its MRO and its subclasses) whose name has the constant start the
        source gives, as ``dispatch`` edges (one of them runs), and the default. A whole constant name
        is that one method. The receiver must be ``self``/``cls`` or a value whose class the source
        states; a name built with no constant start (``getattr(self, name)``) is left alone."""
        if not call.callee.isidentifier() or call.via != "call":
            return []
        facts = definition_facts(caller.text) if "getattr(" in caller.text else None  # parse only when it may bind one
        binding = next((g for g in reversed(facts.getattrs) if g[0] == call.callee), None) if facts else None
        if binding is None:
            return []
        _variable, receiver, pattern, default = binding
        if receiver in ("self", "cls"):
            cls = self.enclosing_class(caller)
        else:
            stated = self.stated_class(receiver, caller)
            cls = stated.symbol if stated is not None else None
        if cls is None:
            return []
        out: list[Target] = []
        if not pattern.endswith("*"):
            method = self.member(cls, pattern)
            return [Target(method.id, "Symbol", "self", method)] if method is not None else []
        start = pattern[:-1]
        seen: set[str] = set()
        for klass in [*self.mro(cls), *self.subclasses(cls)]:
            for name, child in sorted(self.children.get(klass.id, {}).items()):
                if name.startswith(start) and child.kind == "method" and child.id not in seen:
                    seen.add(child.id)
                    out.append(Target(child.id, "Symbol", "dispatch", child))
        if default.startswith(f"{receiver}."):
            method = self.member(cls, default.partition(".")[2])
            if method is not None and method.id not in seen:
                out.append(Target(method.id, "Symbol", "self", method))
        return out

    def element_targets(self, call: CallSite, caller: Symbol) -> list[Target]:
        """``for filter_ in self.preprocess: filter_.process(stream)`` (or ``handler(event)`` for a list
        of functions): what the repository puts into that attribute's container anywhere
        (``stack.preprocess.append(KeywordCaseFilter())``, ``self.handlers.append(on_paid)``) is what the
        loop variable holds, so each such class's ``process``, or each such function, may run. Only for
        an attribute of the caller's class that no class outside its hierarchy also assigns, so a
        ``stack.preprocess`` elsewhere is the same container."""
        head, _, member = call.callee.partition(".")
        if call.via != "call" or not head.isidentifier() or not (member == "" or member.isidentifier()):
            return []
        if f"for {head} in self." not in caller.text:
            return []
        facts = definition_facts(caller.text)
        line = call.line - caller.start_line + 1  # in the definition's text
        loops = facts.loops if facts is not None else ()
        around = [(first, it) for var, it, first, last in loops if var == head and first <= line <= last]
        iterable = max(around)[1] if around else ""
        attr = iterable.removeprefix("self.")
        cls = self.enclosing_class(caller)
        if cls is None or attr == iterable or not attr.isidentifier():
            return []
        out: list[Target] = []
        for value, instance in self.container_values(attr, cls):
            if instance and member:
                runs = self.member(value, member)
            elif not instance and not member:
                runs = value
            else:
                runs = self.member(value, "__call__") if instance else None
            if runs is not None and runs.kind in ("function", "method", "class", "lambda"):
                if all(t.id != runs.id for t in out):
                    out.append(Target(runs.id, "Symbol", "flow", runs))
        return out

    def container_values(self, attr: str, cls: Symbol) -> list[tuple[Symbol, bool]]:
        """What the repository appends to the ``attr`` containers of ``cls``'s instances: (class,
        True) for an instance, (definition, False) for a function or class handed over as it is."""
        key = f"{cls.id}\x00{attr}"
        if key in self._container_values:
            return self._container_values[key]
        family = {k.id for k in [*self.mro(cls), *self.subclasses(cls)]}
        owners, fillers = self._containers()
        values: list[tuple[Symbol, bool]] = []
        if owners.get(attr) and owners[attr] <= family:
            for scope in fillers.get(attr, ()):
                facts = definition_facts(scope.text)
                for container, value in facts.appended if facts is not None else ():
                    receiver, _, name = container.rpartition(".")
                    if name != attr or not receiver.isidentifier():
                        continue
                    if receiver == "self":
                        owner = self.enclosing_class(scope)
                        if owner is None or owner.id not in family:
                            continue
                    found = self._value_of(value, scope)
                    if found is not None and found not in values:
                        values.append(found)
        self._container_values[key] = values
        return values

    def _containers(self) -> tuple[dict[str, set[str]], dict[str, list[Symbol]]]:
        """Once per repository: attribute name -> the classes whose methods assign ``self.<name> =``,
        and -> the functions whose text adds to a ``<something>.<name>`` container."""
        if self._container_index is None:
            owners: dict[str, set[str]] = {}
            fillers: dict[str, list[Symbol]] = {}
            for sym in self.by_id.values():
                if "~" in sym.id:
                    continue
                if sym.kind == "class":
                    for name in _assigned_attributes(sym.text):
                        owners.setdefault(name, set()).add(sym.id)
                elif sym.kind in ("function", "method"):
                    for name in set(_FILLED_CONTAINER.findall(sym.text)):
                        fillers.setdefault(name, []).append(sym)
            self._container_index = (owners, fillers)
        return self._container_index

    def _value_of(self, expr: str, scope: Symbol) -> tuple[Symbol, bool] | None:
        """The definition an appended value names: ``KeywordCaseFilter(...)`` an instance of the class,
        ``on_paid`` or ``self.on_paid`` the function itself, a local built by a constructor its class."""
        if expr.endswith(")") and "(" in expr:
            named = self.resolve_expr(expr.partition("(")[0], scope)
            if named is not None and named.symbol is not None and named.symbol.kind == "class":
                return named.symbol, True
            return None
        if not all(part.isidentifier() for part in expr.split(".")):
            return None
        stated = self.stated_class(expr, scope)
        if stated is not None and stated.symbol is not None:
            return stated.symbol, True
        named = self.resolve_expr(expr, scope)
        if named is not None and named.symbol is not None and named.symbol.kind in ("function", "method", "class"):
            return named.symbol, False
        return None

    def _methods_named(self) -> dict[str, list[Symbol]]:
        if self._by_method_name is None:
            table: dict[str, list[Symbol]] = {}
            for sym in self.by_id.values():
                if sym.kind in ("method", "function") and "~" not in sym.id:
                    table.setdefault(sym.name, []).append(sym)
            # a nested function is never an attribute of a value; a module-level one of the name is a
            # module's attribute, which an untyped receiver may be: then nothing is guessed
            self._by_method_name = {
                k: methods
                for k, v in table.items()
                if (methods := [s for s in v if s.kind == "method"])
                and not any(s.kind == "function" and self._module_level(s) for s in v)
            }
        return self._by_method_name

    def _module_level(self, sym: Symbol) -> bool:
        parent = self.by_id.get(sym.parent_id)
        return parent is None or parent.kind == "module"

    def _constructor(self, target: Target) -> list[Target]:
        init = self.member(target.symbol, "__init__") if target.symbol is not None else None
        return [Target(init.id, "Symbol", target.resolved_by, init)] if init is not None else []

    def call_targets(self, call: CallSite, caller: Symbol) -> list[Target]:
        """jedi's answer where it has one that names a definition or a library target; else the
        name resolver's; else an unresolved External. A class adds its constructor."""
        if call.via in IMPLICIT:
            return self.implicit_targets(call, caller)
        answers = self._jedi(caller.path, call.line, call.column)
        targets = [t for t in answers if t.label == "External" or (t.symbol is not None and t.symbol.kind != "module")]
        if len(targets) == 1 and targets[0].symbol is not None and targets[0].symbol.kind == "method":
            # jedi walks bases depth-first; where the stated receiver type reaches a more specific
            # override of the same method through the real (C3) MRO, that override is what runs
            named = self.resolve_expr(call.callee, caller)
            if named is not None and named.symbol is not None and self.overrides(named.symbol, targets[0].symbol):
                targets = [Target(named.symbol.id, "Symbol", "jedi", named.symbol)]
        if len(targets) == 1 and targets[0].label == "External":
            # a library is named by the import path the source used (`heapq.heappush`, not jedi's
            # `_heapq.heappush`): the name a reader knows and the published call-graph tools use
            named = self.resolve_expr(call.callee, caller)
            if named is not None and named.label == "External" and named.resolved_by == "import":
                targets = [Target(named.id, "External", "jedi")]
        if not targets:
            targets = self.getattr_targets(call, caller)
        for element in self.element_targets(call, caller):
            if all(t.id != element.id for t in targets):
                targets = [*(t for t in targets if t.label == "Symbol"), element]
        if not targets and call.via == "callback" and call.callee.endswith("()"):
            return []  # what a call handed to `sorted(key=...)` returns is jedi's to say: a guess here is a wrong edge
        if not targets:
            found = self.resolve_expr(call.callee, caller)
            if found is not None and found.symbol is not None and found.symbol.kind == "constant":
                found = None  # a value (a callback argument such as `min(x, MAX_DELAY)`), not code to run
            if found is None and call.callee.isidentifier():  # a local typed by its assignment
                typed = self.typed_name(call.callee, caller)
                klass = self.type_of(*typed) if typed is not None else None
                found = Target(klass.id, "Symbol", "annotation", klass) if klass is not None else None
            if (
                found is not None
                and found.symbol is not None
                and found.symbol.kind == "class"
                and found.resolved_by == "annotation"
                and not call.callee.endswith("()")
            ):  # a name typed as an instance (`handler = WebhookHandler()`): calling it runs __call__
                dunder = self.member(found.symbol, "__call__")
                found = Target(dunder.id, "Symbol", "annotation", dunder) if dunder is not None else None
            guessed = self.unique_method(call, caller) if found is None else []
            if guessed:
                targets = guessed
            else:
                targets = [found] if found is not None else [Target(call.callee, "External", "unresolved")]
        if call.via == "callback":
            targets = [t for t in targets if _callable_value(t)]
        if call.via != "decorator":
            targets = [self.entered(t) for t in targets]
        stored = [t for t in self.stored_lambdas(call, caller) if all(t.id != other.id for other in targets)]
        if stored:
            targets = [*(t for t in targets if t.label == "Symbol" or t.resolved_by != "unresolved"), *stored]
        flowed = self.flow_targets(call, caller)
        if flowed:  # the parameter's value: jedi sees a parameter, or guesses from other call sites
            targets = [*flowed, *(t for t in targets if t.label == "Symbol" and all(f.id != t.id for f in flowed))]
        out: list[Target] = []
        for target in targets:
            out.append(target)
            if target.symbol is not None and target.symbol.kind == "class":
                out += self._constructor(target)  # instantiation runs the constructor too
        return out

    def dispatch_targets(self, call: CallSite, caller: Symbol, targets: list[Target]) -> list[Target]:
        """Overrides a method call may run (rule 3 in docs/callgraph.md), as ``dispatch`` edges.

        ``self.m()``/``cls.m()``: the receiver is an instance of the caller's class or of any subclass
        that still runs the calling method (inherits it, or overrides it and calls ``super()``), so each
        such subclass's own ``m`` is a possible target; a subclass that overrides the calling method
        without ``super()`` never runs it with its instances as ``self``. ``obj.m()`` on a receiver whose
        type was found (jedi, an annotation, a constructor) reaches ``C.m``; an instance of any subclass of
        ``C`` can stand there, so the subclasses' own ``m`` are possible targets too (class-hierarchy
        analysis: flask's ``self.json.dumps()`` on a ``JSONProvider`` runs ``DefaultJSONProvider.dumps``).
        Never for ``super().m()``, a class named explicitly (``Gateway.charge(self)``), or a target that
        is itself a guess (unique name, dispatch)."""
        receiver, _, member_name = call.callee.rpartition(".")
        if call.via != "call" or not receiver or not member_name.isidentifier() or receiver.startswith("super("):
            return []
        called = {t.id for t in targets}
        out: list[Target] = []

        def add(cls: Symbol, runs: Symbol | None) -> None:
            for sub, override in self._overriding(cls, member_name):
                if runs is not None:
                    here = self.member(sub, runs.name)
                    if here is None or (here.id != runs.id and "super(" not in here.text):
                        continue  # the subclass replaces the calling method: its instances never get here
                if override.id not in called:
                    out.append(Target(override.id, "Symbol", "dispatch", override))
                    called.add(override.id)

        if receiver in ("self", "cls"):
            cls = self.enclosing_class(caller)
            if cls is None:
                return []
            add(cls, self.enclosing_method(caller))
            return out
        explicit = receiver.rpartition(".")[2]
        for target in targets:
            sym = target.symbol
            if sym is None or sym.kind != "method" or target.resolved_by in ("unique", "dispatch", "flow"):
                continue
            owner = self.by_id.get(sym.parent_id)
            if owner is None or owner.kind != "class" or any(k.name == explicit for k in self.mro(owner)):
                continue  # `Gateway.charge(self, ...)`: the class is named, its method runs
            add(owner, None)
        return out

    def _overriding(self, cls: Symbol, member_name: str) -> list[tuple[Symbol, Symbol]]:
        """Each subclass of ``cls`` whose MRO finds another method named ``member_name`` than ``cls``'s
        own, with that method: its own override, or a sibling base's (a mixin's ``get_alias`` reached
        from ``TokenList.get_name`` through ``Identifier(NameAliasMixin, TokenList)``), which the
        calling class cannot see but its subclasses' instances run. Remembered per (class, name), for
        every method of the class that calls it: Django's base classes have hundreds of subclasses, and
        asking each of them per call took 1.2 s of a one-file edit's resolution."""
        key = (cls.id, member_name)
        cached = self._overrides_cache.get(key)
        if cached is not None:
            return cached
        if not self._definers(member_name) & self._beside(cls):
            return []  # no class a subclass's MRO adds defines the name: each finds what ``cls`` finds
        own = self.member(cls, member_name)  # what the call already reaches (or its wrapper does)
        pairs: list[tuple[Symbol, Symbol]] = []
        for sub in self.subclasses(cls):
            override = self.member(sub, member_name)
            if override is not None and (own is None or override.id != own.id) and override.kind == "method":
                pairs.append((sub, override))
        if not self._mro_pending:
            self._overrides_cache[key] = pairs
        return pairs

    def _definers(self, name: str) -> set[str]:
        """The ids of the classes that define ``name`` themselves."""
        if self._by_member is None:
            table: dict[str, set[str]] = {}
            for parent, members in self.children.items():
                owner = self.by_id.get(parent)
                if owner is not None and owner.kind == "class":
                    for member_name in members:
                        table.setdefault(member_name, set()).add(parent)
            self._by_member = table
        return self._by_member.get(name, set())

    def _beside(self, cls: Symbol) -> set[str]:
        """The classes the MROs of ``cls``'s subclasses hold beyond ``cls``'s own MRO: the subclasses and
        their other bases. C3 keeps ``cls``'s MRO in order inside each subclass's, so only these can
        put another definition of a name before the one ``cls`` finds."""
        found = self._beside_cache.get(cls.id)
        if found is None:
            own = {k.id for k in self.mro(cls)}
            found = {k.id for sub in self.subclasses(cls) for k in self.mro(sub)} - own
            if not self._mro_pending:
                self._beside_cache[cls.id] = found
        return found

    def subclasses(self, cls: Symbol) -> list[Symbol]:
        """Every in-repo class with ``cls`` in its MRO (itself excluded), in a stable order (by id).

        An MRO holds exactly the class's ancestors, so these are the classes ``cls`` is reached from
        by following direct bases: found by walking the direct bases backwards, never by linearising
        every class of the repository (Django's 8,600 classes: 0.27 s of a one-file edit, against
        0.11 s for their direct bases)."""
        if self._below is None:
            below: dict[str, list[Symbol]] = {}
            for klass in (s for s in self.by_id.values() if s.kind == "class" and s.id in self.bases):
                for base in self.direct_bases(klass):
                    below.setdefault(base.id, []).append(klass)
            self._below = below
        found = self._subclasses.get(cls.id)
        if found is None:
            seen: dict[str, Symbol] = {}
            stack = list(self._below.get(cls.id, ()))
            while stack:
                klass = stack.pop()
                if klass.id != cls.id and klass.id not in seen:
                    seen[klass.id] = klass
                    stack.extend(self._below.get(klass.id, ()))
            found = self._subclasses[cls.id] = sorted(seen.values(), key=lambda s: s.id)
        return found

    def property_getter(self, sym: Symbol | None) -> Symbol | None:
        """The getter a read of ``sym`` runs: ``sym`` itself when it is a property, the getter when
        jedi named the property's setter or deleter (``@debug.setter``, defined after the getter)."""
        if sym is None or sym.kind != "method":
            return None
        if is_property(sym):
            return sym
        if any(d.endswith((".setter", ".deleter")) for d in sym.decorators):
            getter = self.by_qualname.get(sym.qualname)
            return getter if getter is not None and is_property(getter) else None
        return None

    def setters_run(self, read: AttributeRead, path: str) -> list[tuple[Symbol, str]]:
        """The property setters an assignment ``obj.name = value`` runs: the setter of the property jedi
        (or, without an answer, the name resolver) finds at the assigned attribute. An attribute with
        no setter of that name anywhere costs nothing."""
        if self._setters is None:
            self._setters = {
                sym.qualname: sym
                for sym in self.by_id.values()
                if sym.kind == "method" and f"{sym.name}.setter" in sym.decorators
            }
            self._setter_attrs = frozenset(sym.name for sym in self._setters.values())
        if read.attr not in self._setter_attrs:
            return []
        found = [(self._setters.get(g.qualname), how) for g, how in self.getters_at(read, path)]
        return [(setter, how) for setter, how in found if setter is not None]

    def getters_at(self, read: AttributeRead, path: str) -> list[tuple[Symbol, str]]:
        """The property getters jedi finds at the attribute (and how), else the name resolver's."""
        getters = [
            (g, "jedi") for t in self._jedi(path, read.line, read.column) if (g := self.property_getter(t.symbol))
        ]
        scope = self.by_id.get(read.scope_id)
        if not getters and read.expr and scope is not None:
            # jedi stops at an instance attribute of the same name (`self.debug = ...` elsewhere)
            named = self.resolve_expr(read.expr, scope)
            getter = self.property_getter(named.symbol if named is not None else None)
            if getter is not None and named is not None:
                getters = [(getter, named.resolved_by)]
        return getters

    def lambda_at(self, path: str, line: int, column: int) -> Symbol | None:
        """The lambda whose ``lambda`` keyword jedi places at (line, column). jedi counts characters and the
        lambda's id keeps tree-sitter's bytes, which differ after non-ASCII text on the line: then the
        line's only lambda is the one, and a line with several is left unanswered."""
        on_line = self.lambdas.get((path, line), [])
        exact = [sym for col, sym in on_line if col == column]
        if exact:
            return exact[0]
        return on_line[0][1] if len(on_line) == 1 else None

    def _jedi(self, path: str, line: int, column: int, instances: bool = False) -> list[Target]:
        """jedi's answers at a position, mapped to definitions (by path and the line of the name, a lambda
        by the position of its keyword) or, outside the repository, to Externals named by jedi's full name.
        An instance stands for its class's ``__call__`` (it is being called), or with ``instances`` for its
        class."""
        if self.jedi is None:
            return []
        answers = self.jedi.get(path, line, column)
        if not answers:
            return []
        targets: list[Target] = []
        for full_name, rel, def_line, kind, name, def_column in answers:
            if rel:
                if kind == "module":
                    sym = self.by_id.get(symbol_id(rel, ""))
                elif kind == "function" and name == "<lambda>":  # a lambda value: a dict's, a list's, a parameter's
                    sym = self.lambda_at(rel, def_line, def_column)
                elif kind in ("function", "class", "property", "instance"):
                    sym = self.by_def_line.get((rel, def_line))
                    if sym is not None and sym.name != name:  # a parameter on the def's line, say
                        sym = None
                    if sym is not None and kind == "instance" and not instances:  # calling it runs __call__
                        sym = self.member(sym, "__call__") if sym.kind == "class" else None
                else:  # a variable or parameter jedi could not see through
                    sym = None
                if sym is not None and all(t.id != sym.id for t in targets):
                    targets.append(Target(sym.id, "Symbol", "jedi", sym))
            elif kind in ("function", "class", "module", "property") and full_name:
                targets.append(Target(full_name, "External", "jedi"))
        return targets
