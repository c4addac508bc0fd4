"""Batched, seeded text generation with a causal LM, and prompt rendering through the model's chat template.

Task code builds plain-text prompts; this module turns them into what the model expects (its chat template
when the tokenizer has one, the bare text otherwise) and returns only the newly generated text.

Why batches: one sequence per decoding step is memory-bound on a CPU (every step reads all weights), so
decoding B sequences per step costs little more than one. Prompts are sorted by token length before they are
cut into batches (little left padding, so little wasted work) and the answers are put back in input order.
Left padding keeps every prompt's last token at the end of the row; ``generate`` derives position ids from
the attention mask, so a padded prompt sees the same positions as when it is alone.

Why a shared prefill: beam search (and sampling k answers) copies each prompt k times before ``generate``
runs its first forward pass, so the prompt tokens, the compute-bound part on a CPU, would be processed k
times. Here each prompt is prefilled once and its key/value cache copied k times; the decoding that follows
is the same (tested: identical beams and samples).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from common.progress import progress

# Default prompts per batch (why these: scripts/benchmark_generation.py, docs/speed-and-scale.md "Generation speed")
DEFAULT_BATCH_SIZE = 16
# ranked LoRA candidates: each prompt decodes num_candidates beams, so fewer prompts per batch
DEFAULT_CANDIDATE_BATCH_SIZE = 8


@dataclass
class GenerationSettings:
    max_new_tokens: int = 256
    batch_size: int = DEFAULT_BATCH_SIZE
    num_beams: int = 1  # 1 = greedy decoding
    seed: int = 1
    use_chat_template: bool = True
    system_prompt: str | None = None


def render_prompt(tokenizer, text: str, use_chat_template: bool = True, system_prompt: str | None = None) -> str:
    """The user message ``text`` wrapped in the tokenizer's chat template (generation prompt added)."""
    if use_chat_template and getattr(tokenizer, "chat_template", None):
        messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
        messages.append({"role": "user", "content": text})
        try:
            return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception as err:  # noqa: BLE001 - jinja2's TemplateError and errors raised by the template itself
            raise chat_template_refused(tokenizer, err, bool(system_prompt)) from None
    return f"{system_prompt}\n\n{text}" if system_prompt else text


def chat_template_refused(tokenizer, err: Exception, has_system_prompt: bool):
    """One message for a chat template that refuses the messages (e.g. Mixtral Instruct has no system role)."""
    from common.errors import UserError

    name = getattr(tokenizer, "name_or_path", "") or "the model"
    reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
    if has_system_prompt:
        fix = (
            "this model's chat template takes no system message: set the system prompt to null "
            "(task.zero_shot.system_prompt=null for Faina, task.generation.system_prompt=null for Missci), "
            "or put the instructions in the prompt itself"
        )
    else:
        fix = "set use_chat_template=false to prompt with plain text, or use a model whose template takes a user turn"
    return UserError(f"the chat template of {name!r} refused the prompt ({reason})", fix=fix)


