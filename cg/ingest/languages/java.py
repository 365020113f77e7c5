"""Java: classes, interfaces, enums, records, annotation types, methods and constructors (an
overload gets ``~2``, ``~3`` in source order, its signature tells it apart); imports (single,
wildcard, static); ``extends``/``implements``. Qualnames start with the ``package``."""

from __future__ import annotations

import tree_sitter_java
from tree_sitter import Language as Grammar
from tree_sitter import Node

from cg.ingest.languages.base import Context, Def, Scope, Spec, TreeSitterExtractor, base_ref, import_record, node_text
from cg.ingest.languages.registry import Language, ModuleSystem
from cg.model import FileRecord, TypedName

# java.lang and common receivers that need no import: a call on them is a library call.
BUILTINS = frozenset(
    "System String Integer Long Double Float Boolean Character Byte Short Math Object Thread Runnable "
    "StringBuilder Objects Optional List Map Set Arrays Collections Exception RuntimeException "
    "IllegalArgumentException IllegalStateException".split()
)

SPEC = Spec(
    name="java",
    language=Grammar(tree_sitter_java.language()),
    definitions={
        "class_declaration": Def("class", container=True),
        "interface_declaration": Def("interface", container=True),
        "enum_declaration": Def("enum", container=True),
        "record_declaration": Def("class", container=True),
        "annotation_type_declaration": Def("interface", container=True),
        "method_declaration": Def("function"),
        "constructor_declaration": Def("function"),
        "compact_constructor_declaration": Def("function"),
    },
    calls={"method_invocation": "name", "object_creation_expression": "type"},
    members={"field_access": ("object", "field")},
    comments=frozenset({"line_comment", "block_comment"}),
    blocks=frozenset({"block", "constructor_body", "switch_block", "class_body", "interface_body", "enum_body"}),
    constructors=frozenset({"object_creation_expression"}),
)


def _type_name(node: Node | None) -> str:
    if node is None:
        return ""
    if node.type == "generic_type":
        node = node.named_children[0] if node.named_children else None
    if node is None or node.type not in ("type_identifier", "scoped_type_identifier"):
        return ""
    return node_text(node)


class JavaExtractor(TreeSitterExtractor):
    spec = SPEC
    language = "java"

    def module_of(self, record: FileRecord, root: Node) -> str:
        for child in root.named_children:
            if child.type == "package_declaration":
                name = next((c for c in child.named_children if c.type in ("scoped_identifier", "identifier")), None)
                return node_text(name)
        return ""

    def callee(self, node: Node) -> Node | None:
        if node.type == "method_invocation":
            return node  # the whole invocation: object and name, see expr
        return node.child_by_field_name("type")

    def expr_step(self, node: Node | None) -> str | tuple[Node | None, str]:
        if node is not None and node.type == "method_invocation":
            obj, name = node.child_by_field_name("object"), node_text(node.child_by_field_name("name"))
            return (obj, f".{name}") if obj is not None else name
        if node is not None and node.type == "generic_type":
            return (node.named_children[0] if node.named_children else None), ""
        return super().expr_step(node)

    def typed_params(self, node: Node) -> list[tuple[str, str]]:
        params = node.child_by_field_name("parameters")
        out = []
        for param in params.named_children if params is not None else ():
            type_name = _type_name(param.child_by_field_name("type"))
            name = param.child_by_field_name("name")
            if type_name and name is not None:
                out.append((node_text(name), type_name))
        return out

    def return_type(self, node: Node) -> str:
        return _type_name(node.child_by_field_name("type"))

    def visit(self, node: Node, ctx: Context, stack: list[Scope]) -> bool:
        kind = node.type
        if kind == "import_declaration":
            path = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
            dotted = node_text(path)
            if any(c.type == "asterisk" for c in node.named_children):
                ctx.out.imports.append(import_record(dotted, "*", "", node))
            else:
                module, _, name = dotted.rpartition(".")
                ctx.out.imports.append(import_record(module, name, "", path or node))
            return True
        if kind in ("superclass", "super_interfaces", "extends_interfaces"):
            for type_node in _types(node):
                ctx.out.bases.append(base_ref(stack, _type_name(type_node), type_node))
            return True
        if kind == "field_declaration" and stack[-1].kind in ("class", "enum"):
            self._declared(node, ctx, stack[-1].id, "self.")
            return False
        if kind == "local_variable_declaration":
            self._declared(node, ctx, stack[-1].id, "")
        return False

    def _declared(self, node: Node, ctx: Context, scope_id: str, prefix: str) -> None:
        stated = _type_name(node.child_by_field_name("type"))
        for declarator in node.children_by_field_name("declarator"):
            name = declarator.child_by_field_name("name")
            made = stated or self.value_type(declarator.child_by_field_name("value"))
            if name is not None and made:
                ctx.out.assignments.append(TypedName(scope_id, prefix + node_text(name), made))


def _types(node: Node) -> list[Node]:
    out: list[Node] = []
    for child in node.named_children:
        if child.type == "type_list":
            out.extend(child.named_children)
        elif child.type in ("type_identifier", "generic_type", "scoped_type_identifier"):
            out.append(child)
    return out


LANGUAGE = Language(
    name="java",
    kind="code",
    extensions=(".java",),
    file_names=(),
    shebangs=(),
    test_names=r"Tests?\.java$",
    comment="//",
    import_line=lambda imp: f"import {imp.module}.{imp.name}",
    builtins=BUILTINS,
    extractor=JavaExtractor,
    module_system=ModuleSystem.PACKAGES,
    package=lambda path, module: module,
    package_scope=True,
    implicit_this=True,
)
