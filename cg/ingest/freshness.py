"""Which files an incremental run must redo: whether the saved state can be trusted at all, and which
unchanged files must be resolved again because a file they name changed (docs/freshness.md)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from cg.graph.store import SCHEMA_VERSION, StoreHandle
from cg.ingest.languages.base import module_code
from cg.ingest.languages.registry import resolved_by_python
from cg.ingest.resolve.python import BodyFacts, body_inputs
from cg.ingest.state import IndexState
from cg.model import FileExtraction


def trusted(state: IndexState | None, fingerprint: str, store: StoreHandle, embedding: str) -> bool:
    """The saved state describes what the store holds, built with the settings of this run: same
    fingerprint, same token as the store's (so no other run wrote it since), same embedding and schema."""
    return (
        state is not None
        and state.fingerprint == fingerprint
        and bool(state.token)
        and state.token == store.get_meta("state_token")
        and store.get_meta("model") == embedding
        and store.get_meta("schema") == SCHEMA_VERSION
    )


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def interface(ex: FileExtraction | None) -> dict[str, tuple]:
    """What other files can see of a file, keyed so that old and new versions compare: every
    definition (name, kind, signature, decorators), every typed name (module variables and
    attributes, with their type), every name it imports (a re-export to its importers) and every
    base class. The first element of each value is the name other files would write."""
    if ex is None:
        return {}
    out: dict[str, tuple] = {}
    for s in ex.symbols:
        if s.kind != "module":
            out[f"def {s.id}"] = (s.name, s.kind, s.signature, s.decorators, s.parent_id)
    for t in ex.assignments:
        out[f"var {t.scope_id} {t.name}"] = (t.name.removeprefix("self."), t.type_expr)
    for i in ex.imports:
        out[f"import {i.local_name}"] = (i.local_name, i.module, i.name, i.level)
    for name, local in ex.exports.items():
        out[f"export {name}"] = (name, local)
    for b in ex.bases:
        out[f"base {b.class_id} {b.expr}"] = (b.class_id.rsplit(".", 1)[-1].rsplit("::", 1)[-1], b.expr)
    return out


Bodies = Callable[[FileExtraction], Mapping[str, object]]  # ``affected``'s view of each definition's body


def texts(ex: FileExtraction) -> dict[str, str]:
    """Each definition's whole text: the view of a body jedi needs (it infers through any statement);
    a module's own code without its markers' line numbers."""
    return {s.id: module_code(s.text) if s.kind == "module" else s.text for s in ex.symbols}


def _bodies(ex: FileExtraction | None, body: Bodies | None) -> Mapping[str, object]:
    """``affected``'s view of each definition's body: ``body``'s, or the text."""
    if ex is None:
        return {}
    return (body or texts)(ex)


def _shared(ex: FileExtraction | None, view: Mapping[str, object]) -> dict[str, frozenset[tuple[str, ...]]]:
    """``BodyFacts.shared`` per definition of a Python file (none for other languages: their resolvers
    read no body); taken from ``view`` (``_bodies``'s) when it already holds the file's ``body_inputs``."""
    if ex is None or not resolved_by_python(ex.file.language):
        return {}
    inputs = view if all(isinstance(v, BodyFacts) for v in view.values()) else body_inputs(ex)
    return {sid: facts.shared() for sid, facts in inputs.items() if isinstance(facts, BodyFacts)}


def sites(ex: FileExtraction) -> list[set[str]]:
    """The identifiers of every expression resolution looks at: callees, imports, bases, property reads."""
    out = [set(_WORD.findall(c.callee)) for c in ex.calls]
    out += [set(_WORD.findall(f"{i.module} {i.name} {i.alias}")) for i in ex.imports]
    out += [set(_WORD.findall(b.expr)) for b in ex.bases]
    out += [{r.attr} for r in ex.attribute_reads]
    return out


