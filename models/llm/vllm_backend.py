"""The vLLM backend (``llm/backend=vllm``): the same prompt token ids through vLLM's offline batch API.

Requests: one ``{"prompt_token_ids": ...}`` prompt per task prompt (rendered and tokenised by the project, so
the model sees exactly what the transformers backend feeds it); greedy and sampling through ``LLM.generate``
with ``SamplingParams`` (``temperature=0`` is greedy; ``n=k`` samples with a seed), beam search through
``LLM.beam_search`` with ``BeamSearchParams(beam_width=beams)``; a LoRA adapter folder written by peft through
``LoRARequest``. Results: ``RequestOutput.outputs[j].token_ids`` (and a beam's ``tokens`` minus the prompt)
are decoded by the project's tokenizer with special tokens skipped, as the transformers backend decodes. vLLM's own
progress bar shows while ``LLM.generate`` runs on a terminal (``common.progress.on_terminal``).

vLLM is an optional extra for CUDA machines (``pip install '.[vllm]'``); selecting it without vLLM or without
a GPU ends in one message. GGUF models are served from their converted safetensors folder
(models/llm/converted_cache.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.errors import UserError
from common.progress import on_terminal
from models.llm.backends import Decoding, GenerationBackend


def require_vllm():
    """The imported ``vllm`` module, or one clear error when it is missing or no CUDA GPU is visible."""
    try:
        import vllm
    except ImportError:
        raise UserError(
            "llm/backend=vllm needs the vllm package, which is not installed here.",
            fix="on a machine with a CUDA GPU: pip install '.[vllm]'; otherwise use the default "
            "llm/backend=transformers.",
        ) from None
    import torch

    if not torch.cuda.is_available():
        raise UserError(
            "llm/backend=vllm needs a CUDA GPU, and none is visible on this machine.",
            fix="run on a GPU machine, or use the default llm/backend=transformers.",
        )
    return vllm


@dataclass(frozen=True)
class VllmApi:
    """The vLLM classes a request is built from (injected, so tests can use a fake engine without vLLM)."""

    SamplingParams: Any
    BeamSearchParams: Any


def model_reference(spec) -> str:
    """What vLLM loads: the converted folder of a GGUF model, else the spec's (resolved) model reference."""
    from models.llm.loading import model_source

    if spec.tiny_config is not None:
        raise UserError(
            "the tiny random test model cannot be served by vLLM.",
            fix="use llm/backend=transformers with llm=tiny-llama.",
        )
    reference, gguf = model_source(spec)
    return str(Path(reference) / gguf["gguf_file"]) if gguf else reference


class VllmBackend(GenerationBackend):
    def __init__(self, engine, tokenizer, api: VllmApi, lora_request=None):
        self.engine, self.tokenizer, self.api, self.lora_request = engine, tokenizer, api, lora_request

    @classmethod
    def load(
        cls,
        spec,
        adapter: str | None = None,
        gpu_memory_utilization: float = 0.85,
        max_model_len: int | None = None,
        max_lora_rank: int = 64,
        enforce_eager: bool = False,
        **engine_options: Any,
    ) -> VllmBackend:
        """Start a ``vllm.LLM`` for the spec's model (LoRA enabled when an adapter folder is given)."""
        vllm = require_vllm()
        from vllm.lora.request import LoRARequest
        from vllm.sampling_params import BeamSearchParams

        from models.llm.loading import load_tokenizer

        reference = model_reference(spec)
        tokenizer = load_tokenizer(spec)
        options: dict[str, Any] = {
            "seed": spec.seed,
            "trust_remote_code": spec.trust_remote_code,
            "gpu_memory_utilization": gpu_memory_utilization,
            "enforce_eager": enforce_eager,
            "dtype": spec.dtype,
            **engine_options,
        }
        if max_model_len is not None:
            options["max_model_len"] = max_model_len
        if spec.load_in_4bit:
            options["quantization"] = "bitsandbytes"
        if adapter is not None:
            options.update(enable_lora=True, max_lora_rank=max_lora_rank)
        engine = vllm.LLM(model=reference, tokenizer=getattr(tokenizer, "name_or_path", None) or reference, **options)
        lora = LoRARequest("adapter", 1, str(Path(adapter).resolve())) if adapter is not None else None
        return cls(engine, tokenizer, VllmApi(vllm.SamplingParams, BeamSearchParams), lora)

    def _decode(self, token_ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(token_ids), skip_special_tokens=True)

    def complete(self, token_ids: Sequence[Sequence[int]], decoding: Decoding) -> list[list[str]]:
        prompts = [{"prompt_token_ids": list(ids)} for ids in token_ids]
        if decoding.beams > 1 and not decoding.sample:
            params = self.api.BeamSearchParams(beam_width=decoding.beams, max_tokens=decoding.max_new_tokens)
            results = self.engine.beam_search(prompts, params, lora_request=self.lora_request)
            return [
                [self._decode(seq.tokens[len(ids) :]) for seq in result.sequences[: decoding.k]]
                for ids, result in zip(token_ids, results, strict=True)
            ]
        if decoding.sample:
            params = self.api.SamplingParams(
                n=decoding.k,
                temperature=decoding.temperature,
                top_p=decoding.top_p,
                max_tokens=decoding.max_new_tokens,
                seed=decoding.seed,
            )
        else:
            params = self.api.SamplingParams(n=1, temperature=0.0, max_tokens=decoding.max_new_tokens)
        results = self.engine.generate(prompts, params, use_tqdm=on_terminal(), lora_request=self.lora_request)
        # LLM.generate answers in input order; strict: a missing answer must not shift the rows silently
        return [
            [self._decode(out.token_ids) for out in result.outputs[: decoding.k]]
            for _, result in zip(prompts, results, strict=True)
        ]
