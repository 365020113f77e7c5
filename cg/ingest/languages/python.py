"""Python definitions, imports, call sites, base classes and typed names from a tree-sitter parse.

One pass over the tree with a stack of enclosing definitions. Every call site is attributed to the
innermost definition that contains it (module-level code belongs to the module symbol), which is
what the resolver and the CALLS edges need. The parser recovers from syntax errors; whatever it
recovers is still extracted and the file gets a warning with the first error's line.
"""

from __future__ import annotations

import ast
import builtins
import re
from dataclasses import dataclass, field, replace

import tree_sitter_python
from tree_sitter import Language as Grammar
from tree_sitter import Node, Parser

from cg.ingest.languages.base import first_error_line, module_text
from cg.ingest.languages.base import node_text as _text
from cg.ingest.languages.registry import Language, ModuleSystem
from cg.ingest.walk import module_name
from cg.model import (
    AttributeRead,
    BaseRef,
    CallSite,
    FileExtraction,
    FileRecord,
    ImportRecord,
    Symbol,
    TypedName,
    symbol_id,
)

PY_LANGUAGE = Grammar(tree_sitter_python.language())
DEF_TYPES = {"function_definition", "class_definition"}
# Builtins and standard functions that call the functions they are handed (an edge from the caller).
HIGHER_ORDER = frozenset(
    {
        "map",
        "filter",
        "sorted",
        "min",
        "max",
        "partial",
        "functools.partial",
        "reduce",
        "functools.reduce",
        "itertools.starmap",
        "itertools.filterfalse",
        "itertools.takewhile",
        "itertools.dropwhile",
        "itertools.groupby",
        "itertools.accumulate",
    }
)


# Statements that run protocol methods of a value (see _Walker.implicit).
IMPLICIT_VALUES = frozenset({"with_statement", "for_statement", "for_in_clause", "yield", "raise_statement"})


@dataclass
class _Scope:
    id: str
    kind: str  # module | class | function | method
    name: str
    scope_path: str  # "RetryPolicy.delay_for" ("" for the module)
    human: tuple[str, ...]
    params: dict[str, str] = field(default_factory=dict)  # parameter -> annotation


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


def _leading_comment_start(node: Node) -> int:
    """0-based row where the comment block directly above ``node`` begins (``node``'s row if none)."""
    row = node.start_point[0]
    prev = node.prev_sibling
    while prev is not None and prev.type == "comment" and prev.end_point[0] == row - 1:
        row = prev.start_point[0]
        prev = prev.prev_sibling
    return row


def _callee_expr(node: Node) -> str:
    """A call's function expression with arguments elided: ``g(a).h`` -> ``g().h``."""
    if node.type == "identifier":
        return _text(node)
    if node.type == "attribute":
        obj = node.child_by_field_name("object")
        attr = node.child_by_field_name("attribute")
        return f"{_callee_expr(obj) if obj is not None else '?'}.{_text(attr)}"
    if node.type == "call":
        fn = node.child_by_field_name("function")
        return f"{_callee_expr(fn) if fn is not None else '?'}()"
    if node.type == "subscript":
        value = node.child_by_field_name("value")
        return f"{_callee_expr(value) if value is not None else '?'}[]"
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _callee_expr(node.named_children[0])
    return f"<{node.type}>"


def _name_position(node: Node) -> tuple[int, int]:
    """1-based line and 0-based column of an expression's last name: where a reader (and jedi) would
    point to ask what ``self.gateway.charge`` is."""
    if node.type == "attribute":
        attr = node.child_by_field_name("attribute")
        if attr is not None:
            node = attr
    elif node.type == "call":
        fn = node.child_by_field_name("function")
        if fn is not None:
            return _name_position(fn)
    elif node.type == "subscript":
        value = node.child_by_field_name("value")
        if value is not None:
            return _name_position(value)
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
        return out


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


