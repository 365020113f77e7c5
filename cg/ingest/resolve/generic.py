"""Name resolution for every code language but Python (which keeps jedi and cg/ingest/resolve/python.py).

A bare name is looked up in this order: the enclosing scopes (and, in Java, the members of the
enclosing class), the file's own top-level definitions, its imports, the same package or module
(a Go directory, a Java package), wildcard imports, the language's builtins, and last a name that is
unique among the repository's definitions in that language. A dotted callee (``this.gateway.charge``,
``s.store.Save``, ``billing.charge``, ``Invoice::new``) resolves its head the same way, or by a type
the source states (a parameter, a field, ``x := NewServer()``, ``new Foo()``), then walks members,
including inherited and embedded ones. Imports are followed to files: relative ES specifiers and
tsconfig ``paths``, Go import paths through ``go.mod``'s module path, Java packages, Rust
``crate::``/``self::``/``super::`` paths through the module tree.

What differs between languages is asked of the file's registry entry (cg/ingest/languages/registry.py),
never decided by its name: its module system, its package, whether a package shares names without an
import, whether members of the enclosing class or implicit interfaces count, its builtins.

Nothing is guessed: a name with several candidates and nothing to choose between them becomes an
``External`` edge with ``resolved_by='ambiguous'`` and the candidate count on the edge; a method call
on a receiver of unknown type stays unresolved (``res.json()`` is not the repo's one ``json``).
"""

from __future__ import annotations

import json
import posixpath
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from cg.ingest.languages.base import RETURN
from cg.ingest.languages.registry import Language, ModuleSystem, language_named
from cg.ingest.resolve.python import PUBLIC_RESOLUTION, EdgeSink
from cg.ingest.resolve.scip import PreciseResults
from cg.model import (
    CONTAINER_KINDS,
    BaseRef,
    CallSite,
    Edge,
    External,
    FileExtraction,
    ImportRecord,
    ResolvedBy,
    Symbol,
)

SELF_NAMES = frozenset({"this", "self", "Self"})
TYPE_KINDS = CONTAINER_KINDS | {"type"}
# Wrappers whose first type argument is what a value really is: Promise<Invoice> -> Invoice.
_WRAPPERS = frozenset(
    "Promise Option Optional Box Arc Rc RefCell Mutex Result Readonly Partial Awaited CompletableFuture".split()
)
_ES_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".jsx", ".mjs", ".cjs")
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")
# How many type questions (a stated type, a member of a type) may be open inside one another. Each
# opens a few Python frames, so this keeps type inference far below the interpreter's recursion
# limit however long a chain of `a2 := a1.Next()` a file holds; a real chain is a handful deep.
MAX_TYPE_DEPTH = 48
_MAX_PROJECT_FILE_BYTES = 1_000_000  # go.mod, tsconfig.json: far bigger is not one
# (resolved_by, confidence) on the edge, per internal step: the Python resolver's, plus these.
RESOLUTION: dict[str, tuple[ResolvedBy, float]] = {
    **PUBLIC_RESOLUTION,
    "type": (ResolvedBy.NAME, 0.8),  # through a stated type
    "package": (ResolvedBy.NAME, 0.85),  # another file of the package
    "unique": (ResolvedBy.UNIQUE, ResolvedBy.UNIQUE.confidence),
    "ambiguous": (ResolvedBy.AMBIGUOUS, ResolvedBy.AMBIGUOUS.confidence),
    "satisfies": (ResolvedBy.SATISFIES, ResolvedBy.SATISFIES.confidence),
    "scip": (ResolvedBy.SCIP, ResolvedBy.SCIP.confidence),
}
_NO_LANGUAGE = Language(
    name="",
    kind="code",
    extensions=(),
    file_names=(),
    shebangs=(),
    test_names="",
    comment="",
    import_line=None,
    builtins=frozenset(),
    extractor=None,
    module_system=ModuleSystem.NONE,
)


@dataclass(frozen=True)
class Target:
    id: str
    label: str  # Symbol | File | Package | External
    how: str
    symbol: Symbol | None = None
    files: tuple[str, ...] = ()  # a package's files (Go directory, Java package)
    candidates: int = 0
    constructor: int = 0  # a compiler's answer for `new C(...)`: the line of the constructor it runs


def scope_of(sym: Symbol) -> str:
    """``pkg/server.go::Server.Handle~2`` -> ``Server.Handle``."""
    return sym.id.split("::", 1)[1].split("~", 1)[0]


def _param_count(signature: str) -> int:
    """Top-level commas between the first parenthesis and its match (-1 when there is none)."""
    start = signature.find("(")
    if start < 0:
        return -1
    depth, count, seen = 0, 0, False
    for ch in signature[start:]:
        if ch in "(<[{":
            depth += 1
        elif ch in ")>]}":
            depth -= 1
            if depth == 0:
                break
        elif ch == "," and depth == 1:
            count += 1
        elif not ch.isspace() and depth >= 1:
            seen = True
    return count + 1 if seen else 0


