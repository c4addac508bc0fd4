"""What the framework adds to a training step: its MVMD model against a bare encoder loop, in one process.

Three LightningModules train, one after the other in rounds (A B C A B C ...), on the same fixed list of batches
(taken once from the framework's own ``FainaDataModule`` of fold 0, as the runner builds it) from the same
encoder weights, each with a fresh ``lightning.pytorch.Trainer`` of the same settings (CPU, the run's precision,
gradient clipping and determinism; no logger, no checkpoints, no progress bar; ``max_steps`` = the batches):

- ``framework``: the run's model (``build_fold_model``, what ``train.py`` trains: ``ChunkedEncoder``, the decoders'
  CRF loss, its parameter groups, schedule, callbacks and ``train/loss`` logging);
- ``bare encoder + linear``: the same ``AutoModel``, one ``nn.Linear(hidden, decoders × 3)`` over each word's first
  subword and a cross-entropy over the BIO tags, one AdamW at the model's lr;
- ``bare encoder + CRF``: the same, with the framework's decoders (``BIODecoders``: projection and batched CRF)
  instead of the linear layer and cross-entropy, so a difference splits into the CRF's cost and the rest.

The bare models see the encoder windows the ``ChunkedEncoder`` builds (the same subwords, special tokens and
window widths), prepared once before timing as a bare data pipeline would. Each variant first trains one untimed
round (the first pass over each batch shape allocates memory and builds kernels: seconds). A step's time is the
wall time between the starts of consecutive batches (the last: to the end of training), so it holds everything the
loop does per step: forward, backward, clipping, the optimiser and schedule, hooks, logging. The first step of each
round is left out; a variant's figure is the median of its rounds' medians. Measured figures:
docs/speed-and-scale.md; this is a benchmark, not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import copy
import resource
import statistics
import time
import warnings
from collections.abc import Callable, Sequence

import lightning.pytorch as pl
import torch
from omegaconf import DictConfig
from torch import nn
from torch.nn import functional as F

from faina.data.datamodule import FainaDataModule
from faina.serving.fold_model import load_tokenizer
from faina.training.cross_validation import entry_features
from faina.training.model_building import build_fold_model, plain
from faina.training.run_entries import entry_splits, read_run_entries
from models.heads import BIODecoders

FRAMEWORK, LINEAR, CRF = "framework", "bare encoder + linear", "bare encoder + CRF"


def fixed_batches(cfg: DictConfig, count: int):
    """The run's fold-0 model and ``count`` training batches of its DataModule (further epochs when one is short)."""
    entries = read_run_entries(cfg, official=False)
    (entry,) = entries
    tokenizer = load_tokenizer(plain(cfg.encoder))
    features = entry_features(cfg, entry, tokenizer)
    split = entry_splits(cfg, entries)[0][entry.name]
    module = FainaDataModule(
        features,
        split,
        tokenizer.pad_token_id,
        batch_size=cfg.loader.batch_size,
        seed=cfg.seed,
        length_grouped=cfg.loader.get("length_grouped", True),
    )
    batches, epoch = [], 0
    while len(batches) < count:
        loader = module.train_dataloader()
        if hasattr(loader.sampler, "set_epoch"):
            loader.sampler.set_epoch(epoch)
        batches += list(loader)[: count - len(batches)]
        epoch += 1
    torch.manual_seed(cfg.seed)
    model = build_fold_model(entries, cfg.encoder, {entry.name: split.train}).module
    return model, batches


def encoder_windows(batch: dict, prefix: Sequence[int], suffix: Sequence[int], window: int, pad_id: int) -> dict:
    """``batch`` with the encoder's windows as a bare loop would feed them: ``window_ids`` / ``window_mask``
    ``[N, L]`` (each post's content subwords in windows of ``window``, wrapped in the special tokens, as
    ``ChunkedEncoder`` cuts them) and ``word_positions`` ``[B, W]``: each word's first subword in the flattened
    windows (padding words point at a real position; the loss masks them)."""
    rows, positions = [], []
    for ids, mask, starts in zip(batch["input_ids"], batch["attention_mask"], batch["word_starts"]):
        content = ids[mask.bool()].tolist()
        first_row = len(rows)
        for begin in range(0, max(len(content), 1), window):
            rows.append([*prefix, *content[begin : begin + window], *suffix])
        row_of = [first_row + max(int(t), 0) // window for t in starts]
        positions.append([(row, len(prefix) + max(int(t), 0) % window) for row, t in zip(row_of, starts)])
    width = max(len(row) for row in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)], mask[i, : len(row)] = torch.tensor(row), 1
    flat = torch.tensor([[row * width + column for row, column in post] for post in positions], dtype=torch.long)
    return {**batch, "window_ids": ids, "window_mask": mask, "word_positions": flat}


