"""Batched, seeded text generation with a causal LM, and prompt rendering through the model's chat template.

Task code builds plain-text prompts; this module turns them into what the model expects (its chat template
when the tokenizer has one, the bare text otherwise) and returns only the newly generated text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass
class GenerationSettings:
    max_new_tokens: int = 256
    batch_size: int = 1
    num_beams: int = 1          # 1 = greedy decoding
    seed: int = 1
    use_chat_template: bool = True
    system_prompt: str | None = None


def render_prompt(tokenizer, text: str, use_chat_template: bool = True, system_prompt: str | None = None) -> str:
    """The user message ``text`` wrapped in the tokenizer's chat template (generation prompt added)."""
    if use_chat_template and getattr(tokenizer, "chat_template", None):
        messages = ([{"role": "system", "content": system_prompt}] if system_prompt else [])
        messages.append({"role": "user", "content": text})
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return f"{system_prompt}\n\n{text}" if system_prompt else text


def generate(model, tokenizer, prompts: Sequence[str], settings: GenerationSettings | None = None,
             rendered: bool = False) -> list[str]:
    """Generate a continuation for each prompt (deterministic: greedy or beam search, fixed seed)."""
    import torch

    settings = settings or GenerationSettings()
    torch.manual_seed(settings.seed)
    texts = list(prompts) if rendered else [
        render_prompt(tokenizer, p, settings.use_chat_template, settings.system_prompt) for p in prompts]
    device = next(model.parameters()).device
    outputs: list[str] = []
    has_template = bool(getattr(tokenizer, "chat_template", None)) and settings.use_chat_template
    for start in range(0, len(texts), settings.batch_size):
        batch = texts[start:start + settings.batch_size]
        # A chat template already contains the special tokens (e.g. BOS); do not add them twice.
        encoded = tokenizer(batch, return_tensors="pt", padding=True, add_special_tokens=not has_template)
        encoded = {k: v.to(device) for k, v in encoded.items() if k in ("input_ids", "attention_mask")}
        with torch.no_grad():
            generated = model.generate(**encoded, max_new_tokens=settings.max_new_tokens, do_sample=False,
                                       num_beams=settings.num_beams, pad_token_id=tokenizer.pad_token_id)
        new_tokens = generated[:, encoded["input_ids"].shape[1]:]
        outputs.extend(tokenizer.batch_decode(new_tokens, skip_special_tokens=True))
    return outputs
