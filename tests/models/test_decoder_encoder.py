"""A decoder LLM as the shared encoder: the attention modes, LoRA with adapter-only state, the settings' messages.

The model is ``tiny-llama`` (models/tiny_llama.py: the Llama 3 hub replica, 2 layers, random weights), built once
into the user cache folder; the mask tests also use a bare random ``LlamaModel``.
"""

from __future__ import annotations

import logging

import pytest
import torch

from common.errors import UserError
from models.encoder import ChunkedEncoder
from models.encoder_attention import set_attention
from models.encoder_settings import encoder_settings


def tiny_llama(**settings) -> ChunkedEncoder:
    torch.manual_seed(0)
    return ChunkedEncoder("tiny-llama", max_length=16, dropout=0.0, **settings).eval()


def bare_llama(layers: int = 3):
    from transformers import LlamaConfig, LlamaModel

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=50,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        num_key_value_heads=1,
    )
    return LlamaModel(config).eval()


def layer_outputs(model, ids: torch.Tensor, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states


def sees_later_tokens(model, layer: int) -> bool:
    """Whether position 2's vector after ``layer`` (0: the embeddings) changes when token 5 changes."""
    ids = torch.tensor([[3, 7, 11, 13, 17, 19, 23]])
    changed = ids.clone()
    changed[0, 5] = 29
    before, after = layer_outputs(model, ids)[layer], layer_outputs(model, changed)[layer]
    return not torch.allclose(before[0, 2], after[0, 2])


@pytest.mark.parametrize("implementation", ["eager", "sdpa"])
def test_each_attention_mode_lets_exactly_its_layers_see_later_tokens(implementation):
    for mode, count, seeing in [
        ("causal", 0, [False, False, False]),
        ("bidirectional", None, [True, True, True]),
        ("bidirectional-top-1", 1, [False, False, True]),
        ("bidirectional-top-2", 2, [False, True, True]),
    ]:
        model = bare_llama()
        model.config._attn_implementation = implementation
        set_attention(model, mode, count)
        assert [sees_later_tokens(model, layer) for layer in (1, 2, 3)] == seeing, mode


def test_without_a_mode_the_model_stays_as_it_is():
    model = bare_llama()
    assert set_attention(model, None, 0) is None
    assert not sees_later_tokens(model, 3)


@pytest.mark.parametrize("mode, count", [("bidirectional", None), ("bidirectional-top-1", 1)])
def test_padding_stays_masked_when_the_causal_mask_is_removed(mode, count):
    model = bare_llama()
    set_attention(model, mode, count)
    alone = layer_outputs(model, torch.tensor([[3, 7, 11]]))[-1]
    ids = torch.tensor([[3, 7, 11, 0, 0], [5, 9, 13, 17, 19]])
    padded = layer_outputs(model, ids, torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]))[-1]
    torch.testing.assert_close(padded[0, :3], alone[0], atol=1e-5, rtol=1e-4)


def test_the_mask_built_once_per_pass_follows_each_batch_and_gradient_checkpointing():
    # the bidirectional mask is built by the first chosen layer of a forward pass and reused by the others: a
    # second batch with other padding must get its own, and layers recomputed in the backward pass (gradient
    # checkpointing) the same one as in the forward pass
    ids = torch.tensor([[3, 7, 11, 0, 0], [5, 9, 13, 17, 19]])
    first_padding = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    model = bare_llama()
    set_attention(model, "bidirectional", None)
    layer_outputs(model, ids, first_padding)  # leaves the first batch's mask behind
    after = layer_outputs(model, ids, torch.ones_like(ids))[-1]
    fresh = bare_llama()
    set_attention(fresh, "bidirectional", None)
    torch.testing.assert_close(after, layer_outputs(fresh, ids, torch.ones_like(ids))[-1])

    def gradients(checkpointing: bool) -> list[torch.Tensor]:
        model = bare_llama().train()
        set_attention(model, "bidirectional-top-2", 2)
        if checkpointing:
            model.gradient_checkpointing_enable()  # as models/encoder.py turns it on
        model(input_ids=ids, attention_mask=first_padding).last_hidden_state.square().sum().backward()
        return [parameter.grad for parameter in model.parameters()]

    for plain, checkpointed in zip(gradients(False), gradients(True), strict=True):
        torch.testing.assert_close(plain, checkpointed, atol=1e-6, rtol=1e-5)


def test_the_encoder_reads_a_llama_with_its_bos_and_no_cls():
    encoder = tiny_llama()
    bos = encoder.tokenizer.bos_token_id
    assert (encoder.prefix, encoder.suffix) == ([bos], [])
    assert encoder.causal and encoder.pooling == "last"
    assert tiny_llama(attention="bidirectional").pooling == "first"
    assert tiny_llama(pooling="mean").pooling == "mean"


def test_last_pooling_reads_each_posts_last_real_token():
    encoder = tiny_llama(pooling="last")
    ids = torch.tensor([[11, 12, 13, 0], [21, 22, 23, 24]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]])
    with torch.no_grad():
        _, sentence = encoder(ids, mask)
        alone = encoder.model(input_ids=torch.tensor([[encoder.prefix[0], 11, 12, 13]])).last_hidden_state
    torch.testing.assert_close(sentence[0], alone[0, -1], atol=1e-5, rtol=1e-4)


