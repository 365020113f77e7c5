"""Go: functions, methods (attached to their receiver's type), structs, interfaces and other named
types, interface method sets; imports (the resolver maps them through go.mod to package
directories); struct and interface embedding as inheritance. A package is a directory, so qualnames
are the directory's dotted path plus the scope: ``internal.server.Server.Handle``."""

from __future__ import annotations

import posixpath

import tree_sitter_go
from tree_sitter import Language as Grammar
from tree_sitter import Node

from cg.ingest.languages.base import Context, Def, Scope, Spec, TreeSitterExtractor, base_ref, import_record, node_text
from cg.ingest.languages.registry import Language, ModuleSystem
from cg.model import FileRecord, TypedName

BUILTINS = frozenset(
    "append cap clear close complex copy delete imag len make max min new panic print println real recover "
    "bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 "
    "uint16 uint32 uint64 uintptr any".split()
)

SPEC = Spec(
    name="go",
    language=Grammar(tree_sitter_go.language()),
    definitions={
        "function_declaration": Def("function"),
        "method_declaration": Def("function"),
        "method_elem": Def("function", body=""),  # a method of an interface
    },
    calls={"call_expression": "function"},
    members={"selector_expression": ("operand", "field")},
    wrappers=frozenset({"type_declaration"}),
    transparent=frozenset({"statement_list"}),
    blocks=frozenset({"block", "expression_switch_statement", "type_switch_statement", "select_statement"}),
)
_TYPE_KINDS = {"struct_type": "struct", "interface_type": "interface"}


def _type_name(node: Node | None) -> str:
    """``*Server``, ``Server[T]``, ``store.Store`` -> the named type as written (pointer dropped)."""
    while node is not None and node.type in ("pointer_type", "generic_type", "parenthesized_type"):
        node = node.child_by_field_name("type") or (node.named_children[0] if node.named_children else None)
    if node is None:
        return ""
    if node.type == "qualified_type":
        return f"{node_text(node.child_by_field_name('package'))}.{node_text(node.child_by_field_name('name'))}"
    return node_text(node) if node.type == "type_identifier" else ""


class GoExtractor(TreeSitterExtractor):
    spec = SPEC
    language = "go"

    def module_of(self, record: FileRecord, root: Node) -> str:
        directory = record.path.rsplit("/", 1)[0] if "/" in record.path else ""
        return directory.replace("/", ".")

    def classify(self, node: Node, stack: list[Scope]) -> tuple[Def, Node | None] | None:
        if node.type == "type_spec":
            kind = _TYPE_KINDS.get(getattr(node.child_by_field_name("type"), "type", ""), "type")
            return Def(kind, body="type", container=kind in ("struct", "interface")), node.child_by_field_name("name")
        return super().classify(node, stack)

    def body_of(self, node: Node, rule: Def) -> Node | None:
        if node.type == "type_spec":
            value = node.child_by_field_name("type")
            if value is not None and value.type in _TYPE_KINDS:
                return next((c for c in value.named_children if c.type == "field_declaration_list"), value)
            return None
        return super().body_of(node, rule)

    def owner_type(self, node: Node, stack: list[Scope]) -> str:
        if node.type != "method_declaration":
            return ""
        receiver = node.child_by_field_name("receiver")
        param = receiver.named_children[0] if receiver is not None and receiver.named_children else None
        return _type_name(param.child_by_field_name("type")) if param is not None else ""

    def typed_params(self, node: Node) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        for field_name in ("receiver", "parameters"):
            params = node.child_by_field_name(field_name)
            for param in params.named_children if params is not None else ():
                type_name = _type_name(param.child_by_field_name("type"))
                if not type_name:
                    continue
                for ident in param.children_by_field_name("name"):
                    out.append((node_text(ident), type_name))
        return out

    def return_type(self, node: Node) -> str:
        result = node.child_by_field_name("result")
        if result is not None and result.type == "parameter_list":  # (T, error): the first one
            first = result.named_children[0] if result.named_children else None
            return _type_name(first.child_by_field_name("type")) if first is not None else ""
        return _type_name(result)

    def value_type(self, value: Node | None) -> str:
        if (
            value is not None
            and value.type == "call_expression"
            and node_text(value.child_by_field_name("function")) == "new"
        ):
            args = value.child_by_field_name("arguments")
            return _type_name(args.named_children[0]) if args is not None and args.named_children else ""
        return super().value_type(value)

    def visit(self, node: Node, ctx: Context, stack: list[Scope]) -> bool:
        kind = node.type
        if kind == "import_spec":
            path = node.child_by_field_name("path")
            alias = node.child_by_field_name("name")
            module = node_text(path).strip('"`')
            ctx.out.imports.append(import_record(module, "", node_text(alias), path or node))
            return True
        if kind == "field_declaration" and stack[-1].kind == "struct":
            type_name = _type_name(node.child_by_field_name("type"))
            names = node.children_by_field_name("name")
            if not names and type_name:  # an embedded struct: its fields and methods are promoted
                ctx.out.bases.append(base_ref(stack, type_name, node))
            for ident in names:
                if type_name:
                    ctx.out.assignments.append(TypedName(stack[-1].id, f"self.{node_text(ident)}", type_name))
            return True
        if kind == "type_elem" and stack[-1].kind == "interface":  # an embedded interface
            for child in node.named_children:
                type_name = _type_name(child)
                if type_name:
                    ctx.out.bases.append(base_ref(stack, type_name, child))
            return True
        if kind == "short_var_declaration":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None and left.named_children and right.named_children:
                made = self.value_type(right.named_children[0])
                if made and left.named_children[0].type == "identifier":
                    ctx.out.assignments.append(TypedName(stack[-1].id, node_text(left.named_children[0]), made))
        elif kind == "var_spec":
            type_name = _type_name(node.child_by_field_name("type"))
            value = node.child_by_field_name("value")
            made = type_name or (
                self.value_type(value.named_children[0]) if value is not None and value.named_children else ""
            )
            if made:
                for ident in node.children_by_field_name("name"):
                    ctx.out.assignments.append(TypedName(stack[-1].id, node_text(ident), made))
        return False


LANGUAGE = Language(
    name="go",
    kind="code",
    extensions=(".go",),
    file_names=(),
    shebangs=(),
    test_names=r"_test\.go$",
    comment="//",
    import_line=lambda imp: f'import {imp.alias + " " if imp.alias else ""}"{imp.module}"',
    builtins=BUILTINS,
    extractor=GoExtractor,
    module_system=ModuleSystem.GO,
    package=lambda path, module: posixpath.dirname(path),
    package_scope=True,
    implicit_interfaces=True,
)
