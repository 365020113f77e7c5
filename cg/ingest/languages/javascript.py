"""JavaScript (ES modules and CommonJS): functions, arrow functions and function expressions bound to
names, classes and methods, exported constants; ``import``/``export`` (default, named, namespace,
re-exports) and ``require``; ``extends``. TypeScript extends this table (typescript.py)."""

from __future__ import annotations

import tree_sitter_javascript
from tree_sitter import Language as Grammar
from tree_sitter import Node

from cg.ingest.languages.base import (
    Context,
    Def,
    Scope,
    Spec,
    TreeSitterExtractor,
    base_ref,
    import_record,
    node_text,
    string_value,
)
from cg.ingest.languages.registry import Language, ModuleSystem
from cg.model import ImportRecord, TypedName

FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
# Globals and builtins a call may name without an import: an External, never an in-repo guess.
GLOBALS = frozenset(
    "console JSON Math Object Array Promise Number String Boolean Date Error TypeError RegExp Map Set WeakMap "
    "Symbol BigInt Reflect Proxy Intl URL URLSearchParams Buffer process require setTimeout setInterval "
    "clearTimeout clearInterval setImmediate parseInt parseFloat isNaN encodeURIComponent decodeURIComponent "
    "fetch structuredClone queueMicrotask globalThis window document module exports".split()
)

DEFINITIONS = {
    "function_declaration": Def("function"),
    "generator_function_declaration": Def("function"),
    "class_declaration": Def("class", container=True),
    "class": Def("class", container=True),
    "method_definition": Def("function"),
}
SPEC = Spec(
    name="javascript",
    language=Grammar(tree_sitter_javascript.language()),
    definitions=DEFINITIONS,
    # a JSX element renders its component: <InvoiceList /> calls InvoiceList (see JavaScriptExtractor.call)
    calls={
        "call_expression": "function",
        "new_expression": "constructor",
        "jsx_opening_element": "name",
        "jsx_self_closing_element": "name",
    },
    members={"member_expression": ("object", "property")},
    wrappers=frozenset({"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"}),
    attached=frozenset({"decorator"}),
    blocks=frozenset({"statement_block", "switch_body", "class_body"}),
    constructors=frozenset({"new_expression"}),
)


