"""pyan3's call edges for one package as JSON, run by benchmarks/executed_edges.py inside pyan3's own venv.

    python pyan_edges.py ROOT OUT FILE...   # ROOT: the directory the package is imported from

pyan3 has no JSON output, so this reads its analyzer's ``uses`` edges directly (its command line
offers only drawings). Names follow `cg callgraph`'s convention: pyan's node names are already dotted
module + qualified name. Calling a class is the edge to its ``__init__`` when pyan knows that method
(cg's and PyCG's convention); edges to anything that is not a module, function, method or class
(attributes, names pyan could not place) are left out, as a call graph has no such targets.
"""

from __future__ import annotations

import json
import sys

from pyan.analyzer import CallGraphVisitor  # pyan3's own venv only
from pyan.node import Flavor

CALLERS = {Flavor.MODULE, Flavor.CLASS, Flavor.FUNCTION, Flavor.METHOD, Flavor.STATICMETHOD, Flavor.CLASSMETHOD}
CALLABLES = {Flavor.FUNCTION, Flavor.METHOD, Flavor.STATICMETHOD, Flavor.CLASSMETHOD}


def main() -> None:
    root, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    visitor = CallGraphVisitor(files, root=root)
    names = {node.get_name() for nodes in visitor.nodes.values() for node in nodes if node.defined}
    edges = set()
    for caller, callees in visitor.uses_edges.items():
        if not caller.defined or caller.flavor not in CALLERS:
            continue
        for callee in callees:
            if not callee.defined:
                continue
            if callee.flavor in CALLABLES:
                edges.add((caller.get_name(), callee.get_name()))
            elif callee.flavor == Flavor.CLASS and f"{callee.get_name()}.__init__" in names:
                edges.add((caller.get_name(), f"{callee.get_name()}.__init__"))
    with open(out, "w") as f:
        json.dump(sorted(edges), f)


if __name__ == "__main__":
    main()