def encode_prompts(
    tokenizer, prompts: Sequence[str], use_chat_template: bool = True, system_prompt: str | None = None
) -> list[list[int]]:
    """Token ids of each rendered prompt, exactly as every backend feeds them to the model.

    A chat template already contains the special tokens (e.g. BOS), so they are not added twice."""
    has_template = use_chat_template and bool(getattr(tokenizer, "chat_template", None))
    texts = [render_prompt(tokenizer, p, use_chat_template, system_prompt) for p in prompts]
    return [tokenizer(text, add_special_tokens=not has_template)["input_ids"] for text in texts]


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of the prompts cut into batches of similar length (longest first, stable on ties)."""
    if batch_size < 1:
        from common.errors import UserError

        raise UserError(f"generation batch size is {batch_size}", fix="give a positive batch_size, e.g. 16")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def left_padded(rows: Sequence[Sequence[int]], pad_id: int):
    """``(input_ids, attention_mask)`` tensors with every row padded on the left to the longest one."""
    import torch

    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        if row:
            ids[i, width - len(row) :] = torch.tensor(list(row), dtype=torch.long)
            mask[i, width - len(row) :] = 1
    return ids, mask


def prefilled_cache(model, ids, mask, copies: int) -> dict[str, Any]:
    """The key/value cache of every prompt token but the last (``generate`` feeds that one and continues from
    the cache), computed once per prompt and repeated ``copies`` times in the order ``generate`` expands a batch
    for beams or samples (each prompt's copies next to each other), as the ``generate`` keyword that takes it.
    Position ids follow the attention mask, as ``generate`` would set them."""
    import inspect

    positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 0)
    base = model.get_base_model() if hasattr(model, "get_base_model") else model  # a peft wrapper forwards **kwargs
    accepted = inspect.signature(base.forward).parameters
    last_only = {name: 1 for name in ("logits_to_keep", "num_logits_to_keep") if name in accepted}  # transformers 5 / 4
    output = model(
        input_ids=ids[:, :-1], attention_mask=mask[:, :-1], position_ids=positions[:, :-1], use_cache=True, **last_only
    )
    # transformers 5 names the cache ``cache`` (output and generate keyword), 4.x ``past_key_values``
    key = "cache" if getattr(output, "cache", None) is not None else "past_key_values"
    cache = getattr(output, key)
    cache.batch_repeat_interleave(copies)
    return {key: cache}


def generate_token_batches(
    model,
    tokenizer,
    token_ids: Sequence[Sequence[int]],
    batch_size: int,
    num_return_sequences: int = 1,
    shared_prefill: bool = True,
    **decoding: Any,
) -> list[list[str]]:
    """For each prompt (token ids), ``num_return_sequences`` decoded continuations, in input order.

    ``decoding`` goes to ``model.generate`` (``max_new_tokens``, ``num_beams``, ``do_sample`` …).
    ``shared_prefill=False`` lets ``generate`` copy the prompts for beams/samples itself (the benchmark's baseline)."""
    import torch

    device = next(model.parameters()).device
    results: list[list[str]] = [[] for _ in token_ids]
    k = num_return_sequences
    beams = int(decoding.get("num_beams") or 1)
    copies = beams if beams > 1 else k  # how many rows generate makes of each prompt: beams, else samples
    batches = length_sorted_batches([len(t) for t in token_ids], batch_size)
    for batch in progress(batches, f"generating for {len(token_ids)} prompts"):
        ids, mask = left_padded([token_ids[i] for i in batch], tokenizer.pad_token_id)
        ids, mask = ids.to(device), mask.to(device)
        with torch.no_grad():
            shared = (
                prefilled_cache(model, ids, mask, copies) if shared_prefill and copies > 1 and ids.shape[1] > 1 else {}
            )
            generated = model.generate(
                input_ids=ids,
                attention_mask=mask,
                pad_token_id=tokenizer.pad_token_id,
                num_return_sequences=k,
                **shared,
                **decoding,
            )
        decoded = tokenizer.batch_decode(generated[:, ids.shape[1] :], skip_special_tokens=True)
        for row, index in enumerate(batch):
            results[index] = decoded[row * k : (row + 1) * k]
    return results


def generate(model, tokenizer, prompts: Sequence[str], settings: GenerationSettings | None = None) -> list[str]:
    """Generate a continuation for each prompt (deterministic: greedy or beam search, fixed seed), batched
    by length; the answers come back in the order of ``prompts``."""
    import torch

    settings = settings or GenerationSettings()
    torch.manual_seed(settings.seed)
    token_ids = encode_prompts(tokenizer, prompts, settings.use_chat_template, settings.system_prompt)
    outputs = generate_token_batches(
        model,
        tokenizer,
        token_ids,
        settings.batch_size,
        max_new_tokens=settings.max_new_tokens,
        do_sample=False,
        num_beams=settings.num_beams,
    )
    return [texts[0] for texts in outputs]
