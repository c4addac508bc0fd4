"""Tiny trained Faina runs for loader tests (importable as ``helpers.trained``): a 2-layer random BERT with the
packaged MiniLM tokenizer, a small synthetic sample and ``debug=fast`` training, so a fold folder takes seconds."""

from __future__ import annotations

from pathlib import Path

from tests_paths import CONF


def save_tiny_encoder(folder: Path) -> Path:
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from models.encoder import offline_encoder_path

    tokenizer = AutoTokenizer.from_pretrained(offline_encoder_path())
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    BertModel(config).save_pretrained(folder)
    return folder


def compose_run(root: Path, encoder: Path, sample: Path, task: str, *overrides: str):
    from hydra import compose, initialize_config_dir

    from train import register_config_resolvers

    register_config_resolvers()
    ext = "conll" if task.startswith("span") else "tsv"
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        return compose(
            config_name="train",
            overrides=[
                f"paths.root_dir={root}",
                f"task={task}",
                "debug=fast",
                "loader.batch_size=8",
                "callbacks=none",
                "logger=none",
                f"encoder.name_or_path={encoder}",
                "data=custom",
                f"data.train_path={sample / ('sample.' + ext)}",
                *overrides,
            ],
        )


def train_run(root: Path, encoder: Path, sample: Path, task: str, *overrides: str) -> Path:
    """Train ``task`` on the sample; the results folder of the run."""
    from train import run

    cfg = compose_run(root, encoder, sample, task, *overrides)
    run(cfg)
    return Path(cfg.paths.results_dir) / cfg.name


def write_small_sample(folder: Path) -> Path:
    from faina.data.synthetic import write_sample

    write_sample(folder, posts=60, seed=3, unlabelled=True)
    return folder
