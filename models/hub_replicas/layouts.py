"""The hub replicas' layouts: which files each model's repository ships, and the one function that writes them.

``write_replicas(OUT_DIR)`` (the command: ``fallacy models replicas OUT_DIR``) writes ``OUT_DIR/<name>/`` for each
model: the same file names, file formats, tokenizer kind and config fields as its Hugging Face repository, with 2
layers of width 32 (random weights, ``torch.manual_seed``) and a tokenizer trained on the synthetic samples
(``faina/sample_data/*.conll`` tokens, ``missci/sample_data/*.jsonl`` strings; ``models.hub_replicas.tokenizer_files``).
Same command, same bytes (weights included). Point the framework at one as at a downloaded copy:
``encoder.name_or_path=OUT_DIR/umberto``, ``llm.name_or_path=OUT_DIR/llama3-instruct`` (docs/models.md). Tests
build them once per session (tests/replicas/conftest.py).

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
  SentencePiece model is BPE with ``pad_id=-1`` (the UmBERTo author's spm_train command in
  github.com/facebookresearch/fairseq/issues/1490). transformers needs the ``sentencepiece`` package to read it
  (without it, the misleading tiktoken error of github.com/huggingface/transformers/issues/36291), and
  transformers 5's CamembertTokenizer reads only Unigram models (github.com/huggingface/transformers/pull/45714 is
  a related v5 regression), so models/encoder_tokenizer.py converts this kind itself. Replica: config.json,
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

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from models.hub_replicas import tokenizer_files as tok
from models.hub_replicas.builders import (
    build_alberto,
    build_llama2_chat,
    build_llama3_instruct,
    build_mixtral_instruct,
    build_umberto,
)


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