class JavaScriptExtractor(TreeSitterExtractor):
    spec = SPEC
    language = "javascript"

    def classify(self, node: Node, stack: list[Scope]) -> tuple[Def, Node | None] | None:
        if node.type == "variable_declarator":
            value = node.child_by_field_name("value")
            name = node.child_by_field_name("name")
            if name is None or name.type != "identifier":
                return None
            if value is not None and value.type in FUNCTION_VALUES:
                return Def("function"), name
            if value is not None and value.type == "class":
                return Def("class", container=True), name
            if stack and stack[-1].kind == "module" and _exported(node):
                return Def("constant", body=""), name
            return None
        if node.type in ("class", "function_expression") and node.child_by_field_name("name") is None:
            return None  # anonymous: its calls belong to the enclosing definition
        if node.type == "assignment_expression":
            # `exports.charge = function (...) {...}`, `res.send = function send(body) {...}`,
            # `Invoice.prototype.total = function () {...}` (a method of Invoice, see owner_type)
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and left.type == "member_expression" and right is not None:
                if right.type in FUNCTION_VALUES and stack and stack[-1].kind == "module":
                    return Def("function"), left.child_by_field_name("property")
            return None
        return super().classify(node, stack)

    def owner_type(self, node: Node, stack: list[Scope]) -> str:
        if node.type == "assignment_expression":
            obj = node.child_by_field_name("left")
            obj = obj.child_by_field_name("object") if obj is not None else None
            if obj is not None and obj.type == "member_expression" and node_text(obj).endswith(".prototype"):
                return node_text(obj.child_by_field_name("object"))
        return ""

    def call(self, node: Node, ctx: Context, stack: list[Scope]) -> None:
        if node.type.startswith("jsx_"):  # <li>, <button>: HTML elements, not components
            name = node.child_by_field_name("name")
            if name is None or not node_text(name)[:1].isupper():
                return
        super().call(node, ctx, stack)

    def body_of(self, node: Node, rule: Def) -> Node | None:
        if node.type in ("variable_declarator", "assignment_expression"):
            value = node.child_by_field_name("value") or node.child_by_field_name("right")
            if value is None or not rule.body:
                return None
            return value.child_by_field_name("body") or value
        return super().body_of(node, rule)

    def typed_params(self, node: Node) -> list[tuple[str, str]]:
        target = _function_node(node)
        params = target.child_by_field_name("parameters")
        out: list[tuple[str, str]] = []
        for param in params.named_children if params is not None else ():
            pattern = param.child_by_field_name("pattern")
            type_node = param.child_by_field_name("type")
            if pattern is not None and pattern.type == "identifier" and type_node is not None:
                out.append((node_text(pattern), self.type_expr(type_node)))
        return out

    def return_type(self, node: Node) -> str:
        return self.type_expr(_function_node(node).child_by_field_name("return_type"))

    def visit(self, node: Node, ctx: Context, stack: list[Scope]) -> bool:
        kind = node.type
        if kind == "import_statement":
            self.es_import(node, ctx)
            return True
        if kind == "export_statement":
            self.es_export(node, ctx)
            return False
        if kind == "class_heritage":
            self.heritage(node, ctx, stack)
            return False
        if kind == "variable_declarator":
            self.declarator(node, ctx, stack)
        elif kind in ("assignment_expression", "public_field_definition", "field_definition"):
            if kind == "assignment_expression":
                self.commonjs_export(node, ctx)
            self.member_type(node, ctx, stack)
        return False

    def commonjs_export(self, node: Node, ctx: Context) -> None:
        """``module.exports = View`` and ``module.exports = function query(...) {...}``: what a file's
        ``require`` returns, recorded as its default export (the function itself is named ``exports``
        by ``classify``), so ``new (require("./view"))(...)`` reaches View, not the file."""
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or node_text(left) != "module.exports":
            return
        if right.type == "identifier":
            ctx.out.exports.setdefault("default", node_text(right))
        elif right.type in FUNCTION_VALUES or right.type == "assignment_expression":
            ctx.out.exports.setdefault("default", "exports")

    # -- imports and exports -------------------------------------------------------------------
    def es_import(self, node: Node, ctx: Context) -> None:
        module = string_value(node.child_by_field_name("source"))
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if clause is None:  # `import "./polyfills"`
            ctx.out.imports.append(import_record(module, "", "", node))
            return
        for part in clause.named_children:
            if part.type == "identifier":
                ctx.out.imports.append(import_record(module, "default", node_text(part), part))
            elif part.type == "namespace_import":
                ident = next((c for c in part.named_children if c.type == "identifier"), part)
                ctx.out.imports.append(import_record(module, "", node_text(ident), ident))
            elif part.type == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier":
                        continue
                    name = spec.child_by_field_name("name")
                    alias = spec.child_by_field_name("alias")
                    ctx.out.imports.append(import_record(module, node_text(name), node_text(alias), name or spec))

    def es_export(self, node: Node, ctx: Context) -> None:
        source = node.child_by_field_name("source")
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        declaration = node.child_by_field_name("declaration")
        default = any(c.type == "default" for c in node.children)
        if source is not None:  # re-exports: `export { a as b } from "./x"`, `export * from "./x"`
            module = string_value(source)
            if clause is None:
                ctx.out.imports.append(import_record(module, "*", "", node))
                return
            for spec in clause.named_children:
                name = spec.child_by_field_name("name")
                alias = spec.child_by_field_name("alias")
                ctx.out.imports.append(import_record(module, node_text(name), node_text(alias), name or spec))
                ctx.out.exports[node_text(alias) or node_text(name)] = node_text(alias) or node_text(name)
            return
        if clause is not None:
            for spec in clause.named_children:
                exported = node_text(spec.child_by_field_name("name"))
                alias_text = node_text(spec.child_by_field_name("alias"))
                ctx.out.exports[alias_text or exported] = exported
            return
        if declaration is not None:
            name_node = declaration.child_by_field_name("name")
            names = [node_text(name_node)] if name_node is not None else []
            if declaration.type in ("lexical_declaration", "variable_declaration"):
                names = [node_text(d.child_by_field_name("name")) for d in declaration.named_children]
            for exported in names:
                ctx.out.exports["default" if default else exported] = exported
        elif default:  # `export default createApp;`
            value = next((c for c in node.named_children if c.type == "identifier"), None)
            if value is not None:
                ctx.out.exports["default"] = node_text(value)

    def declarator(self, node: Node, ctx: Context, stack: list[Scope]) -> None:
        """``const x = require("./m")``, ``const { a } = require("./m")``, ``const s = new Service()``."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None or value is None:
            return
        if value.type == "call_expression" and node_text(value.child_by_field_name("function")) == "require":
            args = value.child_by_field_name("arguments")
            target = args.named_children[0] if args is not None and args.named_children else None
            if target is None or target.type != "string":
                return
            module = string_value(target)
            if name.type == "identifier":
                ctx.out.imports.append(import_record(module, "", node_text(name), name))
            elif name.type == "object_pattern":
                for prop in name.named_children:
                    if prop.type == "shorthand_property_identifier_pattern":
                        ctx.out.imports.append(import_record(module, node_text(prop), "", prop))
                    elif prop.type == "pair_pattern":
                        key, alias = prop.child_by_field_name("key"), prop.child_by_field_name("value")
                        ctx.out.imports.append(import_record(module, node_text(key), node_text(alias), prop))
            return
        if name.type != "identifier":
            return
        stated = self.type_expr(node.child_by_field_name("type"))
        made = stated or self.value_type(value)
        if made:
            ctx.out.assignments.append(TypedName(stack[-1].id, node_text(name), made))

    def member_type(self, node: Node, ctx: Context, stack: list[Scope]) -> None:
        """``this.gateway = new StripeGateway()`` in a method, or a typed class field: the class's attribute."""
        owner = next((s for s in reversed(stack) if s.kind == "class"), None)
        if owner is None:
            return
        if node.type == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if (
                left is None
                or left.type != "member_expression"
                or node_text(left.child_by_field_name("object")) != "this"
            ):
                return
            attr = node_text(left.child_by_field_name("property"))
            made = self.value_type(right)
            if not made and right is not None and right.type == "identifier":
                made = _param_type(ctx, stack, node_text(right))
        else:
            attr = node_text(node.child_by_field_name("name") or node.child_by_field_name("property"))
            made = self.type_expr(node.child_by_field_name("type")) or self.value_type(
                node.child_by_field_name("value")
            )
        if attr and made:
            ctx.out.assignments.append(TypedName(owner.id, f"self.{attr}", made))

    def heritage(self, node: Node, ctx: Context, stack: list[Scope]) -> None:
        for part in node.named_children:
            if part.type in ("extends_clause", "implements_clause"):
                for value in part.named_children:
                    if value.type != "type_arguments":
                        ctx.out.bases.append(base_ref(stack, self.expr(value), value))
            elif part.type != "comment":
                ctx.out.bases.append(base_ref(stack, self.expr(part), part))


