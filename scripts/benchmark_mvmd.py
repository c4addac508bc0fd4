"""Benchmark: seconds per trained post of MVMD span-f and MVML post-f against a bare encoder + linear floor.

All configurations train, in ONE process and interleaved round by round, on the same posts of the shipped
synthetic sample (or any Faina-format ``--data`` file) with the same batches, so their ratios survive the
load of a shared machine. Time is the process's CPU time (user + system, all threads), which a busy
machine inflates far less than wall time; each figure is the median over rounds:

- ``floor``: the plain Hugging Face encoder (``AutoModel``, ``[CLS] post [SEP]``) and one linear layer on
  ``[CLS]`` with binary cross-entropy, a hand-written PyTorch loop: what any fine-tuning must pay;
- ``MVML post-f``: the framework's post model (chunked encoder, 2 views × 20 labels);
- ``MVMD span-f``: the span model with its 40 BIO+CRF decoders (2 views × 20 labels);
- ``MVMD 1 decoder``: the same with one decoder (1 view × 1 label), to price the other 39.

``--lightning`` adds whole ``Trainer.fit`` epochs of MVMD and MVML (the runner's trainer: dev pass with the
span metric, CSV logging, progress bar off) without and with the ``ModelCheckpoint`` of the runner
(last.ckpt every epoch and best.ckpt), so the cost of each layer above the model shows. ``--batching``
compares length-grouped batches (the default of the DataModule) with plain shuffling.

    python scripts/benchmark_mvmd.py [--posts 96] [--batch-size 16] [--rounds 3] [--threads 1] [--lightning]

This is a benchmark, not a test: numbers depend on the machine and its load; compare ratios.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import tempfile
import time
from pathlib import Path

from common.errors import exit_on_user_error

SAMPLE = Path(__file__).resolve().parents[1] / "faina" / "sample_data" / "sample.conll"
GOALS = {"MVMD span-f": 1.10, "MVML post-f": 1.05}


def load_posts(path: Path, count: int):
    """Span features of the first ``count`` posts, their post-level targets ``[V, C]`` and the tokenizer."""
    import torch

    from faina.data.levels import LEVELS
    from faina.data.task_data import load_task_data
    from faina.serving.fold_model import load_tokenizer
    from models.encoder import offline_encoder_path

    data = load_task_data(str(path), None, "span", "fine")
    tokenizer = load_tokenizer({"name_or_path": offline_encoder_path()})
    features = LEVELS["span"].encode(data.labelled, tokenizer, data.labels, data.num_views)[:count]
    position = {label: i for i, label in enumerate(data.labels)}
    for feature, views in zip(features, data.label_sets()):
        targets = torch.zeros(data.num_views, len(data.labels))
        for view, labels in enumerate(views):
            for label in labels:
                targets[view, position[label]] = 1.0
        feature["labels"] = targets
    return features, data, tokenizer


def make_batches(features, batch_size: int, grouped: bool, seed: int = 0):
    """The batches every configuration trains on (the DataModule's collation and batch order)."""
    import random

    from common.length_batches import length_grouped_order
    from faina.data.features import Collator

    if grouped:
        order = length_grouped_order([len(f["input_ids"]) for f in features], batch_size, seed, 0)
    else:
        order = list(range(len(features)))
        random.Random(seed).shuffle(order)
    collate = Collator(0)
    return [collate([features[i] for i in order[s : s + batch_size]]) for s in range(0, len(order), batch_size)]


class Floor:
    """``AutoModel`` + one linear layer on ``[CLS]``, BCE: the cheapest fine-tuning of the same encoder."""

    def __init__(self, encoder, num_outputs: int):
        import torch

        self.encoder = encoder.model
        self.prefix, self.suffix = encoder.prefix, encoder.suffix
        self.limit = encoder.max_length
        self.linear = torch.nn.Linear(encoder.hidden_size, num_outputs)
        self.optimizer = torch.optim.AdamW(list(self.encoder.parameters()) + list(self.linear.parameters()), lr=1e-4)

    def inputs(self, batch):
        import torch

        rows = [
            self.prefix + ids[mask.bool()].tolist()[: self.limit - len(self.prefix) - len(self.suffix)] + self.suffix
            for ids, mask in zip(batch["input_ids"], batch["attention_mask"])
        ]
        width = max(len(r) for r in rows)
        ids = torch.zeros(len(rows), width, dtype=torch.long)
        mask = torch.zeros(len(rows), width, dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)], mask[i, : len(row)] = torch.tensor(row), 1
        return ids, mask

    def step(self, batch, prepared) -> None:
        from torch.nn import functional as F

        ids, mask = prepared
        self.optimizer.zero_grad()
        cls = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state[:, 0]
        F.binary_cross_entropy_with_logits(self.linear(cls), batch["labels"].flatten(1)).backward()
        self.optimizer.step()


