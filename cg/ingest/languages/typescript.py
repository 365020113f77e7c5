"""TypeScript and TSX: the JavaScript table plus interfaces, type aliases, enums, abstract classes,
method signatures, ``implements`` and interface ``extends``. Both grammars come from the
tree-sitter-typescript wheel; ``.tsx`` files use the TSX one."""

from __future__ import annotations

import tree_sitter_typescript
from tree_sitter import Language as Grammar
from tree_sitter import Node, Parser

from cg.ingest.languages.base import Context, Def, Scope, Spec, base_ref, node_text
from cg.ingest.languages.javascript import DEFINITIONS as JS_DEFINITIONS
from cg.ingest.languages.javascript import GLOBALS, JavaScriptExtractor, import_line
from cg.ingest.languages.javascript import SPEC as JS_SPEC
from cg.ingest.languages.registry import Language, ModuleSystem
from cg.model import FileExtraction, FileRecord, TypedName

DEFINITIONS = {
    **JS_DEFINITIONS,
    "abstract_class_declaration": Def("class", container=True),
    "interface_declaration": Def("interface", container=True),
    "type_alias_declaration": Def("type", body=""),
    "enum_declaration": Def("enum", container=True),
    "method_signature": Def("function", body=""),
    "abstract_method_signature": Def("function", body=""),
    "function_signature": Def("function", body=""),
    "internal_module": Def("namespace"),  # `namespace Billing { ... }`
}
SPEC = Spec(
    name="typescript",
    language=Grammar(tree_sitter_typescript.language_typescript()),
    definitions=DEFINITIONS,
    calls=JS_SPEC.calls,
    members=JS_SPEC.members,
    wrappers=JS_SPEC.wrappers | {"ambient_declaration"},
    attached=JS_SPEC.attached,
    blocks=JS_SPEC.blocks | {"interface_body", "enum_body"},
    constructors=JS_SPEC.constructors,
)
TSX = Grammar(tree_sitter_typescript.language_tsx())
CALLABLE_PROPERTY = Def("function", body="")  # an interface member whose type is a function
ALIAS_MEMBER = Def("method", body="")  # a callable member of the object type a type alias names


def _alias_member(node: Node) -> bool:
    """Whether a member signature sits in the object type a type alias names: its value, or a part
    of the intersection or parentheses that is its value."""
    holder = node.parent
    if holder is None or holder.type != "object_type":
        return False
    while holder.parent is not None and holder.parent.type in ("intersection_type", "parenthesized_type"):
        holder = holder.parent
    alias = holder.parent
    return alias is not None and alias.type == "type_alias_declaration" and alias.child_by_field_name("value") == holder


class TypeScriptExtractor(JavaScriptExtractor):
    spec = SPEC
    language = "typescript"

    def __init__(self) -> None:
        super().__init__()
        self._tsx = Parser(TSX)
        self._aliases_of: tuple[int, frozenset[str]] | None = None  # (root node id, function type aliases)

    def extract(self, record: FileRecord, source: bytes) -> FileExtraction:
        self._aliases_of = None  # a new tree may reuse a freed one's node ids
        if record.path.endswith(".tsx"):
            ts, self._parser = self._parser, self._tsx
            try:
                return super().extract(record, source)
            finally:
                self._parser = ts
        return super().extract(record, source)

    def classify(self, node: Node, stack: list[Scope]) -> tuple[Def, Node | None] | None:
        if node.type == "internal_module" and node.child_by_field_name("body") is None:
            return None
        if node.type in ("property_signature", "method_signature") and stack and stack[-1].kind == "type":
            # `type ResponsePromise = Promise<Response> & { json: <T>() => Promise<T>; text(): ... }`: the
            # object type a type alias names is an interface written another way (ky's public types
            # are), so its callable members are the alias's methods, as an interface's are, and a call
            # through a value of that type lands on them. Members of object types nested deeper (a
            # parameter's, a property's) belong to those anonymous types, not to the alias.
            if not _alias_member(node):
                return None
            if node.type == "property_signature" and not self._callable(node.child_by_field_name("type"), node):
                return None
            return ALIAS_MEMBER, node.child_by_field_name("name")
        if node.type == "property_signature":
            # `onPaid: (receipt: Receipt) => void`, `onError?: OnErrorFunction<...>`: a callable member
            # of an interface, as a method signature is (callbacks in options objects are declared so,
            # and the compiler names the property at a call through it). A property of any other type
            # is data, not a definition; a type alias is known callable when this file declares it so.
            parent = node.parent
            if not stack or stack[-1].kind != "interface" or parent is None or parent.type != "interface_body":
                return None  # a member of an object type nested in the interface is not the interface's
            if not self._callable(node.child_by_field_name("type"), node):
                return None
            return CALLABLE_PROPERTY, node.child_by_field_name("name")
        return super().classify(node, stack)

    def _callable(self, annotation: Node | None, at: Node) -> bool:
        if annotation is None or not annotation.named_children:
            return False
        return self._callable_type(annotation.named_children[0], at)

    def _callable_type(self, node: Node, at: Node) -> bool:
        if node.type == "function_type":
            return True
        if node.type == "parenthesized_type":
            return any(self._callable_type(child, at) for child in node.named_children)
        if node.type == "union_type":  # `Handler | undefined`: callable when set
            members = [c for c in node.named_children if node_text(c) not in ("undefined", "null")]
            return bool(members) and all(self._callable_type(c, at) for c in members)
        if node.type in ("type_identifier", "generic_type"):
            name = node.child_by_field_name("name") if node.type == "generic_type" else node
            return name is not None and node_text(name) in self._function_aliases(at)
        return False

    def _function_aliases(self, at: Node) -> frozenset[str]:
        """Names of the file's top-level type aliases of a function type (``type X = (...) => Y``)."""
        root = at
        while root.parent is not None:
            root = root.parent
        if self._aliases_of is not None and self._aliases_of[0] == root.id:
            return self._aliases_of[1]
        found = set()
        for child in root.named_children:
            declaration = child.child_by_field_name("declaration") if child.type == "export_statement" else child
            if declaration is not None and declaration.type == "type_alias_declaration":
                value, name = declaration.child_by_field_name("value"), declaration.child_by_field_name("name")
                if value is not None and name is not None and value.type == "function_type":
                    found.add(node_text(name))
        self._aliases_of = (root.id, frozenset(found))
        return self._aliases_of[1]

    def visit(self, node: Node, ctx: Context, stack: list[Scope]) -> bool:
        if node.type == "extends_type_clause":  # interface I extends J, K
            for value in node.named_children:
                ctx.out.bases.append(base_ref(stack, self.expr(value), value))
            return True
        if node.type == "required_parameter" and any(c.type == "accessibility_modifier" for c in node.children):
            # `constructor(private gateway: PaymentGateway)` declares a field too
            owner = next((s for s in reversed(stack) if s.kind == "class"), None)
            pattern, type_node = node.child_by_field_name("pattern"), node.child_by_field_name("type")
            if owner is not None and pattern is not None and type_node is not None:
                ctx.out.assignments.append(TypedName(owner.id, f"self.{node_text(pattern)}", self.type_expr(type_node)))
        return super().visit(node, ctx, stack)


LANGUAGE = Language(
    name="typescript",
    kind="code",
    extensions=(".ts", ".tsx", ".mts", ".cts"),
    file_names=(),
    shebangs=("deno", "ts-node", "tsx"),
    test_names=r"\.(test|spec)\.[cm]?tsx?$",
    comment="//",
    import_line=import_line,
    builtins=GLOBALS,
    extractor=TypeScriptExtractor,
    module_system=ModuleSystem.ES,
)
