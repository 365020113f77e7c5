"""Python definitions, imports, call sites, base classes and typed names from a tree-sitter parse.

One pass over the tree with a stack of enclosing definitions. Every call site is attributed to the
innermost definition that contains it (module-level code belongs to the module symbol), which is
what the resolver and the CALLS edges need. The rules where Python runs code somewhere else than it
is written:

- a decorator runs when the ``def`` under it does, so it is called by the scope holding the ``def``
  (module, class body, enclosing function), never by the decorated function; each application is
  also a ``Decoration`` (stack order, factory or not) for the resolver's wrapper semantics;
- a lambda is a definition of its own (kind ``lambda``, ``<enclosing>.<lambdaN>``, an id from its
  position) and the calls in its body are its own; comprehensions and generator expressions are
  not scopes: their calls stay with the enclosing definition;
- parameter defaults and decorator arguments run in the enclosing scope.

The walk is iterative (an explicit work list): code nested thousands deep is extracted whole instead
of raising RecursionError. The parser recovers from syntax errors; whatever it recovers is still
extracted and the file gets a warning with the first error's line.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field, replace

import tree_sitter_python
from tree_sitter import Language as Grammar
from tree_sitter import Node, Parser, Query, QueryCursor

from cg.ingest.languages.base import first_error_line, module_text
from cg.ingest.languages.base import node_text as _text
from cg.ingest.languages.registry import Language, ModuleSystem
from cg.ingest.walk import module_name
from cg.model import (
    AttributeRead,
    BaseRef,
    CallableValue,
    CallSite,
    Decoration,
    FileExtraction,
    FileRecord,
    ImportRecord,
    Symbol,
    TypedName,
    symbol_id,
)

PY_LANGUAGE = Grammar(tree_sitter_python.language())
BUILTIN_NAMES = frozenset(dir(builtins))
DEF_TYPES = {"function_definition", "class_definition"}
# Builtins and standard functions that call the functions they are handed (an edge from the caller), with
# the argument slots that hold the function: the 0-based positions and the keywords. Only those slots: the
# data beside them (`max(delay, 0.0)`, `sorted(invoices, ...)`) is not called.
HIGHER_ORDER: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "map": ((0,), ()),
    "filter": ((0,), ()),
    "sorted": ((), ("key",)),
    "min": ((), ("key",)),
    "max": ((), ("key",)),
    "partial": ((0,), ()),
    "functools.partial": ((0,), ()),
    "reduce": ((0,), ()),
    "functools.reduce": ((0,), ()),
    "itertools.starmap": ((0,), ()),
    "itertools.filterfalse": ((0,), ()),
    "itertools.takewhile": ((0,), ()),
    "itertools.dropwhile": ((0,), ()),
    "itertools.groupby": ((1,), ("key",)),
    "itertools.accumulate": ((1,), ("func",)),
}


HIGHER_ORDER_MODULES = frozenset(name.split(".")[0] for name in HIGHER_ORDER if "." in name)


def _callable_slot(callee: str, argument: Node) -> bool:
    """Whether ``argument`` (a child of a call's argument list) is where ``callee`` takes a function."""
    slots = HIGHER_ORDER.get(callee)
    args = argument.parent
    if slots is None or args is None:
        return False
    positions, keywords = slots
    if argument.type == "keyword_argument":
        return _text(argument.child_by_field_name("name")) in keywords
    positional = [a for a in args.named_children if a.type not in ("comment", "keyword_argument")]
    return any(a == argument for i, a in enumerate(positional) if i in positions)


# Statements that run protocol methods of a value (see _Walker.implicit).
IMPLICIT_VALUES = frozenset({"with_statement", "for_statement", "for_in_clause", "yield", "raise_statement"})
# Operators that run a dunder method of their operand (see _Walker.operator). Only the forward method of
# the left operand (``a + b`` -> ``type(a).__add__``); the reflected ``__radd__`` of the right one runs
# only when that is missing or declines, which a static reader cannot tell.
BINARY_DUNDERS = {
    "+": "__add__",
    "-": "__sub__",
    "*": "__mul__",
    "@": "__matmul__",
    "/": "__truediv__",
    "//": "__floordiv__",
    "%": "__mod__",
    "**": "__pow__",
    "<<": "__lshift__",
    ">>": "__rshift__",
    "&": "__and__",
    "|": "__or__",
    "^": "__xor__",
}
COMPARE_DUNDERS = {"==": "__eq__", "!=": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__", ">=": "__ge__"}
UNARY_DUNDERS = {"-": "__neg__", "+": "__pos__", "~": "__invert__"}
# Builtins that run a dunder of their first argument: len(ledger) -> Ledger.__len__
BUILTIN_DUNDERS = {
    "len": "__len__",
    "str": "__str__",
    "repr": "__repr__",
    "hash": "__hash__",
    "bool": "__bool__ __len__",
    "abs": "__abs__",
    "reversed": "__reversed__",
    "format": "__format__",
    "int": "__int__",
    "float": "__float__",
    "bytes": "__bytes__",
    "round": "__round__",
}
# Expressions whose value jedi is asked about for a protocol or an operator (literals, comprehensions and
# other operators' results are not asked: a literal is never a repository instance, and a chain `a + b + c`
# keeps the edge of its first operator)
VALUE_NODES = frozenset({"identifier", "attribute", "call", "subscript", "parenthesized_expression"})
OPERATOR_NODES = frozenset(
    {"binary_operator", "comparison_operator", "unary_operator", "augmented_assignment", "subscript"}
)
# Where Python tests a value's truth (``bool(value)``: its ``__bool__``, else its ``__len__``), by node kind:
# which children are tested (None: the ``condition`` field)
TRUTH_NODES: dict[str, tuple[str, ...] | None] = {
    "if_statement": None,
    "elif_clause": None,
    "while_statement": None,
    "conditional_expression": ("1",),  # `a if test else b`: the second named child
    "not_operator": ("argument",),
    "boolean_operator": ("left", "right"),
    "assert_statement": ("0",),
    "if_clause": ("0",),  # a comprehension's `if`
}
TRUTH_PROTOCOL = "__bool__ __len__"


@dataclass
class _Scope:
    id: str
    kind: str  # module | class | function | method
    name: str
    scope_path: str  # "RetryPolicy.delay_for" ("" for the module)
    human: tuple[str, ...]
    params: dict[str, str] = field(default_factory=dict)  # parameter -> annotation
    line: int = 0  # 1-based line of the def's name or the `lambda` keyword (0: the module); anchors lambda ids
    lambdas: int = 0  # lambdas met so far directly in this scope: the next is <lambda{lambdas + 1}>


# Something to visit: a node and the stack of definitions it sits in (innermost last).
_Work = tuple[Node, list[_Scope]]


def _string_value(node: Node) -> str:
    raw = _text(node)
    try:
        value = ast.literal_eval(raw)
        return value if isinstance(value, str) else raw
    except (ValueError, SyntaxError):
        return raw.strip("\"'rbuRBU")


def _docstring(body: Node | None) -> str:
    if body is None:
        return ""
    for child in body.named_children:
        if child.type == "comment":
            continue
        if child.type == "expression_statement" and child.named_child_count == 1:
            only = child.named_children[0]
            if only.type == "string":
                return _string_value(only).strip()
        return ""
    return ""


_CONSTANT = re.compile(r"_*[A-Z][A-Z0-9_]+")  # two characters at least: `T = TypeVar("T")` is not one


def _header_end(node: Node, body: Node | None) -> int:
    """Where a definition's header ends: after the colon before its body, so a comment between the
    header and the first statement (``def capfirst(x):  # reviewed``) is no part of its signature
    (a signature is what other files see: a changed comment must not re-resolve every caller)."""
    if body is None:
        return node.end_byte
    colons = [c for c in node.children if c.type == ":" and c.end_byte <= body.start_byte]
    return colons[-1].end_byte if colons else body.start_byte


def _leading_comment_start(node: Node) -> int:
    """0-based row where the comment block directly above ``node`` begins (``node``'s row if none)."""
    row = node.start_point[0]
    prev = node.prev_sibling
    while prev is not None and prev.type == "comment" and prev.end_point[0] == row - 1:
        row = prev.start_point[0]
        prev = prev.prev_sibling
    return row


def _callee_expr(node: Node) -> str:
    """A call's function expression with arguments elided: ``g(a).h`` -> ``g().h``.

    Walks down the expression's spine in a loop, not by recursion: a 500-link ``.then()`` chain is
    one expression 1,000 nodes deep."""
    suffixes: list[str] = []
    current: Node | None = node
    head = "?"
    while current is not None:
        kind = current.type
        if kind == "identifier":
            head = _text(current)
            break
        if kind == "attribute":
            suffixes.append("." + _text(current.child_by_field_name("attribute")))
            current = current.child_by_field_name("object")
        elif kind == "call":
            suffixes.append("()")
            current = current.child_by_field_name("function")
        elif kind == "subscript":
            suffixes.append("[]")
            current = current.child_by_field_name("value")
        elif kind == "parenthesized_expression" and current.named_child_count == 1:
            current = current.named_children[0]
        else:
            head = f"<{kind}>"
            break
    return head + "".join(reversed(suffixes))


def _unwrapped(node: Node) -> Node:
    """``node`` without the parentheses around it: ``((lambda: 1))`` -> the lambda."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    return node


def _name_position(node: Node) -> tuple[int, int]:
    """1-based line and 0-based column of an expression's last name: where a reader (and jedi) would
    point to ask what ``self.gateway.charge`` is."""
    while True:
        if node.type == "attribute":
            attr = node.child_by_field_name("attribute")
            if attr is not None:
                node = attr
            break
        inner = node.child_by_field_name("function" if node.type == "call" else "value")
        if node.type not in ("call", "subscript") or inner is None:
            break
        node = inner
    return node.start_point[0] + 1, node.start_point[1]


def _annotation(type_node: Node | None) -> str:
    return _text(type_node).strip().strip("\"'") if type_node is not None else ""


class PythonExtractor:
    language = "python"

    def __init__(self) -> None:
        self._parser = Parser(PY_LANGUAGE)

    def extract(self, record: FileRecord, source: bytes) -> FileExtraction:
        tree = self._parser.parse(source)
        root = tree.root_node
        lines = source.decode("utf-8", "replace").splitlines()
        out = FileExtraction(file=record)
        if root.has_error:
            out.warnings.append(f"syntax error near line {first_error_line(root)}; indexed what parsed")
        module = _Scope(
            id=symbol_id(record.path, ""),
            kind="module",
            name=record.module.rsplit(".", 1)[-1] or record.path,
            scope_path="",
            human=(f"module {record.module or record.path}",),
        )
        walker = _Walker(record, lines, out)
        walker.walk(root, [module])
        out.symbols.insert(0, walker.module_symbol(root, module))
        if not any(imp.name == "*" for imp in out.imports):  # a star import may bind any name
            out.certain_names = certain_names(root)
        return out


_IDENTIFIERS = Query(PY_LANGUAGE, "(identifier) @name")
# Where an identifier only reads the name (so a second one there cannot change what the name means)
_READS = {("call", "function"), ("attribute", "object"), ("argument_list", None)}


def certain_names(root: Node) -> frozenset[str]:
    """Names that mean the same thing at every place of the file: bound exactly once, by a module-level
    ``def``, ``class`` or import (or never, for a builtin), and otherwise only called, read as the head of
    an attribute, or passed as a positional argument. Any other occurrence (an assignment, a parameter,
    a loop target, a keyword value, a nested binding, a second import) makes the name uncertain.

    jedi's answer at one call of such a name (or of a dotted chain starting at it: ``rates.refresh``)
    is its answer at every call, so jedi is asked once per file and expression
    (cg/ingest/resolve/jedi_resolver.py ``shared_sites``): in a test suite that calls ``mi.chunked`` or
    ``len`` hundreds of times, that is a large share of jedi's questions. Counted with a tree-sitter
    query (one pass in C over the tree) rather than in the walk, which skips some identifiers."""
    others: dict[str, list[Node]] = {}
    seen: set[str] = set()
    for node in QueryCursor(_IDENTIFIERS).captures(root).get("name", []):
        parent = node.parent
        if parent is None:
            continue
        if parent.type == "attribute" and parent.child_by_field_name("attribute") == node:
            continue  # `invoice.total`: an attribute name, not a use of a variable `total`
        if parent.type == "keyword_argument" and parent.child_by_field_name("name") == node:
            continue  # `sorted(rows, key=...)`: a parameter's name in the callee
        name = _text(node)
        seen.add(name)
        field_of = None
        if parent.type == "call":
            field_of = "function" if parent.child_by_field_name("function") == node else "arguments"
        elif parent.type == "attribute":
            field_of = "object"
        if (parent.type, field_of) not in _READS:
            others.setdefault(name, []).append(node)
    certain = set()
    for name in seen:
        bindings = others.get(name, [])
        if (not bindings and name in BUILTIN_NAMES) or (len(bindings) == 1 and _module_binding(bindings[0])):
            certain.add(name)
    return frozenset(certain)


def _module_binding(node: Node) -> bool:
    """Whether ``node`` names what a module-level ``def``, ``class``, ``import x [as y]`` or ``from m
    import x [as y]`` binds."""
    parent = node.parent
    if parent is None:
        return False
    if parent.type in ("function_definition", "class_definition") and parent.child_by_field_name("name") == node:
        holder = parent.parent
        if holder is not None and holder.type == "decorated_definition":
            holder = holder.parent
        return holder is not None and holder.type == "module"
    if parent.type == "aliased_import":
        statement, bound = parent.parent, parent.child_by_field_name("alias") == node
    elif parent.type == "dotted_name" and parent.parent is not None:
        statement = parent.parent
        if statement.type == "import_from_statement":  # `from m import x`: x, never m's parts
            bound = statement.child_by_field_name("module_name") != parent and parent.named_child_count == 1
        else:  # `import a.b` binds a
            bound = statement.type == "import_statement" and parent.named_children[0] == node
    else:
        return False
    return bound and statement is not None and statement.parent is not None and statement.parent.type == "module"


_MAX_SPLIT_DEPTH = 3


def _split_points(body: Node, first_row: int) -> tuple[tuple[int, int], ...]:
    """Statement starts inside a definition's body, as (line index relative to ``first_row``, depth).
    Depth 1 is a statement of the body itself; 2 and 3 are statements of the blocks inside it (the
    branches of an ``if``, the body of a ``for``/``with``/``try``), for statements too big alone."""
    points: list[tuple[int, int]] = []

    def visit(block: Node, depth: int) -> None:
        for stmt in block.named_children:
            if stmt.type == "comment":
                continue
            points.append((stmt.start_point[0] - first_row, depth))
            if depth >= _MAX_SPLIT_DEPTH or stmt.type in (
                "function_definition",
                "class_definition",
                "decorated_definition",
            ):
                continue
            for child in stmt.named_children:
                if child.type == "block":
                    visit(child, depth + 1)
                elif child.type in (
                    "else_clause",
                    "elif_clause",
                    "except_clause",
                    "finally_clause",
                    "case_clause",
                    "except_group_clause",
                ):
                    points.append((child.start_point[0] - first_row, depth + 1))
                    for grandchild in child.named_children:
                        if grandchild.type == "block":
                            visit(grandchild, depth + 1)

    visit(body, 1)
    return tuple(sorted(set(p for p in points if p[0] > 0)))


def _value_around(node: Node) -> Node:
    """The outermost expression whose value may be ``node``'s: through parentheses, ``a or b``, ``a and b``
    and either branch of ``a if c else b`` (never its condition)."""
    while node.parent is not None:
        parent = node.parent
        if parent.type in ("parenthesized_expression", "boolean_operator"):
            node = parent
        elif parent.type == "conditional_expression" and not (
            len(parent.named_children) > 1 and parent.named_children[1] == node
        ):
            node = parent
        else:
            break
    return node


def _last_column(node: Node | None) -> int:
    """0-based column of the last identifier of a dotted name (``payments.retry`` -> ``retry``)."""
    if node is None:
        return 0
    last = node
    for child in node.named_children:
        if child.type == "identifier":
            last = child
    return last.start_point[1]


def _assigned_to(attribute: Node) -> str | None:
    """ "assignment" or "augmented" when ``attribute`` is the whole left side of one (``self.x = v``,
    ``self.x += 1``), which runs a property's setter; None otherwise."""
    parent = attribute.parent
    if parent is None or parent.child_by_field_name("left") != attribute:
        return None
    return {"assignment": "assignment", "augmented_assignment": "augmented"}.get(parent.type)


def _is_call_or_store(attribute: Node) -> bool:
    parent = attribute.parent
    if parent is None:
        return False
    if parent.type == "call" and parent.child_by_field_name("function") == attribute:
        return True
    if parent.type in ("assignment", "augmented_assignment") and parent.child_by_field_name("left") == attribute:
        return True
    return parent.type == "decorator"


class _Walker:
    def __init__(self, record: FileRecord, lines: list[str], out: FileExtraction) -> None:
        self.record = record
        self.lines = lines
        self.out = out
        self.seen_ids: dict[str, int] = {}
        self.operator_seen: set[tuple[str, str, str]] = set()  # (definition, operand, dunders) recorded
        self.top_level_spans: dict[int, tuple[int, str]] = {}  # top-level def start row -> (end row, signature)
        # local names of the standard modules whose higher-order functions HIGHER_ORDER lists:
        # `from itertools import takewhile` -> {"takewhile": "itertools.takewhile"}, `import itertools as it`
        # -> {"it": "itertools"}; imports come before their use in source order, which the walk keeps
        self.stdlib_names: dict[str, str] = {}

    # -- traversal ---------------------------------------------------------------------------
    def walk(self, node: Node, stack: list[_Scope]) -> None:
        """Visit everything under ``node`` in source order (pre-order), each node under the stack of
        definitions around it. An explicit work list, not recursion: 5,000 nested parentheses or a
        1,000-term ``+`` chain are trees thousands of levels deep, and Python's recursion limit is 1,000."""
        work: list[_Work] = [(child, stack) for child in reversed(node.children)]
        while work:
            child, scope = work.pop()
            work.extend(reversed(self.visit(child, scope)))

    def visit(self, node: Node, stack: list[_Scope]) -> list[_Work]:
        """Record what ``node`` is; return what to visit next (in source order): its children, or for
        a definition the parts of it that run in each scope."""
        kind = node.type
        if kind == "decorated_definition":
            definition = node.child_by_field_name("definition")
            if definition is not None and definition.type in DEF_TYPES:
                return self.definition(definition, node, stack)
        elif kind in DEF_TYPES:
            return self.definition(node, node, stack)
        elif kind == "lambda":
            return self.lambda_(node, stack)
        elif kind == "call":
            fn = node.child_by_field_name("function")
            if fn is not None:
                self.call(node, fn, stack[-1].id)
        elif kind == "attribute":
            attr = node.child_by_field_name("attribute")
            stored = _assigned_to(node)
            if attr is not None and (stored or not _is_call_or_store(node)):
                at = (stack[-1].id, _text(attr), attr.start_point[0] + 1, attr.start_point[1])
                expr = _callee_expr(node)
                if stored == "augmented":  # `self.retries += 1` reads the value, then assigns it
                    self.out.attribute_reads.append(AttributeRead(*at, expr=expr))
                self.out.attribute_reads.append(AttributeRead(*at, expr=expr, store=bool(stored)))
        elif kind in IMPLICIT_VALUES:
            self.implicit(node, stack[-1].id)
        elif kind in OPERATOR_NODES:
            self.operator(node, stack[-1].id)
        elif kind in TRUTH_NODES:
            self.truth(node, stack[-1].id)
        elif kind in ("import_statement", "import_from_statement"):
            self.imports(node)
        elif kind == "assignment":
            self.assignment(node, stack)
        elif kind == "expression_statement" and stack[-1].kind == "module":
            self.constant(node, stack[-1])
        return [(child, stack) for child in node.children]

    def call(self, node: Node, fn: Node, owner: str) -> None:
        if _unwrapped(fn).type == "lambda":  # `(lambda: ...)()`: lambda_ gives the edge to the lambda itself
            return
        expr = _callee_expr(fn)
        if fn.type in ("identifier", "attribute"):
            line, column = _name_position(fn)
            self.out.calls.append(CallSite(owner, expr, line, column=column))
        else:  # `get_handler(kind)(event)`, `HANDLERS[kind](event)`: ask what the expression evaluates to
            line, column = fn.end_point[0] + 1, fn.end_point[1]
            self.out.calls.append(CallSite(owner, expr, line, via="value", column=column))
        if expr in ("iter", "next"):  # iter(ledger) runs ledger.__iter__, next(it) runs it.__next__
            args = node.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if first is not None and first.type not in ("keyword_argument", "list_splat", "dictionary_splat"):
                self.implicit_site(first, owner, expr)
        if expr in BUILTIN_DUNDERS:  # len(ledger) runs ledger.__len__
            args = node.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            if first is not None and first.type not in ("keyword_argument", "list_splat", "dictionary_splat"):
                self.operator_site(first, owner, BUILTIN_DUNDERS[expr])
        expr = self.higher_order_name(expr)
        if expr in HIGHER_ORDER:  # map(normalize_sku, rows): the builtin calls what it is given
            args = node.child_by_field_name("arguments")
            for arg in args.named_children if args is not None else ():
                value = arg.child_by_field_name("value") if arg.type == "keyword_argument" else arg
                if value is not None and value.type in ("identifier", "attribute") and _callable_slot(expr, arg):
                    line, column = _name_position(value)
                    self.out.calls.append(CallSite(owner, _callee_expr(value), line, via="callback", column=column))
                elif value is not None and value.type == "call" and _callable_slot(expr, arg):
                    # `sorted(invoices, key=by_age(today))`: the builtin calls what the call returns; jedi is
                    # asked where the argument ends, which is where it answers with the call's value
                    line, column = value.end_point[0] + 1, value.end_point[1]
                    self.out.calls.append(CallSite(owner, _callee_expr(value), line, via="callback", column=column))

    def higher_order_name(self, expr: str) -> str:
        """``expr`` as HIGHER_ORDER names it: ``takewhile`` imported from itertools is ``itertools.takewhile``,
        ``it.groupby`` after ``import itertools as it`` is ``itertools.groupby``; anything else unchanged."""
        if expr in HIGHER_ORDER:
            return expr
        head, dot, rest = expr.partition(".")
        module = self.stdlib_names.get(head)
        return f"{module}{dot}{rest}" if module is not None else expr

    def implicit(self, node: Node, owner: str) -> None:
        """Statements that call dunder methods without a call in the source: ``with`` (``__enter__``,
        ``__exit__``), ``for``, a comprehension's ``for`` and ``yield from`` (``__iter__``), ``raise X``
        (``X.__init__``). Each records the value expression as a CallSite whose ``via`` names the
        protocol; the resolver turns it into edges to the repository's dunder methods."""
        kind = node.type
        if kind == "with_statement":
            clause = next((c for c in node.named_children if c.type == "with_clause"), None)
            for item in clause.named_children if clause is not None else ():
                value = item.child_by_field_name("value") if item.type == "with_item" else None
                if value is not None and value.type == "as_pattern":
                    value = value.named_children[0] if value.named_children else None
                if value is not None:
                    self.implicit_site(value, owner, "with")
        elif kind in ("for_statement", "for_in_clause"):
            right = node.child_by_field_name("right")
            if right is not None:
                self.implicit_site(right, owner, "iter")
        elif kind == "yield" and any(c.type == "from" for c in node.children) and node.named_children:
            self.implicit_site(node.named_children[-1], owner, "iter")
        elif kind == "raise_statement" and node.named_children:
            value = node.named_children[0]
            if value.type in ("identifier", "attribute"):  # `raise PaymentDeclined` instantiates it
                line, column = _name_position(value)
                self.out.calls.append(CallSite(owner, _callee_expr(value), line, via="raise", column=column))

    def operator(self, node: Node, owner: str) -> None:
        """Operators that call dunder methods without a call in the source: ``a + b`` (``__add__``),
        ``a == b`` (``__eq__``), ``x in box`` (``box.__contains__``), ``-a``, ``total += fee``
        (``__iadd__``, else ``__add__``) and subscripts (``ledger[key]`` reads with ``__getitem__``,
        assigns with ``__setitem__``, ``del`` with ``__delitem__``). Each records its operand as a
        CallSite ``via="operator"``; the resolver keeps it only when jedi finds the operand to be an
        instance of a repository class that defines the method."""
        kind = node.type
        if kind == "binary_operator":
            op = node.child_by_field_name("operator")
            dunder = BINARY_DUNDERS.get(_text(op)) if op is not None else None
            if dunder:
                self.operator_site(node.child_by_field_name("left"), owner, dunder)
        elif kind == "unary_operator":
            op = node.child_by_field_name("operator")
            dunder = UNARY_DUNDERS.get(_text(op)) if op is not None else None
            if dunder:
                self.operator_site(node.child_by_field_name("argument"), owner, dunder)
        elif kind == "augmented_assignment":
            op = node.child_by_field_name("operator")
            dunder = BINARY_DUNDERS.get(_text(op)[:-1]) if op is not None else None
            if dunder:
                self.operator_site(node.child_by_field_name("left"), owner, f"__i{dunder[2:]} {dunder}")
        elif kind == "comparison_operator":
            operands = [c for c in node.named_children if c.type != "comment"]
            for i, op in enumerate(node.children_by_field_name("operators")):
                if i + 1 >= len(operands):
                    break
                text = " ".join(_text(op).split())
                if text in ("in", "not in"):  # `x in box` asks the container
                    self.operator_site(operands[i + 1], owner, "__contains__")
                elif text in COMPARE_DUNDERS:
                    self.operator_site(operands[i], owner, COMPARE_DUNDERS[text])
        elif kind == "subscript":
            parent = node.parent
            dunders = ["__getitem__"]
            if parent is not None and parent.type in ("assignment", "augmented_assignment"):
                if parent.child_by_field_name("left") == node:  # `ledger[key] += fee` reads, then stores
                    dunders = ["__setitem__"] if parent.type == "assignment" else ["__getitem__", "__setitem__"]
            elif parent is not None and parent.type in ("delete_statement", "expression_list"):
                holder = parent if parent.type == "delete_statement" else parent.parent
                if holder is not None and holder.type == "delete_statement":
                    dunders = ["__delitem__"]
            for dunder in dunders:
                self.operator_site(node.child_by_field_name("value"), owner, dunder)

    def truth(self, node: Node, owner: str) -> None:
        """A value whose truth is tested (``if cart:``, ``not coupon``, ``a and b``, ``x if c else y``):
        Python calls its class's ``__bool__``, else ``__len__``; an operator site like ``len(cart)``'s, so a
        comparison or a literal is never asked, and a repository without either dunder asks nothing."""
        fields = TRUTH_NODES[node.type]
        tested: list[Node | None] = []
        for name in fields or ("condition",):
            if name.isdigit():
                named = node.named_children
                tested.append(named[int(name)] if len(named) > int(name) else None)
            else:
                tested.append(node.child_by_field_name(name))
        for value in tested:
            if value is not None and value.type != "call":  # `if match(token):` tests what a predicate returns
                self.operator_site(value, owner, TRUTH_PROTOCOL)

    def operator_site(self, value: Node | None, owner: str, protocol: str) -> None:
        """An operand whose dunder method runs: asked of jedi at the expression's end, like a protocol value."""
        if value is None or value.type not in VALUE_NODES:
            return  # a literal, a comprehension, another operator's result: nothing known to run
        expr = _callee_expr(value)
        if (owner, expr, protocol) in self.operator_seen:
            # `tokens[0]`, `tokens[1]`, ... in one definition: one edge at most, so one question to jedi
            # (subscripts alone were a quarter of a parser's sites, and jedi time grew by as much)
            return
        self.operator_seen.add((owner, expr, protocol))
        line, column = value.end_point[0] + 1, value.end_point[1]
        self.out.calls.append(CallSite(owner, expr, line, via="operator", column=column, protocol=protocol))

    def implicit_site(self, value: Node, owner: str, via: str) -> None:
        """A value whose protocol method runs: asked of jedi at the expression's end (what it evaluates to)."""
        if value.type not in VALUE_NODES:
            return  # a literal, a comprehension, an operator: nothing in the repository runs
        line, column = value.end_point[0] + 1, value.end_point[1]
        self.out.calls.append(CallSite(owner, _callee_expr(value), line, via=via, column=column))

    def unique_id(self, scope_path: str) -> str:
        """The symbol id for ``scope_path``. A redefinition (a property's setter, an @overload, a def
        under `if`) keeps its qualname but gets its own id: the second `Response.encoding` is
        `...::Response.encoding~2`."""
        sid = symbol_id(self.record.path, scope_path)
        self.seen_ids[sid] = self.seen_ids.get(sid, 0) + 1
        return sid if self.seen_ids[sid] == 1 else f"{sid}~{self.seen_ids[sid]}"

    def definition(self, node: Node, outer: Node, stack: list[_Scope]) -> list[_Work]:
        """A ``def`` or ``class``: its symbol now; returned, the work that runs in each scope (decorators,
        defaults, then the body under the new definition)."""
        parent = stack[-1]
        name = _text(node.child_by_field_name("name")) or "<anonymous>"
        is_class = node.type == "class_definition"
        if is_class:
            kind = "class"
        elif parent.kind == "class":
            kind = "method"
        else:
            kind = "function"
        scope_path = f"{parent.scope_path}.{name}" if parent.scope_path else name
        sid = self.unique_id(scope_path)
        human = (*parent.human, f"{kind} {name}")
        body = node.child_by_field_name("body")
        start_row = _leading_comment_start(outer)
        end_row = outer.end_point[0]
        if outer.end_point[1] == 0 and end_row > outer.start_point[0]:
            end_row -= 1
        signature_end = _header_end(node, body)
        signature = (node.text or b"")[: signature_end - node.start_byte].decode("utf-8", "replace")
        signature = " ".join(signature.split()).rstrip(":").rstrip()
        qualname = ".".join(p for p in (self.record.module, scope_path) if p)
        if parent.kind == "module":
            self.top_level_spans[start_row] = (end_row, signature)
        name_node = node.child_by_field_name("name")
        def_line = name_node.start_point[0] + 1 if name_node is not None else node.start_point[0] + 1
        position = len(self.out.symbols)
        self.out.symbols.append(
            Symbol(
                id=sid,
                name=name,
                qualname=qualname,
                kind=kind,
                path=self.record.path,
                start_line=start_row + 1,
                end_line=end_row + 1,
                signature=signature,
                docstring=_docstring(body),
                text="\n".join(self.lines[start_row : end_row + 1]),
                parent_id=parent.id,
                scope=human[1:] if len(human) > 1 else human,
                def_line=def_line,
                split_points=_split_points(body, start_row) if body is not None else (),
            )
        )
        scope = _Scope(id=sid, kind=kind, name=name, scope_path=scope_path, human=human, line=def_line)
        work: list[_Work] = []
        decorators = self.decorators(outer, sid, stack, work) if outer is not node else ()
        if decorators:
            self.out.symbols[position] = replace(self.out.symbols[position], decorators=decorators)
        if is_class:
            superclasses = node.child_by_field_name("superclasses")
            if superclasses is not None:
                for arg in superclasses.named_children:
                    if arg.type == "subscript":  # Generic[T], StateMachine[State] -> the class itself
                        arg = arg.child_by_field_name("value") or arg
                    if arg.type in ("identifier", "attribute"):
                        line, column = _name_position(arg)
                        self.out.bases.append(BaseRef(sid, _callee_expr(arg), line, column))
        else:
            params = node.child_by_field_name("parameters")
            if params is not None:
                work.extend(self.parameters(params, scope, stack))
        if body is not None:
            work.append((body, [*stack, scope]))
        return work

    def decorators(self, outer: Node, decorated: str, stack: list[_Scope], work: list[_Work]) -> tuple[str, ...]:
        """``@retry_on_decline`` / ``@router.route("/webhooks")`` above a definition. The decorator runs
        when the ``def`` statement does, so the scope holding the ``def`` is its caller (the module or
        the class body), not the decorated function. Each gives a ``via="decorator"`` call site (the
        CALLS edge, and DECORATES from the same target) and a ``Decoration`` with its place in the
        stack; the arguments of a factory, and whatever the expression itself calls, run in that
        scope too. Returns the decorator expressions top to bottom, as written."""
        scope = stack[-1]
        names: list[str] = []
        found = [d for d in outer.children if d.type == "decorator" and d.named_child_count]
        for index, decorator in enumerate(found):
            expr = next((c for c in decorator.named_children if c.type != "comment"), None)
            if expr is None:
                continue
            factory = expr.type == "call"
            target = expr.child_by_field_name("function") if factory else expr
            if target is None:
                continue
            name = _callee_expr(target)
            line, column = _name_position(target)
            self.out.calls.append(CallSite(scope.id, name, line, via="decorator", column=column, decorates=decorated))
            order = len(found) - 1 - index
            self.out.decorations.append(Decoration(scope.id, decorated, name, line, column, order, factory))
            names.append(name)
            if target.type != "identifier":  # `@get_router().route(...)`: the call inside the expression
                work.extend((child, stack) for child in target.children)
            if factory:
                args = expr.child_by_field_name("arguments")
                if args is not None:
                    work.append((args, stack))
        return tuple(names)

    def lambda_(self, node: Node, stack: list[_Scope]) -> list[_Work]:
        """A lambda is a definition of its own, kind ``lambda``, whose calls are its own.

        Qualname ``<enclosing>.<lambdaN>``: N counts the lambdas of the enclosing definition (module,
        class, function or lambda) from 1 in source order, the call-graph benchmarks' convention. The
        id cannot use N (a lambda added above would renumber every later one) nor a bare line (a line
        added anywhere above would rename it): it is the line offset from the enclosing definition's
        own line, and the column, ``billing.py::InvoiceService.overdue.<lambda@3:24>`` (a module-level
        lambda's offset is its line). Defaults of its parameters run in the enclosing scope."""
        parent = stack[-1]
        parent.lambdas += 1
        label = f"<lambda{parent.lambdas}>"
        scope_path = f"{parent.scope_path}.{label}" if parent.scope_path else label
        row, column = node.start_point[0] + 1, node.start_point[1]
        prefix = "" if parent.kind == "module" else parent.id.split("::", 1)[1] + "."
        sid = self.unique_id(f"{prefix}<lambda@{row - parent.line}:{column}>")
        body = node.child_by_field_name("body")
        head_end = body.start_byte if body is not None else node.end_byte
        signature = (node.text or b"")[: head_end - node.start_byte].decode("utf-8", "replace")
        human = (*parent.human, f"lambda {label}")
        self.out.symbols.append(
            Symbol(
                id=sid,
                name=label,
                qualname=".".join(p for p in (self.record.module, scope_path) if p),
                kind="lambda",
                path=self.record.path,
                start_line=row,
                end_line=node.end_point[0] + 1,
                signature=" ".join(signature.split()).rstrip(":").rstrip(),
                docstring="",
                text=_text(node),
                parent_id=parent.id,
                scope=human[1:],
                # not where jedi points: a lambda shares its line with the statement around it (often a def)
                def_line=0,
            )
        )
        self.bound_to(node, sid, parent)
        self.invoked(node, label, parent)
        scope = _Scope(id=sid, kind="lambda", name=label, scope_path=scope_path, human=human, line=row)
        work: list[_Work] = []
        params = node.child_by_field_name("parameters")
        if params is not None:
            work.extend(self.parameters(params, scope, stack))
        if body is not None:
            work.append((body, [*stack, scope]))
        return work

    def invoked(self, node: Node, label: str, scope: _Scope) -> None:
        """A lambda the scope runs at once: called where it is written (``(lambda: x)()``), or handed to a
        builtin that calls what it is given (``sorted(invoices, key=lambda i: i.due_date)``, the
        ``HIGHER_ORDER`` rule). The call site names it by its label, which the resolver finds among the
        scope's own definitions."""
        outer = node
        while outer.parent is not None and outer.parent.type == "parenthesized_expression":
            outer = outer.parent
        parent = outer.parent
        line, column = node.start_point[0] + 1, node.start_point[1]
        if parent is not None and parent.type == "call" and parent.child_by_field_name("function") == outer:
            self.out.calls.append(CallSite(scope.id, label, line, column=column))
            return
        argument = outer
        if parent is not None and parent.type == "keyword_argument" and parent.child_by_field_name("value") == outer:
            argument, parent = parent, parent.parent
        if parent is None or parent.type != "argument_list" or parent.parent is None:
            return
        fn = parent.parent.child_by_field_name("function") if parent.parent.type == "call" else None
        if fn is not None and _callable_slot(self.higher_order_name(_callee_expr(fn)), argument):
            self.out.calls.append(CallSite(scope.id, label, line, via="callback", column=column))

    def bound_to(self, node: Node, lambda_id: str, scope: _Scope) -> None:
        """Where a lambda's value goes, when the source says so in one step (``CallableValue``). The value
        of ``validator or (lambda v: True)`` or of ``a if c else (lambda: b)`` may be the lambda, so the step
        is taken from the expression around it."""
        node = _value_around(node)
        parent = node.parent
        if parent is None:
            return
        line = node.start_point[0] + 1
        if parent.type == "assignment" and parent.child_by_field_name("right") == node:
            left = parent.child_by_field_name("left")
            if left is not None and left.type in ("identifier", "attribute"):
                self.out.callable_values.append(CallableValue(lambda_id, scope.id, _callee_expr(left), "", line))
            return
        slot = ""
        if parent.type == "keyword_argument" and parent.child_by_field_name("value") == node:
            slot = _text(parent.child_by_field_name("name"))
            parent = parent.parent
        elif parent.type == "argument_list":
            args = [a for a in parent.named_children if a.type != "comment"]
            slot = str(next(i for i, a in enumerate(args) if a == node))
        else:
            return
        call = parent.parent if parent is not None else None
        fn = call.child_by_field_name("function") if call is not None and call.type == "call" else None
        if fn is not None and slot:
            self.out.callable_values.append(CallableValue(lambda_id, scope.id, _callee_expr(fn), slot, line))

    def constant(self, statement: Node, module: _Scope) -> None:
        """A module-level ``NAME = ...`` whose name is written as a constant (upper case, PEP 8) is a
        definition of its own, kind ``constant``: the decline codes, the default retry count, the
        transition table are what "where is the list of ..." asks for, and an exact ``MAX_RETRIES``
        should find its definition. Its leading comment is its docstring. It stays in the module
        chunk too (that chunk reads as the module's wiring), and calls in its value stay the
        module's: the constant is not a scope."""
        node = statement.named_children[0] if statement.named_child_count == 1 else None
        if node is None or node.type != "assignment":
            return
        left = node.child_by_field_name("left")
        if left is None or left.type != "identifier":
            return
        name = _text(left)
        if not _CONSTANT.fullmatch(name) or (name.startswith("__") and name.endswith("__")):
            return
        sid = self.unique_id(name)
        start_row, end_row = _leading_comment_start(statement), statement.end_point[0]
        comment = [line.strip().lstrip("#").strip() for line in self.lines[start_row : left.start_point[0]]]
        first = self.lines[statement.start_point[0]].strip()
        self.out.symbols.append(
            Symbol(
                id=sid,
                name=name,
                qualname=".".join(p for p in (self.record.module, name) if p),
                kind="constant",
                path=self.record.path,
                start_line=start_row + 1,
                end_line=end_row + 1,
                signature=first if len(first) <= 120 else first[:117] + "...",
                docstring="\n".join(line for line in comment if line),
                text="\n".join(self.lines[start_row : end_row + 1]),
                parent_id=module.id,
                scope=(f"constant {name}",),
                def_line=left.start_point[0] + 1,
            )
        )

    def parameters(self, params: Node, scope: _Scope, stack: list[_Scope]) -> list[_Work]:
        """Annotated parameters become typed names of ``scope``; the defaults are returned as work in the
        enclosing scope, where Python evaluates them."""
        work: list[_Work] = []
        for param in params.named_children:
            if param.type in ("typed_parameter", "typed_default_parameter"):
                ident = param.child_by_field_name("name")
                if ident is None:
                    ident = next((c for c in param.named_children if c.type == "identifier"), None)
                annotation = _annotation(param.child_by_field_name("type"))
                if ident is not None and annotation:
                    scope.params[_text(ident)] = annotation
                    self.out.assignments.append(TypedName(scope.id, _text(ident), annotation))
            default = param.child_by_field_name("value")
            if default is not None:
                work.append((default, stack))
        return work

    def assignment(self, node: Node, stack: list[_Scope]) -> None:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        annotation = _annotation(node.child_by_field_name("type"))
        if left is None:
            return
        scope = stack[-1]
        target = _text(left)
        type_expr = annotation
        if not type_expr and right is not None:
            if right.type == "call":
                fn = right.child_by_field_name("function")
                if fn is not None:
                    type_expr = "call:" + _callee_expr(fn)
            elif right.type == "identifier" and _text(right) in scope.params:
                type_expr = scope.params[_text(right)]
        if not type_expr:
            return
        if left.type == "identifier":
            self.out.assignments.append(TypedName(scope.id, target, type_expr))
        elif left.type == "attribute" and target.startswith("self.") and target.count(".") == 1:
            owner = next((s for s in reversed(stack) if s.kind == "class"), None)
            if owner is not None:
                self.out.assignments.append(TypedName(owner.id, target, type_expr))

    def imports(self, node: Node) -> None:
        first = len(self.out.imports)
        self._imports(node)
        for record in self.out.imports[first:]:
            if record.level == 0 and record.module.split(".")[0] in HIGHER_ORDER_MODULES and record.name != "*":
                local = record.alias or (record.name or record.module).split(".")[0]
                self.stdlib_names[local] = (
                    f"{record.module}.{record.name}" if record.name else (record.module if record.alias else local)
                )

    def _imports(self, node: Node) -> None:
        line = node.start_point[0] + 1
        if node.type == "import_statement":
            for child in node.named_children:
                if child.type == "dotted_name":
                    self.out.imports.append(ImportRecord(_text(child), "", "", 0, line, _last_column(child)))
                elif child.type == "aliased_import":
                    name = child.child_by_field_name("name")
                    alias = child.child_by_field_name("alias")
                    self.out.imports.append(ImportRecord(_text(name), "", _text(alias), 0, line, _last_column(name)))
            return
        module_node = node.child_by_field_name("module_name")
        level, module = 0, ""
        if module_node is not None:
            if module_node.type == "relative_import":
                prefix = next((c for c in module_node.children if c.type == "import_prefix"), None)
                level = len(_text(prefix)) if prefix is not None else 1
                dotted = next((c for c in module_node.children if c.type == "dotted_name"), None)
                module = _text(dotted)
            else:
                module = _text(module_node)
        for child in node.named_children:
            if module_node is not None and child == module_node:
                continue
            if child.type == "dotted_name":
                self.out.imports.append(ImportRecord(module, _text(child), "", level, line, _last_column(child)))
            elif child.type == "aliased_import":
                name = child.child_by_field_name("name")
                alias = child.child_by_field_name("alias")
                self.out.imports.append(
                    ImportRecord(module, _text(name), _text(alias), level, line, _last_column(name))
                )
            elif child.type == "wildcard_import":
                self.out.imports.append(ImportRecord(module, "*", "", level, line))

    # -- the module's own chunk --------------------------------------------------------------
    def module_symbol(self, root: Node, module: _Scope) -> Symbol:
        """The code between top-level definitions (imports, constants, wiring), kept verbatim.
        Each top-level definition leaves one marker line so the chunk still reads in order."""
        starts = {child.start_point[0] for child in root.named_children if child.type != "comment"}
        text, split_points = module_text(self.lines, self.top_level_spans, starts, "#")
        return Symbol(
            id=module.id,
            name=module.name,
            qualname=self.record.module or self.record.path,
            kind="module",
            path=self.record.path,
            start_line=1,
            end_line=max(1, len(self.lines)),
            signature=f"module {self.record.module or self.record.path}",
            docstring=_docstring(root),
            text=text,
            parent_id="",
            scope=module.human,
            split_points=split_points,
        )


def import_line(imp: ImportRecord) -> str:
    """``import a.b as c`` or ``from ..a import b as c``."""
    if imp.level == 0 and not imp.name:
        return f"import {imp.module}" + (f" as {imp.alias}" if imp.alias else "")
    source = "." * imp.level + imp.module
    return f"from {source} import {imp.name}" + (f" as {imp.alias}" if imp.alias else "")


LANGUAGE = Language(
    name="python",
    kind="code",
    extensions=(".py", ".pyi"),
    file_names=(),
    shebangs=("python", "python3"),
    test_names=r"^test_.*\.py$|_test\.py$|^conftest\.py$",
    comment="#",
    import_line=import_line,
    builtins=BUILTIN_NAMES,
    extractor=PythonExtractor,
    module_system=ModuleSystem.PYTHON,
    file_module=module_name,
    indented_blocks=True,
)
