"""Tokenizers for the hub replicas (``models.replicas``), trained offline on the synthetic samples.

Each function writes the tokenizer files of one hub repository's kind, in that repository's file format, so
that ``AutoTokenizer`` takes the same code path it takes for the real model:

- ``write_wordpiece_vocab``: an uncased BERT WordPiece ``vocab.txt`` (AlBERTo; no tokenizer.json, no
  tokenizer_config.json: transformers builds the tokenizer from config.json's model type and the vocab);
- ``train_sentencepiece``: a SentencePiece BPE ``.model`` (UmBERTo's ``sentencepiece.bpe.model``; LLaMA 2's and
  Mixtral's ``tokenizer.model``, with byte fallback and the unk/bos/eos ids 0/1/2 of Meta's and Mistral's models);
- ``fast_tokenizer_json``: the ``tokenizer.json`` transformers converts from such a SentencePiece model (LLaMA 2
  and Mixtral ship both files);
- ``train_byte_level_bpe``: a byte-level BPE ``tokenizer.json`` with Llama 3's special tokens appended after
  the learnt vocabulary (Llama 3 ships no SentencePiece file in its transformers layout).

The chat templates are written here for the replicas (same turn markers and the same refusals as the hub
templates, not copies of them): LLaMA 2 ``[INST]`` with a ``<<SYS>>`` block in the first user turn, Llama 3
header tokens with ``<|eot_id|>`` ending each turn, Mixtral ``[INST]`` with no system role (it raises).
Training is single-threaded with fixed inputs, so the same sample gives the same files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

# the folder holding the faina and missci packages (a checkout, or site-packages): their sample_data ships with them
PACKAGES_ROOT = Path(__file__).resolve().parents[2]

LLAMA2_CHAT_TEMPLATE = (
    "{%- if messages and messages[0]['role'] == 'system' -%}"
    "{%- set system_block = '<<SYS>>\\n' + messages[0]['content'] | trim + '\\n<</SYS>>\\n\\n' -%}"
    "{%- set turns = messages[1:] -%}"
    "{%- else -%}{%- set system_block = '' -%}{%- set turns = messages -%}{%- endif -%}"
    "{%- for message in turns -%}"
    "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
    "{{- raise_exception('LLaMA 2 chat: after an optional system message, roles must alternate user/assistant') -}}"
    "{%- endif -%}"
    "{%- if message['role'] == 'user' -%}"
    "{{- bos_token + '[INST] ' + (system_block if loop.first else '') + message['content'] | trim + ' [/INST]' -}}"
    "{%- else -%}{{- ' ' + message['content'] | trim + ' ' + eos_token -}}{%- endif -%}"
    "{%- endfor -%}"
)

LLAMA3_CHAT_TEMPLATE = (
    "{{- bos_token -}}"
    "{%- for message in messages -%}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim"
    " + '<|eot_id|>' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}{%- endif -%}"
)

MIXTRAL_CHAT_TEMPLATE = (
    "{{- bos_token -}}"
    "{%- for message in messages -%}"
    "{%- if message['role'] not in ['user', 'assistant'] -%}"
    "{{- raise_exception('Mixtral Instruct knows only the user and assistant roles') -}}{%- endif -%}"
    "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
    "{{- raise_exception('Mixtral Instruct: roles must alternate user/assistant') -}}{%- endif -%}"
    "{%- if message['role'] == 'user' -%}{{- '[INST] ' + message['content'] + ' [/INST]' -}}"
    "{%- else -%}{{- message['content'] + eos_token -}}{%- endif -%}"
    "{%- endfor -%}"
)

# Llama 3's special tokens, in the order of their ids after the 128,000 learnt ones (reserved ones abridged)
LLAMA3_SPECIALS = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|reserved_special_token_2|>",
    "<|reserved_special_token_3|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|reserved_special_token_4|>",
    "<|eot_id|>",
]
# Llama 3's pre-tokenizer split: contractions, letter runs, 1-3 digit groups, punctuation runs, whitespace
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def sample_texts(root: Path = PACKAGES_ROOT) -> list[str]:
    """The synthetic Faina posts (their tokens joined by spaces) and every string of the synthetic Missci sample,
    read as files (``faina/sample_data``, ``missci/sample_data``: no import of either package)."""
    texts: list[str] = []
    for conll in sorted((root / "faina" / "sample_data").glob("*.conll")):
        words: list[str] = []
        for line in conll.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                if words:
                    texts.append(" ".join(words))
                words = []
            elif not line.startswith("#"):
                words.append(line.split("\t")[1])
        if words:
            texts.append(" ".join(words))
    for jsonl in sorted((root / "missci" / "sample_data").glob("*.jsonl")):
        for line in jsonl.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.extend(_strings(json.loads(line)))
    return [t for t in dict.fromkeys(texts) if t.strip()]


def _strings(value) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def write_wordpiece_vocab(texts: list[str], folder: Path, vocab_size: int = 1500) -> Path:
    """An uncased WordPiece ``vocab.txt`` (lower-cased, accents stripped: BertTokenizer's uncased defaults)."""
    from tokenizers import BertWordPieceTokenizer

    tokenizer = BertWordPieceTokenizer(lowercase=True, strip_accents=True, clean_text=True)
    tokenizer.train_from_iterator(
        texts,
        vocab_size=vocab_size,
        min_frequency=1,
        show_progress=False,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
    )
    path = folder / "vocab.txt"
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    path.write_text("".join(f"{token}\n" for token, _ in vocab), encoding="utf-8")
    return path


def train_sentencepiece(texts: list[str], path: Path, vocab_size: int, llama_style: bool) -> Path:
    """A SentencePiece BPE model at ``path``.

    ``llama_style``: byte fallback, digits split, no whitespace normalisation, ids unk/bos/eos = 0/1/2 (LLaMA 2,
    Mixtral). Otherwise spm_train's defaults with no pad piece (unk/bos/eos = 0/1/2, pad_id=-1), as UmBERTo's
    model was trained; CamemBERT's tokenizer puts its fairseq ids in front of these.
    """
    import sentencepiece as spm

    options = dict(
        sentence_iterator=iter(texts),
        model_type="bpe",
        vocab_size=vocab_size,
        character_coverage=1.0,
        num_threads=1,
        shuffle_input_sentence=False,
        minloglevel=2,
        hard_vocab_limit=False,
    )
    if llama_style:
        options.update(
            byte_fallback=True,
            split_digits=True,
            unk_id=0,
            bos_id=1,
            eos_id=2,
            pad_id=-1,
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            allow_whitespace_only_pieces=True,
        )
    else:
        options.update(unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
    with path.open("wb") as handle:
        spm.SentencePieceTrainer.train(model_writer=handle, **options)
    return path


def fast_tokenizer_json(folder: Path) -> Path:
    """``tokenizer.json`` converted by transformers from the folder's ``tokenizer.model`` and tokenizer_config.json
    (written first), as the LLaMA 2 and Mixtral repositories ship it beside the SentencePiece file."""
    from transformers import AutoTokenizer

    path = folder / "tokenizer.json"
    if path.exists():
        path.unlink()
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    tokenizer.backend_tokenizer.save(str(path))
    return path


def train_byte_level_bpe(texts: list[str], folder: Path, vocab_size: int = 1000) -> tuple[Path, dict[str, int]]:
    """Llama 3's tokenizer kind: byte-level BPE behind its regex split, BOS added by the post-processor.

    Returns the path of ``tokenizer.json`` and the ids of the special tokens (appended after the vocabulary)."""
    from tokenizers import Regex, Tokenizer, decoders, pre_tokenizers, processors, trainers
    from tokenizers.models import BPE

    tokenizer = Tokenizer(BPE(ignore_merges=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=1,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    tokenizer.add_special_tokens(LLAMA3_SPECIALS)
    ids = {token: tokenizer.token_to_id(token) for token in LLAMA3_SPECIALS}
    bos = "<|begin_of_text|>"
    tokenizer.post_processor = processors.Sequence(
        [
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single=f"{bos}:0 $A:0", pair=f"{bos}:0 $A:0 {bos}:1 $B:1", special_tokens=[(bos, ids[bos])]
            ),
        ]
    )
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return path, ids


def added_tokens_decoder(tokens: dict[str, int]) -> dict[str, dict]:
    """The ``added_tokens_decoder`` block of a tokenizer_config.json for special tokens at these ids."""
    return {
        str(index): {
            "content": token,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
        for token, index in sorted(tokens.items(), key=lambda t: t[1])
    }


def sentencepiece_specials(model: Path, names: Iterable[str]) -> dict[str, int]:
    """Ids of the named pieces in a SentencePiece model (e.g. ``<unk>``, ``<s>``, ``</s>``)."""
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor(model_file=str(model))
    return {name: processor.piece_to_id(name) for name in names}
