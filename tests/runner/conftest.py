"""Fixtures for end-to-end runs: a tiny random BERT with the real MiniLM tokenizer, a small sample, configs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from train import register_config_resolvers

CONF = Path(__file__).resolve().parents[2] / "conf"


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory) -> str:
    """A 2-layer, 32-wide BERT (random weights) with all-MiniLM-L6-v2's tokenizer: fast and offline."""
    from helpers.trained import save_tiny_encoder

    return str(save_tiny_encoder(tmp_path_factory.mktemp("tiny_encoder")))


@pytest.fixture(scope="session")
def small_sample(tmp_path_factory) -> Path:
    """60 synthetic posts (labelled and unlabelled copies, span and post files)."""
    from faina.data.synthetic import write_sample

    folder = tmp_path_factory.mktemp("sample60")
    write_sample(folder, posts=60, seed=3, unlabelled=True)
    return folder


@pytest.fixture
def make_cfg(tmp_path, tiny_encoder, small_sample):
    """Compose conf/train.yaml like the command line would, on the small sample and the tiny encoder."""

    def _make(*overrides: str, sample: bool = True, tiny: bool = True):
        register_config_resolvers()
        base = [f"paths.root_dir={tmp_path}", "callbacks=none", "logger=none", "loader.batch_size=8"]
        if tiny:
            base.append(f"encoder.name_or_path={tiny_encoder}")
        if sample:
            task = next((o.split("=", 1)[1] for o in overrides if o.startswith("task=")), "span-f")
            ext = "conll" if task.startswith("span") else "tsv"
            base += [
                "data=custom",
                f"data.train_path={small_sample / ('sample.' + ext)}",
                f"data.test_path={small_sample / ('sample-unlabelled.' + ext)}",
            ]
        with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
            return compose(config_name="train", overrides=[*base, *overrides])

    return _make
