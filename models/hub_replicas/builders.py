"""The files of each hub repository the replicas copy, written with random weights of a small width.

Each ``build_*`` writes one repository's files into a folder (``models.hub_replicas.layouts`` lists them and says where
each repository's layout was checked): config.json with the hub file's field names, read back the way a download
is read, so the random model (``torch.manual_seed(0)``, 2 layers of width 32) is built from that file; weights in
the hub's formats, dtypes and shard counts; the tokenizer files of its kind (``tokenizer_files``).
"""

from __future__ import annotations

import json
from pathlib import Path

from models.hub_replicas import tokenizer_files as tok

WIDTH = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


def _write_json(path: Path, value) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _hub_config(folder: Path, fields: dict):
    """Write config.json with the hub file's field names (transformers 4 style: ``torch_dtype``, ``rope_theta``),
    then read it back the way a user's download is read, so the random model is built from that file."""
    from transformers import AutoConfig

    _write_json(folder / "config.json", dict(sorted(fields.items())))
    return AutoConfig.from_pretrained(str(folder))


BERT_LIKE = dict(
    attention_probs_dropout_prob=0.1, hidden_act="gelu", hidden_dropout_prob=0.1, initializer_range=0.02, **WIDTH
)
LLAMA_LIKE = dict(
    hidden_act="silu", initializer_range=0.02, rms_norm_eps=1e-05, tie_word_embeddings=False, use_cache=True, **WIDTH
)