def _param_type(ctx: Context, stack: list[Scope], name: str) -> str:
    """The stated type of a parameter of the innermost function (``constructor(gateway: Gateway)``)."""
    for typed in reversed(ctx.out.assignments):
        if typed.scope_id == stack[-1].id and typed.name == name:
            return typed.type_expr
    return ""


def _function_node(node: Node) -> Node:
    """The function itself for ``const f = (...) => ...`` and ``exports.f = function (...) {...}``."""
    if node.type in ("variable_declarator", "assignment_expression"):
        return node.child_by_field_name("value") or node.child_by_field_name("right") or node
    return node


def _exported(declarator: Node) -> bool:
    parent = declarator.parent
    return parent is not None and parent.parent is not None and parent.parent.type == "export_statement"


def import_line(imp: ImportRecord) -> str:
    """``import { charge as pay } from "./billing"``, ``import * as billing from ...``, a default import."""
    return f'import {_binding(imp)} from "{imp.module}"'


def _binding(imp: ImportRecord) -> str:
    if imp.name == "default":
        return imp.alias
    if not imp.name:
        return f"* as {imp.alias}" if imp.alias else ""
    return "{ " + imp.name + (f" as {imp.alias}" if imp.alias else "") + " }"


LANGUAGE = Language(
    name="javascript",
    kind="code",
    extensions=(".js", ".jsx", ".mjs", ".cjs"),
    file_names=(),
    shebangs=("node", "nodejs", "bun"),
    test_names=r"\.(test|spec)\.[cm]?jsx?$",
    comment="//",
    import_line=import_line,
    builtins=GLOBALS,
    extractor=JavaScriptExtractor,
    module_system=ModuleSystem.ES,
)