class ModelSteps:
    """A framework model trained by its own ``training_step`` loss and its configured optimiser."""

    def __init__(self, model, loss):
        self.model = model.train()
        self.loss = loss
        param_groups, lrs = model.parameter_groups()
        self.optimizer = model.optimizer_factory(param_groups)
        for group, (kind, value) in zip(self.optimizer.param_groups, lrs):  # as configure_optimizers does
            group["lr"] = value if kind == "absolute" else group["lr"] * value

    def inputs(self, batch):
        return None

    def step(self, batch, prepared) -> None:
        self.optimizer.zero_grad()
        self.loss(self.model, batch).backward()
        self.optimizer.step()


def build_configurations(encoder, data):
    from models.mvmd import MVMD
    from models.mvml import MVML

    labels, views = list(data.labels), data.num_views
    return {
        "floor (encoder + linear)": Floor(copy.deepcopy(encoder), views * len(labels)),
        "MVML post-f": ModelSteps(
            MVML(copy.deepcopy(encoder), views, labels, head_lr=1e-2), lambda m, b: m.head.loss(m(b), b["labels"])
        ),
        "MVMD span-f": ModelSteps(
            MVMD(copy.deepcopy(encoder), views, labels),
            lambda m, b: m.decoders.loss(m.emissions(b), b["tags"], b["word_mask"]),
        ),
        "MVMD 1 decoder": ModelSteps(
            MVMD(copy.deepcopy(encoder), 1, labels[:1]),
            lambda m, b: m.decoders.loss(m.emissions(b), b["tags"][:, :1], b["word_mask"]),
        ),
    }


def time_epoch(config, batches, prepared) -> float:
    start = time.process_time()
    for batch, inputs in zip(batches, prepared):
        config.step(batch, inputs)
    return time.process_time() - start


def lightning_epoch_seconds(encoder, data, features, args, model_name: str, checkpoints: bool) -> float:
    """Seconds of one ``Trainer.fit`` epoch (train + dev pass) of MVMD or MVML, as the runner builds it."""
    import lightning.pytorch as pl
    from lightning.pytorch.callbacks import ModelCheckpoint
    from lightning.pytorch.loggers import CSVLogger

    from faina.data.datamodule import FainaDataModule
    from faina.data.folds import FoldSplit
    from faina.data.levels import LEVELS
    from models.mvmd import MVMD
    from models.mvml import MVML

    cut = int(len(features) * 0.8)
    split = FoldSplit(0, tuple(range(cut)), tuple(range(cut, len(features))), ())
    if model_name == "MVMD":
        model = MVMD(
            copy.deepcopy(encoder),
            data.num_views,
            list(data.labels),
            val_metric=LEVELS["span"].metric(data.inventory, data.num_views),
        )
    else:
        model = MVML(
            copy.deepcopy(encoder),
            data.num_views,
            list(data.labels),
            head_lr=1e-2,
            val_metric=LEVELS["post"].metric(data.inventory, data.num_views),
        )
    module = FainaDataModule(
        features, split, 0, batch_size=args.batch_size, seed=0, length_grouped=args.batching == "length"
    )
    with tempfile.TemporaryDirectory() as folder:
        callbacks = (
            [ModelCheckpoint(dirpath=folder, filename="best", monitor="val/f1", mode="max", save_last=True)]
            if checkpoints
            else []
        )
        trainer = pl.Trainer(
            max_epochs=2,
            accelerator="cpu",
            devices=1,
            logger=CSVLogger(folder),
            callbacks=callbacks,
            enable_checkpointing=checkpoints,
            enable_progress_bar=False,
            enable_model_summary=False,
            num_sanity_val_steps=0,
            log_every_n_steps=5,
        )
        times = []

        class EpochTimer(pl.Callback):
            def on_train_epoch_start(self, *_):
                times.append(time.process_time())

            def on_train_epoch_end(self, *_):  # after the dev pass and the checkpoint writes of the epoch
                times.append(time.process_time())

        trainer.callbacks.append(EpochTimer())
        trainer.fit(model, datamodule=module)
    return times[-1] - times[-2]  # the second epoch: warm


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=SAMPLE, help="a Faina-format .conll file")
    parser.add_argument("--posts", type=int, default=96, help="posts trained per round (the first N of --data)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="timed epochs per configuration (median)")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument(
        "--batching",
        choices=["length", "random"],
        default="length",
        help="length-grouped batches (the DataModule's default) or plain shuffling",
    )
    parser.add_argument("--compare-batching", action="store_true", help="also time MVMD span-f on the other batching")
    parser.add_argument(
        "--lightning",
        action="store_true",
        help="also time Trainer.fit epochs (dev pass, logging) with and without checkpoints",
    )
    return parser.parse_args(argv)


