"""What a Python definition's own source says about the functions that flow through it: its
decorators as expressions, its parameters, and the names its ``return`` statements hand back.

The resolver (cg/ingest/resolve/python.py) uses these facts to follow decorators, the one place where
a function value flows that jedi does not see: ``@logged def charge`` passes ``charge`` to
``logged``'s parameter, and ``logged`` returns its nested ``wrapper``; a call of ``charge`` then runs
``wrapper``, and ``wrapper``'s call of the parameter runs ``charge``. The source is parsed with the
standard ``ast`` module (a definition's text is already at hand, and ``ast`` is the reference parser
for what a decorator or a return statement is); nothing is imported or run.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

_DEF = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_Node = TypeVar("_Node", bound=ast.AST)


@dataclass(frozen=True)
class Decorator:
    """One ``@...`` line: the expression naming the decorator (``logged``, ``app.route``) and whether
    it is a factory call (``@retry(times=3)``: the call's result decorates)."""

    expr: str
    factory: bool


@dataclass(frozen=True)
class DefinitionFacts:
    decorators: tuple[Decorator, ...]
    parameters: tuple[str, ...]  # positional and keyword parameter names, in order
    returned: frozenset[str]  # bare names in the definition's own return statements
    returns_parameter: bool  # some return statement hands back a parameter as it came
    # parameter -> attribute of the first parameter it is stored in (``self.fn = fn`` in a class
    # decorator's ``__init__``: its ``__call__`` runs the function as ``self.fn``)
    stored: tuple[tuple[str, str], ...] = ()
    # parameter -> the container it is stored into under a key (``ROUTES[path] = view``,
    # ``self.routes[path] = view``): a registry, whose entries are called later (``ROUTES[path]()``)
    registered: tuple[tuple[str, str], ...] = ()


@lru_cache(maxsize=4096)
def definition_facts(text: str) -> DefinitionFacts | None:
    """The facts of the first definition in ``text`` (a Symbol's text: decorators, leading comment
    and body), or None when it does not parse on its own."""
    try:
        tree = ast.parse(textwrap.dedent(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    node = next((n for n in tree.body if isinstance(n, _DEF)), None)
    if node is None:
        return None
    decorators = []
    for dec in node.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Name | ast.Attribute):
            decorators.append(Decorator(ast.unparse(target), isinstance(dec, ast.Call)))
    if isinstance(node, ast.ClassDef):
        return DefinitionFacts(tuple(decorators), (), frozenset(), False)
    args = node.args
    parameters = tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
    returned: set[str] = set()
    returns_parameter = False
    for ret in _own(node, ast.Return):
        if ret.value is None:
            continue
        if isinstance(ret.value, ast.Name) and ret.value.id in parameters:
            returns_parameter = True
        returned.update(n.id for n in ast.walk(ret.value) if isinstance(n, ast.Name))
    return DefinitionFacts(
        tuple(decorators),
        parameters,
        frozenset(returned),
        returns_parameter,
        _stored(node, parameters),
        _registered(node, parameters),
    )


def _registered(node: ast.AST, parameters: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``<container>[<key>] = <parameter>`` statements of ``node``'s own body, as (parameter, container)
    with the container a name or a dotted attribute (``ROUTES``, ``self.routes``)."""
    out: list[tuple[str, str]] = []
    for statement in _own(node, ast.Assign):
        value = statement.value
        if not isinstance(value, ast.Name) or value.id not in parameters:
            continue
        for target in statement.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name | ast.Attribute):
                container = ast.unparse(target.value)
                if all(part.isidentifier() for part in container.split(".")):
                    out.append((value.id, container))
    return tuple(out)


def _stored(node: ast.AST, parameters: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """``self.<attr> = <parameter>`` statements of ``node``'s own body, as (parameter, attribute)."""
    if not parameters:
        return ()
    out: list[tuple[str, str]] = []
    for statement in _own(node, ast.Assign):
        value = statement.value
        if not isinstance(value, ast.Name) or value.id not in parameters[1:]:
            continue
        for target in statement.targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == parameters[0]
            ):
                out.append((value.id, target.attr))
    return tuple(out)


def _own(node: ast.AST, kind: type[_Node]) -> list[_Node]:
    """The ``kind`` nodes of ``node`` itself (its return or assignment statements), not of the
    definitions nested in it."""
    out: list[_Node] = []
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        if isinstance(child, kind):
            out.append(child)
        if not isinstance(child, (*_DEF, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(child))
    return out
