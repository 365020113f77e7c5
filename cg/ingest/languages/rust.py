"""Rust: functions, structs, enums, unions, traits (with their method signatures and defaults), type
aliases, consts and statics, inline ``mod`` blocks, and ``impl`` blocks whose methods are attached
to their type (``src/client.rs::Client.send``); ``use`` trees (the resolver follows ``crate::``,
``self::`` and ``super::`` through the module tree the file layout gives); ``impl Trait for Type``
as inheritance. Qualnames follow the module path: ``billing.invoice.Invoice.total``."""

from __future__ import annotations

import posixpath

import tree_sitter_rust
from tree_sitter import Language as Grammar
from tree_sitter import Node

from cg.ingest.languages.base import Context, Def, Scope, Spec, TreeSitterExtractor, import_record, node_text
from cg.ingest.languages.registry import Language, ModuleSystem
from cg.model import BaseRef, FileRecord, TypedName

# The prelude and std macros-as-functions a call may name without a `use`.
BUILTINS = frozenset(
    "Some None Ok Err Box Vec String Option Result drop Default Clone Into From std core alloc".split()
)

SPEC = Spec(
    name="rust",
    language=Grammar(tree_sitter_rust.language()),
    definitions={
        "function_item": Def("function"),
        "function_signature_item": Def("function", body=""),
        "struct_item": Def("struct", container=True),
        "enum_item": Def("enum", container=True),
        "union_item": Def("struct", container=True),
        "trait_item": Def("trait", container=True),
        "type_item": Def("type", body=""),
        "const_item": Def("constant", body=""),
        "static_item": Def("constant", body=""),
        "mod_item": Def("namespace"),
        "macro_definition": Def("function", body=""),
    },
    calls={"call_expression": "function"},
    members={"field_expression": ("value", "field")},
    comments=frozenset({"line_comment", "block_comment"}),
    attached=frozenset({"attribute_item"}),
    blocks=frozenset({"block", "match_block", "declaration_list"}),
)


def crate_module(path: str) -> list[str]:
    """The module path a file's location gives, below the crate root (the folder holding ``src/``):
    ``cli/src/billing/invoice.rs`` -> ``["billing", "invoice"]``; ``lib.rs``, ``main.rs`` and
    ``mod.rs`` name their folder."""
    parts = path.split("/")
    if "src" in parts:
        parts = parts[len(parts) - parts[::-1].index("src") :]
    stem = parts[-1].rsplit(".", 1)[0] if parts else ""
    parts = parts[:-1] + ([] if stem in ("mod", "lib", "main") else [stem])
    return [p for p in parts if p]


def crate_root(path: str) -> str:
    """The folder a Rust file's crate is rooted in: its last ``src/`` folder (else the file's folder)."""
    parts = path.split("/")
    if "src" in parts[:-1]:
        cut = len(parts) - 1 - parts[:-1][::-1].index("src")
        return "/".join(parts[:cut])
    return posixpath.dirname(path)


def _type_name(node: Node | None) -> str:
    while node is not None and node.type in (
        "reference_type",
        "generic_type",
        "pointer_type",
        "dynamic_type",
        "abstract_type",
    ):
        inner = node.child_by_field_name("type") or node.child_by_field_name("trait")
        node = inner or (node.named_children[-1] if node.named_children else None)
    if node is None:
        return ""
    if node.type == "scoped_type_identifier":
        path = node.child_by_field_name("path")
        return f"{node_text(path).replace('::', '.')}.{node_text(node.child_by_field_name('name'))}"
    return node_text(node) if node.type in ("type_identifier", "primitive_type") else ""


