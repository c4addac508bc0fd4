"""Answer-only loss: prompt tokens carry -100, padding carries -100, and only answer logits move the loss."""

import torch
import torch.nn.functional as F

from missci.lora.sft_data import IGNORE_INDEX, SftExample, encode_example, encode_examples
from models.llm.generation import render_prompt
from models.llm.lora_lm import answer_only_loss, pad_batch

EXAMPLE = SftExample(
    "arg-1",
    "arg-1:1",
    "Claim: turmeric cures cancer.",
    "Fallacious premise: one patient is enough; Applied fallacy class: Hasty Generalization",
)


def test_prompt_tokens_are_masked_and_answer_tokens_kept(minilm_tokenizer):
    tok = minilm_tokenizer
    encoded = encode_example(tok, EXAMPLE)
    prompt_ids = tok(EXAMPLE.prompt)["input_ids"]  # no chat template: special tokens as at generation time
    answer_ids = tok(EXAMPLE.answer, add_special_tokens=False)["input_ids"] + [tok.sep_token_id]
    assert encoded["input_ids"] == prompt_ids + answer_ids
    assert encoded["labels"] == [IGNORE_INDEX] * len(prompt_ids) + answer_ids
    answer_part = [i for i, label in zip(encoded["input_ids"], encoded["labels"]) if label != IGNORE_INDEX]
    assert tok.decode(answer_part, skip_special_tokens=True) == tok.decode(answer_ids, skip_special_tokens=True)


def test_chat_template_prompt_matches_what_generation_encodes(minilm_tokenizer):
    tok = minilm_tokenizer
    original = tok.chat_template
    tok.chat_template = (
        "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }} {% endfor %}"
        "{% if add_generation_prompt %}[assistant] {% endif %}"
    )
    try:
        encoded = encode_example(tok, EXAMPLE, use_chat_template=True)
        rendered_ids = tok(render_prompt(tok, EXAMPLE.prompt), add_special_tokens=False)["input_ids"]
    finally:
        tok.chat_template = original
    n = len(rendered_ids)
    assert encoded["input_ids"][:n] == rendered_ids and encoded["labels"][:n] == [IGNORE_INDEX] * n
    assert all(label != IGNORE_INDEX for label in encoded["labels"][n:])


def test_long_prompts_lose_their_start_not_the_answer(minilm_tokenizer):
    full = encode_example(minilm_tokenizer, EXAMPLE)
    answer_length = sum(label != IGNORE_INDEX for label in full["labels"])
    cut = encode_examples(minilm_tokenizer, [EXAMPLE], max_length=answer_length + 2)[0]
    assert len(cut["input_ids"]) == answer_length + 2 and "truncated" not in cut
    assert cut["input_ids"][:2] == full["input_ids"][-answer_length - 2 : -answer_length]
    assert cut["labels"][2:] == full["labels"][-answer_length:]


def test_padding_is_right_sided_and_ignored():
    batch = pad_batch(
        [{"input_ids": [5, 6, 7], "labels": [-100, 6, 7]}, {"input_ids": [8], "labels": [8]}], pad_token_id=0
    )
    assert batch["input_ids"].tolist() == [[5, 6, 7], [8, 0, 0]]
    assert batch["labels"].tolist() == [[-100, 6, 7], [8, -100, -100]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]


def test_loss_counts_only_answer_positions():
    torch.manual_seed(0)
    logits = torch.randn(1, 6, 11)
    labels = torch.tensor([[-100, -100, -100, 4, 9, 2]])
    expected = F.cross_entropy(logits[0, 2:5], labels[0, 3:6])  # logits at t predict the token at t+1
    assert torch.allclose(answer_only_loss(logits, labels), expected)
    changed_prompt = logits.clone()
    changed_prompt[0, :2] += 10 * torch.randn(2, 11)  # positions predicting prompt tokens
    assert torch.allclose(answer_only_loss(changed_prompt, labels), expected)
    changed_answer = logits.clone()
    changed_answer[0, 3] += 10 * torch.randn(11)
    assert not torch.allclose(answer_only_loss(changed_answer, labels), expected)
