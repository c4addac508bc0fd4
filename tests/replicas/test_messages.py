"""A model folder or hub id that cannot be loaded ends in one UserError naming it, what is missing and the fix."""

from __future__ import annotations

import json

import pytest

from common.errors import UserError
from replica_cli import run_cli


def encoder_error(folder) -> str:
    from models.encoder import ChunkedEncoder

    with pytest.raises(UserError) as error:
        ChunkedEncoder(str(folder))
    return str(error.value)


def llm_error(reference: str) -> str:
    from models.llm.loading import CausalLMSpec, load_causal_lm

    with pytest.raises(UserError) as error:
        load_causal_lm(CausalLMSpec(name_or_path=reference, device="cpu"))
    return str(error.value)


def test_missing_tokenizer_file(replica_copy):
    folder = replica_copy("alberto")
    (folder / "vocab.txt").unlink()
    message = encoder_error(folder)
    assert str(folder) in message and "no tokenizer files" in message and "vocab.txt" in message
    assert "Fix: copy the tokenizer files" in message and "encoder.name_or_path" in message


def test_missing_weights_of_an_encoder(replica_copy):
    folder = replica_copy("umberto")
    (folder / "pytorch_model.bin").unlink()
    message = encoder_error(folder)
    assert str(folder) in message and "has no weights" in message and "Fix:" in message


def test_missing_weight_shard_of_an_llm(replica_copy):
    folder = replica_copy("llama2-chat")
    (folder / "model-00002-of-00002.safetensors").unlink()
    message = llm_error(str(folder))
    assert str(folder) in message and "model-00002-of-00002.safetensors" in message
    assert "missing" in message and "huggingface-cli download" in message


def test_unknown_architecture(replica_copy):
    folder = replica_copy("mixtral-instruct")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "mixtral-next"}), encoding="utf-8")
    message = llm_error(str(folder))
    assert str(folder) in message and "'mixtral-next'" in message and "does not know" in message
    assert "pip install -U transformers" in message


def test_not_a_model_folder(tmp_path):
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    message = encoder_error(tmp_path)
    assert str(tmp_path) in message and "no config.json" in message


def test_sentencepiece_package_absent(replica_copy, monkeypatch):
    """transformers' own availability check says no: UmBERTo's only tokenizer file cannot be read."""
    from transformers.utils import import_utils

    folder = replica_copy("umberto")
    monkeypatch.setattr(import_utils, "is_sentencepiece_available", lambda: False)
    message = encoder_error(folder)
    assert str(folder) in message and "sentencepiece.bpe.model" in message
    assert "needs the sentencepiece package" in message and "Fix: pip install sentencepiece" in message


def test_damaged_sentencepiece_model_is_not_reported_as_tiktoken(replica_copy):
    """Without tokenizer.json transformers reads tokenizer.model, and falls back to tiktoken when that fails."""
    folder = replica_copy("mixtral-instruct")
    (folder / "tokenizer.json").unlink()
    (folder / "tokenizer.model").write_bytes(b"not a sentencepiece model")
    message = llm_error(str(folder))
    assert str(folder) in message and "SentencePiece" in message and "damaged" in message


def test_gated_repository_without_a_login(monkeypatch):
    """The hub answers 401 for a gated repo: transformers' own OSError becomes the licence-and-login message."""
    import httpx
    from huggingface_hub.errors import GatedRepoError
    from transformers.utils import hub

    from common import model_availability

    repo = "meta-llama/Llama-2-7b-chat-hf"

    def refuse(*args, **kwargs):
        url = f"https://huggingface.co/{repo}/resolve/main/config.json"
        raise GatedRepoError(
            f"401 Client Error. Cannot access gated repo for url {url}.",
            response=httpx.Response(401, request=httpx.Request("GET", url)),
        )

    monkeypatch.setattr(model_availability, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setattr(hub, "hf_hub_download", refuse)
    monkeypatch.setattr(hub, "snapshot_download", refuse, raising=False)
    message = llm_error(repo)
    assert repo in message and "gated repository" in message
    assert "huggingface-cli login" in message and f"https://huggingface.co/{repo}" in message
    assert "Traceback" not in message


def test_the_command_line_prints_one_line_not_a_traceback(replica_copy, tmp_path):
    folder = replica_copy("alberto")
    (folder / "vocab.txt").unlink()
    result = run_cli(
        "train.py",
        "task=post-f",
        "debug=fast",
        "cv.folds=[0]",
        f"encoder.name_or_path={folder}",
        f"paths.root_dir={tmp_path / 'run'}",
    )
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(folder) in errors[0] and "no tokenizer files" in errors[0]
    assert "Traceback" not in result.stderr