class RustExtractor(TreeSitterExtractor):
    spec = SPEC
    language = "rust"

    def module_of(self, record: FileRecord, root: Node) -> str:
        return ".".join(crate_module(record.path))

    def classify(self, node: Node, stack: list[Scope]) -> tuple[Def, Node | None] | None:
        if node.type == "mod_item" and node.child_by_field_name("body") is None:
            return None  # `mod billing;`: the module is another file
        return super().classify(node, stack)

    def owner_type(self, node: Node, stack: list[Scope]) -> str:
        impl = node.parent.parent if node.parent is not None else None
        if node.type in ("function_item", "function_signature_item", "const_item", "type_item") and impl is not None:
            if impl.type == "impl_item":
                return _type_name(impl.child_by_field_name("type"))
        return ""

    def expr(self, node: Node | None) -> str:
        return super().expr(node).replace("::", ".")

    def typed_params(self, node: Node) -> list[tuple[str, str]]:
        params = node.child_by_field_name("parameters")
        out = []
        for param in params.named_children if params is not None else ():
            if param.type == "self_parameter":
                continue
            pattern = param.child_by_field_name("pattern")
            type_name = _type_name(param.child_by_field_name("type"))
            if pattern is not None and pattern.type == "identifier" and type_name:
                out.append((node_text(pattern), type_name))
        return out

    def return_type(self, node: Node) -> str:
        return _type_name(node.child_by_field_name("return_type"))

    def visit(self, node: Node, ctx: Context, stack: list[Scope]) -> bool:
        kind = node.type
        if kind == "use_declaration":
            argument = node.child_by_field_name("argument")
            if argument is not None:
                self._use(argument, ctx)
            return True
        if kind == "impl_item":
            trait = node.child_by_field_name("trait")
            type_name = _type_name(node.child_by_field_name("type"))
            if trait is not None and type_name:
                line, column = trait.start_point[0] + 1, trait.start_point[1]
                path = ctx.record.path
                ctx.out.bases.append(
                    BaseRef(f"{path}::{type_name}", _type_name(trait) or self.expr(trait), line, column)
                )
            return False
        if kind == "field_declaration" and stack[-1].kind == "struct":
            name, type_name = node.child_by_field_name("name"), _type_name(node.child_by_field_name("type"))
            if name is not None and type_name:
                ctx.out.assignments.append(TypedName(stack[-1].id, f"self.{node_text(name)}", type_name))
            return True
        if kind == "let_declaration":
            pattern = node.child_by_field_name("pattern")
            made = _type_name(node.child_by_field_name("type")) or self.value_type(node.child_by_field_name("value"))
            if pattern is not None and pattern.type == "identifier" and made:
                ctx.out.assignments.append(TypedName(stack[-1].id, node_text(pattern), made))
        return False

    def value_inner(self, value: Node) -> Node | None:
        if value.type == "try_expression" and value.named_children:  # `Client::new()?`
            return value.named_children[0]
        return super().value_inner(value)

    def _use(self, tree: Node, ctx: Context) -> None:
        """One ``use`` tree -> one ImportRecord per name: module is the ``::`` path, name the item.
        Iterative, in source order: braces nested thousands deep need no Python stack."""
        pending: list[tuple[Node, str]] = [(tree, "")]
        while pending:
            node, prefix = pending.pop()
            kind = node.type
            if kind == "self" and prefix:  # `use billing::{self, Invoice}` binds `billing`
                module, _, name = prefix.rpartition("::")
                ctx.out.imports.append(import_record(module, name, "", node))
            elif kind in ("scoped_identifier", "identifier", "crate", "self", "super"):
                module, _, name = _join(prefix, node_text(node)).rpartition("::")
                ctx.out.imports.append(import_record(module, name, "", node))
            elif kind == "use_as_clause":
                module, _, name = _join(prefix, node_text(node.child_by_field_name("path"))).rpartition("::")
                ctx.out.imports.append(import_record(module, name, node_text(node.child_by_field_name("alias")), node))
            elif kind == "use_wildcard":
                path = node.named_children[0] if node.named_children else None
                ctx.out.imports.append(import_record(_join(prefix, node_text(path)), "*", "", node))
            elif kind == "scoped_use_list":
                path = node.child_by_field_name("path")
                inner = _join(prefix, node_text(path)) if path is not None else prefix
                items = (node.child_by_field_name("list") or node).named_children
                pending.extend((child, inner) for child in reversed(items))
            elif kind == "use_list":
                pending.extend((child, prefix) for child in reversed(node.named_children))


def _join(prefix: str, part: str) -> str:
    return f"{prefix}::{part}" if prefix and part else prefix or part


LANGUAGE = Language(
    name="rust",
    kind="code",
    extensions=(".rs",),
    file_names=(),
    shebangs=(),
    test_names="",  # integration tests live in tests/, unit tests inside the file they test
    comment="//",
    import_line=lambda imp: f"use {imp.module}::{imp.name}" + (f" as {imp.alias}" if imp.alias else ""),
    builtins=BUILTINS,
    extractor=RustExtractor,
    module_system=ModuleSystem.CRATES,
    package=lambda path, module: crate_root(path),
    module_path=crate_module,
)