class BareTagger(pl.LightningModule):
    """An ``AutoModel`` and a tagging head over each word's first subword, one AdamW: the floor a step can cost.

    ``crf=False``: ``nn.Linear(hidden, decoders × 3)`` and cross-entropy over the BIO tags of the real words;
    ``crf=True``: the framework's ``BIODecoders`` (its projection and batched CRF) and their loss."""

    def __init__(self, encoder: nn.Module, num_decoders: int, lr: float, crf: bool):
        super().__init__()
        self.encoder = encoder
        self.lr = lr
        self.num_decoders = num_decoders
        hidden = int(encoder.config.hidden_size)
        self.decoders = BIODecoders(hidden, num_decoders) if crf else None
        self.linear = None if crf else nn.Linear(hidden, num_decoders * 3)

    def training_step(self, batch, batch_idx):
        hidden = self.encoder(input_ids=batch["window_ids"], attention_mask=batch["window_mask"]).last_hidden_state
        words = hidden.flatten(0, 1)[batch["word_positions"]]  # [B, W, H]
        if self.decoders is not None:
            return self.decoders.loss(self.decoders.emissions(words), batch["tags"], batch["word_mask"])
        logits = self.linear(words).view(*words.shape[:2], self.num_decoders, 3).transpose(1, 2)  # [B, D, W, 3]
        real = batch["word_mask"].bool().unsqueeze(1).expand(-1, self.num_decoders, -1)
        return F.cross_entropy(logits[real], batch["tags"][real])

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


class StepClock(pl.Callback):
    """Wall and CPU seconds of each optimiser step (start of a batch to the start of the next, the last to the end
    of training) and each step's loss (kept as tensors: reading them would add a sync to the step)."""

    def __init__(self):
        self.starts: list[tuple[float, float]] = []
        self.losses: list[torch.Tensor] = []
        self.end = (0.0, 0.0)

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        self.starts.append((time.perf_counter(), time.process_time()))

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        self.losses.append(outputs["loss"].detach())

    def on_train_end(self, trainer, module):
        self.end = (time.perf_counter(), time.process_time())

    def steps(self) -> tuple[list[float], list[float]]:
        marks = [*self.starts, self.end]
        return [b[0] - a[0] for a, b in zip(marks, marks[1:])], [b[1] - a[1] for a, b in zip(marks, marks[1:])]


def trainer_settings(cfg: DictConfig, steps: int) -> dict:
    """The Trainer every variant gets: the run's precision, clipping and determinism, nothing that writes."""
    return {
        "accelerator": "cpu",
        "devices": 1,
        "precision": cfg.trainer.get("precision", "32-true"),
        "gradient_clip_val": cfg.trainer.get("gradient_clip_val"),
        "deterministic": cfg.trainer.get("deterministic", False),
        "max_steps": steps,
        "max_epochs": -1,
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "num_sanity_val_steps": 0,
        "limit_val_batches": 0,
    }


def train_round(module: pl.LightningModule, initial: dict, batches: list, settings: dict, seed: int) -> dict:
    """One round: ``module`` back to its ``initial`` weights, trained on ``batches`` by a fresh Trainer."""
    module.load_state_dict(initial)
    module.train()
    torch.manual_seed(seed)
    clock = StepClock()
    loader = torch.utils.data.DataLoader(batches, batch_size=None, shuffle=False)
    started = time.perf_counter()
    with warnings.catch_warnings():  # the framework's model has a validation_step, left unused here on purpose
        warnings.filterwarnings("ignore", message=".*validation_step.* no `val_dataloader`")
        pl.Trainer(**settings, callbacks=[clock]).fit(module, train_dataloaders=loader)
    fit_seconds = time.perf_counter() - started
    walls, cpus = clock.steps()
    return {
        "seconds_per_step": statistics.median(walls[1:] or walls),
        "cpu_seconds_per_step": statistics.median(cpus[1:] or cpus),
        "fit_seconds": fit_seconds,
        "losses": [float(loss) for loss in clock.losses],
    }


def variants(model, lr: float) -> dict[str, pl.LightningModule]:
    """The framework's model and the two bare ones over copies of its encoder's weights as they start."""
    encoder = model.encoder.model
    decoders = model.decoders.num_decoders
    return {
        FRAMEWORK: model,
        LINEAR: BareTagger(copy.deepcopy(encoder), decoders, lr, crf=False),
        CRF: BareTagger(copy.deepcopy(encoder), decoders, lr, crf=True),
    }