class GenericResolver:
    def __init__(
        self, extractions: list[FileExtraction], repo: Path | None = None, precise: PreciseResults | None = None
    ) -> None:
        self.repo = repo
        self.precise = precise  # a compiler's answers by position (cg/ingest/resolve/scip.py), asked first
        self.at_def_line: dict[tuple[str, int], list[Symbol]] = {}  # (path, line of the name) -> definitions
        self.by_id: dict[str, Symbol] = {}
        self.language: dict[str, str] = {}  # path -> language
        self.facts: dict[str, Language] = {}  # path -> its language's registry entry
        self.module: dict[str, str] = {}  # path -> FileRecord.module
        self.children: dict[str, dict[str, list[Symbol]]] = {}
        self.members: dict[tuple[str, str], dict[str, list[Symbol]]] = {}  # (package, type scope) -> members
        self.types_in: dict[tuple[str, str], Symbol] = {}  # (package, type scope) -> the type
        self.top: dict[str, dict[str, list[Symbol]]] = {}  # path -> top-level name -> definitions
        self.package_files: dict[tuple[str, str], list[str]] = {}  # (language, package) -> files
        self.by_name: dict[tuple[str, str], list[Symbol]] = {}  # (language, name) -> top-level definitions
        self.method_names: dict[tuple[str, str], int] = {}  # (language, name) -> how many methods
        self.types: dict[str, dict[str, str]] = {}
        self.bases: dict[str, list[BaseRef]] = {}
        self.imports: dict[str, dict[str, ImportRecord]] = {}
        self.stars: dict[str, list[ImportRecord]] = {}
        self.exports: dict[str, dict[str, str]] = {}
        self.package_types: dict[str, Symbol] = {}  # PACKAGES: qualname -> type (a Java import names one)
        self.crate_modules: dict[tuple[str, str], str] = {}  # CRATES: (crate, module path) -> file
        for ex in extractions:
            path, lang = ex.file.path, ex.file.language
            facts = language_named(lang) or _NO_LANGUAGE
            self.language[path] = lang
            self.facts[path] = facts
            self.module[path] = ex.file.module
            self.package_files.setdefault((lang, self.package(path)), []).append(path)
            self.exports[path] = ex.exports
            if facts.module_path is not None:
                self.crate_modules[(self.package(path), ".".join(facts.module_path(path)))] = path
            for sym in ex.symbols:
                self.by_id[sym.id] = sym
                if sym.kind == "module":
                    continue
                if precise is not None:
                    self.at_def_line.setdefault((path, sym.def_line), []).append(sym)
                scope = scope_of(sym)
                owner = scope.rsplit(".", 1)[0] if "." in scope else ""
                if not (owner and sym.parent_id.endswith("::<module>")):  # not a method attached from afar
                    self.children.setdefault(sym.parent_id, {}).setdefault(sym.name, []).append(sym)
                if owner:
                    self.members.setdefault((self.package(path), owner), {}).setdefault(sym.name, []).append(sym)
                if sym.kind in TYPE_KINDS:
                    self.types_in.setdefault((self.package(path), scope), sym)
                    if facts.module_system is ModuleSystem.PACKAGES:
                        self.package_types.setdefault(sym.qualname, sym)
                if sym.kind == "method":
                    key = (lang, sym.name)
                    self.method_names[key] = self.method_names.get(key, 0) + 1
                elif not owner:
                    self.top.setdefault(path, {}).setdefault(sym.name, []).append(sym)
                    self.by_name.setdefault((lang, sym.name), []).append(sym)
            for typed in ex.assignments:
                self.types.setdefault(typed.scope_id, {}).setdefault(typed.name, typed.type_expr)
            table: dict[str, ImportRecord] = {}
            stars: list[ImportRecord] = []
            for imp in ex.imports:
                if imp.name == "*":
                    stars.append(imp)
                else:
                    table[imp.local_name] = imp
            self.imports[path] = table
            self.stars[path] = stars
        for ex in extractions:  # Rust impl blocks name their type; it may live in another file of the crate
            for base in ex.bases:
                class_id = base.class_id
                if class_id not in self.by_id:
                    found = self.types_in.get((self.package(ex.file.path), class_id.split("::", 1)[1]))
                    class_id = found.id if found is not None else class_id
                self.bases.setdefault(class_id, []).append(base)
        self.interfaces_with: dict[str, list[Symbol]] = {}  # method name -> implicit interfaces requiring it
        for (package, scope), sym in self.types_in.items():
            if sym.kind == "interface" and self.facts[sym.path].implicit_interfaces:
                for name in self.members.get((package, scope), {}):
                    self.interfaces_with.setdefault(name, []).append(sym)
        self.go_modules = self._go_modules(extractions)
        self.ts_paths = self._ts_paths(extractions)
        self._file_cache: dict[tuple[str, str], str | None] = {}
        # The type questions open right now: ("type", expression, scope id) and ("member", type id).
        # One asked again while open is a cycle (`let text = text.trim()`, a local shadowing the
        # package its parameter's type names, a type embedding itself): it has no answer.
        self._open: set[tuple[str, ...]] = set()

    # -- packages and project files --------------------------------------------------------------
    def package(self, path: str) -> str:
        """What a language calls one namespace across files: a Go directory, a Java package, a Rust
        crate (methods of a type may sit in any file of it); a file for TypeScript and JavaScript."""
        facts = self.facts.get(path)
        if facts is None or facts.package is None:
            return path
        return facts.package(path, self.module.get(path, ""))

    def _read(self, rel: str) -> str | None:
        """A project file the resolver reads beside the sources (go.mod, tsconfig.json): a regular file
        inside the repository and of a config file's size only, as the walk would take it; a FIFO, a
        link out of the tree or a giant is None, never a hang."""
        if self.repo is None:
            return None
        try:
            path = (self.repo / rel).resolve()
            if not path.is_relative_to(self.repo.resolve()):
                return None
            info = path.stat()
            if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_PROJECT_FILE_BYTES:
                return None
            return path.read_text("utf-8", "replace")
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop
            return None

    def _go_modules(self, extractions: list[FileExtraction]) -> list[tuple[str, str]]:
        """(module path, directory) from every go.mod above a Go file, longest directory first."""
        dirs = {posixpath.dirname(p) for p in self._files_of(extractions, ModuleSystem.GO)}
        candidates = {d for folder in dirs for d in _ancestors(folder)}
        found = []
        for directory in candidates:
            text = self._read(posixpath.join(directory, "go.mod") if directory else "go.mod")
            match = re.search(r"^module\s+(\S+)", text or "", re.M)
            if match:
                found.append((match.group(1).strip('"'), directory))
        return sorted(found, key=lambda item: -len(item[1]))

    def _files_of(self, extractions: list[FileExtraction], system: ModuleSystem) -> list[str]:
        return [ex.file.path for ex in extractions if self.facts[ex.file.path].module_system is system]

    def _ts_paths(self, extractions: list[FileExtraction]) -> list[tuple[str, str, list[str]]]:
        """tsconfig.json ``compilerOptions.paths``: (directory, pattern, replacements) per config."""
        dirs = {posixpath.dirname(p) for p in self._files_of(extractions, ModuleSystem.ES)}
        out = []
        for directory in {d for folder in dirs for d in _ancestors(folder)}:
            for name in ("tsconfig.json", "jsconfig.json"):
                text = self._read(posixpath.join(directory, name) if directory else name)
                if text is None:
                    continue
                try:
                    options = json.loads(_strip_json_comments(text)).get("compilerOptions", {})
                except (ValueError, AttributeError, RecursionError):  # not JSON, or nested too deep to read
                    continue
                base_url = options.get("baseUrl", ".") if isinstance(options, dict) else None
                paths = (options.get("paths") or {}) if isinstance(options, dict) else None
                if not isinstance(base_url, str) or not isinstance(paths, dict):  # not a tsconfig's shape
                    continue
                base = posixpath.normpath(posixpath.join(directory, base_url))
                for pattern, targets in paths.items():
                    if isinstance(targets, list):
                        out.append(
                            (directory, pattern, [posixpath.join(base, t) for t in targets if isinstance(t, str)])
                        )
        return sorted(out, key=lambda item: -len(item[0]))

    # -- imports ---------------------------------------------------------------------------------
    def es_file(self, importer: str, spec: str) -> str | None:
        """The repo file an ES specifier names: relative, or through tsconfig paths."""
        key = (importer, spec)
        if key in self._file_cache:
            return self._file_cache[key]
        bases: list[str] = []
        if spec.startswith("."):
            bases.append(posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec)))
        else:
            for directory, pattern, targets in self.ts_paths:
                if directory and not importer.startswith(directory + "/"):
                    continue
                prefix = pattern.rstrip("*")
                if (pattern.endswith("*") and spec.startswith(prefix)) or spec == pattern:
                    rest = spec[len(prefix) :] if pattern.endswith("*") else ""
                    bases.extend(posixpath.normpath(t.replace("*", rest)) for t in targets)
        found = None
        for base in bases:
            stem = re.sub(r"\.(js|mjs|cjs|jsx)$", "", base)  # TS sources import "./x.js" for x.ts
            for option in (base, *(stem + e for e in _ES_EXTENSIONS), *(f"{base}/index{e}" for e in _ES_EXTENSIONS)):
                if option in self.language:
                    found = option
                    break
            if found:
                break
        self._file_cache[key] = found
        return found

    def import_target(self, path: str, imp: ImportRecord, depth: int = 0) -> Target:
        system = self.facts[path].module_system
        if system is ModuleSystem.ES:
            return self._es_import(path, imp, depth)
        if system is ModuleSystem.GO:
            lang = self.language[path]
            directory = self.go_package(lang, imp.module)
            if directory is not None:
                return Target(directory, "Package", "import", files=tuple(self.package_files[(lang, directory)]))
            return Target(imp.module, "External", "import")
        if system is ModuleSystem.PACKAGES:
            return self._package_import(path, imp)
        if system is ModuleSystem.CRATES:
            return self._crate_import(path, imp)
        return Target(imp.module, "External", "import")

    def go_package(self, language: str, import_path: str) -> str | None:
        """The directory of ``language``'s files an import path names through go.mod."""
        for module, directory in self.go_modules:
            if import_path == module or import_path.startswith(module + "/"):
                rest = import_path[len(module) :].lstrip("/")
                package = posixpath.join(directory, rest) if directory else rest
                if (language, package) in self.package_files:
                    return package
        return None

    def _es_import(self, path: str, imp: ImportRecord, depth: int) -> Target:
        target = self.es_file(path, imp.module)
        if target is None:
            name = imp.name if imp.name not in ("", "default", "*") else ""
            return Target(f"{imp.module}.{name}" if name else imp.module, "External", "import")
        if not imp.name:
            return Target(target, "File", "import")
        found = self.es_export(target, imp.name, depth)
        return found or Target(target, "File", "import")

    def es_export(self, path: str, name: str, depth: int = 0) -> Target | None:
        """What ``path`` exports as ``name``: its own definition, or one it re-exports."""
        if depth > 5:
            return None
        local = self.exports.get(path, {}).get(name, name if name != "default" else "")
        found = self.top.get(path, {}).get(local) if local else None
        if found:
            return Target(found[0].id, "Symbol", "import", found[0])
        imp = self.imports.get(path, {}).get(local)
        if imp is not None:  # `export { charge } from "./charge"` or `import x ...; export { x }`
            return self._es_import(path, imp, depth + 1) if imp.name or imp.alias else None
        for star in self.stars.get(path, []):
            inner = self.es_file(path, star.module)
            found_star = self.es_export(inner, name, depth + 1) if inner else None
            if found_star is not None:
                return found_star
        return None

    def _package_import(self, path: str, imp: ImportRecord) -> Target:
        """A Java import: a type by its qualname, a static member of one, or ``package.*``."""
        if imp.name == "*":
            files = self.package_files.get((self.language[path], imp.module))
            if files:
                return Target(imp.module, "Package", "import", files=tuple(files))
            return Target(imp.module, "External", "import")
        dotted = f"{imp.module}.{imp.name}"
        found = self.package_types.get(dotted)
        if found is not None:
            return Target(found.id, "Symbol", "import", found)
        owner = self.package_types.get(imp.module)  # import static com.acme.Money.format
        if owner is not None:
            members = self.member(owner, imp.name)
            if members:
                return Target(members[0].id, "Symbol", "import", members[0])
        return Target(dotted, "External", "import")

    def _module_path(self, path: str) -> list[str]:
        """CRATES: the module path a file's place in its crate gives (``src/billing/mod.rs`` -> billing)."""
        module_path = self.facts[path].module_path
        return module_path(path) if module_path is not None else []

    def _crate_import(self, path: str, imp: ImportRecord) -> Target:
        """A Rust ``use`` path: crate::, self::, super::, or a module of the crate root (2015 style)."""
        parts = [p for p in imp.module.split("::") if p]
        full = [*parts, imp.name] if imp.name and imp.name != "*" else parts
        root = self.package(path)
        here = self._module_path(path)
        if path.rsplit("/", 1)[-1] not in ("mod.rs", "lib.rs", "main.rs"):
            parent_module = here[:-1]
        else:
            parent_module = here[:-1] if here else []
        if full and full[0] == "crate":
            module_parts = full[1:]
        elif full and full[0] == "self":
            module_parts = here + full[1:]
        elif full and full[0] == "super":
            module_parts = parent_module + full[1:]
            while module_parts[:1] == ["super"]:
                module_parts = parent_module[:-1] + module_parts[1:]
        elif full and (root, full[0]) in self.crate_modules or (root, ".".join(full[:1])) in self.crate_modules:
            module_parts = full  # `use billing::Invoice` from the crate root (2015 style)
        else:
            return Target(".".join(full), "External", "import")
        for cut in range(len(module_parts), -1, -1):  # longest module prefix that is a file
            file = self.crate_modules.get((root, ".".join(module_parts[:cut])))
            if file is None:
                continue
            rest = module_parts[cut:]
            if not rest:
                return Target(file, "File", "import")
            found = self.top.get(file, {}).get(rest[0])
            if found:
                target = Target(found[0].id, "Symbol", "import", found[0])
                return self.walk(target, rest[1:], None) or target
            break
        return Target(".".join(full), "External", "import")

    # -- types and members -----------------------------------------------------------------------
    def enclosing_type(self, sym: Symbol | None) -> Symbol | None:
        while sym is not None and sym.kind not in TYPE_KINDS:
            if sym.kind == "method":
                scope = scope_of(sym)
                owner = scope.rsplit(".", 1)[0] if "." in scope else ""
                return self.types_in.get((self.package(sym.path), owner)) or self.by_id.get(sym.parent_id)
            sym = self.by_id.get(sym.parent_id)
        return sym

    def direct_bases(self, cls: Symbol) -> list[Symbol]:
        out = []
        for base in self.bases.get(cls.id, []):
            found = self.resolve_type(base.expr, cls)
            if found is not None and found.id != cls.id:
                out.append(found)
        return out

    def member(self, cls: Symbol, name: str, skip_self: bool = False) -> list[Symbol]:
        """``name`` on the type ``cls``: its own members, else its bases', embedded types' and traits'."""
        key = ("member", cls.id)
        if key in self._open or len(self._open) >= MAX_TYPE_DEPTH:
            return []
        self._open.add(key)
        try:
            if not skip_self:
                own = self.members.get((self.package(cls.path), scope_of(cls)), {}).get(name)
                if own:
                    return own
            for base in self.direct_bases(cls):
                found = self.member(base, name)
                if found:
                    return found
            return []
        finally:
            self._open.discard(key)

    def resolve_type(self, type_expr: str, scope: Symbol) -> Symbol | None:
        """The in-repo type a type expression names, if it names exactly one."""
        target = self.type_target(type_expr, scope)
        return target.symbol if target is not None else None

    def type_target(self, type_expr: str, scope: Symbol) -> Target | None:
        """What a stated type names: an in-repo type (a Symbol target), or a library type an import or
        the builtins name (an External target, ``net/http.ResponseWriter``), else None. None too for
        a type that depends on itself or lies deeper than ``MAX_TYPE_DEPTH`` (see ``_open``)."""
        key = ("type", type_expr, scope.id)
        if key in self._open or len(self._open) >= MAX_TYPE_DEPTH:
            return None
        self._open.add(key)
        try:
            return self._type_target(type_expr, scope)
        finally:
            self._open.discard(key)

    def _type_target(self, type_expr: str, scope: Symbol) -> Target | None:
        expr = type_expr.strip()
        if expr.startswith("call:"):
            target = self.resolve_expr(expr[5:], scope)
            if target is None or target.symbol is None:
                return None
            if target.symbol.kind in TYPE_KINDS:
                return Target(target.symbol.id, "Symbol", "type", target.symbol)
            returned = self.types.get(target.symbol.id, {}).get(RETURN)
            return self.type_target(returned, target.symbol) if returned else None
        expr = re.sub(r"^(?:&\s*|\*|mut\s+|dyn\s+|impl\s+|const\s+|readonly\s+)+", "", expr)
        generic = re.match(r"^([\w.:$]+)\s*<(.*)>$", expr, re.S)
        if generic:
            head, args = generic.group(1), generic.group(2)
            if head.rsplit(".", 1)[-1].rsplit("::", 1)[-1] in _WRAPPERS:
                return self.type_target(_first_argument(args), scope)
            expr = head
        expr = re.sub(r"\[.*\]$", "", expr).replace("::", ".")
        if "|" in expr:
            options = [o.strip() for o in expr.split("|") if o.strip() not in ("null", "undefined", "")]
            return self.type_target(options[0], scope) if len(options) == 1 else None
        if not expr or any(not _IDENT.match(p) for p in expr.split(".")):
            return None
        if expr == "Self":
            found = self.enclosing_type(scope)
            return Target(found.id, "Symbol", "type", found) if found is not None else None
        target = self.resolve_dotted(expr.split("."), scope, types_only=True)
        if target is None:
            return None
        if target.symbol is not None and target.symbol.kind in TYPE_KINDS:
            return Target(target.symbol.id, "Symbol", "type", target.symbol)
        if target.label == "External" and target.how in ("import", "builtin"):
            return target
        return None

    def _typed(self, type_expr: str | None, scope: Symbol, rest: list[str], at: Symbol | None) -> Target | None:
        """Walk ``rest`` from the type ``type_expr`` names (in-repo or a library's)."""
        target = self.type_target(type_expr, scope) if type_expr else None
        return self.walk(target, rest, at) if target is not None else None

    def typed_name(self, name: str, scope: Symbol | None) -> tuple[str, Symbol] | None:
        """The stated type of a local, a parameter or (Java's implicit ``this.``) a field in scope."""
        current = scope
        implicit_this = scope is not None and self.facts.get(scope.path, _NO_LANGUAGE).implicit_this
        while current is not None:
            table = self.types.get(current.id, {})
            found = table.get(name)
            if found is None and implicit_this and current.kind in TYPE_KINDS:
                found = table.get(f"self.{name}")
            if found is not None:
                return found, current
            current = self.by_id.get(current.parent_id)
        return None

    # -- names -----------------------------------------------------------------------------------
    def resolve_name(self, name: str, scope: Symbol, types_only: bool = False) -> Target | None:
        path = scope.path
        lang = self.language.get(path, "")
        facts = self.facts.get(path, _NO_LANGUAGE)
        current: Symbol | None = scope
        while current is not None:
            # a type's name is never its constructor (Java's `JsonElement()` inside `JsonElement`)
            own = [s for s in self.children.get(current.id, {}).get(name, []) if not types_only or s.kind in TYPE_KINDS]
            if own and (current.kind not in TYPE_KINDS or facts.implicit_this):
                return Target(own[0].id, "Symbol", "scope", own[0])
            if current.kind in TYPE_KINDS and facts.implicit_this:  # implicit `this.` and inherited members
                inherited = [s for s in self.member(current, name) if not types_only or s.kind in TYPE_KINDS]
                if inherited:
                    return Target(inherited[0].id, "Symbol", "self", inherited[0])
            current = self.by_id.get(current.parent_id)
        found = self.top.get(path, {}).get(name)
        if found:
            return Target(found[0].id, "Symbol", "scope", found[0])
        imp = self.imports.get(path, {}).get(name)
        if imp is not None:
            return self.import_target(path, imp)
        if facts.package_scope:
            package = self.package(path)
            for other in self.package_files.get((lang, package), []):
                found = self.top.get(other, {}).get(name)
                if found:
                    return Target(found[0].id, "Symbol", "package", found[0])
        for star in self.stars.get(path, []):
            target = self.import_target(path, star)
            for file in target.files or ((target.id,) if target.label == "File" else ()):
                found = self.top.get(file, {}).get(name)
                if found:
                    return Target(found[0].id, "Symbol", "import", found[0])
            if facts.module_system is ModuleSystem.ES and target.label == "File":
                exported = self.es_export(target.id, name)
                if exported is not None:
                    return exported
        if facts.module_path is not None:  # a child module (`mod billing;` or src/billing/) or the crate root
            here = [] if name == "crate" else self._module_path(path)
            module_file = self.crate_modules.get(
                (self.package(path), ".".join([*here, name] if name != "crate" else []))
            )
            if module_file is not None:
                return Target(module_file, "File", "scope")
        if name in facts.builtins:
            return Target(name, "External", "builtin")
        candidates = [s for s in self.by_name.get((lang, name), []) if not types_only or s.kind in TYPE_KINDS]
        if len(candidates) == 1:
            return Target(candidates[0].id, "Symbol", "unique", candidates[0])
        if len(candidates) > 1:
            return Target(name, "External", "ambiguous", candidates=len(candidates))
        return None

    def resolve_dotted(self, parts: list[str], scope: Symbol, types_only: bool = False) -> Target | None:
        head, rest = parts[0], parts[1:]
        if head == "super" and not rest:  # `super(...)` in a constructor: the base's constructor
            cls = self.enclosing_type(scope)
            return self._super_call(cls) if cls is not None else None
        if head in SELF_NAMES or head == "super":
            cls = self.enclosing_type(scope)
            if cls is None or not rest:
                return Target(cls.id, "Symbol", "self", cls) if cls is not None and head != "super" else None
            found = self.member(cls, rest[0].removesuffix("()"), skip_self=head == "super")
            if found:
                return self.walk(Target(found[0].id, "Symbol", "self", found[0]), rest[1:], scope)
            return self._typed(self.types.get(cls.id, {}).get(f"self.{rest[0]}"), cls, rest[1:], scope)
        # a local's type, never in a type expression: `flag.FlagSet` names the package `flag` even
        # where a variable `flag` shadows it further down the function
        typed = self.typed_name(head, scope) if rest and not types_only else None
        if typed is not None and typed[1].kind != "module":
            return self._typed(typed[0], typed[1], rest, scope)
        target = self.resolve_name(head.removesuffix("()"), scope, types_only and not rest)
        if target is None and typed is not None:  # a typed module-level variable
            klass = self.resolve_type(typed[0], typed[1])
            target = Target(klass.id, "Symbol", "type", klass) if klass is not None else None
        if target is None or (target.how in ("ambiguous", "unique") and rest and target.symbol is None):
            return target if target is not None and not rest else None
        return self.walk(target, rest, scope)

    def _super_call(self, cls: Symbol) -> Target | None:
        """What ``super(...)`` in a constructor of ``cls`` runs: a base's own constructor; a base of the
        repository without one (its implicit constructor: the class, as ``new Base()`` is); a base from
        outside (``class TRPCError extends Error``) by the name its import or the language gives it."""
        bases = self.direct_bases(cls)
        for base in bases:
            found = self.member(base, "constructor") or self.member(base, base.name)
            if found:
                return Target(found[0].id, "Symbol", "self", found[0])
        if bases:
            return Target(bases[0].id, "Symbol", "self", bases[0])
        for written in self.bases.get(cls.id, []):
            name = written.expr.split("<", 1)[0].strip()
            if not name or name.split(".", 1)[0] == "super":
                continue
            named = self.resolve_dotted(name.split("."), cls)
            if named is not None and named.label == "External" and named.how not in ("ambiguous", "unresolved"):
                return named
        return None

    def walk(self, target: Target, rest: list[str], scope: Symbol | None) -> Target | None:
        for part in rest:
            attr = part.removesuffix("()")
            if target.label == "External":
                if target.how in ("ambiguous", "unresolved"):
                    return None
                target = Target(f"{target.id}.{part}", "External", target.how)
                continue
            if target.label in ("File", "Package"):
                files = target.files or (target.id,)
                found: list[Symbol] = []
                for file in files:
                    found = self.top.get(file, {}).get(attr) or []
                    if found:
                        break
                if not found and target.label == "File":
                    exported = self.es_export(target.id, attr)
                    if exported is not None:
                        target = exported
                        continue
                if not found:
                    return None
                target = Target(found[0].id, "Symbol", target.how, found[0])
                continue
            sym = target.symbol
            if sym is None:
                return None
            if sym.kind in ("function", "method") and part != attr:
                returned = self.types.get(sym.id, {}).get(RETURN)
                klass = self.resolve_type(returned, sym) if returned else None
                if klass is None:
                    return None
                sym = klass
            if sym.kind in TYPE_KINDS:
                members = self.member(sym, attr)
                if members:
                    target = Target(members[0].id, "Symbol", target.how, members[0])
                    continue
                typed = self.types.get(sym.id, {}).get(f"self.{attr}")
                attr_type = self.type_target(typed, sym) if typed else None
                if attr_type is None:
                    return None
                target = attr_type
                continue
            if sym.kind == "namespace":
                found = self.children.get(sym.id, {}).get(attr) or []
                if not found:
                    return None
                target = Target(found[0].id, "Symbol", target.how, found[0])
                continue
            return None
        return target

    def resolve_expr(self, expr: str, scope: Symbol) -> Target | None:
        parts = expr.split(".")
        if any(not _IDENT.match(p.removesuffix("()")) for p in parts):
            return None
        return self.resolve_dotted(parts, scope)

    def call_targets(self, call: CallSite, caller: Symbol) -> list[Target]:
        if call.via == "value":
            return [Target(call.callee, "External", "unresolved")]
        found = self.compiler_target(call, caller)
        if found is None:
            found = self.resolve_expr(call.callee, caller)
        if found is not None and found.label == "File":  # a required module called: what it exports runs
            found = self.es_export(found.id, "default")
        if found is None:
            lang = self.language.get(caller.path, "")
            name = call.callee.rsplit(".", 1)[-1]
            count = len(self.by_name.get((lang, name), [])) + self.method_names.get((lang, name), 0)
            return [Target(call.callee, "External", "unresolved", candidates=count)]
        if found.symbol is None:
            return [found]
        sym = found.symbol
        out = [found]
        if sym.kind in ("function", "method") and call.arity >= 0 and found.how != "scip":  # a compiler picks one
            overloads = [s for s in self.children.get(sym.parent_id, {}).get(sym.name, []) if s.kind == sym.kind]
            if len(overloads) > 1:  # Java overloads: the ones taking this many arguments
                fitting = [s for s in overloads if _param_count(s.signature) == call.arity] or overloads
                out = [Target(s.id, "Symbol", found.how, s) for s in fitting]
        if sym.kind == "class" and call.via == "new":  # `new Foo()` runs Foo's constructor too
            for name in ("constructor", sym.name):
                ctors = self.members.get((self.package(sym.path), scope_of(sym)), {}).get(name, [])
                named = [c for c in ctors if found.constructor and c.def_line == found.constructor]
                fitting = (
                    named or [c for c in ctors if call.arity < 0 or _param_count(c.signature) == call.arity] or ctors
                )
                out.extend(Target(c.id, "Symbol", found.how, c) for c in fitting[:1])
        return out

    def compiler_target(self, call: CallSite, caller: Symbol) -> Target | None:
        """The precise pass's answer at the call's last name, when there is one cg can use: a definition
        cg extracted at the line the compiler points to (its name matching), or a named external. A
        library call keeps the name the generic resolver gives it through the import (``axios.post``)
        when it has one, since that is how the rest of the graph names it. Where the compiler binds the
        name to several definitions (one function declared in two script files sharing the global
        scope) the call is ambiguous, as the generic resolver would say, not guessed. None leaves the
        site to the generic resolver (no answer there, or one naming a value cg has no node for)."""
        if self.precise is None:
            return None
        answers = self.precise.get(caller.path, call.line, call.column)
        if not answers:
            return None
        if len(answers) == 1 and answers[0].external:
            named = self.resolve_expr(call.callee, caller)
            if named is not None and named.label == "External" and named.how != "unresolved":
                return named
            return Target(answers[0].external, "External", "scip")
        name = call.callee.rsplit(".", 1)[-1]  # a local's answer has no name: it is the one called
        found: list[Symbol] = []
        for answer in answers:
            for sym in self.at_def_line.get((answer.path, answer.line), ()):
                if sym.name == (answer.name or name) and sym not in found:
                    found.append(sym)
        if len(found) != len(answers):  # a value cg has no node for, or an external among them
            return None
        if len(found) > 1:
            return Target(call.callee, "External", "ambiguous", candidates=len(found))
        return Target(found[0].id, "Symbol", "scip", found[0], constructor=answers[0].constructor)

    # -- edges -----------------------------------------------------------------------------------
    def edges(self, ex: FileExtraction) -> tuple[list[Edge], list[External]]:
        sink = EdgeSink(ex)
        path = ex.file.path

        def add(kind: str, src: str, src_label: str, target: Target, line: int) -> None:
            if target.label == "Package":  # a Go or Java package: each of its files
                for file in target.files:
                    add(kind, src, src_label, Target(file, "File", target.how), line)
                return
            how = RESOLUTION[target.how]
            sink.add(kind, src, src_label, target.id, target.label, line, how, candidates=target.candidates)

        for imp in ex.imports:
            add("IMPORTS", path, "File", self.import_target(path, imp), imp.line)
        for call in ex.calls:
            caller = self.by_id.get(call.caller_id)
            if caller is None:
                continue
            for target in self.call_targets(call, caller):
                add("CALLS", caller.id, "Symbol", target, call.line)
        for base in ex.bases:
            cls = self.by_id.get(base.class_id)
            if cls is None:
                found = self.types_in.get((self.package(path), base.class_id.split("::", 1)[1]))
                cls = found
            if cls is None:
                continue
            klass = self.resolve_type(base.expr, cls)
            if klass is not None and klass.id != cls.id:
                base_target = Target(klass.id, "Symbol", "type", klass)
            else:
                named = self.resolve_dotted(base.expr.split("."), cls, types_only=True) if _dotted(base.expr) else None
                external = named is not None and named.label == "External"
                base_target = named if named is not None and external else Target(base.expr, "External", "unresolved")
            add("INHERITS", cls.id, "Symbol", base_target, base.line)
        if self.facts.get(path, _NO_LANGUAGE).implicit_interfaces:
            for sym in ex.symbols:
                for interface in self.satisfied(sym):
                    target = Target(interface.id, "Symbol", "satisfies", interface)
                    add("INHERITS", sym.id, "Symbol", target, sym.def_line)
        return sink.result()

    def satisfied(self, sym: Symbol) -> list[Symbol]:
        """Go's implicit interfaces: the repository's interfaces whose every method ``sym`` has
        (its own methods, wherever declared in the package, and those promoted from embedded types)."""
        if sym.kind not in ("struct", "type"):
            return []
        own = self.members.get((self.package(sym.path), scope_of(sym)), {})
        out = []
        seen: set[str] = set()
        for name in own:
            for interface in self.interfaces_with.get(name, []):
                if interface.id in seen:
                    continue
                seen.add(interface.id)
                required = self.members.get((self.package(interface.path), scope_of(interface)), {})
                if required and all(m in own or self.member(sym, m) for m in required):
                    out.append(interface)
        return out


def _dotted(expr: str) -> bool:
    return all(_IDENT.match(p) for p in expr.split("."))


def _first_argument(args: str) -> str:
    depth = 0
    for i, ch in enumerate(args):
        if ch in "<([":
            depth += 1
        elif ch in ">)]":
            depth -= 1
        elif ch == "," and depth == 0:
            return args[:i].strip()
    return args.strip()


def _ancestors(directory: str) -> list[str]:
    out = [directory]
    while directory:
        directory = posixpath.dirname(directory)
        out.append(directory)
    return out


def _strip_json_comments(text: str) -> str:
    """tsconfig.json allows comments and trailing commas."""
    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
    return re.sub(r",(\s*[}\]])", r"\1", text)
