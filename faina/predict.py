"""``python -m faina.predict MODEL_DIR INPUT OUTPUT``: predict any Faina-format file with a trained model.

MODEL_DIR is a fold folder of a finished run (``results/<name>/fold0``: ``model.safetensors`` +
``model.json``), or the run's results folder (``results/<name>``): then every fold model predicts and
their ensemble decides (``faina.ensemble``: averaged probabilities for post models, averaged emissions
decoded once for span models). INPUT is a span-level ``.conll`` (span models) or post-level ``.tsv`` (post models),
labelled or not; OUTPUT gets the same posts with the model's labels in the official layout (a
submission file), so ``python -m faina.evaluate`` scores it.
"""
from __future__ import annotations

import argparse
import sys

import lightning.pytorch as pl
import torch

from common.cli import command_parser
from common.errors import UserError, exit_on_user_error
from faina.datamodule import FainaDataModule
from faina.folds import FoldSplit
from faina.levels import LEVELS
from faina.ensemble import load_predictor
from faina.model_io import load_tokenizer
from faina.task_data import read_level


def predict_file(model_dir: str, input_path: str, output_path: str, batch_size: int = 32) -> str:
    model, meta = load_predictor(model_dir)
    level = LEVELS[meta["level"]]
    if not input_path.endswith(f".{level.file_ext}"):
        raise UserError(f"a {meta['level']}-level model reads .{level.file_ext} files", path=input_path,
                        fix=f"give the {level.file_ext.upper()} file of the same posts")
    from faina.labels import LabelInventory

    inventory = LabelInventory.load(meta["labels_inventory"])
    corpus = read_level(input_path, meta["level"], meta["grain"], inventory)
    predicted = predict_corpus(model, meta, corpus, batch_size)
    return str(level.write(predicted, output_path))


def predict_corpus(model, meta: dict, corpus, batch_size: int = 32):
    """The posts of ``corpus`` with ``model``'s labels (one model or an ensemble; ``meta`` from the loader)."""
    level = LEVELS[meta["level"]]
    tokenizer = load_tokenizer(meta["encoder"]["name_or_path"], meta["encoder"].get("trust_remote_code", False))
    features = level.encode(corpus, tokenizer, meta["labels"], meta["num_views"])
    for feature in features:  # gold targets of a labelled input are not needed to predict
        feature.pop("tags", None)
        feature.pop("labels", None)
    split = FoldSplit(0, (), (), tuple(range(len(features))))
    datamodule = FainaDataModule(features, split, tokenizer.pad_token_id, batch_size=batch_size)
    trainer = pl.Trainer(accelerator="auto", devices=1, logger=False, enable_checkpointing=False,
                         enable_model_summary=False, enable_progress_bar=False)
    with torch.inference_mode():
        outputs = trainer.predict(model, dataloaders=datamodule.test_dataloader())
    return level.records(corpus, range(len(features)), outputs, meta["labels"], meta["num_views"])


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("faina.predict", __doc__.splitlines()[0])
    parser.add_argument("model_dir", help="fold folder with model.safetensors and model.json, or a results folder "
                                          "(ensemble of all its fold models)")
    parser.add_argument("input", help="Faina-format file to label (.conll for span models, .tsv for post models)")
    parser.add_argument("output", help="where to write the predictions (official layout)")
    parser.add_argument("--batch-size", type=int, default=32, help="posts per forward pass")
    return parser


@exit_on_user_error
def main(argv: list[str] | None = None) -> str:
    args = build_parser().parse_args(argv)
    path = predict_file(args.model_dir, args.input, args.output, args.batch_size)
    print(f"predictions written: {path}", file=sys.stderr)
    return path


if __name__ == "__main__":
    main()
