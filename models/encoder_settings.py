"""What the ``encoder`` config block may say, checked once: for a run's config and for a saved ``model.json``.

BERT-style encoders need only ``name_or_path`` and ``max_length``. A causal LM (Llama, SmolLM2, an Italian decoder
model) used as the shared encoder adds how it is adapted and read (docs/models.md "Decoder LLMs as the encoder"):

- ``peft: lora`` trains LoRA adapters (``lora.rank``, ``alpha``, ``dropout``, ``target_modules``) on the frozen
  encoder; the heads and CRFs train fully. The saved model then holds the adapter and the heads, not the base.
- ``attention``: ``causal`` (the model's own mask), ``bidirectional`` (the mask removed in every layer: LS-unLLaMA)
  or ``bidirectional-top-K`` (removed in the top K layers only); ``null`` leaves the model as it is. Only a model
  whose attention is causal may set it.
- ``pooling``: the post vector of MVML: ``first`` (the window's first vector: BERT's [CLS]), ``last`` (the last real
  token's: the only one a causal model lets see the whole window) or ``mean``; ``null``: ``last`` for a model whose
  attention stays causal, ``first`` otherwise.
- ``random_init``: the encoder built from its ``config.json`` with (seeded) random weights, for speed and memory
  checks of a model without downloading it (``encoder=llama-7b-shape``).
- ``gguf_file`` (a GGUF file in ``name_or_path``'s folder, converted once: models/llm/converted_cache.py),
  ``dtype`` (``auto``: bfloat16 for a frozen base under LoRA on a GPU that has it, float32 otherwise),
  ``load_in_4bit`` (QLoRA on CUDA; elsewhere one notice and full precision), ``gradient_checkpointing``.

Every field has the default that earlier releases behaved as, so their ``model.json`` files read unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field

from common.errors import UserError
from common.untrusted import Strict, validated

ATTENTION_PATTERN = r"^(causal|bidirectional|bidirectional-top-[1-9][0-9]{0,3})$"
ATTENTION_MODES = "causal, bidirectional or bidirectional-top-K (K: the number of top layers)"

Name = Annotated[str, Field(min_length=1, max_length=200)]


class LoraBlock(Strict):
    """The LoRA adapters put on the encoder's linear layers (peft)."""

    rank: Annotated[int, Field(ge=1, le=4096)] = 8
    alpha: Annotated[float, Field(gt=0, le=1e6)] = 16.0
    dropout: Annotated[float, Field(ge=0, lt=1)] = 0.05
    target_modules: Annotated[list[Name], Field(min_length=1, max_length=100)] = [
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
    ]


class DecoderSettings(Strict):
    """How a decoder LLM is adapted and read as the encoder: what a run's config, a fold's ``model.json`` and an
    exported folder's ``config.json`` share (all defaults: a BERT-style encoder, as earlier releases saved it)."""

    # a plain file name inside name_or_path's folder
    gguf_file: Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$")] | None = None
    pooling: Literal["first", "last", "mean"] | None = None
    attention: Annotated[str, Field(pattern=ATTENTION_PATTERN)] | None = None
    peft: Literal["lora"] | None = None
    lora: LoraBlock = LoraBlock()
    load_in_4bit: bool = False
    gradient_checkpointing: bool = False
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    # build the encoder from its config.json with random weights (seeded): prices a model's training step and
    # memory without its weights (scripts/gpu_check.sh); never for a model whose predictions matter
    random_init: bool = False


class EncoderSettings(DecoderSettings):
    """A run's ``encoder`` block, and a fold's ``model.json`` one."""

    name: Annotated[str, Field(max_length=200)] | None = None
    name_or_path: Annotated[str, Field(min_length=1, max_length=4096)]
    max_length: Annotated[int, Field(ge=2, le=1_000_000)] = 128
    trust_remote_code: bool = False

    @property
    def bidirectional_layers(self) -> int | None:
        """How many top layers see both ways: ``None`` for every layer (``bidirectional``), 0 for none."""
        if self.attention in (None, "causal"):
            return 0
        if self.attention == "bidirectional":
            return None
        return int(re.fullmatch(r"bidirectional-top-(\d+)", self.attention).group(1))

    def saved(self) -> dict:
        """The block as a ``model.json`` keeps it (plain JSON)."""
        return self.model_dump()


RUN_FIX = "correct it on the command line (encoder.KEY=VALUE) or in conf/encoder/{name}.yaml"


def encoder_settings(block: Mapping[str, Any] | EncoderSettings, path=None, fix: str | None = None) -> EncoderSettings:
    """The checked settings of an ``encoder`` block (a run's resolved config or a saved file's): one ``UserError``
    naming the first wrong field, with a fix that says where to correct it."""
    if isinstance(block, EncoderSettings):
        return block
    block = dict(block)
    fix = fix or RUN_FIX.format(name=block.get("name") or "<name>")
    attention = block.get("attention")
    if attention is not None and not (isinstance(attention, str) and re.match(ATTENTION_PATTERN, attention)):
        raise UserError(
            f"encoder.attention={attention!r} is not an attention mode: use {ATTENTION_MODES}, or null",
            path=path,
            fix=fix,
        )
    return validated(EncoderSettings, block, path, "encoder", fix)
