"""The chunker's boundaries on tricky inputs: a 900-line function, a class with 60 methods, nested
functions, decorated classes, a file of only constants, a file with a syntax error."""

from __future__ import annotations

import ast

from cg.ingest.chunk import approx_tokens, chunk_file, fragment_ranges

from .helpers import extract_source


def words(texts):
    """A deterministic stand-in tokenizer: one token per whitespace-separated word."""
    return [max(1, len(t.split())) for t in texts]


def big_function(statements: int) -> str:
    lines = ["def reconcile_ledger(entries, ledger):", '    """Match every entry against the ledger."""']
    for i in range(statements):
        lines += [
            f"    if entries[{i}].amount != ledger.get({i}):",
            f"        ledger.flag({i}, reason='mismatch on entry {i}')",
            f"    total_{i} = entries[{i}].amount * 2",
        ]
    lines.append("    return ledger")
    return "\n".join(lines) + "\n"


def event_router(methods: int = 60) -> str:
    """A webhook router class with ``methods`` one-line handlers."""
    body = "\n".join(
        f'    def handle_event_{i}(self, event):\n        """Handle event type {i}."""\n'
        f"        return self.dispatch({i}, event)\n"
        for i in range(methods)
    )
    return f'class EventRouter(BaseRouter):\n    """Routes webhook events."""\n\n{body}'


def test_a_900_line_function_splits_at_statement_boundaries_only():
    source = big_function(300)  # 903 lines
    assert len(source.splitlines()) >= 900
    ex = extract_source("billing/ledger.py", source)
    unit = chunk_file(ex, budget=256, count=words)
    fn = next(s for s in unit.symbols if s.name == "reconcile_ledger")
    fragments = [c for c in unit.chunks if c.kind == "fragment" and c.owner_id == fn.id]
    assert len(fragments) > 10
    lines = source.splitlines()
    covered = []
    for frag in fragments:
        body = frag.text.split("(fragment", 1)[1].split("\n", 1)[1]
        # every fragment repeats the signature and docstring, then whole statements
        assert frag.text.splitlines()[2] == "def reconcile_ledger(entries, ledger):"
        assert '"""Match every entry against the ledger."""' in frag.text
        ast.parse(
            "def f():\n"
            + "\n".join(
                "    " + line.strip() if not line.startswith("        ") else line for line in body.splitlines()
            )
        )
        first = lines[frag.start_line - 1]
        assert first.startswith("    if ") or first.startswith("    total_") or first.startswith("    return")
        assert max(words([frag.text])) <= 256 + 40  # within budget (a statement is never cut)
        covered.append((frag.start_line, frag.end_line))
    # fragments tile the rest of the function in order, without gaps or overlaps
    assert all(b[0] == a[1] + 1 for a, b in zip(covered, covered[1:], strict=False))
    assert covered[-1][1] == fn.end_line


def test_one_statement_over_budget_descends_into_its_block():
    body = "\n".join(f"        audit.record({i}, 'entry {i} checked against the ledger')" for i in range(200))
    source = f"def audit_all(audit):\n    for batch in range(3):\n{body}\n    return audit\n"
    ex = extract_source("billing/audit.py", source)
    fn = next(s for s in ex.symbols if s.name == "audit_all")
    ranges = fragment_ranges(fn.text.splitlines(), fn.split_points, 120, 10, words)
    assert len(ranges) > 3
    # cuts inside the `for` fall between its statements: every range starts a statement
    for start, _ in ranges[1:]:
        assert fn.text.splitlines()[start].lstrip().startswith(("for batch", "audit.record", "return"))
    assert any(fn.text.splitlines()[start].lstrip().startswith("audit.record") for start, _ in ranges)


def test_a_class_with_60_methods_gets_a_skeleton_and_its_methods_stand_alone():
    source = f"@register\n{event_router()}"
    ex = extract_source("hooks/router.py", source)
    unit = chunk_file(ex, budget=256, count=words)
    cls_index = next(i for i, s in enumerate(unit.symbols) if s.name == "EventRouter")
    cls = unit.symbols[cls_index]
    assert cls.start_line == 1  # the decorator belongs to the class
    skeletons = [c for c in unit.chunks if c.kind == "skeleton"]
    assert len(skeletons) > 1 and all(c.owner_id == cls.id for c in skeletons)
    joined = "\n".join(c.text for c in skeletons)
    assert "def handle_event_59(self, event):" in joined and "return self.dispatch" not in joined
    assert "@register\nclass EventRouter(BaseRouter):" in unit.embed_texts[cls_index]  # embedded as its skeleton
    assert "return self.dispatch" not in unit.embed_texts[cls_index]
    method = next(s for s in unit.symbols if s.name == "handle_event_7")
    assert "# in: class EventRouter(BaseRouter)" in method.header
    assert len([s for s in unit.symbols if s.kind == "method"]) == 60


