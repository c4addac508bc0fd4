"""LoRA wiring on a tiny random Llama: only adapters train, the base stays frozen, adapters round-trip."""

import lightning.pytorch as pl
import torch

from helpers.lora import tiny_spec
from models.llm.lora_lm import (
    LoraCausalLM,
    LoraSettings,
    OptimiserSettings,
    add_lora,
    count_parameters,
    load_adapter,
    merge_adapter,
    pad_batch,
    save_adapter,
)


def batch_of(tokenizer, texts, prompt_tokens=3):
    features = []
    for text in texts:
        ids = tokenizer(text)["input_ids"]
        features.append({"input_ids": ids, "labels": [-100] * prompt_tokens + ids[prompt_tokens:]})
    return pad_batch(features, tokenizer.pad_token_id)


def train_steps(peft_model, tokenizer, steps=3):
    batch = batch_of(tokenizer, ["the premise is wrong", "one patient is enough for all"])
    loader = torch.utils.data.DataLoader([batch], batch_size=None)
    trainer = pl.Trainer(
        max_steps=steps,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer.fit(LoraCausalLM(peft_model, OptimiserSettings(learning_rate=5e-2)), train_dataloaders=loader)
    return batch


def test_only_adapter_weights_train_and_base_is_frozen(tiny_model):
    model, tokenizer = tiny_model
    peft_model = add_lora(model, LoraSettings(rank=4, alpha=8, dropout=0.0))
    trainable_names = [n for n, p in peft_model.named_parameters() if p.requires_grad]
    assert trainable_names and all("lora_" in n for n in trainable_names)
    assert len(trainable_names) == 2 * 4 * 2  # A and B for q,k,v,o in each of the 2 layers
    trainable, total = count_parameters(peft_model)
    assert 0 < trainable < total / 2
    base_before = {n: p.detach().clone() for n, p in peft_model.named_parameters() if not p.requires_grad}
    lora_b_before = {n: p.detach().clone() for n, p in peft_model.named_parameters() if "lora_B" in n}
    train_steps(peft_model, tokenizer)
    for name, param in peft_model.named_parameters():
        if name in base_before:
            assert torch.equal(param, base_before[name]), f"frozen weight {name} changed"
    assert all(not torch.equal(dict(peft_model.named_parameters())[n], before) for n, before in lora_b_before.items())


def test_saved_adapter_reloads_to_the_same_outputs(tmp_path, tiny_model):
    from models.llm.loading import load_causal_lm

    model, tokenizer = tiny_model
    peft_model = add_lora(model, LoraSettings(rank=4, alpha=8, dropout=0.0))
    batch = train_steps(peft_model, tokenizer)
    peft_model.eval()
    with torch.no_grad():
        trained = peft_model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    folder = save_adapter(peft_model, tmp_path / "adapter")
    assert (folder / "adapter_model.safetensors").is_file() and (folder / "adapter_config.json").is_file()

    fresh_base, _ = load_causal_lm(tiny_spec())  # same seed: the same random base
    with torch.no_grad():
        untouched = fresh_base(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    reloaded = load_adapter(fresh_base, folder).eval()
    with torch.no_grad():
        again = reloaded(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    assert torch.allclose(trained, again, atol=1e-6)
    assert not torch.allclose(trained, untouched, atol=1e-4)  # the adapter does change the model

    merged = merge_adapter(reloaded)
    assert not any("lora_" in n for n, _ in merged.named_parameters())
    with torch.no_grad():
        merged_logits = merged(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    assert torch.allclose(trained, merged_logits, atol=1e-5)


def test_checkpoint_holds_only_adapter_tensors(tiny_model):
    model, _ = tiny_model
    module = LoraCausalLM(add_lora(model, LoraSettings(rank=2, alpha=4, dropout=0.0)))
    checkpoint = {"state_dict": module.state_dict()}
    module.on_save_checkpoint(checkpoint)
    assert checkpoint["state_dict"] and all("lora_" in k for k in checkpoint["state_dict"])
    assert module.strict_loading is False and module.model.training


def test_unknown_target_module_is_a_user_error(tiny_model):
    import pytest

    from common.errors import UserError

    model, _ = tiny_model
    with pytest.raises(UserError, match="target_modules"):
        add_lora(model, LoraSettings(target_modules=("no_such_proj",)))
