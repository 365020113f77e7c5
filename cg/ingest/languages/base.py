"""The shared tree-sitter extractor behind TypeScript, JavaScript, Go, Java and Rust.

Each language module is mostly data: a ``Spec`` naming its definition node types, call node types,
member-access shapes, comment and block types, plus a few small hooks where a grammar needs code
(imports, inheritance, typed names). One pass over the tree with a stack of enclosing scopes, as in
the Python extractor: every call site belongs to the innermost definition around it, module-level
code to the module symbol. A definition's range starts at its doc comment and its decorators,
annotations or attributes; its docstring is that doc comment with the comment markers removed.

Methods declared outside their type (Go receivers, Rust ``impl`` blocks) are attached to the type by
name: ``pkg/server.go::Server.Handle``. Their parent is the type when the same file defines it, else
the file's module symbol; the resolver joins them to the type across files of the package or crate.
Redefinitions, including Java overloads, keep their qualname and get ``~2``, ``~3`` ids in source
order, the convention the Python extractor uses (the signature tells overloads apart).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace

from tree_sitter import Language, Node, Parser

from cg.model import (
    CONTAINER_KINDS,
    BaseRef,
    CallSite,
    FileExtraction,
    FileRecord,
    ImportRecord,
    Symbol,
    TypedName,
    symbol_id,
)

RETURN = "<return>"  # TypedName for what a function returns
_MAX_SPLIT_DEPTH = 3
# Steps ``expr`` takes from a call site inwards (``a.b().c()`` is four): past it, the head is ``<deep>``
# (a 30-link builder chain is 60 steps; a generated 5,000-link one costs 64 steps per call, not 10,000).
MAX_EXPR_STEPS = 64
_ANNOTATIONS = re.compile(r"^(?:@[\w.]+(?:\([^)]*\))?\s+)+")
_SIGNATURE_TAIL = re.compile(r"(?:\s*(?:=>|[{;=]))+\s*$")


def node_text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def first_error_line(root: Node) -> int:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return node.start_point[0] + 1
        if node.has_error:
            stack.extend(reversed(node.children))
    return root.start_point[0] + 1


_MARKER_LINES = re.compile(r"^(\S+ \.\.\. .*) \(lines \d+-\d+\)$", re.M)


def module_code(text: str) -> str:
    """A module symbol's text (``module_text``) without the line numbers of its markers: what the
    module's own code is. An incremental run compares it before and after an edit, and a line added
    inside any definition moves the markers below it (Django's ``capfirst``: the module counted as
    changed, so every file's edges were scanned for one into it)."""
    return _MARKER_LINES.sub(r"\1", text)


def module_text(
    lines: list[str], spans: Mapping[int, tuple[int, str]], starts: set[int], marker: str
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The code between top-level definitions, kept verbatim, each definition replaced by one marker
    line (``# ... def f() (lines 3-9)``) so the module chunk still reads in order; with split points."""
    kept: list[str] = []
    points: list[tuple[int, int]] = []
    row = 0
    while row < len(lines):
        if row in spans:
            end, signature = spans[row]
            points.append((len(kept), 1))
            kept.append(f"{marker} ... {signature} (lines {row + 1}-{end + 1})")
            row = max(end + 1, row + 1)
            continue
        if row in starts:
            points.append((len(kept), 1))
        kept.append(lines[row])
        row += 1
    leading = next((i for i, line in enumerate(kept) if line != ""), len(kept))  # what strip("\n") drops
    text = "\n".join(kept).strip("\n")
    return text, tuple((i - leading, d) for i, d in points if i - leading > 0)


def clean_comment(text: str) -> str:
    """A comment's prose: ``/** ... */``, ``///``, ``//!``, ``//`` and leading ``*`` removed."""
    text = text.strip()
    if text.startswith("/*"):
        text = text[2:].lstrip("*!")
        text = text[:-2] if text.endswith("*/") else text
        lines = [re.sub(r"^\s*\*\s?", "", line) for line in text.splitlines()]
    else:
        lines = [re.sub(r"^\s*//[/!]?\s?", "", line) for line in text.splitlines()]
    return "\n".join(line.rstrip() for line in lines).strip()


def is_doc_comment(text: str) -> bool:
    return text.startswith(("/**", "///", "//!")) and not text.startswith(("/**/", "////"))


@dataclass(frozen=True)
class Def:
    """One definition node type: the symbol kind it makes and the fields holding name and body."""

    kind: str  # function becomes method inside a container
    name: str = "name"
    body: str = "body"
    container: bool = False  # class-like: the definitions in its body are its members


@dataclass(frozen=True)
class Spec:
    name: str
    language: Language
    definitions: Mapping[str, Def]
    calls: Mapping[str, str]  # call node type -> field holding the callee
    members: Mapping[str, tuple[str, str]]  # member access node type -> (object field, name field)
    comments: frozenset[str] = frozenset({"comment"})
    wrappers: frozenset[str] = frozenset()  # nodes wrapping one definition (export, `const x = ...`)
    attached: frozenset[str] = frozenset()  # siblings before a definition that belong to it (decorators)
    transparent: frozenset[str] = frozenset()  # blocks whose children are the statements (Go statement_list)
    blocks: frozenset[str] = frozenset()  # nested statement blocks, for deeper split points
    names: frozenset[str] = frozenset(
        {"identifier", "property_identifier", "field_identifier", "type_identifier", "this", "self", "super"}
    )
    constructors: frozenset[str] = frozenset()  # call node types that instantiate their callee (new Foo())
    comment_prefix: str = "//"


@dataclass
class Scope:
    id: str
    kind: str
    name: str
    scope_path: str
    human: tuple[str, ...]


@dataclass
class Context:
    """What hooks see: the file, its lines and the output being filled."""

    record: FileRecord
    lines: list[str]
    out: FileExtraction
    seen_ids: dict[str, int] = field(default_factory=dict)
    spans: dict[int, tuple[int, str]] = field(default_factory=dict)  # top-level def start row -> (end, signature)


class TreeSitterExtractor:
    """Subclasses set ``spec`` and override the hooks they need."""

    spec: Spec
    language: str

    def __init__(self) -> None:
        self._parser = Parser(self.spec.language)

    # -- hooks -----------------------------------------------------------------------------------
    def module_of(self, record: FileRecord, root: Node) -> str:
        """The dotted prefix of the file's qualnames."""
        from cg.ingest.walk import module_name

        return module_name(record.path)

    def classify(self, node: Node, stack: list[Scope]) -> tuple[Def, Node | None] | None:
        """The rule and name node when ``node`` is a definition, else None."""
        rule = self.spec.definitions.get(node.type)
        if rule is None:
            return None
        return rule, node.child_by_field_name(rule.name)

    def body_of(self, node: Node, rule: Def) -> Node | None:
        return node.child_by_field_name(rule.body) if rule.body else None

    def owner_type(self, node: Node, stack: list[Scope]) -> str:
        """The type a method declared outside it belongs to (Go receivers, Rust impl blocks)."""
        return ""

    def visit(self, node: Node, ctx: Context, stack: list[Scope]) -> bool:
        """Imports, inheritance and typed names; True when the node's subtree needs no more walking."""
        return False

    def typed_params(self, node: Node) -> list[tuple[str, str]]:
        """(name, type) of a definition's parameters whose type the source states."""
        return []

    def return_type(self, node: Node) -> str:
        return ""

    def callee(self, node: Node) -> Node | None:
        return node.child_by_field_name(self.spec.calls[node.type])

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, node: Node | None) -> str:
        """A callee as a dotted expression, arguments elided: ``this.gateway.charge``, ``Invoice.new``.

        Built from the innermost name outwards without recursion (a 500-link ``.then()`` chain is a
        tree 1,000 deep); past ``MAX_EXPR_STEPS`` the head becomes ``<deep>``, which no resolver
        takes for a name, so a generated chain costs linear time per call site, not a stack."""
        suffixes: list[str] = []
        while True:
            step = self.expr_step(node)
            if isinstance(step, str):
                head = step
                break
            node, suffix = step
            suffixes.append(suffix)
            if len(suffixes) >= MAX_EXPR_STEPS:
                head = "<deep>"
                break
        return head + "".join(reversed(suffixes))

    def expr_step(self, node: Node | None) -> str | tuple[Node | None, str]:
        """One step of ``expr``: the whole text when ``node`` is a name (or not an expression cg
        follows), else the inner node and what this node adds after it (``.charge``, ``()``)."""
        if node is None:
            return "?"
        kind = node.type
        if kind in self.spec.names or kind in ("package_identifier", "namespace_identifier", "crate"):
            return node_text(node)
        if kind in self.spec.members:
            obj_field, name_field = self.spec.members[kind]
            return node.child_by_field_name(obj_field), f".{node_text(node.child_by_field_name(name_field))}"
        if kind in ("scoped_identifier", "scoped_type_identifier", "qualified_type"):
            path = node.child_by_field_name("path") or node.child_by_field_name("scope")
            path = path or node.child_by_field_name("package")
            name = node_text(node.child_by_field_name("name"))
            return (path, f".{name}") if path is not None else name
        if kind in self.spec.calls:
            return self.callee(node), "()"
        if kind in ("generic_type", "generic_function", "parenthesized_expression", "await_expression"):
            inner = node.child_by_field_name("function") or node.child_by_field_name("type")
            return inner or (node.named_children[0] if node.named_children else None), ""
        return f"<{kind}>"

    def type_expr(self, node: Node | None) -> str:
        """A stated type as text, references and pointers stripped (``*Server`` -> ``Server``)."""
        if node is None:
            return ""
        text = node_text(node).strip()
        if text.startswith(":"):  # a TypeScript type annotation
            text = text[1:].strip()
        return text

    def value_type(self, value: Node | None) -> str:
        """The type an initialiser makes: ``new Foo()``, ``Foo{}``, ``&Foo{}``, ``make_foo()``."""
        for _ in range(MAX_EXPR_STEPS):  # through `&`, `await`, `?`: a loop, however many are stacked
            if value is None:
                return ""
            kind = value.type
            if kind in self.spec.constructors:
                return self.expr(self.callee(value))
            if kind in self.spec.calls:
                return "call:" + self.expr(self.callee(value))
            if kind in ("composite_literal", "struct_expression"):
                return self.expr(value.child_by_field_name("type") or value.child_by_field_name("name"))
            value = self.value_inner(value)
        return ""

    def value_inner(self, value: Node) -> Node | None:
        """The value a wrapper around an initialiser holds (``&x``, ``await x``), else None."""
        if value.type in ("unary_expression", "reference_expression", "await_expression") and value.named_children:
            return value.named_children[-1]
        return None

    # -- extraction ------------------------------------------------------------------------------
    def extract(self, record: FileRecord, source: bytes) -> FileExtraction:
        tree = self._parser.parse(source)
        root = tree.root_node
        record = replace(record, module=self.module_of(record, root))
        lines = source.decode("utf-8", "replace").splitlines()
        out = FileExtraction(file=record)
        if root.has_error:
            out.warnings.append(f"syntax error near line {first_error_line(root)}; indexed what parsed")
        module = Scope(
            symbol_id(record.path, ""), "module", record.module or record.path, "", (f"module {record.path}",)
        )
        ctx = Context(record, lines, out)
        self.walk(root, ctx, [module])
        ids = {s.id for s in out.symbols}
        # methods attached to a type by name: their parent is the type if this file defines it
        out.symbols = [
            s if s.parent_id in ids or s.parent_id == module.id else replace(s, parent_id=module.id)
            for s in out.symbols
        ]
        starts = {child.start_point[0] for child in root.named_children if child.type not in self.spec.comments}
        text, points = module_text(lines, ctx.spans, starts, self.spec.comment_prefix)
        doc = self._module_doc(root)
        out.symbols.insert(
            0,
            Symbol(
                id=module.id,
                name=record.path.rsplit("/", 1)[-1],
                qualname=record.module or record.path,
                kind="module",
                path=record.path,
                start_line=1,
                end_line=max(1, len(lines)),
                signature=f"module {record.path}",
                docstring=doc,
                text=text,
                parent_id="",
                scope=module.human,
                split_points=points,
            ),
        )
        return out

    def _module_doc(self, root: Node) -> str:
        """The file's leading doc comment (``//!`` in Rust, a package comment in Go) when not a definition's."""
        first = root.named_children[0] if root.named_children else None
        if first is None or first.type not in self.spec.comments:
            return ""
        text = node_text(first)
        following = first.next_named_sibling
        attached_below = following is not None and following.start_point[0] == first.end_point[0] + 1
        if text.startswith("//!") or (not attached_below and not text.startswith("/**")):
            return clean_comment(text)
        if following is not None and following.type in ("package_clause", "package_declaration"):
            return clean_comment(text)
        return ""

    def walk(self, node: Node, ctx: Context, stack: list[Scope]) -> None:
        """Every node below ``node`` in document order, with the scopes around it. Iterative, over an
        explicit stack of open nodes (their children still to visit): code nested thousands deep
        (5,000 parentheses, 600 nested ``if``s, a 500-link ``.then()`` chain) costs memory here,
        never Python stack frames.

        An open node's children see ``scopes``; a definition's own children (``inside`` set: the
        scopes within it) are not classified themselves, and an attached one (a decorator) is walked
        with the scopes outside the definition."""
        open_nodes: list[tuple[Iterator[Node], list[Scope], list[Scope] | None, Node | None]] = [
            (iter(node.named_children), stack, None, None)
        ]
        while open_nodes:
            children, scopes, inside, skip = open_nodes[-1]
            child = next(children, None)
            if child is None:
                open_nodes.pop()
                continue
            if inside is None:
                found = self.classify(child, scopes)
                if found is not None:
                    scope = self.definition(child, found[0], found[1], ctx, scopes)
                    open_nodes.append((iter(child.named_children), scopes, [*scopes, scope], found[1]))
                    continue
                if child.type in self.spec.calls:
                    self.call(child, ctx, scopes)
                if self.visit(child, ctx, scopes):
                    continue
                below = scopes
            else:
                if skip is not None and child == skip:  # the definition's name
                    continue
                if child.type in self.spec.calls:
                    self.call(child, ctx, inside)
                if child.type in self.spec.attached:
                    below = scopes
                elif self.visit(child, ctx, inside):
                    continue
                else:
                    below = inside
            if child.named_child_count:
                open_nodes.append((iter(child.named_children), below, None, None))

    def call(self, node: Node, ctx: Context, stack: list[Scope]) -> None:
        fn = self.callee(node)
        if fn is None:
            return
        expr = self.expr(fn)
        line, column = _last_name(fn)
        args = node.child_by_field_name("arguments")
        arity = sum(1 for a in args.named_children if a.type not in self.spec.comments) if args is not None else -1
        if "<" in expr or "?" in expr:  # `handlers[kind](event)`: not a name
            ctx.out.calls.append(CallSite(stack[-1].id, expr, line, via="value", column=column))
        else:
            via = "new" if node.type in self.spec.constructors else "call"
            ctx.out.calls.append(CallSite(stack[-1].id, expr, line, via=via, column=column, arity=arity))

    def outer(self, node: Node) -> Node:
        """The node whose range the definition takes: through ``export``, ``const x =`` and the like."""
        outer = node
        while outer.parent is not None and outer.parent.type in self.spec.wrappers:
            if sum(1 for c in outer.parent.named_children if c.type == outer.type) != 1:
                break
            outer = outer.parent
        return outer

    def leading(self, outer: Node) -> tuple[int, list[str]]:
        """The first row of the comments and attached siblings (decorators, attributes) directly above
        ``outer``, and those comments' texts in order."""
        row = outer.start_point[0]
        comments: list[str] = []
        prev = outer.prev_named_sibling
        while prev is not None and prev.type in self.spec.comments | self.spec.attached:
            if prev.end_point[0] < row - 1:
                break
            before = prev.prev_sibling
            if prev.type in self.spec.comments and before is not None and before.end_point[0] == prev.start_point[0]:
                break  # a trailing comment of the line above
            if prev.type in self.spec.comments:
                comments.insert(0, node_text(prev))
            row = prev.start_point[0]
            prev = prev.prev_named_sibling
        return row, comments

    def definition(self, node: Node, rule: Def, name_node: Node | None, ctx: Context, stack: list[Scope]) -> Scope:
        """Record the definition ``node`` (its symbol, typed parameters, return type); its scope, which
        ``walk`` gives the nodes inside it."""
        parent = stack[-1]
        name = node_text(name_node) or "<anonymous>"
        owner = self.owner_type(node, stack)
        kind = rule.kind
        if kind == "function" and (parent.kind in CONTAINER_KINDS or owner):
            kind = "method"
        if owner:
            scope_path = f"{owner}.{name}"
            parent_id = symbol_id(ctx.record.path, owner)
        else:
            scope_path = f"{parent.scope_path}.{name}" if parent.scope_path else name
            parent_id = parent.id
        sid = symbol_id(ctx.record.path, scope_path)
        ctx.seen_ids[sid] = ctx.seen_ids.get(sid, 0) + 1
        if ctx.seen_ids[sid] > 1:
            sid = f"{sid}~{ctx.seen_ids[sid]}"
        chain = (*parent.human, f"type {owner}", f"{kind} {name}") if owner else (*parent.human, f"{kind} {name}")
        outer = self.outer(node)
        start_row, comments = self.leading(outer)
        end_row = outer.end_point[0]
        if outer.end_point[1] == 0 and end_row > outer.start_point[0]:
            end_row -= 1
        body = self.body_of(node, rule)
        sig_start = outer.start_byte
        for child in outer.children:  # decorators inside the node stay out of the signature
            if child.type in self.spec.attached or child.type in self.spec.comments:
                sig_start = child.end_byte
            else:
                break
        sig_end = body.start_byte if body is not None else outer.end_byte
        source = outer.text or b""
        signature = source[sig_start - outer.start_byte : sig_end - outer.start_byte].decode("utf-8", "replace")
        signature = _SIGNATURE_TAIL.sub("", _ANNOTATIONS.sub("", " ".join(signature.split())))
        if body is None or rule.container:
            signature = signature.rstrip(";")
        docs = [c for c in comments if is_doc_comment(c)] or comments
        docstring = "\n".join(clean_comment(c) for c in docs).strip()
        qualname = ".".join(p for p in (ctx.record.module, scope_path) if p)
        if parent.kind == "module":
            ctx.spans[start_row] = (end_row, signature)
        symbol = Symbol(
            id=sid,
            name=name,
            qualname=qualname,
            kind=kind,
            path=ctx.record.path,
            start_line=start_row + 1,
            end_line=end_row + 1,
            signature=signature,
            docstring=docstring,
            text="\n".join(ctx.lines[start_row : end_row + 1]),
            parent_id=parent_id,
            scope=chain[1:],
            def_line=(name_node or node).start_point[0] + 1,
            split_points=self.split_points(body, start_row) if body is not None else (),
        )
        ctx.out.symbols.append(symbol)
        scope = Scope(sid, kind, name, scope_path, chain)
        for pname, ptype in self.typed_params(node):
            ctx.out.assignments.append(TypedName(sid, pname, ptype))
        returned = self.return_type(node)
        if returned:
            ctx.out.assignments.append(TypedName(sid, RETURN, returned))
        return scope

    def split_points(self, body: Node, first_row: int) -> tuple[tuple[int, int], ...]:
        """Statement (or member) starts inside a body, as (line index relative to ``first_row``, depth)."""
        points: list[tuple[int, int]] = []

        def statements(block: Node) -> list[Node]:
            out: list[Node] = []
            pending = list(reversed(block.named_children))
            while pending:  # through transparent lists (Go's statement_list), in order
                child = pending.pop()
                if child.type in self.spec.transparent:
                    pending.extend(reversed(child.named_children))
                elif child.type not in self.spec.comments:
                    out.append(child)
            return out

        def visit(block: Node, depth: int) -> None:
            for stmt in statements(block):
                points.append((stmt.start_point[0] - first_row, depth))
                if depth >= _MAX_SPLIT_DEPTH or self.classify(stmt, []) is not None:
                    continue
                for child in stmt.named_children:
                    if child.type in self.spec.blocks:
                        visit(child, depth + 1)
                    elif any(g.type in self.spec.blocks for g in child.named_children):  # else/catch clauses
                        points.append((child.start_point[0] - first_row, depth + 1))
                        for grandchild in child.named_children:
                            if grandchild.type in self.spec.blocks:
                                visit(grandchild, depth + 1)

        visit(body, 1)
        return tuple(sorted(set(p for p in points if p[0] > 0)))


def _last_name(node: Node) -> tuple[int, int]:
    """1-based line and 0-based column of an expression's last name (``charge`` in ``this.gateway.charge``)."""
    target = node
    for field_name in ("property", "field", "name"):
        found = node.child_by_field_name(field_name)
        if found is not None:
            target = found
            break
    return target.start_point[0] + 1, target.start_point[1]


def string_value(node: Node | None) -> str:
    """A string literal's content without its quotes."""
    text = node_text(node)
    return text[1:-1] if len(text) >= 2 and text[0] in "\"'`" and text[-1] == text[0] else text


def import_record(module: str, name: str, alias: str, node: Node) -> ImportRecord:
    return ImportRecord(module, name, alias, 0, node.start_point[0] + 1, node.start_point[1])


def base_ref(stack: list[Scope], expr: str, node: Node) -> BaseRef:
    return BaseRef(stack[-1].id, expr, node.start_point[0] + 1, node.start_point[1])