@exit_on_user_error
def main(argv=None) -> None:
    args = parse_args(argv)
    import torch

    from models.encoder import ChunkedEncoder

    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    features, data, _ = load_posts(args.data, args.posts)
    encoder = ChunkedEncoder()
    batches = make_batches(features, args.batch_size, args.batching == "length")
    configs = build_configurations(encoder, data)
    prepared = {name: [config.inputs(b) for b in batches] for name, config in configs.items()}
    runs = {name: (config, batches, prepared[name]) for name, config in configs.items()}
    if args.compare_batching:
        other = make_batches(features, args.batch_size, args.batching != "length")
        steps = configs["MVMD span-f"]
        runs[f"MVMD span-f, {'random' if args.batching == 'length' else 'length-grouped'} batches"] = (
            steps,
            other,
            [None] * len(other),
        )
    for config, run_batches, inputs in runs.values():  # warm-up: first calls allocate and tune
        config.step(run_batches[0], inputs[0])
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (config, run_batches, inputs) in runs.items():
            seconds[name].append(time_epoch(config, run_batches, inputs))
    per_post = {name: statistics.median(values) / len(features) for name, values in seconds.items()}
    if args.lightning:
        train_posts = int(len(features) * 0.8)
        for model_name, label in (("MVMD", "MVMD span-f"), ("MVML", "MVML post-f")):
            for checkpoints in (False, True):
                name = f"{label}, Trainer.fit epoch{' + checkpoints' if checkpoints else ''}"
                per_post[name] = (
                    lightning_epoch_seconds(encoder, data, features, args, model_name, checkpoints) / train_posts
                )
    floor = per_post["floor (encoder + linear)"]
    print(
        f"Training cost per post: {len(features)} posts of {args.data.name}, batches of {args.batch_size} "
        f"({args.batching}), median of {args.rounds} interleaved epochs, torch threads "
        f"{torch.get_num_threads()}"
    )
    print(f"| {'configuration':56} | {'CPU ms/post':>11} | {'× floor':>7} | {'goal':>6} |")
    print(f"|{'-' * 58}|{'-' * 13}|{'-' * 9}|{'-' * 8}|")
    for name, value in per_post.items():
        goal = f"≤{GOALS[name]:.2f}" if name in GOALS else ""
        print(f"| {name:56} | {value * 1000:11.1f} | {value / floor:7.3f} | {goal:>6} |")
    ratio = per_post["MVMD span-f"] / per_post["MVMD 1 decoder"]
    print(f"40 decoders / 1 decoder: {ratio:.3f} (goal ≤1.10)")


if __name__ == "__main__":
    main()
