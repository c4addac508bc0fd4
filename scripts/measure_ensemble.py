"""Measurement: an ensemble of K official-style models vs each single model, fixed vs tuned decision rules.

On the synthetic sample (300 posts): the last ``--test-posts`` posts are held out with their gold labels,
the rest is the labelled file of ``cv=official cv.ensemble=K`` runs (K models on K train/dev splits, own
seed each) with the dev-tuned rule turned on (span-f: ``o_bias=tuned``, post-f: ``threshold=tuned``).
Every single model and the ensemble then predict the held-out posts twice, with the tuned rule stored in
the model and with the fixed one (τ = 0.7; no O bias), and ``faina.evaluate``'s scorer gives strict F1
(view average). Training runs through ``train.py`` exactly as a user would.

    python scripts/measure_ensemble.py OUT_DIR [--ensemble 3] [--span-epochs 10] [--post-epochs 10]

This is a measurement, not a test: it trains 2 × K models (tens of CPU minutes with MiniLM).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error

REPO = Path(__file__).resolve().parents[1]  # the checkout whose train.py trains the models
TASKS = {
    "span-f": ("conll", "span-fine", "model.module.decision.tuned=true"),
    "post-f": ("tsv", "post-fine", "model.module.decision.tuned=true"),
}


def split_sample(out: Path, test_posts: int, train_posts: int | None = None) -> None:
    """Hold out the last ``test_posts`` posts of the sample (CoNLL and TSV list the same posts in order);
    the labelled file is the first ``train_posts`` of the others (all when ``None``)."""
    from faina.data.levels import subset
    from faina.data.synthetic import default_sample_dir
    from faina.formats.conll import read_conll, write_conll
    from faina.formats.tsv import read_post_tsv, write_post_tsv

    for ext, read, write in (("conll", read_conll, write_conll), ("tsv", read_post_tsv, write_post_tsv)):
        corpus = read(default_sample_dir() / f"sample.{ext}")
        n = len(corpus.posts if ext == "conll" else corpus.rows)
        write(subset(corpus, range(min(train_posts or n, n - test_posts))), out / f"train.{ext}")
        write(subset(corpus, range(n - test_posts, n)), out / f"test.{ext}")


def train(out: Path, task: str, ensemble: int, epochs: int) -> Path:
    ext, _, tuned = TASKS[task]
    name = f"{task}-ensemble{ensemble}"
    command = [
        sys.executable,
        "train.py",
        f"task={task}",
        "cv=official",
        f"cv.ensemble={ensemble}",
        tuned,
        f"trainer.max_epochs={epochs}",
        "data=custom",
        f"data.train_path={out / f'train.{ext}'}",
        f"data.test_path={out / f'test.{ext}'}",
        f"paths.results_dir={out / 'results'}",
        f"name={name}",
        "logger=none",
        "callbacks=none",
    ]
    subprocess.run(command, cwd=REPO, check=True)
    return out / "results" / name


def variants(results_dir: Path, ensemble: int):
    """(name, model, meta) for every single model and the ensemble, each with the tuned and the fixed rule."""
    from faina.serving.fold_model import load_exported
    from faina.serving.loading import fold_dirs
    from models.ensemble import ensemble as make_ensemble

    for rule in ("fixed", "tuned"):
        members = []
        for folder in fold_dirs(results_dir):
            model, meta = load_exported(folder)
            if rule == "fixed":
                model.use_fixed_decision()  # τ = 0.7 / no O bias: the same model, its rule untuned
            members.append(model)
            yield f"{folder.name} {rule}", model, meta
        yield f"ensemble({ensemble}) {rule}", make_ensemble(members), meta


def score(results_dir: Path, out: Path, task: str, ensemble: int) -> dict[str, float]:
    from faina.data.levels import LEVELS
    from faina.data.task_data import read_level
    from faina.formats.labels import LabelInventory
    from faina.scoring.official import evaluate_files
    from faina.serving.prediction import predict_corpus

    ext, eval_task, _ = TASKS[task]
    gold = out / f"test.{ext}"
    scores = {}
    for name, model, meta in variants(results_dir, ensemble):
        corpus = read_level(gold, meta["level"], meta["grain"], LabelInventory.load(meta["labels_inventory"]))
        path = LEVELS[meta["level"]].write(
            predict_corpus(model, meta, corpus), out / f"pred-{task}-{name.replace(' ', '-')}.{ext}"
        )
        scores[name] = evaluate_files(eval_task, gold, path)["strict"]["avg"]["f1"]
        print(f"{task}\t{name}\t{scores[name]:.4f}", flush=True)
    return scores


@exit_on_user_error
def main(argv: list[str] | None = None) -> None:
    parser = command_parser("scripts.measure_ensemble", __doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--ensemble", type=int, default=3)
    parser.add_argument("--test-posts", type=int, default=60)
    parser.add_argument("--train-posts", type=int, default=None, help="labelled posts (default: all not held out)")
    parser.add_argument("--span-epochs", type=int, default=10)
    parser.add_argument("--post-epochs", type=int, default=10)
    parser.add_argument("--tasks", nargs="+", default=["post-f", "span-f"], choices=sorted(TASKS))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    split_sample(args.out, args.test_posts, args.train_posts)
    report = {}
    for task in args.tasks:
        epochs = args.span_epochs if task.startswith("span") else args.post_epochs
        report[task] = score(train(args.out, task, args.ensemble, epochs), args.out, task, args.ensemble)
        (args.out / "scores.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
