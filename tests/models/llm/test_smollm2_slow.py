"""SmolLM2 (fp32, slow): a batch of Missci prompts (the packaged synthetic sample: the prompts' shape is what
matters, not the real arguments), padded left, answers exactly as one at a time."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_smollm2_batched_greedy_equals_one_at_a_time(missci_sample):
    from omegaconf import OmegaConf

    from missci.dataset.reader import iter_fallacies, load_split
    from missci.prompting.prompts import PromptOptions, reconstruction_prompt
    from models.llm.backends import build_backend
    from models.llm.generation import GenerationSettings

    llm = OmegaConf.to_container(OmegaConf.load(REPO / "conf/llm/smollm2.yaml"))
    backend = build_backend({**llm, "device": "cpu"})
    pairs = list(iter_fallacies(load_split("dev", missci_sample)))[:3]
    prompts = [reconstruction_prompt(a, f, PromptOptions()) for a, f in pairs]
    alone = backend.generate(prompts, GenerationSettings(max_new_tokens=16, batch_size=1))
    batched = backend.generate(prompts, GenerationSettings(max_new_tokens=16, batch_size=3))
    assert batched == alone and all(a.strip() for a in alone)


@pytest.mark.slow
def test_smollm2_beams_from_a_shared_prefill_equal_copied_prompts(missci_sample):
    """Real Missci prompts, 3 beams: one prefill per prompt (the default path) gives the beams HF generate
    finds when it copies every prompt three times itself."""
    import torch
    from omegaconf import OmegaConf

    from missci.dataset.reader import iter_fallacies, load_split
    from missci.prompting.prompts import PromptOptions, reconstruction_prompt
    from models.llm.backends import build_backend
    from models.llm.generation import encode_prompts, generate_token_batches, left_padded

    llm = OmegaConf.to_container(OmegaConf.load(REPO / "conf/llm/smollm2.yaml"))
    backend = build_backend({**llm, "device": "cpu"})
    model, tokenizer = backend.model, backend.tokenizer
    pairs = list(iter_fallacies(load_split("dev", missci_sample)))[3:5]
    token_ids = encode_prompts(tokenizer, [reconstruction_prompt(a, f, PromptOptions()) for a, f in pairs])
    token_ids.sort(key=len, reverse=True)  # the batch order of generate_token_batches
    shared = generate_token_batches(
        model, tokenizer, token_ids, 2, num_return_sequences=3, num_beams=3, do_sample=False, max_new_tokens=12
    )
    ids, mask = left_padded(token_ids, tokenizer.pad_token_id)
    with torch.no_grad():
        plain = model.generate(
            input_ids=ids,
            attention_mask=mask,
            pad_token_id=tokenizer.pad_token_id,
            num_return_sequences=3,
            num_beams=3,
            do_sample=False,
            max_new_tokens=12,
        )
    plain_texts = tokenizer.batch_decode(plain[:, ids.shape[1] :], skip_special_tokens=True)
    assert [t for row in shared for t in row] == plain_texts