def test_nested_functions_are_their_own_units():
    source = (
        "def make_retrier(policy):\n"
        "    def backoff(attempt):\n"
        "        return policy.base * 2 ** attempt\n"
        "    def retry(fn):\n"
        "        return fn(backoff(1))\n"
        "    return retry\n"
    )
    ex = extract_source("payments/retrier.py", source)
    names = {s.qualname: s for s in chunk_file(ex, count=words).symbols}
    backoff = names["payments.retrier.make_retrier.backoff"]
    assert (backoff.start_line, backoff.end_line) == (2, 3)
    assert (
        backoff.header.splitlines()[1] == "# scope: module payments.retrier > function make_retrier > function backoff"
    )


def test_decorated_class_and_constants_only_file():
    constants = "\n".join(f'CURRENCY_{i} = "c{i}"' for i in range(400)) + "\n"
    ex = extract_source("shop/currencies.py", constants)
    unit = chunk_file(ex, budget=256, count=words)
    # each constant is a definition of its own; the module chunk keeps them all, in order
    assert [s.kind for s in unit.symbols] == ["module"] + ["constant"] * 400
    assert unit.symbols[7].text == 'CURRENCY_6 = "c6"' and unit.embed_texts[7].endswith('CURRENCY_6 = "c6"')
    module = unit.symbols[0]
    fragments = [c for c in unit.chunks if c.kind == "fragment"]
    assert fragments, "400 constants do not fit one unit"
    for frag in fragments:
        body = frag.text.split("(fragment", 1)[1].split("\n", 1)[1]
        assert all(line.startswith("CURRENCY_") for line in body.splitlines())
    toc = next(c for c in unit.chunks if c.kind == "toc")
    assert toc.owner_id == module.id and toc.text.startswith("# file: shop/currencies.py")


def test_a_file_with_a_syntax_error_still_chunks_what_parsed():
    source = "def refund(invoice):\n    return invoice.total\n\ndef broken(:\n    pass\n\nclass Ledger:\n    pass\n"
    ex = extract_source("billing/refunds.py", source)
    unit = chunk_file(ex, count=approx_tokens)
    assert {s.name for s in unit.symbols} >= {"refund", "Ledger"}
    assert len(unit.embed_texts) == len(unit.symbols)
    assert unit.chunks[-1].kind == "toc" and "function refund" in unit.chunks[-1].text


def test_the_budget_check_counts_a_long_text_by_its_head_and_agrees_with_the_full_count():
    from cg.ingest.chunk import PREFIX_CHARS, fit_budget

    calls: list[list[str]] = []

    def words(texts):  # like a model tokenizer: whitespace is no token, and a head has no more than the whole
        calls.append(list(texts))
        return [len(t.split()) for t in texts]

    budget = 64
    short = "def charge(invoice):\n    return gateway.charge(invoice.total)\n"
    long_body = "\n".join(f"post {i} to ledger {i}" for i in range(400))
    indented = "x = 1" + " " * (budget * PREFIX_CHARS) + "y = 2"  # a head of few tokens: the whole is counted
    texts = [short, long_body, indented]
    assert fit_budget(texts, budget, words) == [True, False, True] == [n <= budget for n in words(texts)[:3]]
    assert calls[0][1] != long_body and len(calls[0][1]) <= budget * PREFIX_CHARS  # counted by its head
    assert calls[1] == [indented]  # its head fitted, so the whole was counted


def test_a_head_the_counters_lower_bound_puts_over_budget_is_never_counted():
    """A counter may carry ``lower_bound`` (cg/embed ``bert_lower_bound``): a head whose bound is over
    budget does not fit, so it is not counted, and every answer stays the exact count's."""
    from cg.ingest.chunk import fit_budget

    counted: list[str] = []

    def words(texts):
        counted.extend(texts)
        return [len(t.split()) for t in texts]

    words.lower_bound = lambda text: len(text.split()) * 3 // 4  # at most the count, as a bound must be

    budget = 64
    short = "def charge(invoice):\n    return gateway.charge(invoice.total)\n"
    near = " ".join(f"amount_{i}" for i in range(80))  # 80 words: bound 60, so counted, and over
    huge = "\n".join(f"post {i} to ledger {i}" for i in range(400))  # bound far over: never counted
    assert fit_budget([short, near, huge], budget, words) == [True, False, False]
    assert short in counted and near in counted and not any(t.startswith("post 0 to ledger") for t in counted)


def test_chunks_without_lexical_texts_embed_exactly_what_the_full_chunking_embeds():
    """``fill_vectors`` chunks only for the texts it embeds (``lexical=False``): the same symbols,
    embedded texts, fragments, skeletons and table of contents, with no search text or literals."""
    source = f"{big_function(120)}\n\n{event_router()}"
    ex = extract_source("billing/ledger.py", source)
    full, bare = chunk_file(ex, budget=128, count=words), chunk_file(ex, budget=128, count=words, lexical=False)
    assert bare.embed_texts == full.embed_texts and len(full.chunks) > 3
    assert [(c.id, c.text, c.start_line) for c in bare.chunks] == [(c.id, c.text, c.start_line) for c in full.chunks]
    assert [(s.id, s.header) for s in bare.symbols] == [(s.id, s.header) for s in full.symbols]
    assert all(c.search_text for c in full.chunks) and not any(c.search_text for c in bare.chunks)
    assert any(s.literals for s in full.symbols) and not any(s.search_text or s.literals for s in bare.symbols)
