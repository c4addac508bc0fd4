"""The chunked encoder: identical to the plain encoder within the limit, every subword beyond it."""

from __future__ import annotations

import pytest
import torch

from common.errors import UserError
from models.encoder import ChunkedEncoder, offline_encoder_path, special_wrapping

SHORT = ["ciao mondo", "il gatto e il cane non per la casa"]
LONG = ["il gatto " * 20 + "mare", "ciao"]


def plain_hidden(encoder: ChunkedEncoder, text: str) -> torch.Tensor:
    ids = encoder.tokenizer(text, return_tensors="pt")
    return encoder.model(input_ids=ids["input_ids"], attention_mask=ids["attention_mask"]).last_hidden_state[0]


def test_short_posts_match_the_plain_encoder(tiny_bert, make_batch):
    encoder = ChunkedEncoder(tiny_bert, max_length=32, dropout=0.0).eval()
    ids, mask = make_batch(encoder.tokenizer, SHORT)
    with torch.no_grad():
        subwords, sentence = encoder(ids, mask)
        for i, text in enumerate(SHORT):
            reference = plain_hidden(encoder, text)
            n = int(mask[i].sum())
            torch.testing.assert_close(subwords[i, :n], reference[1 : 1 + n], atol=1e-5, rtol=1e-4)
            torch.testing.assert_close(sentence[i], reference[0], atol=1e-5, rtol=1e-4)
            assert subwords[i, n:].eq(0).all()


def test_long_posts_are_encoded_by_windows_without_losing_subwords(tiny_bert, make_batch):
    encoder = ChunkedEncoder(tiny_bert, max_length=10, dropout=0.0).eval()
    assert encoder.window == 8
    ids, mask = make_batch(encoder.tokenizer, LONG)
    assert ids.shape[1] == 41  # five windows for the first post
    with torch.no_grad():
        subwords, sentence = encoder(ids, mask)
    assert subwords.shape == (2, 41, 16)
    assert subwords[0].abs().sum(-1).gt(0).all()  # every subword of the long post has a vector
    assert subwords[1, 1:].eq(0).all()
    # the third window is encoded exactly as the plain encoder encodes those 8 subwords on their own
    window = ids[0, 16:24]
    wrapped = torch.cat([torch.tensor([encoder.cls_id]), window, torch.tensor([encoder.sep_id])])[None]
    with torch.no_grad():
        reference = encoder.model(input_ids=wrapped).last_hidden_state[0]
    torch.testing.assert_close(subwords[0, 16:24], reference[1:9], atol=1e-5, rtol=1e-4)
    assert sentence.shape == (2, 16)


def test_special_tokens_come_from_the_tokenizer(tiny_bert_s_tokens, make_batch):
    encoder = ChunkedEncoder(tiny_bert_s_tokens, max_length=16, dropout=0.0)
    vocab = encoder.tokenizer.get_vocab()
    assert (encoder.prefix, encoder.suffix) == ([vocab["<s>"]], [vocab["</s>"]])
    ids, mask = make_batch(encoder.tokenizer, SHORT)
    wrapped, wrapped_mask = encoder._wrap(ids, mask.sum(-1))
    assert wrapped[0, :4].tolist() == [vocab["<s>"], vocab["ciao"], vocab["mondo"], vocab["</s>"]]
    assert wrapped_mask[0].tolist() == [1] * 4 + [0] * (wrapped.shape[1] - 4)


def test_missing_model_is_a_user_error_naming_the_config_key(tmp_path):
    with pytest.raises(UserError) as error:
        ChunkedEncoder(str(tmp_path / "no-such-model"))
    assert "encoder.name_or_path" in str(error.value) and "hub" in str(error.value)


def test_max_length_beyond_the_model_positions_is_refused(tiny_bert):
    with pytest.raises(UserError, match="encoder.max_length"):
        ChunkedEncoder(tiny_bert, max_length=500)


@pytest.mark.slow
def test_offline_minilm_long_post_every_word_has_a_vector(make_batch):
    encoder = ChunkedEncoder(offline_encoder_path(), max_length=128, dropout=0.0).eval()
    assert special_wrapping(encoder.tokenizer) == ([encoder.cls_id], [encoder.sep_id])
    text = " ".join(f"word{i}" for i in range(150))
    ids, mask = make_batch(encoder.tokenizer, [text, "short post"])
    assert ids.shape[1] > 126
    with torch.no_grad():
        subwords, sentence = encoder(ids, mask)
        assert subwords[0].abs().sum(-1).gt(0).all()
        reference = plain_hidden(encoder, "short post")
    n = int(mask[1].sum())
    torch.testing.assert_close(subwords[1, :n], reference[1 : 1 + n], atol=1e-4, rtol=1e-3)
    assert sentence.shape == (2, 384)
