"""SmolLM2 (fp32, slow): a batch of real Missci prompts, padded left, answers exactly as one at a time."""
from __future__ import annotations

from pathlib import Path

import pytest

DATA_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "missci"


@pytest.mark.slow
def test_smollm2_batched_greedy_equals_one_at_a_time():
    if not (DATA_DIR / "dev.missci.jsonl").is_file():
        pytest.skip(f"Missci data not found under {DATA_DIR}")
    from omegaconf import OmegaConf

    from missci.data import iter_fallacies, load_split
    from missci.prompts import PromptOptions, reconstruction_prompt
    from models.backends import build_backend
    from models.generation import GenerationSettings

    llm = OmegaConf.to_container(OmegaConf.load(Path(__file__).resolve().parents[2] / "conf/llm/smollm2.yaml"))
    backend = build_backend({**llm, "device": "cpu"})
    pairs = list(iter_fallacies(load_split("dev", DATA_DIR)))[:3]
    prompts = [reconstruction_prompt(a, f, PromptOptions()) for a, f in pairs]
    alone = backend.generate(prompts, GenerationSettings(max_new_tokens=16, batch_size=1))
    batched = backend.generate(prompts, GenerationSettings(max_new_tokens=16, batch_size=3))
    assert batched == alone and all(a.strip() for a in alone)
