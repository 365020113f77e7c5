from cg.lexical import analyze, split_identifier


def test_identifiers_match_whole_and_split_in_any_case_style():
    snake = set(analyze("handle_invoice_paid"))
    assert {"handleinvoicepaid", "handle", "invoice", "paid"} <= snake
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

    assert analyze_query("how does the client follow redirects?").split() == ["client", "follow", "redirects"]
    assert analyze_query("where") == "where"
    assert "stripewebhooksecret" in analyze_query("where is STRIPE_WEBHOOK_SECRET read").split()
