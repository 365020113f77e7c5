"""Retrieval units: one definition each, with a generated header that makes it self-contained, plus
fragments, skeletons and a table of contents where one definition cannot be one unit.

The header carries what the seeds found a bare function lacks: where it lives (path), where it sits
(scope chain ``module shop.payments.retry > class RetryPolicy > method delay_for``, and for a method
the class's own signature) and what its names refer to (only the imports whose bound name the body
uses). The code is stored as written, so citations and displays show the real source.

Budgets are in tokens of the embedding model's own tokenizer (``chunk_tokens``, default the model's
256-token window): text past the window is invisible to the embedding. So:

- a definition that fits is one unit, embedded whole;
- an oversize function or module chunk is also split at statement boundaries into fragments
  (``Chunk`` nodes), each repeating the header, the signature and the docstring, never splitting a
  statement: body statements first, the statements inside a block only when one statement alone is
  over budget, and a single statement that is still too big stays whole (the embedding sees its head,
  the lexical arm all of it);
- a large class is embedded as its skeleton (signatures and docstrings, bodies removed), split at
  member boundaries if needed; its methods are units of their own;
- every file gets a table-of-contents chunk: module docstring, imports, and what it defines;
- a lambda is no unit at all (``Symbol.retrievable``): its text is part of its enclosing definition's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from cg.embed import approx_tokens
from cg.ingest.languages.registry import Language, language_named
from cg.lexical import analyze_text
from cg.model import CONTAINER_KINDS, Chunk, FileExtraction, ImportRecord, Symbol

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
NAME_BOOST = 3
DEFAULT_BUDGET = 256

TokenCounter = Callable[[Sequence[str]], list[int]]


@dataclass
class Chunked:
    """One file's retrieval units: its symbols (header, search text and the text their embedding
    is computed from) and the extra chunks."""

    symbols: list[Symbol]
    embed_texts: list[str]  # one per retrievable symbol (Symbol.retrievable: not the lambdas)
    chunks: list[Chunk]
    dropped: int = 0  # fragments and skeleton parts over the file's cap, not emitted


def import_line(imp: ImportRecord, language: Language) -> str:
    """The import as the file's language writes it."""
    return language.import_line(imp) if language.import_line is not None else imp.module


def header_for(sym: Symbol, imports: list[ImportRecord], owner_signature: str, language: Language) -> str:
    used = set(_WORD.findall(sym.text))
    lines = [f"# file: {sym.path}", f"# scope: {' > '.join(_full_scope(sym))}"]
    if owner_signature:
        lines.append(f"# in: {owner_signature}")
    if sym.kind != "module":
        wanted = [import_line(i, language) for i in imports if i.name != "*" and i.local_name in used]
        if wanted:
            lines.append("# uses: " + "; ".join(dict.fromkeys(wanted)))
    return "\n".join(lines)


def _full_scope(sym: Symbol) -> tuple[str, ...]:
    if sym.kind == "module":
        return sym.scope
    modname = sym.qualname.rsplit(".", len(sym.scope))[0]
    return (f"module {modname}", *sym.scope)


def search_text(sym: Symbol) -> str:
    """Lexical-arm text: the name (repeated, a poor man's field boost that works on every backend's
    BM25), the qualname and path, then signature, docstring and code. Without the boost a test that
    calls ``schedule_payment_retry`` five times outranks the function itself."""
    name = analyze_text(sym.name) if sym.kind != "module" else ""
    rest = analyze_text(" ".join((sym.qualname, sym.path, sym.signature, sym.docstring, sym.text)))
    return " ".join([name] * NAME_BOOST + [rest]).strip()


# A one-line string literal: double-, single- or back-quoted, escapes kept inside. Triple-quoted
# strings (docstrings, templates) are not messages a user sees and are left to the code field.
_LITERAL = re.compile(
    r'(?<!["\'\\])"((?:[^"\\\n]|\\.)*)"(?!")'
    r"|(?:(?<=\b[rRbBuUfF])|(?<=\b[rRbBuUfF]{2})|(?<![\w'\"\\]))'((?:[^'\\\n]|\\.)*)'(?!')"
    r"|`([^`\n]*)`"
)

# A message written as adjacent literals over several lines (Python's implicit concatenation, or
# ``+`` in Go, JavaScript, Java): a line that ends with a literal (a comment may follow) and the next
# that starts with one (after a ``+`` or a string prefix) hold one literal, so the phrase a user saw
# is matched whole. A comma between them makes two (the items of a list).
_OPEN_END = re.compile(r"\s*(?:\+|\\)?\s*(?:#.*|//.*)?")
_CONTINUED = re.compile(r"\s*\+?\s*[rRbBuUfF]{0,2}")


