"""Generation backends: the Hydra choice, the vLLM request building and result mapping (through a fake engine
that runs the tiny model with transformers, one prompt at a time), and the one clear message without vLLM."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import torch

from common.errors import UserError
from helpers.llm import PROMPTS
from models.llm.backends import Decoding, TransformersBackend, backend_factory, build_backend
from models.llm.vllm_backend import VllmApi, VllmBackend

CONF = Path(__file__).resolve().parents[3] / "conf"


@dataclass
class Params:
    kwargs: dict


def recorder(**kwargs):
    return Params(kwargs)


@dataclass
class Completion:
    token_ids: list


@dataclass
class RequestOutput:
    outputs: list


@dataclass
class BeamSequence:
    tokens: list  # prompt + new tokens, as vLLM's beam search returns them


@dataclass
class BeamOutput:
    sequences: list


@dataclass
class FakeEngine:
    """Answers like vLLM's LLM, computed by a transformers model one prompt at a time."""

    model: object
    pad_id: int
    calls: list = field(default_factory=list)

    def _run(self, ids, **kwargs):
        prompt = torch.tensor([ids])
        with torch.no_grad():
            out = self.model.generate(
                input_ids=prompt, attention_mask=torch.ones_like(prompt), pad_token_id=self.pad_id, **kwargs
            )
        return [row[len(ids) :].tolist() for row in out]

    def generate(self, prompts, params, use_tqdm=True, lora_request=None):
        self.calls.append(("generate", prompts, params.kwargs, lora_request))
        p = params.kwargs
        assert p["temperature"] == 0.0 and p["n"] == 1
        return [
            RequestOutput(
                [
                    Completion(t)
                    for t in self._run(x["prompt_token_ids"], do_sample=False, max_new_tokens=p["max_tokens"])
                ]
            )
            for x in prompts
        ]

    def beam_search(self, prompts, params, lora_request=None):
        self.calls.append(("beam_search", prompts, params.kwargs, lora_request))
        p = params.kwargs
        results = []
        for x in prompts:
            ids = x["prompt_token_ids"]
            new = self._run(
                ids, num_beams=p["beam_width"], num_return_sequences=p["beam_width"], max_new_tokens=p["max_tokens"]
            )
            results.append(BeamOutput([BeamSequence(ids + t) for t in new]))
        return results


@pytest.fixture
def fake_vllm(tiny_lm):
    model, tokenizer = tiny_lm
    engine = FakeEngine(model, tokenizer.pad_token_id)
    return VllmBackend(engine, tokenizer, VllmApi(recorder, recorder), lora_request="adapter-request"), engine


def test_greedy_requests_and_answers_match_the_transformers_backend(tiny_lm, fake_vllm):
    backend, engine = fake_vllm
    decoding = Decoding(max_new_tokens=7, batch_size=4)
    expected = TransformersBackend(*tiny_lm).complete_prompts(PROMPTS, decoding)
    assert backend.complete_prompts(PROMPTS, decoding) == expected
    [(method, prompts, params, lora)] = engine.calls
    tokenizer = tiny_lm[1]
    assert method == "generate" and lora == "adapter-request"
    assert [p["prompt_token_ids"] for p in prompts] == [tokenizer(t)["input_ids"] for t in PROMPTS]
    assert params == {"n": 1, "temperature": 0.0, "max_tokens": 7}


def test_beam_candidates_strip_the_prompt_and_keep_rank_order(tiny_lm, fake_vllm):
    from missci.lora.tasks import CandidateSettings, generate_candidates

    backend, engine = fake_vllm
    model, tokenizer = tiny_lm
    settings = CandidateSettings(num_candidates=2, strategy="beam", max_new_tokens=6)
    expected = generate_candidates(model, tokenizer, PROMPTS[:3], settings)
    assert generate_candidates(backend, None, PROMPTS[:3], settings) == expected
    [(method, _, params, lora)] = engine.calls
    assert method == "beam_search" and params == {"beam_width": 2, "max_tokens": 6} and lora == "adapter-request"


def test_sampling_requests_carry_n_seed_temperature_and_top_p(tiny_lm):
    _, tokenizer = tiny_lm
    ids = tokenizer("a claim")["input_ids"]

    class Engine:
        def generate(self, prompts, params, use_tqdm=True, lora_request=None):
            self.params = params.kwargs
            return [RequestOutput([Completion(ids[1:3]), Completion(ids[2:3]), Completion(ids[1:2])])]

    engine = Engine()
    backend = VllmBackend(engine, tokenizer, VllmApi(recorder, recorder))
    answers = backend.complete([ids], Decoding(max_new_tokens=5, k=2, sample=True, temperature=0.7, top_p=0.9, seed=4))
    assert engine.params == {"n": 2, "temperature": 0.7, "top_p": 0.9, "max_tokens": 5, "seed": 4}
    assert answers == [[tokenizer.decode(ids[1:3]), tokenizer.decode(ids[2:3])]]


def test_a_missing_answer_is_an_error_not_a_shifted_row(tiny_lm):
    _, tokenizer = tiny_lm

    class Engine:
        def generate(self, prompts, params, use_tqdm=True, lora_request=None):
            return [RequestOutput([Completion([5])])]

    with pytest.raises(ValueError):
        VllmBackend(Engine(), tokenizer, VllmApi(recorder, recorder)).complete([[1, 2], [3]], Decoding())


def test_vllm_without_the_package_is_one_clear_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(UserError, match="needs the vllm package") as info:
        build_backend({"name_or_path": "smollm2", "backend": {"_target_": "models.llm.vllm_backend.VllmBackend.load"}})
    assert "pip install '.[vllm]'" in info.value.fix


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message of a machine without a GPU")
def test_vllm_without_a_gpu_is_one_clear_message(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))
    with pytest.raises(UserError, match="needs a CUDA GPU"):
        build_backend({"name_or_path": "smollm2", "backend": {"_target_": "models.llm.vllm_backend.VllmBackend.load"}})


def test_the_backend_is_a_config_group_of_every_llm():
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        default = compose(config_name="train", overrides=["llm=llama2-7b"])
        vllm = compose(config_name="train", overrides=["llm=smollm2", "llm/backend=vllm"])
        dotted = compose(config_name="train", overrides=["llm.backend=vllm"])
    assert backend_factory(dict(default.llm)).func == TransformersBackend.load
    assert backend_factory(dict(vllm.llm)).func == VllmBackend.load
    assert vllm.llm.backend.max_lora_rank >= 8
    with pytest.raises(UserError, match="llm/backend=vllm"):
        backend_factory(dict(dotted.llm))
    for name in (
        "llama2-7b",
        "llama2-13b",
        "llama2-70b",
        "llama3-8b-instruct",
        "mixtral-8x7b-instruct",
        "smollm2",
        "tiny-llama",
    ):
        with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
            assert compose(config_name="train", overrides=[f"llm={name}"]).llm.backend._target_.endswith(".load")
