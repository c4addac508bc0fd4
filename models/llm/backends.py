"""Generation backends: the engine that turns prompt token ids into continuations.

Task code (Faina and Missci zero-shot, LoRA candidates) renders and tokenises its prompts once, with the
model's own tokenizer (``models.llm.generation.encode_prompts``), and asks a backend for ``k`` continuations per
prompt under one ``Decoding``. Because every backend receives the same token ids and its answers are decoded
by the same tokenizer, prompts, parsing and outputs are the same whichever engine runs them.

The backend is a config choice: ``llm.backend`` is a Hydra config group (``conf/llm/backend/*.yaml``) whose
``_target_`` is a factory taking the model spec (and an optional LoRA adapter folder):
``transformers`` (default: batched ``model.generate``) or ``vllm`` (``models/llm/vllm_backend.py``, GPU).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from common.errors import UserError
from common.renames import current_name
from models.llm.generation import DEFAULT_BATCH_SIZE, GenerationSettings, encode_prompts, generate_token_batches

DEFAULT_BACKEND = {"_target_": "models.llm.backends.TransformersBackend.load", "_partial_": True}
# the same configs as conf/llm/backend/*.yaml, for command lines that pick a backend by name
BACKENDS = {
    "transformers": DEFAULT_BACKEND,
    "vllm": {"_target_": "models.llm.vllm_backend.VllmBackend.load", "_partial_": True},
}


@dataclass(frozen=True)
class Decoding:
    """How continuations are decoded, whatever the engine.

    ``beams > 1``: beam search, the ``k`` best beams; ``sample``: ``k`` seeded samples (temperature, top_p);
    otherwise greedy (``k`` must be 1)."""

    max_new_tokens: int = 256
    k: int = 1
    beams: int = 1
    sample: bool = False
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int = 1
    batch_size: int = DEFAULT_BATCH_SIZE  # prompts per model.generate call (vLLM schedules its own batches)

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1 or self.k < 1 or self.beams < 1 or self.batch_size < 1:
            raise UserError(
                f"generation settings must be positive: {dataclasses.asdict(self)}",
                fix="set max_new_tokens, the number of candidates, beams and batch_size to >= 1.",
            )
        if not self.sample and self.k > self.beams:
            raise UserError(
                f"{self.k} candidates asked for with {self.beams} beam(s) and no sampling",
                fix="use at least as many beams as candidates, or sample.",
            )


class GenerationBackend:
    """Base of the engines: ``complete`` gets token ids and returns ``k`` texts per prompt, in input order."""

    tokenizer: Any

    def complete(self, token_ids: Sequence[Sequence[int]], decoding: Decoding) -> list[list[str]]:
        raise NotImplementedError

    def merge_adapter(self) -> None:
        """Fold an attached LoRA adapter into the base weights (only where the engine holds the weights)."""
        raise UserError(
            f"{type(self).__name__} cannot merge a LoRA adapter; it serves the adapter as it is.",
            fix="drop --merge, or use the transformers backend.",
        )

    def complete_prompts(
        self,
        prompts: Sequence[str],
        decoding: Decoding,
        use_chat_template: bool = True,
        system_prompt: str | None = None,
    ) -> list[list[str]]:
        """Render (chat template), tokenise and complete plain-text task prompts."""
        return self.complete(encode_prompts(self.tokenizer, prompts, use_chat_template, system_prompt), decoding)

    def generate(self, prompts: Sequence[str], settings: GenerationSettings | None = None) -> list[str]:
        """One deterministic answer per prompt (greedy, or the best beam), in input order."""
        settings = settings or GenerationSettings()
        decoding = Decoding(
            max_new_tokens=settings.max_new_tokens,
            beams=settings.num_beams,
            seed=settings.seed,
            batch_size=settings.batch_size,
        )
        answers = self.complete_prompts(prompts, decoding, settings.use_chat_template, settings.system_prompt)
        return [texts[0] for texts in answers]


class TransformersBackend(GenerationBackend):
    """``model.generate`` on length-sorted, left-padded batches (models/llm/generation.py)."""

    def __init__(self, model, tokenizer):
        self.model, self.tokenizer = model, tokenizer

    @classmethod
    def load(cls, spec, adapter: str | None = None) -> TransformersBackend:
        """Load the spec's model (models/llm/loading.py), with a peft LoRA adapter folder attached when given."""
        from models.llm.loading import load_causal_lm

        model, tokenizer = load_causal_lm(spec)
        if adapter is not None:
            from models.llm.lora_lm import load_adapter

            model = load_adapter(model, adapter).eval()
        return cls(model, tokenizer)

    def merge_adapter(self) -> None:
        from models.llm.lora_lm import merge_adapter

        self.model = merge_adapter(self.model).eval()

    def complete(self, token_ids: Sequence[Sequence[int]], decoding: Decoding) -> list[list[str]]:
        import torch

        torch.manual_seed(decoding.seed)
        if decoding.sample:
            kwargs = {"do_sample": True, "num_beams": 1, "temperature": decoding.temperature, "top_p": decoding.top_p}
        else:
            kwargs = {"do_sample": False, "num_beams": decoding.beams}
        return generate_token_batches(
            self.model,
            self.tokenizer,
            token_ids,
            decoding.batch_size,
            num_return_sequences=decoding.k,
            max_new_tokens=decoding.max_new_tokens,
            **kwargs,
        )


def spec_from_config(llm: dict):
    """The ``CausalLMSpec`` of an ``llm`` config block (keys the spec does not know are ignored)."""
    from models.llm.loading import CausalLMSpec

    fields = {f.name for f in dataclasses.fields(CausalLMSpec)}
    return CausalLMSpec(**{k: v for k, v in llm.items() if k in fields})


def backend_factory(llm: dict) -> Callable[..., GenerationBackend]:
    """The factory named by ``llm.backend`` (a ``_target_`` config; the transformers backend when absent)."""
    from hydra.utils import instantiate
    from omegaconf import DictConfig, OmegaConf

    node = llm.get("backend") or DEFAULT_BACKEND
    if isinstance(node, DictConfig):
        node = OmegaConf.to_container(node, resolve=True)
    if not isinstance(node, dict) or "_target_" not in node:
        raise UserError(
            f"llm.backend is {node!r}, not a backend config.",
            fix="choose the config group on the command line: llm/backend=transformers or "
            "llm/backend=vllm (a slash, not a dot).",
        )
    # conf/ only: a saved LoRA bundle names its backend and is read through models.llm.saved_llm, never here
    target = current_name(node["_target_"])
    return instantiate({**node, "_target_": target, "_partial_": True})


def build_backend(llm: dict, adapter: str | None = None, **spec_overrides: Any) -> GenerationBackend:
    """The configured engine with the ``llm`` block's model loaded (and ``adapter`` attached)."""
    spec = dataclasses.replace(spec_from_config(llm), **spec_overrides)
    return backend_factory(llm)(spec=spec, adapter=adapter)