def affected(
    state: IndexState,
    extractions: dict[str, FileExtraction],
    fresh: dict[str, FileExtraction],
    touched: set[str],
    body: Bodies | None = None,
) -> set[str]:
    """Unchanged files whose edges may change because of the ``touched`` files (changed, added or
    removed), found by comparing each touched file's old and new version:

    - a name whose definition, type, import or bases appeared, vanished or changed shape: every
      file that writes that name is re-resolved (a renamed function must lose its callers' edges, a
      new one must gain them, a dropped re-export must break its importers');
    - a definition that vanished or whose body changed: every file with an edge into it is
      re-resolved (jedi infers through bodies: what ``make()`` returns decides what ``make().run()``
      calls), as is every file with an edge into a removed file;
    - a decorator whose body changed: every file that names a definition it decorates (calling
      ``charge_card`` runs whatever ``@retry_on_decline`` returned);
    - a body that now fills a container, writes a registry or stores an attribute differently
      (``hooks.listeners.append(AuditLog())``): every file that writes that attribute
      (``.listeners``), since a loop over ``self.listeners`` elsewhere dispatches to what was
      appended without any edge into the changed definition (``BodyFacts.shared``).

    A body-only edit thus costs its callers, not every file that imports the module. ``body`` says
    what of each definition's body counts (its whole text when None, as jedi needs; the name
    resolver's facts, ``cg.ingest.resolve.python.body_inputs``, without it), so with the name resolver
    an edit that keeps a body's facts costs no caller. See docs/freshness.md for what this leaves out
    and why."""
    names: set[str] = set()
    targets: set[str] = set()
    shared: set[str] = set()  # attributes a changed body fills or stores (``BodyFacts.shared``)
    for path in touched:
        before = state.files[path].extraction if path in state.files else None
        after = fresh.get(path)
        if before is None and after is None:  # a document: nothing resolves against it
            continue
        old, new = interface(before), interface(after)
        names.update(old[k][0] for k in old if new.get(k) != old[k])
        names.update(new[k][0] for k in new if old.get(k) != new[k])
        either = after if before is None else before
        if (before is None or after is None) and either is not None:  # a module appeared or vanished
            names.add((either.file.module or path).rsplit(".", 1)[-1])
            targets.add(path)
        old_text = _bodies(before, body)
        new_text = _bodies(after, body)
        targets.update(sid for sid, text in old_text.items() if new_text.get(sid) != text)
        old_shared, new_shared = _shared(before, old_text), _shared(after, new_text)
        for sid in old_shared.keys() | new_shared.keys():
            facts = old_shared.get(sid, frozenset()) ^ new_shared.get(sid, frozenset())
            shared.update(fact[0] for fact in facts)
    # a changed decorator changes what calling the definitions it decorates runs (the wrapper it
    # returns, or the function itself): their callers name only the decorated function, so its name
    # counts as changed wherever a DECORATES edge leads from a changed definition
    if targets:
        for entry in state.files.values():
            for e in entry.edges:
                if e.src in targets and e.type == "DECORATES":
                    names.add(e.dst.rsplit("::", 1)[-1].rsplit("~", 1)[0].rsplit(".", 1)[-1])
    names.discard("")
    written = re.compile(r"\.(?:" + "|".join(sorted(map(re.escape, shared))) + r")\b") if shared else None
    # a target is a definition's id or a whole file's path (a module that appeared or vanished); an
    # edge leads into a file when its end's id starts with the path and "::"
    files = {t for t in targets if "::" not in t}
    out: set[str] = set()
    for path, ex in extractions.items():
        if path in touched or path not in state.files:
            continue
        edges = state.files[path].edges if targets else []  # no target: no file's 218k edges to scan (Django)
        if any(e.dst in targets for e in edges) or (files and any(e.dst.split("::", 1)[0] in files for e in edges)):
            out.add(path)
        elif names and any(words & names for words in sites(ex)):  # no name changed: a body edit
            out.add(path)
        elif written is not None and any(written.search(s.text) for s in ex.symbols):
            out.add(path)  # it reads an attribute the changed body fills: what it dispatches to may change
    return out
