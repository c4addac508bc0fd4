"""The model card (``README.md`` of an exported model folder), written from the run that trained the model.

Everything in it is read from the run's own files, never typed by hand: the resolved ``config.yaml`` of the
experiment (data, encoder, recipe), each fold's ``metrics.json`` (posts per split, held-out scores) and the
exported fold's ``model.json``. A reader learns what the model does, what it was trained on and how well
each fold did, and what it must not be used for.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from common.spread import mean_std
from faina.formats.labels import LabelInventory
from faina.serving.card_decisions import decision_lines

WHAT = {
    "span": "marks fallacious spans (BIO tags per label and annotator view)",
    "post": "gives each post the set of fallacy labels found in it, per annotator view",
}


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def run_record(fold_dir: Path) -> dict:
    """What the card reports about the run: its resolved config and the metrics of every finished fold."""
    exp_dir = fold_dir.parent
    config = {}
    if (exp_dir / "config.yaml").is_file():
        config = yaml.safe_load((exp_dir / "config.yaml").read_text(encoding="utf-8")) or {}
    folds = []
    for path in sorted(exp_dir.glob("fold*/metrics.json"), key=lambda p: (len(p.parent.name), p.parent.name)):
        metrics = _read_json(path)
        if metrics is not None:
            folds.append(metrics)
    return {
        "config": config,
        "folds": folds,
        "fold": _read_json(fold_dir / "metrics.json") or {},
        "fold_name": fold_dir.name,
        "experiment": exp_dir.name,
    }


def _percent(value) -> str:
    return f"{100 * value:.1f}" if isinstance(value, (int, float)) else "–"


def scores_table(folds: list[dict], exported: int | None) -> list[str]:
    """One row per fold (F1 per scoring and view, held-out posts), then mean ± std over folds."""
    scored = [f for f in folds if "test" in f]
    if not scored:
        return [
            "No held-out scores: the run predicted an unlabelled file (cv=official); its dev F1 per fold:",
            "",
            "| fold | dev F1 (%) |",
            "|---|---|",
            *[f"| {f.get('fold')} | {_percent(f.get('best_dev_f1'))} |" for f in folds],
        ]
    columns = [(mode, view) for mode, views in scored[0]["test"].items() for view in views]
    header = "| fold | test posts | " + " | ".join(f"{mode} F1 {view}" for mode, view in columns) + " |"
    lines = [header, "|" + "---|" * (len(columns) + 2)]
    for fold in scored:
        mark = " (this model)" if fold.get("fold") == exported else ""
        cells = [_percent(fold["test"][mode][view]["f1"]) for mode, view in columns]
        lines.append(f"| {fold.get('fold')}{mark} | {fold.get('test_posts', '–')} | " + " | ".join(cells) + " |")
    if len(scored) > 1:
        cells = []
        for mode, view in columns:
            spread = mean_std(f["test"][mode][view]["f1"] for f in scored)
            cells.append(f"{100 * spread['mean']:.1f} ± {100 * spread['std']:.1f}")
        lines.append(f"| mean ± std | {sum(f.get('test_posts', 0) for f in scored)} | " + " | ".join(cells) + " |")
    return lines


def model_card(meta: dict, config: dict, run: dict, inventory: LabelInventory, repo_id: str | None = None) -> str:
    """The card's Markdown (with the Hugging Face metadata header)."""
    cfg = run.get("config", {})
    data, encoder, model = cfg.get("data", {}), cfg.get("encoder", {}), cfg.get("model", {})
    module = model.get("module", {}) or {}
    optimizer, scheduler = module.get("optimizer", {}) or {}, module.get("scheduler", {}) or {}
    trainer, cv = cfg.get("trainer", {}), cfg.get("cv", {})
    fold = run.get("fold", {})
    level, task = meta["level"], meta["task"]
    posts = sum(fold.get(k, 0) or 0 for k in ("train_posts", "dev_posts", "test_posts"))
    exported = fold.get("fold")
    header = {
        "language": ["it"],
        "library_name": "fallacy-framework",  # no pipeline_tag: no transformers pipeline fits (auto_classes)
        "tags": ["fallacy-detection", "faina", task, config["architecture"].lower()],
    }
    name = repo_id or f"{task}-{encoder.get('name', 'encoder')}-{data.get('name', 'data')}"
    synthetic = data.get("name") == "sample"
    lines = [
        "---",
        yaml.safe_dump(header, sort_keys=False).strip(),
        "---",
        "",
        f"# {name}",
        "",
        f"A {config['architecture']} fallacy model for the Faina task **{task}**: it {WHAT[level]}. "
        f"Trained with the fallacy-framework (experiment `{run.get('experiment')}`, {run.get('fold_name')}).",
        "",
        "## Task",
        "",
        f"- level: {level}, label grain: {meta['grain']}, {len(meta['labels'])} labels, "
        + _views_line(meta["num_views"], config["views"], str(data.get("targets", "views"))),
        *decision_lines(config.get("thresholds") or {}, meta["labels"], config["views"]),
        *_context_lines(config.get("context") or []),
        "",
        "## Training data",
        "",
        f"- dataset: `{data.get('name', 'unknown')}` (file `{Path(str(data.get('train_path', '?'))).name}`)"
        + (
            " — the synthetic sample shipped with the framework, NOT Faina: scores say nothing about real "
            "fallacy detection"
            if synthetic
            else ""
        ),
        f"- this model: {fold.get('train_posts', '?')} training posts, {fold.get('dev_posts', '?')} dev posts "
        f"(checkpoint selection), {fold.get('test_posts', 0) or 'no'} held-out test posts"
        + (f"; {posts} labelled posts in all" if posts else ""),
        "",
        "## Recipe",
        "",
        f"- encoder: `{encoder.get('name', '?')}` (`{config['encoder'].get('source') or '?'}`), max length "
        f"{encoder.get('max_length', '?')} subwords per window (longer posts are encoded in windows)",
        *_decoder_lines(config["encoder"]),
        f"- model: {config['architecture']}, dropout {model.get('dropout', '?')}, "
        + ", ".join(f"{k}={v}" for k, v in _settings(config.get("module", {}))),
        f"- optimiser: {str(optimizer.get('_target_', '?')).rsplit('.', 1)[-1]} lr {optimizer.get('lr', '?')}, "
        f"betas {optimizer.get('betas', '?')}, weight decay {optimizer.get('weight_decay', '?')}; schedule "
        f"{str(scheduler.get('_target_', 'none')).rsplit('.', 1)[-1]}",
        f"- epochs: {_length(trainer, cfg, fold)}, batch size {cfg.get('loader', {}).get('batch_size', '?')}, "
        f"seed {cfg.get('seed', '?')}, precision {trainer.get('precision', '?')}",
        f"- cross-validation: {cv.get('name', '?')}"
        + (f", {cv.get('num_folds')} folds" if cv.get("num_folds") else "")
        + (f", dev fraction {cv.get('dev_fraction')}" if cv.get("dev_fraction") is not None else "")
        + (
            f"; best dev F1 of this fold {_percent(fold.get('best_dev_f1'))}%"
            if fold.get("best_dev_f1") is not None
            else ""
        ),
        "",
        "## Results (held-out posts of each fold, %)",
        "",
        *scores_table(run.get("folds", []), exported),
        "",
        "Strict: exact span/label match; soft: partial overlap credit (Faina's official scorer). "
        "`avg` is the mean over the annotator views.",
        "",
        "## Labels",
        "",
        ", ".join(f"{label} (`{inventory.short_ids.get(label, label)}`)" for label in meta["labels"]),
        "",
        "## How to use",
        "",
        "```python",
        "from faina import FallacyTagger",
        "",
        f'tagger = FallacyTagger.load("{repo_id or "path/to/this/folder"}")',
        'for post in tagger(["Studio americano: la mutazione è pericolosa"]):',
        "    print(post.to_dict())",
        "```",
        "",
        f'or `python -m faina.tag {repo_id or "path/to/this/folder"} --text "..." --json`. Raw text is tokenised '
        "with Faina's rule (words and punctuation, placeholders kept whole; `faina/formats/tokenization.py`).",
        "",
        "With `transformers` (no remote code: importing the framework registers its classes with the Auto classes):",
        "",
        "```python",
        "import faina.serving.auto_classes  # noqa: F401",
        "from transformers import AutoModel",
        "",
        f'model = AutoModel.from_pretrained("{repo_id or "path/to/this/folder"}")',
        'print(model.tag(["Studio americano: la mutazione è pericolosa"])[0].to_dict())',
        "```",
        "",
        "## Intended use and limits",
        "",
        "- For research on fallacy detection and annotator disagreement in Italian social-media posts on "
        "migration, climate change and public health (2019-2022), the domain of Faina.",
        "- Not for moderating, ranking or judging people or their posts: fallacy labels are subjective (the two "
        "views disagree often), and a model trained on a few hundred posts makes many errors; read the scores "
        "above before trusting any prediction.",
        "- Outside that domain, language and period, expect lower quality. Text is expected anonymised like "
        "Faina ([USER], [URL], [EMAIL], [PHONE]).",
    ]
    if synthetic:
        lines.append("- This model was trained on the synthetic sample: it demonstrates the pipeline only.")
    return "\n".join(lines) + "\n"


