from cg.lexical import analyze, split_identifier


def test_identifiers_match_whole_and_split_in_any_case_style():
    snake = set(analyze("handle_invoice_paid"))
    assert {"handleinvoicepaid", "handl", "invoic", "paid"} <= snake  # the words stemmed
    assert "handleinvoicepaid" in analyze("HandleInvoicePaid")
    assert "handleinvoicepaid" in analyze("handleInvoicePaid")
    assert set(analyze("handle invoice paid")) <= snake


def test_splitting_rules():
    assert split_identifier("HTTPRetryPolicy2") == ["http", "retry", "policy", "2"]
    assert split_identifier("STRIPE_WEBHOOK_SECRET") == ["stripe", "webhook", "secret"]
    tokens = analyze("os.path.join")
    assert tokens[0] == "ospathjoin" and "join" in tokens


def test_tokens_survive_any_backend_tokenizer():
    # only lower-case alphanumerics: Kùzu and Lucene keep them intact
    assert all(t.isalnum() and t == t.lower() for t in analyze('self.gateway.charge("usd") STRIPE_API_KEY'))


def test_question_words_leave_queries_but_not_one_word_queries():
    from cg.lexical import analyze_query

    assert analyze_query("how does the client follow redirects?").split() == ["client", "follow", "redirect"]
    assert analyze_query("where") == "where"
    assert "stripewebhooksecret" in analyze_query("where is STRIPE_WEBHOOK_SECRET read").split()


def test_words_are_stemmed_so_a_question_finds_the_code_in_any_inflection():
    # "retries" in a question, `retry` and `RetryPolicy` in code; "refunding" against `refund`
    assert set(analyze("schedule_payment_retry")) & set(analyze("how are failed payments retried?"))
    assert {"retri", "payment"} <= set(analyze("payments retries")) & set(analyze("payment_retry"))
    assert set(analyze("refunding")) == set(analyze("refunds")) == set(analyze("refund"))


def test_the_joined_identifier_stays_exact_only_its_words_are_stemmed():
    tokens = analyze("HandleInvoicesPaid")
    assert tokens[0] == "handleinvoicespaid"  # the exact name, as written, for exact-identifier queries
    assert "invoic" in tokens and "invoices" not in tokens


def test_question_words_are_dropped_before_stemming():
    from cg.lexical import analyze_query

    # "does" stems to "doe", "happens" to "happen": the question words still go
    assert analyze_query("what happens when the webhook does retry?").split() == ["webhook", "retri"]


def test_the_per_identifier_memo_gives_the_tokens_the_dropping_path_gives():
    from pathlib import Path

    from cg.lexical import _tokens

    # cg's own source: realistic names, dotted paths, constants, numbers; a drop set that matches nothing
    # takes the uncached path, so both paths must agree token for token
    for path in sorted(Path(__file__).resolve().parents[1].joinpath("cg", "ingest").glob("*.py"))[:8]:
        text = path.read_text("utf-8")
        assert analyze(text) == _tokens(text, frozenset({"no-such-word"}))