def string_literals(sym: Symbol, children: Sequence[Symbol] = ()) -> list[str]:
    """The string literals of a definition's own code, in order, without those of the definitions
    nested in it (a method's message belongs to the method, not to its class as well) and without
    literals that hold no word. The text is the one ingest stored, so its secrets are already
    masked (cg/ingest/secrets.py masks the file before extraction)."""
    lines = sym.text.splitlines()
    nested = {
        line
        for child in children
        for line in range(child.start_line - sym.start_line, child.end_line - sym.start_line + 1)
    }
    found: list[str] = []
    open_end = False  # the previous line ended with a literal the next line's first one may continue
    for number, line in enumerate(lines):
        matches = [] if number in nested else list(_LITERAL.finditer(line))
        texts = [next(g for g in m.groups() if g is not None) for m in matches]
        if texts and open_end and found and _CONTINUED.fullmatch(line[: matches[0].start()]):
            found[-1] += texts.pop(0)  # "must be declared as a " "Field instance": one message
        found.extend(texts)
        open_end = bool(matches) and _OPEN_END.fullmatch(line[matches[-1].end() :]) is not None
    return [text for text in found if re.search(r"[A-Za-z]{2}", text)]


def literal_text(sym: Symbol, children: Sequence[Symbol] = ()) -> str:
    """The literal field of a definition: each string literal analyzed like any indexed text, one a
    line (a phrase is matched within one literal, never across two)."""
    analyzed = (analyze_text(lit) for lit in string_literals(sym, children))
    return "\n".join(dict.fromkeys(a for a in analyzed if a))


def _docstring_lines(sym: Symbol, language: Language) -> str:
    if not sym.docstring:
        return ""
    indent = "    " if sym.kind != "module" else ""
    if not language.indented_blocks:
        marker = language.comment
        return "\n".join(f"{indent}{marker} {line}".rstrip() for line in sym.docstring.splitlines())
    return f'{indent}"""{sym.docstring}"""'


def fragment_ranges(
    lines: list[str], points: Sequence[tuple[int, int]], budget: int, fixed: int, count: TokenCounter
) -> list[tuple[int, int]]:
    """Split ``lines`` into [start, end) ranges of at most ``budget`` tokens each (``fixed`` tokens of
    every fragment go to its repeated prefix), cutting only at ``points``: depth-1 statement starts
    first, deeper ones only inside a range that is still over budget."""
    sizes = count(lines) if lines else []
    room = max(budget - fixed, 16)

    def split(start: int, end: int, depth: int) -> list[tuple[int, int]]:
        if sum(sizes[start:end]) <= room or depth > 3:
            return [(start, end)]
        cuts = sorted({i for i, d in points if d <= depth and start < i < end})
        if not cuts:
            return split(start, end, depth + 1) if depth < 3 else [(start, end)]
        pieces: list[tuple[int, int]] = []
        begin = start
        used = 0
        bounds = [*cuts, end]
        prev = start
        for cut in bounds:
            block = sum(sizes[prev:cut])
            if used and used + block > room:
                pieces.append((begin, prev))
                begin, used = prev, 0
            used += block
            prev = cut
        pieces.append((begin, end))
        out: list[tuple[int, int]] = []
        for a, b in pieces:
            out.extend(split(a, b, depth + 1) if sum(sizes[a:b]) > room else [(a, b)])
        return out

    return split(0, len(lines), 1) if lines else []


# Characters of a text's head counted before the whole: past ``budget * PREFIX_CHARS`` characters a
# text is first counted up to the last whitespace before that point, and only if that head fits is
# the whole counted. Code runs 3-5 characters a token, so a head that long holds the budget many
# times over: a big class or module is known not to fit from its first 2,000 characters instead of
# tokenizing all of it (most of a big repository's chunk stage was the model tokenizer counting).
PREFIX_CHARS = 8


