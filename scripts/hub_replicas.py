"""Hub-shaped local replicas of the models the framework is for: tiny, random, offline, in the hubs' file layout.

    python scripts/hub_replicas.py OUT_DIR [--only alberto umberto llama2-chat llama3-instruct mixtral-instruct]

writes ``OUT_DIR/<name>/`` for each model: the same file names, file formats, tokenizer kind and config fields as
its Hugging Face repository, with 2 layers of width 32 (random weights, ``torch.manual_seed``) and a tokenizer
trained on the synthetic samples (``faina/sample_data/*.conll`` tokens, ``missci/sample_data/*.jsonl`` strings;
scripts/replica_tokenizers.py). Same command, same bytes (weights included). About ten seconds for all five on
a 2-core machine, most of it imports. Point the framework at one as at a downloaded copy: ``encoder.name_or_path=OUT_DIR/umberto``,
``llm.name_or_path=OUT_DIR/llama3-instruct``. Tests build them once per session (tests/replicas/conftest.py).

What each repository ships, and where that was checked (stored public pages, read through the project's search
tool; file lists are the hub's "Files and versions" pages, fields marked (recalled) could not be read there):

- AlBERTo, ``m-polignano-uniba/bert_uncased_L-12_H-768_A-12_italian_alb3rt0`` (tree/main, 11 commits, and tree
  2eb8403): ``config.json`` (BERT, vocab 128,000, 512 positions, Google BERT extras ``directionality``,
  ``pooler_*``: seen in the config of a fine-tune of it, aequa-tech/irony-it), ``pytorch_model.bin`` (pickled
  state dict, no safetensors), ``tf_model.h5``, ``flax_model.msgpack``, ``vocab.txt`` (uncased WordPiece),
  ``tokenizer.py`` (the authors' preprocessing code; no ``auto_map`` names it, so transformers never runs it),
  ``README.txt``. No tokenizer.json, tokenizer_config.json or special_tokens_map.json: transformers builds a
  BertTokenizer from ``vocab.txt`` with its defaults (lower case, accents stripped). Replica: config.json,
  pytorch_model.bin (a BertForPreTraining state dict as a TF-converted BERT has it: ``bert.`` prefixed keys,
  pooler, pre-training heads; the architecture name is assumed, the hub page does not show it), vocab.txt.
  Not replicated: the TF and Flax weights and tokenizer.py (transformers with PyTorch never reads them), README.txt.
- UmBERTo, ``Musixmatch/umberto-commoncrawl-cased-v1`` (tree 0734348, 11 commits, and the model card):
  ``config.json`` (CamemBERT; vocab 32,005 (recalled)), ``pytorch_model.bin``, ``sentencepiece.bpe.model``, README.md;
  nothing else (its sibling umberto-wikipedia-uncased-v1 later got a tokenizer.json; this one did not). The
  SentencePiece model is BPE with ``pad_id=-1`` (the UmBERTo author's spm_train command in fairseq issue #1490).
  transformers needs the ``sentencepiece`` package to read it (without it, the misleading tiktoken error of
  transformers issue #36291), and transformers 5's CamembertTokenizer reads only Unigram models (PR #45714 is a
  related v5 regression), so models/encoder_tokenizer.py converts this kind itself. Replica: config.json,
  pytorch_model.bin (CamembertForMaskedLM state dict), sentencepiece.bpe.model (BPE, unk/bos/eos 0/1/2).
- LLaMA 2 chat, ``meta-llama/Llama-2-7b-chat-hf`` (gated: Meta's licence; file lists of its public mirrors
  NousResearch/Llama-2-7b-chat-hf, LogitsAI/Llama-2-7b-chat-hf): config.json (LlamaForCausalLM, vocab 32,000,
  4,096 positions), generation_config.json, ``model-0000{1,2}-of-00002.safetensors`` +
  ``model.safetensors.index.json``, ``pytorch_model-0000{1,2}-of-00002.bin`` + ``pytorch_model.bin.index.json``,
  ``tokenizer.model`` (SentencePiece BPE, byte fallback) + ``tokenizer.json``, tokenizer_config.json
  (LlamaTokenizer, ``pad_token`` null, ``legacy`` false, the ``[INST]``/``<<SYS>>`` chat template),
  special_tokens_map.json (no pad), LICENSE.txt, USE_POLICY.md, README.md. Replica: all of the transformers
  files (both weight formats, sharded as on the hub); not the licence texts.
- Llama 3 Instruct, ``meta-llama/Meta-Llama-3-8B-Instruct`` (gated; mirror NousResearch/Meta-Llama-3-8B-Instruct,
  "Match official tokenizer_config.json" commit; hf-internal-testing/llama3-tokenizer-tiktoken for original/):
  config.json (LlamaForCausalLM, GQA 8 of 32 heads, rope_theta 500,000, vocab 128,256, 8,192 positions),
  generation_config.json (eos ``[128001, 128009]``: ``<|end_of_text|>`` and ``<|eot_id|>``),
  ``model-0000{1..4}-of-00004.safetensors`` + index, ``tokenizer.json`` (byte-level BPE; no tokenizer.model),
  tokenizer_config.json (PreTrainedTokenizerFast, bos ``<|begin_of_text|>``, eos ``<|eot_id|>`` since the
  official update, header-token chat template), special_tokens_map.json, ``original/`` (Meta's own checkpoint:
  consolidated.00.pth, params.json, a tiktoken tokenizer.model). No pad token. Replica: everything but
  ``original/`` (transformers does not read it; its tiktoken file is what transformers falls back to when it
  finds no tokenizer.json) and the licence files.
- Mixtral 8x7B Instruct, ``mistralai/Mixtral-8x7B-Instruct-v0.1`` (commit list of its duplicate
  kallam/Mixtral-8x7B-It-v0.1 "Duplicate from mistralai/Mixtral-8x7B-Instruct-v0.1", a config copy in a HQQ
  upload, the model card's instruction format): config.json (MixtralForCausalLM, 8 local experts, 2 per token,
  vocab 32,000, rope_theta 1e6, 32,768 positions, sliding_window null), generation_config.json,
  ``model-000{01..19}-of-00019.safetensors`` + index (experts as ``block_sparse_moe.experts.<e>.w1/w2/w3``, which
  transformers 5 fuses while loading), ``consolidated.0{0..7}.pt`` (Mistral's own format), ``tokenizer.model`` +
  ``tokenizer.json`` (Llama-style SentencePiece BPE), tokenizer_config.json (LlamaTokenizer, no pad, a chat template
  with only user/assistant roles that raises on a system message; a 2024 revision of the hub template folds a
  system message into the first turn, the one the paper's era used raises), special_tokens_map.json. Replica:
  all but consolidated.*.pt.

Chat templates, special tokens and generation settings are written by this project (same turn markers, same
refusals), not copied from the hubs; the sampling values in the generation_config.json files are recalled, not read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from scripts import replica_tokenizers as tok  # noqa: E402

WIDTH = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


@dataclass(frozen=True)
class Replica:
    """One hub repository: its id, the files its replica holds, and the function that writes them."""

    name: str
    hub_id: str
    kind: str  # "encoder" | "llm"
    tokenizer_kind: str  # wordpiece | sentencepiece | sentencepiece+tokenizer.json | byte-level-bpe
    architecture: str  # config.json "architectures"[0]
    files: tuple[str, ...]
    build: Callable[[Path, list[str]], None]


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


def _shards(stem: str, count: int, ext: str) -> tuple[str, ...]:
    return tuple(f"{stem}-{i:05d}-of-{count:05d}.{ext}" for i in range(1, count + 1))


CHAT_TOKENIZER_FILES = ("tokenizer.model", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
REPLICAS: dict[str, Replica] = {
    r.name: r
    for r in (
        Replica(
            "alberto",
            "m-polignano-uniba/bert_uncased_L-12_H-768_A-12_italian_alb3rt0",
            "encoder",
            "wordpiece",
            "BertForPreTraining",
            ("config.json", "pytorch_model.bin", "vocab.txt"),
            build_alberto,
        ),
        Replica(
            "umberto",
            "Musixmatch/umberto-commoncrawl-cased-v1",
            "encoder",
            "sentencepiece",
            "CamembertForMaskedLM",
            ("config.json", "pytorch_model.bin", "sentencepiece.bpe.model"),
            build_umberto,
        ),
        Replica(
            "llama2-chat",
            "meta-llama/Llama-2-7b-chat-hf",
            "llm",
            "sentencepiece+tokenizer.json",
            "LlamaForCausalLM",
            (
                "config.json",
                "generation_config.json",
                *_shards("model", 2, "safetensors"),
                "model.safetensors.index.json",
                *_shards("pytorch_model", 2, "bin"),
                "pytorch_model.bin.index.json",
                *CHAT_TOKENIZER_FILES,
            ),
            build_llama2_chat,
        ),
        Replica(
            "llama3-instruct",
            "meta-llama/Meta-Llama-3-8B-Instruct",
            "llm",
            "byte-level-bpe",
            "LlamaForCausalLM",
            (
                "config.json",
                "generation_config.json",
                *_shards("model", 4, "safetensors"),
                "model.safetensors.index.json",
                "tokenizer.json",
                "tokenizer_config.json",
                "special_tokens_map.json",
            ),
            build_llama3_instruct,
        ),
        Replica(
            "mixtral-instruct",
            "mistralai/Mixtral-8x7B-Instruct-v0.1",
            "llm",
            "sentencepiece+tokenizer.json",
            "MixtralForCausalLM",
            (
                "config.json",
                "generation_config.json",
                *_shards("model", 19, "safetensors"),
                "model.safetensors.index.json",
                *CHAT_TOKENIZER_FILES,
            ),
            build_mixtral_instruct,
        ),
    )
}


def write_replica(name: str, out_dir: str | Path, texts: list[str] | None = None) -> Path:
    """Write the replica ``name`` to ``out_dir/name`` (replacing an earlier one) and return its folder."""
    import shutil

    replica = REPLICAS[name]
    folder = Path(out_dir) / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    replica.build(folder, texts if texts is not None else tok.sample_texts())
    written = sorted(p.name for p in folder.iterdir())
    if written != sorted(replica.files):
        raise RuntimeError(f"replica {name}: wrote {written}, its layout lists {sorted(replica.files)}")
    return folder


def write_replicas(out_dir: str | Path, only: list[str] | None = None) -> dict[str, Path]:
    texts = tok.sample_texts()
    return {name: write_replica(name, out_dir, texts) for name in (only or list(REPLICAS))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Each replica's folder is what encoder.name_or_path= / llm.name_or_path= "
        "takes in place of the hub id. What each hub ships: the module docstring.",
    )
    parser.add_argument("out_dir", help="folder to write the replicas into (one sub-folder per model)")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=sorted(REPLICAS),
        metavar="NAME",
        help=f"only these replicas (of: {', '.join(REPLICAS)})",
    )
    args = parser.parse_args(argv)
    for name, folder in write_replicas(args.out_dir, args.only).items():
        print(f"{name}\t{REPLICAS[name].hub_id}\t{folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
