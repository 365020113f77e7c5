"""What explain weighs before it answers "Nothing in the index matches": the words of a question the
code lacks that are not ordinary English (``unknown``), and the pins that answer a question whatever
the model says (an exact identifier, the literal a quoted message comes from)."""

from __future__ import annotations

import pytest

from cg.queries import explain as explain_module
from cg.queries.explain import (
    absent_names,
    answerability,
    explain,
    model_answers,
    pinned,
    plain_words,
    render_markdown,
    unknown_words,
)
from cg.queries.query import Query
from cg.queries.search import search

RETRIED = "how are failed payments retried?"
THROUGH_KAFKA = "how are failed payments retried through a Kafka dead letter topic?"


def test_plain_words_leave_code_and_question_words_out():
    query = Query.parse(
        "how does the client refresh an expired OAuth2 token before compute_backoff or StripeGateway.charge runs?"
    )
    words = plain_words(query)
    assert words["oauth2"] == "oauth2"  # a word with digits or mixed case is one word, joined as indexed
    assert words["expir"] == "expired" and words["refresh"] == "refresh" and words["token"] == "token"
    assert not {"how", "does", "computebackoff", "comput", "backoff", "stripegateway", "charg"} & set(words)
    assert plain_words(Query.parse("where is the GraphQL resolver?"))["graphql"] == "graphql"
    assert plain_words(Query.parse("when Stripe POSTs an event"))["posts"] == "posts"


def test_unknown_words_are_the_ones_the_tokenizer_splits_in_every_plain_form(ctx):
    _, embedder = ctx
    words = {"smtp": "smtp", "graphql": "graphql", "keychain": "keychain", "decid": "decide", "payment": "payments"}
    # "payments" is kept whole; "decide" too; the three names of technologies are split into pieces
    assert sorted(unknown_words(words, embedder)) == ["graphql", "keychain", "smtp"]


def _signals(ctx, text):
    store, embedder = ctx
    query = Query.parse(text).with_vector(embedder)
    return answerability(store, query, search(store, embedder, query, limit=12), every=True, embedder=embedder)


def test_a_technology_the_code_lacks_is_counted_as_unknown(ctx):
    plain, kafka = _signals(ctx, RETRIED), _signals(ctx, THROUGH_KAFKA)
    assert plain["unknown"] == 0 and plain["missing"] == 0.0
    # "kafka": no definition holds it, and it is no English word; "dead", "letter" and "topic" are
    # missing too, but ordinary words ("missing" counts them)
    assert kafka["unknown"] == 1 and kafka["missing"] > 0.5


@pytest.mark.parametrize(
    "question",
    [
        "where does 'coupon has reached its redemption limit' come from?",  # the literal is pinned
        "what calls compute_backoff?",  # the identifier is pinned
    ],
)
def test_a_pinned_question_is_answered_whatever_the_model_says(ctx, monkeypatch, question):
    store, embedder = ctx
    monkeypatch.setitem(explain_module.REFUSAL_MODEL, "threshold", 1.01)  # the model refuses everything
    assert not explain(store, embedder, RETRIED).found
    answer = explain(store, embedder, question)
    assert answer.found and pinned(search(store, embedder, question, limit=12))


def test_the_unknown_word_rule_only_ever_refuses_more():
    model = {"coef": {"cosine": 5.0}, "intercept": -1.0, "threshold": 0.5, "unknown_cosine": 0.3}
    assert model_answers({"cosine": 0.25, "unknown": 0.0}, model)  # the cosine alone answers
    assert not model_answers({"cosine": 0.25, "unknown": 0.2}, model)  # a technology the code lacks: too far
    assert model_answers({"cosine": 0.35, "unknown": 0.2}, model)  # close enough all the same
    assert not model_answers({"cosine": 0.1, "unknown": 0.0}, model)  # the cosine alone refuses
    without_rule = {k: v for k, v in model.items() if k != "unknown_cosine"}
    assert model_answers({"cosine": 0.25, "unknown": 0.2}, without_rule)


@pytest.mark.parametrize(
    ("question", "absent"),
    [
        (THROUGH_KAFKA, ["Kafka"]),  # a capitalised word inside the sentence: a name, and the shop lacks it
        ("how are refunds sent to Stripe over AMQP and signed with HMAC?", ["AMQP"]),  # the shop signs with HMAC
        ("how are invoices exported as GraphQL types?", ["GraphQL"]),  # mixed case: one name
        ("walk me through what happens when Stripe POSTs an event to our webhook URL", []),  # "POSTs" is POST
        ("Kafka aside, how are failed payments retried? Redis too.", []),  # a sentence's first word is grammar
        ("what calls StripeGateway.charge or compute_backoff?", []),  # code, not a name
        ("where does 'Kafka broker unreachable' come from?", []),  # a quoted message is matched as a literal
        ("I wonder how retries work", []),
    ],
)
def test_absent_names_are_the_names_a_question_writes_that_no_definition_holds(ctx, question, absent):
    store, _ = ctx
    assert absent_names(store, Query.parse(question)) == absent


def test_a_question_naming_what_the_code_lacks_is_refused_and_the_answer_says_which_name(ctx, monkeypatch):
    store, embedder = ctx
    monkeypatch.setitem(explain_module.REFUSAL_MODEL, "threshold", 0.0)  # the cosine alone would answer anything
    monkeypatch.setitem(explain_module.REFUSAL_MODEL, "refuse_absent_names", True)
    assert explain(store, embedder, RETRIED).found
    answer = explain(store, embedder, THROUGH_KAFKA)
    assert not answer.found and answer.absent == ["Kafka"] and answer.answerability["absent"] == 1
    assert "no definition mentions Kafka" in render_markdown(answer)
    assert answer.as_dict()["absent"] == ["Kafka"]
    # a pinned hit answers all the same: the name is then part of what the code holds
    assert explain(store, embedder, "what calls compute_backoff, and does Kafka matter?").found
    monkeypatch.setitem(explain_module.REFUSAL_MODEL, "refuse_absent_names", False)
    assert explain(store, embedder, THROUGH_KAFKA).found


def test_the_absent_name_rule_refuses_whatever_the_cosine():
    model = {"coef": {"cosine": 5.0}, "intercept": -1.0, "threshold": 0.5, "refuse_absent_names": True}
    assert model_answers({"cosine": 0.9, "absent": 0}, model)
    assert not model_answers({"cosine": 0.9, "absent": 1}, model)
    assert model_answers({"cosine": 0.9, "absent": 1}, {**model, "refuse_absent_names": False})
