"""The call graph as an adjacency map of fully-qualified dotted names, the format of the PyCG
call-graph benchmark: ``{"shop.payments.service.PaymentService.charge_invoice": ["shop.payments.retry
.schedule_payment_retry", "<builtin>.str", ...]}``. Module-level code is the module's own name.

Conventions: calling a class is an edge to the ``__init__`` that runs (nothing when no ``__init__``
is defined in the repository), never to the class itself. A decorator is called by the scope that runs
the ``def`` under it, the module or class body (or the enclosing function), never by the decorated
function: ``@router.route("/webhooks")`` above ``def stripe_webhook`` in ``shop.webhooks`` is an edge
``shop.webhooks -> shop.http.routes.Router.route`` (the graph keeps the link as a DECORATES edge, which
this map leaves out). A lambda is a definition of its own, a key named ``<enclosing>.<lambdaN>`` (N
counts the lambdas of the enclosing module, class, function or lambda from 1 in source order:
``shop.payments.service.PaymentService.cancel_pending_retries.<lambda1>``), and the calls in its body
are its own; calls in comprehensions and generator expressions stay with the enclosing definition.
Unresolved calls are left out (their expressions are not names). Every definition is a key, with an
empty list if it calls nothing. Library targets follow PyCG's names: builtins are ``<builtin>.len``, the
rest keep the import path the source used (``json.dumps``; the resolver names a library call by its
import, see cg/ingest/resolve/python.py). A ``dispatch`` edge (a base method's ``self.m()`` reaching a
subclass's ``m``) is a call that may run, and is listed like any other.
"""

from __future__ import annotations

from cg.config import Settings
from cg.ingest.pipeline import extract_repository, resolve_extractions
from cg.model import ResolvedBy


def external_name(dotted: str) -> str | None:
    """A library target as the published call-graph tools name it: a builtin called by its name is
    ``<builtin>.len``, anything else keeps its import path (``json.dumps``, ``requests.Session.get``).
    A method of a builtin object (``builtins.list.append``) is left out of this map, as those tools and
    benchmarks/callgraph/README.md do: it says nothing about the program's own flow (the graph keeps it)."""
    module, _, rest = dotted.partition(".")
    if module != "builtins" or not rest:
        return dotted
    return None if "." in rest else f"<builtin>.{rest}"


def build_callgraph(settings: Settings, include_external: bool = True) -> dict[str, list[str]]:
    extractions, _ = extract_repository(settings)
    extractions = [ex for ex in extractions if ex.file.kind != "config"]  # code only: a case's callgraph.json is data
    edges, _ = resolve_extractions(settings, extractions)
    symbols = {sym.id: sym for ex in extractions for sym in ex.symbols}
    graph: dict[str, set[str]] = {sym.qualname: set() for sym in symbols.values()}
    for edge in edges:
        if edge.type != "CALLS" or not ResolvedBy(edge.resolved_by).resolved:
            continue
        caller = symbols[edge.src].qualname
        if edge.dst_label == "Symbol":
            target = symbols[edge.dst]
            if target.kind == "class":
                continue  # the constructor edge (if any) stands for the instantiation
            graph[caller].add(target.qualname)
        elif include_external and (name := external_name(edge.dst)) is not None:
            graph[caller].add(name)
    return {caller: sorted(callees) for caller, callees in sorted(graph.items())}