def measure(cfg: DictConfig, steps: int, rounds: int, log: Callable[[str], None] = lambda line: None) -> dict:
    """Every variant's median seconds per step over ``rounds`` interleaved rounds of ``steps`` steps; the ratios of
    the framework to each bare loop, the losses of the last round and the process's peak RSS."""
    model, batches = fixed_batches(cfg, steps)
    encoder = model.encoder
    windowed = [encoder_windows(b, encoder.prefix, encoder.suffix, encoder.window, encoder.pad_id) for b in batches]
    lr = float(getattr(model.optimizer_factory, "keywords", {}).get("lr", 1e-4))  # the Hydra partial's lr
    modules = variants(model, lr)
    initial = {name: copy.deepcopy(module.state_dict()) for name, module in modules.items()}
    settings = trainer_settings(cfg, steps)
    batches_of = {name: batches if name == FRAMEWORK else windowed for name in modules}
    # an untimed round each first: the first pass over a batch shape allocates and builds kernels (seconds)
    warmup = {
        name: train_round(module, initial[name], batches_of[name], settings, cfg.seed)
        for name, module in modules.items()
    }
    runs: dict[str, list[dict]] = {name: [] for name in modules}
    for round_index in range(rounds):
        for name, module in modules.items():
            run = train_round(module, initial[name], batches_of[name], settings, cfg.seed)
            runs[name].append(run)
            log(f"round {round_index + 1}/{rounds} {name}: {run['seconds_per_step']:.4f} s/step")
    figures = {
        name: {
            "seconds_per_step": statistics.median(run["seconds_per_step"] for run in done),
            "cpu_seconds_per_step": statistics.median(run["cpu_seconds_per_step"] for run in done),
            "rounds": [round(run["seconds_per_step"], 5) for run in done],
            "fit_seconds": [round(run["fit_seconds"], 3) for run in done],
            "warmup_fit_seconds": round(warmup[name]["fit_seconds"], 3),
            "losses": done[-1]["losses"],
        }
        for name, done in runs.items()
    }
    framework = figures[FRAMEWORK]["seconds_per_step"]
    framework_cpu = figures[FRAMEWORK]["cpu_seconds_per_step"]
    return {
        "steps": steps,
        "rounds": rounds,
        "batch_size": int(cfg.loader.batch_size),
        "posts_per_batch": [int(b["input_ids"].shape[0]) for b in batches],
        "encoder_windows": sum(int(b["window_ids"].shape[0]) for b in windowed),
        "decoders": int(model.decoders.num_decoders),
        "encoder": str(encoder.name_or_path),
        "torch_threads": torch.get_num_threads(),
        "trainer": {k: v for k, v in settings.items() if k in ("precision", "gradient_clip_val", "deterministic")},
        "variants": figures,
        "ratio_framework_to_linear": framework / figures[LINEAR]["seconds_per_step"],
        "ratio_framework_to_crf": framework / figures[CRF]["seconds_per_step"],
        "ratio_crf_to_linear": figures[CRF]["seconds_per_step"] / figures[LINEAR]["seconds_per_step"],
        "cpu_ratio_framework_to_linear": framework_cpu / figures[LINEAR]["cpu_seconds_per_step"],
        "cpu_ratio_framework_to_crf": framework_cpu / figures[CRF]["cpu_seconds_per_step"],
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def table(result: dict) -> str:
    """The figures as the docs show them."""
    lines = [
        f"Training step: {result['steps']} steps of batches of {result['batch_size']} (fold 0 of the run), "
        f"median of {result['rounds']} interleaved rounds, torch threads {result['torch_threads']}, "
        f"{result['decoders']} decoders",
        "| variant | s/step | CPU s/step | framework ÷ this (wall) | framework ÷ this (CPU) |",
        "|---|---|---|---|---|",
    ]
    framework = result["variants"][FRAMEWORK]
    for name, figures in result["variants"].items():
        wall = framework["seconds_per_step"] / figures["seconds_per_step"]
        cpu = framework["cpu_seconds_per_step"] / figures["cpu_seconds_per_step"]
        lines.append(
            f"| {name} | {figures['seconds_per_step']:.3f} | {figures['cpu_seconds_per_step']:.3f} | {wall:.3f} | "
            f"{cpu:.3f} |"
        )
    lines.append(f"peak RSS of the process: {result['peak_rss_mib']:.0f} MiB")
    return "\n".join(lines)