def _settings(module: dict, prefix: str = "") -> list[tuple[str, object]]:
    """The module settings as sorted ``(key, value)`` pairs, a block's as ``decision.tuned`` and so on."""
    pairs: list[tuple[str, object]] = []
    for key, value in sorted(module.items()):
        if isinstance(value, dict):
            pairs += _settings(value, f"{prefix}{key}.")
        else:
            pairs.append((f"{prefix}{key}", value))
    return pairs


def _views_line(num_views: int, views, targets: str) -> str:
    """What the model's views are: one per annotator (``data.targets=views``) or one trained on all of them."""
    if targets == "views":
        return (
            f"{num_views} annotator views ({', '.join(views)}), each predicted separately "
            "(human label variation is kept, not averaged away)"
        )
    how = {
        "soft": "the share of annotator views that give each label (soft labels)",
        "union": "the union of the annotator views",
        "intersection": "the intersection of the annotator views",
        "majority": "the majority of the annotator views",
    }.get(targets, f"data.targets={targets}")
    return f"one prediction, trained on {how} (`data.targets={targets}`)"


def _length(trainer: dict, cfg: dict, fold: dict) -> str:
    """How long the model trained: ``trainer.max_epochs`` and/or a budget of optimiser steps, and with early
    stopping at most that (and how many epochs it trained, from the fold's ``early_stopping`` record)."""
    epochs, steps = trainer.get("max_epochs", "?"), trainer.get("max_steps", -1)
    budget = isinstance(steps, int) and not isinstance(steps, bool) and steps > 0
    if budget and epochs in (None, -1):
        text = f"{steps} optimiser steps"
    else:
        text = f"{epochs}" + (f" (and at most {steps} optimiser steps)" if budget else "")
    patience = (cfg.get("early_stopping") or {}).get("patience")
    if patience:
        trained = (fold.get("early_stopping") or {}).get("epochs_trained", "?")
        text = f"at most {text}, early stopping after {patience} without a better dev F1 (this model: {trained})"
    return text


def _decoder_lines(encoder: dict) -> list[str]:
    """What a decoder-LLM encoder adds to the recipe: its adapter, attention mask and post vector (none for BERT)."""
    lines = []
    if encoder.get("peft"):
        lora = encoder.get("lora") or {}
        lines.append(
            f"- adapter: {encoder['peft']} (rank {lora.get('rank', '?')}, alpha {lora.get('alpha', '?')}, on "
            f"{', '.join(lora.get('target_modules', []))}); this folder holds the adapter and the heads, the base "
            f"weights load from `{encoder.get('source') or '?'}`"
        )
    if encoder.get("attention") or encoder.get("pooling"):
        lines.append(
            f"- attention: {encoder.get('attention') or 'as the model has it'}; post vector: "
            f"{encoder.get('pooling') or 'the default of that attention'}"
        )
    return lines


def _context_lines(context: list[str]) -> list[str]:
    """What a model trained with ``data.context`` reads besides the text, and how a user gives it."""
    if not context:
        return []
    flags = " ".join(f"--{name}" for name in context)
    return [f"- input: each post's {' and '.join(context)} before its text (`data.context`; `faina.tag` takes {flags})"]
