"""The post's topic and date as a text prefix (``data.context``): what the features hold, and every wrong setting."""

from __future__ import annotations

import pytest

from common.errors import UserError
from faina.data.features import post_features, span_features
from faina.data.post_context import check_context, context_ids, context_text
from faina.formats.records import Post, PostRow, Span
from models.encoder import offline_encoder_path

LABELS = ["Vagueness", "Slogan"]
POST = Post("7", "2021-08", "climate change", "Ora basta", ("Ora", "basta"), ((Span(1, 2, "Slogan"),),))
ROW = PostRow("7", "2021-08", "climate change", "Ora basta", (("Slogan",),))


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(offline_encoder_path())


def test_no_context_leaves_the_features_as_they_were(tokenizer):
    plain, empty = span_features(POST, 0, tokenizer, LABELS, 1), span_features(POST, 0, tokenizer, LABELS, 1, ())
    assert (plain["input_ids"], plain["word_starts"]) == (empty["input_ids"], empty["word_starts"])
    assert (plain["tags"] == empty["tags"]).all()
    assert context_ids(POST, (), tokenizer) == []


def test_the_span_features_start_with_the_context_and_point_past_it(tokenizer):
    plain = span_features(POST, 0, tokenizer, LABELS, 1)
    with_context = span_features(POST, 0, tokenizer, LABELS, 1, ("topic", "date"))
    prefix = tokenizer("climate change | 2021-08", add_special_tokens=False)["input_ids"] + [tokenizer.sep_token_id]
    assert with_context["input_ids"] == prefix + plain["input_ids"]
    assert with_context["word_starts"] == [len(prefix) + start for start in plain["word_starts"]]
    assert (with_context["tags"] == plain["tags"]).all()  # the prefix carries no label


def test_the_post_features_start_with_the_context_in_the_order_asked(tokenizer):
    plain = post_features(ROW, 0, tokenizer, LABELS, 1)
    dated = post_features(ROW, 0, tokenizer, LABELS, 1, ("date", "topic"))
    assert context_text(ROW, ("date", "topic")) == "2021-08 | climate change"
    prefix = context_ids(ROW, ("date", "topic"), tokenizer)
    assert dated["input_ids"] == prefix + plain["input_ids"] and prefix[-1] == tokenizer.sep_token_id
    assert (dated["labels"] == plain["labels"]).all() and dated["word_starts"] == [0]


class WithoutSeparator:
    """A tokenizer with no separator token (as decoder LLMs' often are): the wrapped one's ids otherwise."""

    sep_token_id = None

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def __call__(self, *args, **kwargs):
        return self.tokenizer(*args, **kwargs)


def test_a_tokenizer_without_a_separator_closes_the_context_with_a_colon(tokenizer):
    ids = context_ids(POST, ("topic",), WithoutSeparator(tokenizer))
    assert ids == tokenizer("climate change:", add_special_tokens=False)["input_ids"]


@pytest.mark.parametrize(
    "value, message, fix",
    [
        (["topic", "weather"], "data.context names 'weather', not a context field", "use some of topic, date"),
        (["date", "date"], "data.context=['date', 'date'] names a field twice", "name each of topic, date once"),
        (3, "data.context=3 must be a list of header fields", "e.g. data.context=[topic,date]"),
        ([1], "data.context=[1] must be a list of header fields", "e.g. data.context=[topic,date]"),
    ],
)
def test_a_wrong_context_is_one_message_with_the_fix(value, message, fix):
    with pytest.raises(UserError) as caught:
        check_context(value)
    assert message in str(caught.value) and f"Fix: {fix}" in str(caught.value)


def test_a_context_setting_is_read_as_a_tuple():
    assert check_context(None) == () and check_context([]) == ()
    assert check_context(["date", "topic"]) == ("date", "topic") and check_context("topic") == ("topic",)