def _shard(state: dict, count: int) -> list[dict]:
    """The state dict cut into ``count`` shards in key order (a hub checkpoint's split, only smaller)."""
    keys = list(state)
    if len(keys) < count:
        raise ValueError(f"{len(keys)} tensors cannot fill {count} shards")
    bounds = [i * len(keys) // count for i in range(count + 1)]
    return [{k: state[k] for k in keys[bounds[i] : bounds[i + 1]]} for i in range(count)]


def _write_safetensors_shards(folder: Path, state: dict, count: int) -> None:
    from safetensors.torch import save_file

    weight_map, total = {}, 0
    for index, shard in enumerate(_shard(state, count), start=1):
        name = f"model-{index:05d}-of-{count:05d}.safetensors"
        save_file({k: v.contiguous() for k, v in shard.items()}, str(folder / name), metadata={"format": "pt"})
        for key, tensor in shard.items():
            weight_map[key] = name
            total += tensor.numel() * tensor.element_size()
    _write_json(folder / "model.safetensors.index.json", {"metadata": {"total_size": total}, "weight_map": weight_map})


def _write_bin_shards(folder: Path, state: dict, count: int) -> None:
    import torch

    weight_map, total = {}, 0
    for index, shard in enumerate(_shard(state, count), start=1):
        name = f"pytorch_model-{index:05d}-of-{count:05d}.bin"
        torch.save({k: v.clone() for k, v in shard.items()}, folder / name)
        for key, tensor in shard.items():
            weight_map[key] = name
            total += tensor.numel() * tensor.element_size()
    _write_json(folder / "pytorch_model.bin.index.json", {"metadata": {"total_size": total}, "weight_map": weight_map})


def _hub_dtype_state(model, config) -> dict:
    """The weights in the dtype the hub stores them in (config.json's ``torch_dtype``: float16 / bfloat16)."""
    dtype = config.dtype
    return {k: v.detach().to(dtype) for k, v in model.state_dict().items()}


def _random_model(model_class, config, seed: int = 0):
    import torch

    torch.manual_seed(seed)
    return model_class(config).eval()


def build_alberto(folder: Path, texts: list[str]) -> None:
    import torch
    from transformers import BertForPreTraining

    vocab = tok.write_wordpiece_vocab(texts, folder)
    vocab_size = len(vocab.read_text(encoding="utf-8").splitlines())
    config = _hub_config(
        folder,
        dict(
            BERT_LIKE,
            architectures=["BertForPreTraining"],
            directionality="bidi",
            layer_norm_eps=1e-12,
            max_position_embeddings=512,
            model_type="bert",
            pad_token_id=0,
            pooler_fc_size=WIDTH["hidden_size"],
            pooler_num_attention_heads=WIDTH["num_attention_heads"],
            pooler_num_fc_layers=3,
            pooler_size_per_head=8,
            pooler_type="first_token_transform",
            type_vocab_size=2,
            vocab_size=vocab_size,
        ),
    )
    model = _random_model(BertForPreTraining, config)
    torch.save({k: v.clone() for k, v in model.state_dict().items()}, folder / "pytorch_model.bin")


def build_umberto(folder: Path, texts: list[str]) -> None:
    import sentencepiece as spm
    import torch
    from transformers import CamembertForMaskedLM

    model_file = tok.train_sentencepiece(texts, folder / "sentencepiece.bpe.model", 1000, llama_style=False)
    pieces = spm.SentencePieceProcessor(model_file=str(model_file)).vocab_size()
    # CamemBERT's ids: <s>NOTUSED <pad> </s>NOTUSED <unk> <unk>NOTUSED, the pieces after <unk>, then <mask>
    config = _hub_config(
        folder,
        dict(
            BERT_LIKE,
            architectures=["CamembertForMaskedLM"],
            bos_token_id=0,
            eos_token_id=2,
            layer_norm_eps=1e-05,
            max_position_embeddings=514,
            model_type="camembert",
            pad_token_id=1,
            type_vocab_size=1,
            vocab_size=pieces + 5,
        ),
    )
    model = _random_model(CamembertForMaskedLM, config)
    torch.save({k: v.clone() for k, v in model.state_dict().items()}, folder / "pytorch_model.bin")


def _sentencepiece_chat_tokenizer(folder: Path, texts: list[str], legacy: bool, chat_template: str) -> int:
    """tokenizer.model + tokenizer.json + tokenizer_config.json + special_tokens_map.json of LLaMA 2 / Mixtral."""
    model_file = tok.train_sentencepiece(texts, folder / "tokenizer.model", 1000, llama_style=True)
    specials = tok.sentencepiece_specials(model_file, ["<unk>", "<s>", "</s>"])
    _write_json(
        folder / "tokenizer_config.json",
        {
            "add_bos_token": True,
            "add_eos_token": False,
            "added_tokens_decoder": tok.added_tokens_decoder(specials),
            "bos_token": "<s>",
            "chat_template": chat_template,
            "clean_up_tokenization_spaces": False,
            "eos_token": "</s>",
            "legacy": legacy,
            "model_max_length": 1000000000000000019884624838656,
            "pad_token": None,
            "padding_side": "right",
            "sp_model_kwargs": {},
            "tokenizer_class": "LlamaTokenizer",
            "unk_token": "<unk>",
            "use_default_system_prompt": False,
        },
    )
    _write_json(folder / "special_tokens_map.json", {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"})
    tok.fast_tokenizer_json(folder)
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_file=str(model_file)).vocab_size()


def build_llama2_chat(folder: Path, texts: list[str]) -> None:
    from transformers import LlamaForCausalLM

    vocab_size = _sentencepiece_chat_tokenizer(folder, texts, legacy=False, chat_template=tok.LLAMA2_CHAT_TEMPLATE)
    config = _hub_config(
        folder,
        dict(
            LLAMA_LIKE,
            _name_or_path="meta-llama/Llama-2-7b-chat-hf",
            architectures=["LlamaForCausalLM"],
            bos_token_id=1,
            eos_token_id=2,
            max_position_embeddings=4096,
            model_type="llama",
            num_key_value_heads=4,
            pretraining_tp=1,
            rope_scaling=None,
            torch_dtype="float16",
            transformers_version="4.32.0.dev0",
            vocab_size=vocab_size,
        ),
    )
    model = _random_model(LlamaForCausalLM, config)
    _write_json(
        folder / "generation_config.json",
        {
            "bos_token_id": 1,
            "do_sample": True,
            "eos_token_id": 2,
            "max_length": 4096,
            "pad_token_id": 0,
            "temperature": 0.6,
            "top_p": 0.9,
            "transformers_version": "4.32.0.dev0",
        },
    )
    state = _hub_dtype_state(model, config)
    _write_safetensors_shards(folder, state, 2)
    _write_bin_shards(folder, state, 2)


def build_llama3_instruct(folder: Path, texts: list[str]) -> None:
    from transformers import LlamaForCausalLM

    tokenizer_json, ids = tok.train_byte_level_bpe(texts, folder)
    vocab_size = max(ids.values()) + 1
    bos, end, eot = ids["<|begin_of_text|>"], ids["<|end_of_text|>"], ids["<|eot_id|>"]
    _write_json(
        folder / "tokenizer_config.json",
        {
            "added_tokens_decoder": tok.added_tokens_decoder(ids),
            "bos_token": "<|begin_of_text|>",
            "chat_template": tok.LLAMA3_CHAT_TEMPLATE,
            "clean_up_tokenization_spaces": True,
            "eos_token": "<|eot_id|>",
            "model_input_names": ["input_ids", "attention_mask"],
            "model_max_length": 1000000000000000019884624838656,
            "tokenizer_class": "PreTrainedTokenizerFast",
        },
    )
    _write_json(folder / "special_tokens_map.json", {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})
    config = _hub_config(
        folder,
        dict(
            LLAMA_LIKE,
            architectures=["LlamaForCausalLM"],
            attention_bias=False,
            attention_dropout=0.0,
            bos_token_id=bos,
            eos_token_id=eot,
            max_position_embeddings=8192,
            model_type="llama",
            num_key_value_heads=2,
            pretraining_tp=1,
            rope_scaling=None,
            rope_theta=500000.0,
            torch_dtype="bfloat16",
            transformers_version="4.40.0.dev0",
            vocab_size=vocab_size,
        ),
    )
    model = _random_model(LlamaForCausalLM, config)
    _write_json(
        folder / "generation_config.json",
        {
            "bos_token_id": bos,
            "do_sample": True,
            "eos_token_id": [end, eot],
            "max_length": 4096,
            "temperature": 0.6,
            "top_p": 0.9,
            "transformers_version": "4.40.0.dev0",
        },
    )
    _write_safetensors_shards(folder, _hub_dtype_state(model, config), 4)


def mixtral_hub_state(state: dict, experts: int) -> dict:
    """transformers 5's fused expert tensors renamed and split back into the hub's per-expert w1/w2/w3 weights."""
    out = {}
    for key, tensor in state.items():
        if key.endswith(".mlp.experts.gate_up_proj"):
            prefix = key[: -len(".mlp.experts.gate_up_proj")] + ".block_sparse_moe.experts"
            half = tensor.shape[1] // 2
            for e in range(experts):
                out[f"{prefix}.{e}.w1.weight"] = tensor[e, :half].clone()
                out[f"{prefix}.{e}.w3.weight"] = tensor[e, half:].clone()
        elif key.endswith(".mlp.experts.down_proj"):
            prefix = key[: -len(".mlp.experts.down_proj")] + ".block_sparse_moe.experts"
            for e in range(experts):
                out[f"{prefix}.{e}.w2.weight"] = tensor[e].clone()
        else:
            out[key.replace(".mlp.gate.", ".block_sparse_moe.gate.")] = tensor
    return out


def build_mixtral_instruct(folder: Path, texts: list[str]) -> None:
    from transformers import MixtralForCausalLM

    vocab_size = _sentencepiece_chat_tokenizer(folder, texts, legacy=True, chat_template=tok.MIXTRAL_CHAT_TEMPLATE)
    config = _hub_config(
        folder,
        dict(
            LLAMA_LIKE,
            architectures=["MixtralForCausalLM"],
            attention_dropout=0.0,
            bos_token_id=1,
            eos_token_id=2,
            max_position_embeddings=32768,
            model_type="mixtral",
            num_experts_per_tok=2,
            num_key_value_heads=2,
            num_local_experts=8,
            output_router_logits=False,
            rope_theta=1000000.0,
            router_aux_loss_coef=0.02,
            sliding_window=None,
            torch_dtype="bfloat16",
            transformers_version="4.36.0.dev0",
            vocab_size=vocab_size,
        ),
    )
    model = _random_model(MixtralForCausalLM, config)
    _write_json(
        folder / "generation_config.json",
        {"_from_model_config": True, "bos_token_id": 1, "eos_token_id": 2, "transformers_version": "4.36.0.dev0"},
    )
    _write_safetensors_shards(folder, mixtral_hub_state(_hub_dtype_state(model, config), 8), 19)