def fit_budget(texts: Sequence[str], budget: int, count: TokenCounter) -> list[bool]:
    """Whether each text fits ``budget`` tokens, in one call of ``count`` per pass. Exact, not a
    guess: the model tokenizers split text into words at whitespace before they cut words into
    tokens (BERT's WordPiece, SentencePiece's metaspace, byte-level BPE alike), so a head cut at a
    whitespace has no more tokens than the whole text; a head over budget means the text is. So does
    a head whose lower bound (``count.lower_bound``, when the counter has one) is over budget."""
    limit = budget * PREFIX_CHARS
    heads: list[str] = []
    for text in texts:
        cut = max(text.rfind(" ", 0, limit), text.rfind("\n", 0, limit)) if len(text) > limit else -1
        heads.append(text[:cut] if cut > 0 else text)
    # a head the counter's lower bound (cg/embed ``bert_lower_bound``) puts over budget is not counted
    bound: Callable[[str], int] | None = getattr(count, "lower_bound", None)
    counted = [i for i, head in enumerate(heads) if bound is None or len(head) <= budget or bound(head) <= budget]
    fits = [False] * len(heads)
    for i, n in zip(counted, count([heads[i] for i in counted]) if counted else [], strict=True):
        fits[i] = n <= budget
    again = [i for i, text in enumerate(texts) if fits[i] and heads[i] is not text]
    for i, n in zip(again, count([texts[i] for i in again]) if again else [], strict=True):
        fits[i] = n <= budget
    return fits


def skeleton(cls: Symbol, members: list[Symbol], language: Language) -> str:
    """The class with bodies removed: decorators and signature, docstring, class-level statements
    that are not definitions, and each member's signature and docstring's first line. Braced
    languages get ``signature {``, each member as ``// doc`` then ``signature;``, and ``}``."""
    if not language.indented_blocks:
        marker = language.comment
        out = [f"{marker} {line}".rstrip() for line in cls.docstring.splitlines()[:1]]
        out.append(f"{cls.signature} {{")
        for member in members:
            if member.docstring:
                out.append(f"    {marker} {member.docstring.splitlines()[0]}")
            out.append(f"    {member.signature};")
        out.append("}")
        return "\n".join(out)
    head = cls.text.splitlines()
    def_index = cls.def_line - cls.start_line
    out = head[: def_index + 1]
    if cls.docstring:
        out.append(f'    """{cls.docstring.splitlines()[0]}"""')
    for member in members:
        decorators = [f"    @{d}" for d in member.decorators]
        doc = f'        """{member.docstring.splitlines()[0]}"""' if member.docstring else "        ..."
        out.extend([*decorators, f"    {member.signature}:", doc])
    return "\n".join(out)


def chunk_file(
    ex: FileExtraction,
    budget: int = DEFAULT_BUDGET,
    count: TokenCounter = approx_tokens,
    max_chunks: int = 0,
    lexical: bool = True,
) -> Chunked:
    """Every retrieval unit of one file (see the module docstring). With ``max_chunks``, at most that
    many fragments and skeleton parts, the first ones emitted (a generated file would otherwise yield thousands
    to embed); every definition and the table of contents are kept whatever the cap. Without ``lexical``
    the units' lexical texts (search text, literals) are left empty: a caller that wants only what
    is embedded (``fill_vectors``) skips about half of the work (Django: 16 s against 30)."""
    analyze = analyze_text if lexical else None
    by_id = {s.id: s for s in ex.symbols}
    children: dict[str, list[Symbol]] = {}
    for sym in ex.symbols:
        children.setdefault(sym.parent_id, []).append(sym)
    symbols: list[Symbol] = []
    embed_texts: list[str] = []
    chunks: list[Chunk] = []
    language = _language(ex.file.language)
    kept: list[Symbol] = []
    for sym in ex.symbols:
        owner = by_id.get(sym.parent_id)
        owner_signature = owner.signature if owner is not None and owner.kind in CONTAINER_KINDS else ""
        header = header_for(sym, ex.imports, owner_signature, language)
        if not sym.retrievable:  # a lambda: a graph node with its header, but no vector and no lexical text
            symbols.append(replace(sym, header=header, search_text=""))
            continue
        if lexical:
            sym = replace(
                sym, header=header, search_text=search_text(sym), literals=literal_text(sym, children.get(sym.id, []))
            )
        else:
            sym = replace(sym, header=header)
        symbols.append(sym)
        kept.append(sym)
    for sym, fits in zip(kept, fit_budget([s.chunk_text for s in kept], budget, count), strict=True):
        whole = sym.chunk_text
        if fits:
            embed_texts.append(whole)
            continue
        if sym.kind in CONTAINER_KINDS:
            members = [m for m in children.get(sym.id, []) if m.kind == "method"]
            skeleton_text = skeleton(sym, members, language)
            embed_texts.append(f"{sym.header}\n{skeleton_text}")
            chunks.extend(_skeleton_parts(sym, skeleton_text, budget, count, language, analyze))
            continue
        embed_texts.append(whole)  # the embedding sees the head; fragments cover the rest
        chunks.extend(_fragments(sym, budget, count, language, analyze))
    dropped = max(0, len(chunks) - max_chunks) if max_chunks else 0
    if dropped:
        chunks = chunks[:max_chunks]
    chunks.append(toc_chunk(ex, analyze))
    return Chunked(symbols, embed_texts, chunks, dropped)