def test_gradient_checkpointing_under_lora_gives_the_adapters_the_same_gradients():
    # the frozen base's activations are recomputed in the backward pass: the adapters must still get every
    # gradient (none lost to a frozen input), equal to the plain pass's
    def adapter_gradients(checkpointing: bool) -> dict[str, torch.Tensor]:
        encoder = tiny_llama(peft="lora", gradient_checkpointing=checkpointing).train()
        ids = torch.tensor([[11, 12, 13, 14], [21, 22, 23, 0]])
        hidden, sentence = encoder(ids, (ids > 0).long())
        (hidden.square().sum() + sentence.square().sum()).backward()
        return {name: p.grad for name, p in encoder.named_parameters() if p.requires_grad}

    plain, checkpointed = adapter_gradients(False), adapter_gradients(True)
    assert plain.keys() == checkpointed.keys() and all(grad is not None for grad in checkpointed.values())
    for name, grad in plain.items():
        torch.testing.assert_close(checkpointed[name], grad, atol=1e-6, rtol=1e-5)


def test_lora_trains_adapters_only_and_the_state_leaves_the_base_out():
    encoder = tiny_llama(peft="lora")
    trainable = [name for name, p in encoder.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in name for name in trainable)
    state = encoder.state_dict()
    assert sorted(state) == sorted(trainable)  # the frozen base is not in the state
    # a fresh encoder of the same base takes that state back, and then computes exactly the same vectors
    with torch.no_grad():
        for parameter in encoder.parameters():
            if parameter.requires_grad:
                parameter.add_(0.1)
    other = tiny_llama(peft="lora")
    other.load_state_dict(encoder.state_dict())
    ids, mask = torch.tensor([[11, 12, 13]]), torch.ones(1, 3, dtype=torch.long)
    with torch.no_grad():
        torch.testing.assert_close(other(ids, mask)[0], encoder(ids, mask)[0])
        assert not torch.allclose(tiny_llama(peft="lora")(ids, mask)[0], encoder(ids, mask)[0])


def test_a_state_that_lacks_an_adapter_weight_is_refused():
    encoder = tiny_llama(peft="lora")
    state = encoder.state_dict()
    state.pop(next(iter(state)))
    with pytest.raises(RuntimeError, match="Missing key"):
        tiny_llama(peft="lora").load_state_dict(state)


def test_discriminative_groups_hold_the_adapters_by_layer():
    from models.mvml import MVML

    module = MVML(encoder=tiny_llama(peft="lora"), num_views=2, labels=["a", "b"])
    groups = module.encoder_layer_groups()
    assert len(groups) == 3  # embeddings (no adapter), layer 1, layer 2
    assert groups[0] == [] and all(len(group) == 8 for group in groups[1:])
    assert all(p.requires_grad for group in groups for p in group)


@pytest.mark.parametrize(
    "settings, words",
    [
        ({"attention": "sideways"}, ["encoder.attention='sideways'", "bidirectional-top-K"]),
        ({"attention": "bidirectional-top-5"}, ["bidirectional-top-5", "K ≤ 2"]),
        ({"peft": "lora", "lora": {"target_modules": ["query_key"]}}, ["LoRA cannot be attached", "encoder.lora"]),
        ({"peft": "prefix"}, ["encoder.peft", "lora"]),
        ({"pooling": "max"}, ["encoder.pooling"]),
    ],
)
def test_bad_settings_end_in_one_message(settings, words):
    with pytest.raises(UserError) as error:
        tiny_llama(**settings)
    assert all(word in str(error.value) for word in words), str(error.value)


def test_an_attention_mode_on_a_bert_encoder_is_one_message(tiny_bert):
    with pytest.raises(UserError, match="already attends both ways"):
        ChunkedEncoder(tiny_bert, max_length=16, attention="bidirectional")


def test_four_bit_without_cuda_is_one_notice_and_full_precision(caplog):
    from models.llm import loading

    loading._FOUR_BIT_NOTICES.clear()
    with caplog.at_level(logging.WARNING):
        encoder = tiny_llama(load_in_4bit=True)
    notices = [r.getMessage() for r in caplog.records if "load_in_4bit" in r.getMessage()]
    assert len(notices) == 1 and notices[0].startswith("encoder.load_in_4bit=true is skipped")
    assert all(p.dtype == torch.float32 for p in encoder.parameters())


def test_settings_of_earlier_model_files_read_with_the_defaults():
    settings = encoder_settings({"name": "minilm", "name_or_path": "x", "max_length": 128, "trust_remote_code": False})
    assert settings.peft is None and settings.attention is None and settings.bidirectional_layers == 0
    assert encoder_settings({"name_or_path": "x", "attention": "bidirectional-top-3"}).bidirectional_layers == 3
    assert encoder_settings({"name_or_path": "x", "attention": "bidirectional"}).bidirectional_layers is None


def test_auto_dtype_is_bfloat16_only_for_a_frozen_base_on_a_gpu_that_has_it(monkeypatch):
    from models.encoder import encoder_dtype

    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)
    lora = encoder_settings({"name_or_path": "x", "peft": "lora"})
    whole = encoder_settings({"name_or_path": "x"})
    assert encoder_dtype(lora, "cuda") == torch.bfloat16
    assert encoder_dtype(whole, "cuda") == torch.float32  # a model that trains whole keeps float32 weights
    assert encoder_dtype(lora, "cpu") == torch.float32
    assert encoder_dtype(encoder_settings({"name_or_path": "x", "dtype": "float16"}), "cpu") == torch.float16