def _last_column(node: Node | None) -> int:
    """0-based column of the last identifier of a dotted name (``payments.retry`` -> ``retry``)."""
    if node is None:
        return 0
    last = node
    for child in node.named_children:
        if child.type == "identifier":
            last = child
    return last.start_point[1]


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
        self.top_level_spans: dict[int, tuple[int, str]] = {}  # top-level def start row -> (end row, signature)

    # -- traversal ---------------------------------------------------------------------------
    def walk(self, node: Node, stack: list[_Scope]) -> None:
        for child in node.children:
            kind = child.type
            if kind == "decorated_definition":
                definition = child.child_by_field_name("definition")
                if definition is not None and definition.type in DEF_TYPES:
                    self.definition(definition, child, stack)
                    continue
            if kind in DEF_TYPES:
                self.definition(child, child, stack)
                continue
            if kind == "call":
                fn = child.child_by_field_name("function")
                if fn is not None:
                    self.call(child, fn, stack[-1].id)
            elif kind == "attribute" and not _is_call_or_store(child):
                attr = child.child_by_field_name("attribute")
                if attr is not None:
                    self.out.attribute_reads.append(
                        AttributeRead(
                            stack[-1].id,
                            _text(attr),
                            attr.start_point[0] + 1,
                            attr.start_point[1],
                            expr=_callee_expr(child),
                        )
                    )
            elif kind in IMPLICIT_VALUES:
                self.implicit(child, stack[-1].id)
            elif kind in ("import_statement", "import_from_statement"):
                self.imports(child)
            elif kind == "assignment":
                self.assignment(child, stack)
            elif kind == "expression_statement" and stack[-1].kind == "module":
                self.constant(child, stack[-1])
            self.walk(child, stack)

    def call(self, node: Node, fn: Node, owner: str) -> None:
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
        if expr in HIGHER_ORDER:  # map(normalize_sku, rows): the builtin calls what it is given
            args = node.child_by_field_name("arguments")
            for arg in args.named_children if args is not None else ():
                value = arg.child_by_field_name("value") if arg.type == "keyword_argument" else arg
                if value is not None and value.type in ("identifier", "attribute"):
                    line, column = _name_position(value)
                    self.out.calls.append(CallSite(owner, _callee_expr(value), line, via="callback", column=column))

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

    def implicit_site(self, value: Node, owner: str, via: str) -> None:
        """A value whose protocol method runs: asked of jedi at the expression's end (what it evaluates to)."""
        if value.type not in ("identifier", "attribute", "call", "subscript", "parenthesized_expression"):
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

    def definition(self, node: Node, outer: Node, stack: list[_Scope]) -> None:
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
        signature_end = body.start_byte if body is not None else node.end_byte
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
        scope = _Scope(id=sid, kind=kind, name=name, scope_path=scope_path, human=human)
        decorators: list[str] = []
        if outer is not node:
            for decorator in outer.children:
                if decorator.type != "decorator" or decorator.named_child_count == 0:
                    continue
                expr = decorator.named_children[0]
                target = expr.child_by_field_name("function") if expr.type == "call" else expr
                if target is not None:
                    line, column = _name_position(target)
                    self.out.calls.append(CallSite(sid, _callee_expr(target), line, via="decorator", column=column))
                    decorators.append(_callee_expr(target))
                if expr.type == "call":  # the decorator's own arguments run in the enclosing scope
                    args = expr.child_by_field_name("arguments")
                    if args is not None:
                        self.walk(args, stack)
        if decorators:
            self.out.symbols[position] = replace(self.out.symbols[position], decorators=tuple(decorators))
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
                self.parameters(params, scope, stack)
        if body is not None:
            self.walk(body, [*stack, scope])

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

    def parameters(self, params: Node, scope: _Scope, stack: list[_Scope]) -> None:
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
            if default is not None:  # defaults are evaluated in the enclosing scope
                self.walk(default, stack)

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
    builtins=frozenset(dir(builtins)),
    extractor=PythonExtractor,
    module_system=ModuleSystem.PYTHON,
    file_module=module_name,
    indented_blocks=True,
)
