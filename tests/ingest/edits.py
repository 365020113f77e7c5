"""Edits a developer makes to a Python tree, applied to a copy of examples/shop: add, delete, rename
or move a function, change a body, change an import, add or delete a file. Each edit is chosen by
an integer seed so hypothesis can generate and shrink sequences of them; each returns a one-line
description for the failure message."""

from __future__ import annotations

import ast
import random
from pathlib import Path


def _modules(repo: Path) -> list[Path]:
    return sorted(p for p in repo.rglob("*.py") if ".cg" not in p.parts)


def _functions(path: Path) -> list[ast.FunctionDef]:
    try:
        tree = ast.parse(path.read_text("utf-8"))
    except SyntaxError:
        return []
    return [n for n in tree.body if isinstance(n, ast.FunctionDef)]


def _span(fn: ast.FunctionDef) -> tuple[int, int]:
    start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    return start, fn.end_lineno or fn.lineno


def _pick_function(repo: Path, rng: random.Random) -> tuple[Path, ast.FunctionDef] | None:
    choices = [(p, fn) for p in _modules(repo) for fn in _functions(p)]
    return rng.choice(choices) if choices else None


def _cut(path: Path, fn: ast.FunctionDef) -> str:
    lines = path.read_text("utf-8").splitlines(keepends=True)
    start, end = _span(fn)
    removed = "".join(lines[start - 1 : end])
    path.write_text("".join(lines[: start - 1] + lines[end:]), "utf-8")
    return removed


def add_function(repo: Path, rng: random.Random) -> str:
    target = rng.choice(_modules(repo))
    callee = _pick_function(repo, rng)
    name = f"reconcile_ledger_{rng.randrange(1000)}"
    call = f"{callee[1].name}" if callee and callee[0] == target else "len"
    target.write_text(
        target.read_text("utf-8")
        + f'\n\ndef {name}(entries):\n    """Sum what the ledger owes."""\n    return {call}(entries)\n',
        "utf-8",
    )
    return f"add {name} to {target.relative_to(repo)} calling {call}"


def delete_function(repo: Path, rng: random.Random) -> str:
    picked = _pick_function(repo, rng)
    if picked is None:
        return "delete: nothing to delete"
    path, fn = picked
    _cut(path, fn)
    return f"delete {fn.name} from {path.relative_to(repo)}"


def rename_function(repo: Path, rng: random.Random) -> str:
    """Renames the definition only: its callers now name something that does not exist."""
    picked = _pick_function(repo, rng)
    if picked is None:
        return "rename: nothing to rename"
    path, fn = picked
    lines = path.read_text("utf-8").splitlines(keepends=True)
    new = f"{fn.name}_v2"
    lines[fn.lineno - 1] = lines[fn.lineno - 1].replace(f"def {fn.name}(", f"def {new}(", 1)
    path.write_text("".join(lines), "utf-8")
    return f"rename {fn.name} -> {new} in {path.relative_to(repo)}"


def move_function(repo: Path, rng: random.Random) -> str:
    picked = _pick_function(repo, rng)
    if picked is None:
        return "move: nothing to move"
    path, fn = picked
    others = [p for p in _modules(repo) if p != path]
    target = rng.choice(others)
    text = _cut(path, fn)
    target.write_text(target.read_text("utf-8") + "\n\n" + text, "utf-8")
    return f"move {fn.name} from {path.relative_to(repo)} to {target.relative_to(repo)}"


def change_body(repo: Path, rng: random.Random) -> str:
    picked = _pick_function(repo, rng)
    if picked is None:
        return "body: nothing to change"
    path, fn = picked
    lines = path.read_text("utf-8").splitlines(keepends=True)
    first = fn.body[0]
    indent = " " * first.col_offset
    lines.insert(first.lineno - 1, f"{indent}audit_note = {rng.randrange(100)!r}\n")
    path.write_text("".join(lines), "utf-8")
    return f"change the body of {fn.name} in {path.relative_to(repo)}"


def change_import(repo: Path, rng: random.Random) -> str:
    """Drops one import statement of a module, or adds one."""
    path = rng.choice(_modules(repo))
    try:
        tree = ast.parse(path.read_text("utf-8"))
    except SyntaxError:
        return "import: unparsable file"
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    lines = path.read_text("utf-8").splitlines(keepends=True)
    if imports and rng.random() < 0.6:
        node = rng.choice(imports)
        del lines[node.lineno - 1 : (node.end_lineno or node.lineno)]
        path.write_text("".join(lines), "utf-8")
        return f"drop the import on line {node.lineno} of {path.relative_to(repo)}"
    lines.insert(0, "from shop.payments.retry import RetryPolicy\n")
    path.write_text("".join(lines), "utf-8")
    return f"add an import of RetryPolicy to {path.relative_to(repo)}"


def add_file(repo: Path, rng: random.Random) -> str:
    name = f"shop/reports_{rng.randrange(1000)}.py"
    (repo / name).write_text(
        "from shop.payments.retry import schedule_payment_retry\n\n\n"
        "def retry_report(payments, policy):\n"
        '    """Schedule a retry for every failed payment and say how many."""\n'
        "    return [schedule_payment_retry(p, policy) for p in payments]\n",
        "utf-8",
    )
    return f"add {name}"


def delete_file(repo: Path, rng: random.Random) -> str:
    path = rng.choice(_modules(repo))
    path.unlink()
    return f"delete {path.relative_to(repo)}"


EDITS = [
    add_function,
    delete_function,
    rename_function,
    move_function,
    change_body,
    change_import,
    add_file,
    delete_file,
]


def apply(repo: Path, edit: int, seed: int) -> str:
    return EDITS[edit](repo, random.Random(seed))