def _fragments(
    sym: Symbol, budget: int, count: TokenCounter, language: Language, analyze: Callable[[str], str] | None
) -> list[Chunk]:
    lines = sym.text.splitlines()
    prefix_lines = [sym.header]
    if sym.kind != "module":
        prefix_lines.append(sym.signature + (":" if language.indented_blocks else " {" if sym.kind != "config" else ""))
        doc = _docstring_lines(sym, language)
        if doc:
            prefix_lines.append(doc)
    prefix = "\n".join(prefix_lines)
    ranges = fragment_ranges(lines, sym.split_points, budget, count([prefix])[0], count)
    out: list[Chunk] = []
    for number, (start, end) in enumerate(ranges[1:], start=2):  # the symbol's own embedding is the head
        first = sym.start_line + start if sym.kind != "module" else sym.start_line
        last = sym.start_line + end - 1 if sym.kind != "module" else sym.end_line
        body = "\n".join(lines[start:end])
        text = f"{prefix}\n    {language.comment} ... (fragment {number} of {len(ranges)})\n{body}"
        out.append(
            Chunk(
                f"{sym.id}#fragment-{number}",
                sym.id,
                "fragment",
                sym.path,
                first,
                last,
                text,
                " ".join([analyze(sym.name)] * NAME_BOOST + [analyze(body)]) if analyze else "",
            )
        )
    return out


def _skeleton_parts(
    cls: Symbol,
    text: str,
    budget: int,
    count: TokenCounter,
    language: Language,
    analyze: Callable[[str], str] | None,
) -> list[Chunk]:
    lines = text.splitlines()
    points = tuple(
        (i, 1) for i, line in enumerate(lines) if line.startswith("    ") and not line.startswith("     ") and i > 0
    )
    prefix = f"{cls.header}\n{cls.signature}" + (":" if language.indented_blocks else " {")
    ranges = fragment_ranges(lines, points, budget, count([prefix])[0], count)
    out = []
    for number, (start, end) in enumerate(ranges, start=1):
        body = "\n".join(lines[start:end])
        chunk_text = body if number == 1 else f"{prefix}\n{body}"
        chunk_id = f"{cls.id}#skeleton" if len(ranges) == 1 else f"{cls.id}#skeleton-{number}"
        out.append(
            Chunk(
                chunk_id,
                cls.id,
                "skeleton",
                cls.path,
                cls.start_line,
                cls.end_line,
                f"{cls.header}\n{chunk_text}" if number == 1 else chunk_text,
                " ".join([analyze(cls.name)] * NAME_BOOST + [analyze(body)]) if analyze else "",
            )
        )
    return out


def toc_chunk(ex: FileExtraction, analyze: Callable[[str], str] | None = analyze_text) -> Chunk:
    module = ex.symbols[0] if ex.symbols and ex.symbols[0].kind == "module" else None
    summary = module.docstring.splitlines()[0] if module is not None and module.docstring else ""
    defined = [
        f"{s.kind} {s.qualname.rsplit('.', 1)[-1] if s.kind != 'method' else s.qualname.split('.')[-2:][0]}"
        f"{'.' + s.name if s.kind == 'method' else ''}"
        for s in ex.symbols
        if s.kind != "module" and s.retrievable
    ]
    imports = sorted(
        {imp.module if not imp.name else f"{'.' * imp.level}{imp.module}.{imp.name}".lstrip(".") for imp in ex.imports}
    )
    lines = [f"# file: {ex.file.path}", f"# module {ex.file.module or ex.file.path}: {summary}".rstrip(": ")]
    if imports:
        lines.append("# imports: " + ", ".join(imports))
    if defined:
        lines.append("# defines: " + ", ".join(defined))
    text = "\n".join(lines)
    owner = module.id if module is not None else ""
    return Chunk(
        f"{ex.file.path}::<toc>",
        owner,
        "toc",
        ex.file.path,
        1,
        max(1, ex.file.loc),
        text,
        analyze(text) if analyze else "",
    )


def _language(name: str) -> Language:
    found = language_named(name)
    if found is None:
        raise ValueError(f"no language {name!r} in the registry")
    return found


def chunk_symbols(ex: FileExtraction) -> list[Symbol]:
    """The file's symbols with header and lexical text filled in (no budget applied)."""
    return chunk_file(ex).symbols
