"""The encoder's tokenizer from any model folder or hub id, including UmBERTo's BPE SentencePiece model.

UmBERTo (``Musixmatch/umberto-commoncrawl-cased-v1``) ships a CamemBERT config and only a SentencePiece
``sentencepiece.bpe.model`` that is a BPE model. transformers 4 converted it to a fast tokenizer with its
CamembertConverter; transformers 5's CamembertTokenizer builds a Unigram model from whatever the file holds, and a
BPE file ends in ``TypeError: 'str' object is not an instance of 'tuple'``. For that one case the fast tokenizer
is built here the way transformers 4 did: CamemBERT's fairseq ids in front (``<s>NOTUSED <pad> </s>NOTUSED <unk>
<unk>NOTUSED``), the SentencePiece pieces after its own ``<unk>`` (so a piece's id is its SentencePiece id + 4),
``<mask>`` last, BPE merges in the pieces' order, ``<s> … </s>`` around a sequence. Every other folder goes to
``AutoTokenizer``. Checks and messages for incomplete folders: common/model_files.py.
"""

from __future__ import annotations

import json
from pathlib import Path

from common.model_availability import ModelUnavailable, ensure_model_available
from common.model_files import check_model_folder, explain_load_error, local_model_folder

CAMEMBERT_TYPES = {"camembert"}
SENTENCEPIECE_BPE = 2  # ModelProto.TrainerSpec.ModelType.BPE
CAMEMBERT_FAIRSEQ = ["<s>NOTUSED", "<pad>", "</s>NOTUSED", "<unk>", "<unk>NOTUSED"]


def _camembert_bpe_model(folder: Path) -> Path | None:
    """The BPE SentencePiece file of a CamemBERT-type folder without tokenizer.json (UmBERTo's layout), or None."""
    if (folder / "tokenizer.json").is_file() or not (folder / "config.json").is_file():
        return None
    try:
        model_type = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type")
    except (OSError, ValueError):
        return None
    model = folder / "sentencepiece.bpe.model"
    if model_type not in CAMEMBERT_TYPES or not model.is_file():
        return None
    return model if read_sentencepiece_proto(model).trainer_spec.model_type == SENTENCEPIECE_BPE else None


def read_sentencepiece_proto(model_file: Path):
    """The SentencePiece ModelProto of a ``.model`` file (sentencepiece's own protobuf schema)."""
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(Path(model_file).read_bytes())
    return proto


def bpe_merges(ranks: dict[str, int]) -> list[tuple[str, str]]:
    """BPE merges implied by a SentencePiece BPE vocabulary: every split of a piece into two pieces, applied in
    the order of the merged piece's rank (SentencePiece stores BPE pieces in merge order), then of the parts'."""
    found = []
    for piece, rank in ranks.items():
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in ranks and right in ranks:
                found.append((rank, ranks[left], ranks[right], left, right))
    return [(left, right) for *_, left, right in sorted(found)]


def camembert_bpe_tokenizer(model_file: Path, model_max_length: int = 512):
    """A fast CamemBERT tokenizer over a BPE SentencePiece model (word_ids work, specials as CamemBERT's)."""
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import BPE
    from transformers import AddedToken, PreTrainedTokenizerFast

    proto = read_sentencepiece_proto(model_file)
    pieces = [piece.piece for piece in proto.pieces]
    unk = proto.trainer_spec.unk_id
    merges = bpe_merges({piece: index for index, piece in enumerate(pieces)})
    vocab = {token: index for index, token in enumerate(CAMEMBERT_FAIRSEQ)}
    for index, piece in enumerate(pieces):
        if index != unk:
            vocab.setdefault(piece, len(vocab))
    vocab["<mask>"] = len(vocab)
    backend = Tokenizer(BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True))
    charsmap = proto.normalizer_spec.precompiled_charsmap
    steps = [normalizers.Precompiled(charsmap)] if charsmap else []
    backend.normalizer = normalizers.Sequence(steps)
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")]
    )
    backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", vocab["<s>"]), ("</s>", vocab["</s>"])],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token=AddedToken("<mask>", lstrip=True, special=True),
        additional_special_tokens=["<s>NOTUSED", "</s>NOTUSED", "<unk>NOTUSED"],
        model_max_length=model_max_length,
    )


def load_encoder_tokenizer(
    name_or_path: str, trust_remote_code: bool = False, weights: bool = False, config_key: str = "encoder.name_or_path"
):
    """The tokenizer of an encoder, or one ``UserError`` naming the folder or hub id, what is missing and the fix.

    ``weights=True`` also checks that the folder holds weights (asked once, before the model loads)."""
    try:
        ensure_model_available(name_or_path, "encoder")  # a hub id neither cached nor reachable fails fast
    except ModelUnavailable as err:
        raise ModelUnavailable(
            err.message,
            fix=f"set {config_key} to a local model folder (where the hub is "
            f"reachable: huggingface-cli download {name_or_path} --local-dir DIR), or use the "
            "offline default encoder=minilm",
        ) from None
    check_model_folder(name_or_path, config_key, weights=weights, trust_remote_code=trust_remote_code)
    folder = local_model_folder(name_or_path)
    try:
        bpe_model = _camembert_bpe_model(folder) if folder is not None else None
        if bpe_model is not None:
            return camembert_bpe_tokenizer(bpe_model)
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(name_or_path, trust_remote_code=trust_remote_code)
    except (OSError, ValueError, TypeError, ImportError, KeyError) as err:
        raise explain_load_error(name_or_path, err, "encoder", config_key) from None
