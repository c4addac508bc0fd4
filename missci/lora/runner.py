"""LoRA fine-tuning on Missci with claim-grouped cross-validation: the ``mode=finetune`` runner.

    python train.py task=missci-gen llm=smollm2                 # 5-fold CV over all 184 arguments
    python train.py task=missci-gen llm=llama2-7b trainer=gpu   # QLoRA: 4-bit base, bf16
    python train.py task=missci-gen cv=official                 # train on dev, predict test
    python train.py task=missci-cls llm=smollm2                 # gold premise given: classes only

Protocol: ``cv=kfold`` pools dev and test (184 arguments) and deals whole claim groups into folds
(``missci/dataset/folds.py``; ``cv.group_by=argument`` deals single arguments), so every argument is predicted once, by a
model that never saw it, a sibling R_i or another argument for the same claim;
metrics are reported over the pooled predictions of the official test split's arguments (comparable with the
paper's Table 2), over all arguments, and per fold (mean ± std). ``cv=official`` trains on dev and predicts
test. Per fold, ``${paths.results_dir}/${name}/fold<k>/`` holds the adapter (``adapter/``, safetensors,
reloadable with ``python -m missci.predict_lora``), the predictions and ``metrics.json`` (written atomically;
a rerun skips finished folds, an interrupted fold resumes exactly from ``checkpoints/last.ckpt``, see
``common.checkpointing``).
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from common.checkpointing import resume_interval_settings
from common.errors import UserError
from common.experiments import exclusive_experiment, guard_same_experiment, run_folds
from common.fold_training import FoldSettings, FoldTrainer
from common.io import atomic_write_json, atomic_write_text
from common.sampling import EpochShuffle
from common.spread import mean_std
from common.wandb_runs import EXPERIMENT_RUN_NAME, log_experiment_run
from metrics.missci_premise import PremiseMetricConfig
from missci.dataset.folds import grouped_folds
from missci.dataset.reader import Argument, load_split
from missci.dataset.selection import select
from missci.lora.sft_data import encode_examples
from missci.lora.tasks import (
    CLASSIFICATION,
    RECONSTRUCTION,
    CandidateSettings,
    ChatSettings,
    LoraTask,
    TaskScores,
    write_bundle,
)
from missci.prompting.prompts import PromptOptions
from missci.zero_shot.classify_gold import class_details
from models.llm.loading import CausalLMSpec, load_causal_lm, pick_device
from models.llm.lora_lm import (
    LoraCausalLM,
    LoraSettings,
    OptimiserSettings,
    add_lora,
    count_parameters,
    merge_adapter,
    pad_batch,
    save_adapter,
)

log = logging.getLogger(__name__)
# metrics shown in the results table (when present), in this order
TABLE_METRICS = ("p@1", "arg@1", "f1_micro", "meteor", "bertscore", "nli_a", "nli_s", "accuracy", "f1_macro")


@dataclass(frozen=True)
class FoldPlan:
    index: int
    train: list[Argument]
    test: list[Argument]
    # the held-out arguments this fold predicts: all of ``test`` unless task.max_arguments/max_fallacies cut them
    predict: list[Argument] = dataclasses.field(default_factory=list)


def fold_plans(
    cv: DictConfig | dict,
    seed: int,
    data_dir: str | None,
    max_arguments: int | None = None,
    max_fallacies: int | None = None,
) -> list[FoldPlan]:
    """``cv=official``: train on dev, test on test. Otherwise k folds over dev + test, grouped by
    ``cv.group_by`` (``claim``: default; ``argument``: the earlier argument-level folds).

    ``max_arguments``/``max_fallacies`` cut the predictions of the whole run, not of each fold: the first
    arguments/R_i of the official test split (file order), then of dev, so a reduced run predicts the same R_i as a
    zero-shot run with the same limits on the test split, whatever fold holds them.
    """
    dev, test = load_split("dev", data_dir), load_split("test", data_dir)
    chosen = {a.id: a for a in select(test + dev, max_arguments, max_fallacies)}

    def plan(index: int, train: list[Argument], held_out: list[Argument]) -> FoldPlan:
        return FoldPlan(index, train, held_out, [chosen[a.id] for a in held_out if a.id in chosen])

    if cv["name"] == "official":
        return [plan(0, dev, test)]
    folds = grouped_folds(dev + test, int(cv["num_folds"]), seed, str(cv.get("group_by") or "claim"))
    return [plan(f.index, f.train, f.test) for f in folds]


def load_base_model(llm: dict[str, Any]):
    """The base model for training: on a GPU with ``load_in_4bit`` a 4-bit NF4 base computing in bf16 (QLoRA)."""
    fields = {f.name for f in dataclasses.fields(CausalLMSpec)}
    spec = CausalLMSpec(**{k: v for k, v in llm.items() if k in fields})
    quantized = bool(spec.load_in_4bit) and pick_device(spec.device).startswith("cuda")
    if quantized:
        import torch
        from transformers import BitsAndBytesConfig

        spec = dataclasses.replace(
            spec,
            load_in_4bit=False,
            extra={
                **spec.extra,
                "device_map": {"": torch.cuda.current_device()},
                "quantization_config": BitsAndBytesConfig(
                    load_in_4bit=True,
                    bnb_4bit_quant_type="nf4",
                    bnb_4bit_use_double_quant=True,
                    bnb_4bit_compute_dtype=torch.bfloat16,
                    # bf16 storage lets FSDP (trainer=fsdp) shard the 4-bit weights
                    bnb_4bit_quant_storage=torch.bfloat16,
                ),
            },
        )
    model, tokenizer = load_causal_lm(spec)
    return model, tokenizer, quantized


def train_loader(features: list[dict], batch_size: int, pad_token_id: int, seed: int):
    import functools

    import torch
    from torch.utils.data import DataLoader

    # the order is a function of (seed, epoch), so a resumed fold sees the batches of an uninterrupted one
    return DataLoader(
        features,
        batch_size=batch_size,
        sampler=EpochShuffle(len(features), seed),
        generator=torch.Generator().manual_seed(seed),
        collate_fn=functools.partial(pad_batch, pad_token_id=pad_token_id),
    )


def resolved_for(cfg: DictConfig, index: int | None, name: str, folder: Path) -> dict:
    """The run's config, resolved, with ``fold.*`` naming fold ``index`` (or the experiment's own run)."""
    return OmegaConf.to_container(
        OmegaConf.merge(cfg, {"fold": {"index": index, "name": name, "dir": str(folder)}}), resolve=True
    )


def logger_blocks(resolved: dict) -> list[dict]:
    return [block for block in (resolved.get("logger") or {}).values() if block is not None]


def fold_settings(cfg: DictConfig, index: int, fold_dir: Path) -> FoldSettings:
    """What ``FoldTrainer`` takes for a LoRA fold: no dev split, so no selection, averaging or early stopping."""
    resolved = resolved_for(cfg, index, f"fold{index}", fold_dir)
    callbacks = [block for block in (resolved.get("callbacks") or {}).values() if block is not None]
    return FoldSettings(
        seed=int(cfg.seed),
        trainer=resolved["trainer"],
        monitor=cfg.checkpoint.monitor,
        mode=cfg.checkpoint.mode,
        loggers=logger_blocks(resolved),
        callbacks=callbacks,
        hyperparameters=resolved,
        **resume_interval_settings(cfg.get("checkpoint")),
    )


def run_fold(cfg: DictConfig, task: LoraTask, plan: FoldPlan, fold_dir: Path) -> dict:
    settings = OmegaConf.to_container(cfg.task, resolve=True)
    lora, llm = settings["lora"], OmegaConf.to_container(cfg.llm, resolve=True)
    options = PromptOptions(**settings["prompt"])
    chat = ChatSettings(
        settings["generation"].get("use_chat_template", True), settings["generation"].get("system_prompt")
    )
    candidates = CandidateSettings(**{**lora["candidates"], "seed": int(cfg.seed)})
    if cfg.get("checkpoint", {}).get("average_last"):
        raise UserError(
            "checkpoint.average_last averages an encoder's weights over its last epochs; a LoRA run predicts with"
            " its final adapter",
            fix="drop checkpoint.average_last from the command line",
        )
    if (cfg.get("early_stopping") or {}).get("patience") is not None:
        raise UserError(
            "early_stopping.patience stops on a dev metric, and a LoRA run has no dev split: it trains"
            " task.lora.max_epochs (or max_steps)",
            fix="drop early_stopping.patience from the command line",
        )
    fold = FoldTrainer(fold_settings(cfg, plan.index, fold_dir), plan.index, fold_dir)

    model, tokenizer, quantized = load_base_model(llm)
    peft_model = add_lora(
        model,
        LoraSettings(lora["rank"], lora["alpha"], lora["dropout"], lora["target_modules"]),
        quantized,
        bool(lora.get("gradient_checkpointing", False)),
    )
    trainable, total = count_parameters(peft_model)
    examples = task.examples(plan.train, options)[: lora.get("max_train_examples") or None]
    features = encode_examples(tokenizer, examples, chat.use_chat_template, chat.system_prompt, lora["max_length"])
    log.info(
        "fold %d: %d training examples from %d arguments; %d of %d parameters train",
        plan.index,
        len(features),
        len(plan.train),
        trainable,
        total,
    )

    module = LoraCausalLM(
        peft_model, OptimiserSettings(lora["learning_rate"], lora["weight_decay"], lora["warmup_steps"])
    )
    fold.fit(
        module,
        {"max_epochs": lora["max_epochs"], "max_steps": lora["max_steps"]},
        train_dataloaders=train_loader(features, lora["batch_size"], tokenizer.pad_token_id, cfg.seed + plan.index),
    )
    if not fold.is_global_zero:
        return {"fold": plan.index}

    adapter_dir = save_adapter(peft_model, fold_dir / "adapter")
    write_bundle(
        adapter_dir,
        task=task.name,
        llm=llm,
        prompt=settings["prompt"],
        chat=chat,
        candidates=candidates,
        lora=lora,
        trained_on=[a.id for a in plan.train],
        fold=plan.index,
    )
    predictor = peft_model
    if lora.get("merge"):
        predictor = merge_adapter(peft_model)
        predictor.save_pretrained(str(fold_dir / "merged"), safe_serialization=True)
        tokenizer.save_pretrained(str(fold_dir / "merged"))
    predictor.eval()
    predictor.config.use_cache = True
    test_arguments = plan.predict
    outputs = task.predict(predictor, tokenizer, test_arguments, options, candidates, chat)
    prediction_file = task.write(fold_dir / task.file_name, outputs)
    scored = task.score(test_arguments, outputs, int(settings.get("max_k", 6)), premise_metrics_from_settings(settings))
    scores = scored.metrics
    result = {
        "fold": plan.index,
        "train_arguments": len(plan.train),
        "train_examples": len(features),
        "test_arguments": len(test_arguments),
        "trainable_parameters": trainable,
        "total_parameters": total,
        "prediction_file": str(prediction_file),
        "test": scores,
        "unavailable": scored.unavailable,
        "models": scored.models,
    }
    fold.close({f"test/{k}": v for k, v in scores.items()}, prediction_file)
    atomic_write_json(fold_dir / "metrics.json", result)
    return result


def premise_metrics_from_settings(settings: dict) -> PremiseMetricConfig | None:
    premises = settings.get("premise_metrics")
    return None if premises is None else PremiseMetricConfig(**premises)


def missci_view(cfg: DictConfig) -> DictConfig:
    """The composed config without the Faina ``data`` group, whose paths interpolate Faina task keys that a
    Missci task does not have (resolving the whole config would fail); ``data.name`` stays for loggers."""
    view = OmegaConf.masked_copy(cfg, [key for key in cfg.keys() if key != "data"])
    OmegaConf.set_struct(view, False)
    view.data = {"name": "missci"}
    return view


def run_lora(cfg: DictConfig, task: LoraTask) -> dict[str, float]:
    cfg = missci_view(cfg)
    exp_dir = Path(cfg.paths.results_dir) / cfg.name
    data_dir = cfg.task.get("data_dir")
    with exclusive_experiment(exp_dir):
        plans = fold_plans(
            cfg.cv, int(cfg.seed), data_dir, cfg.task.get("max_arguments"), cfg.task.get("max_fallacies")
        )
        guard_same_experiment(cfg, exp_dir)
        idle = [plan.index for plan in plans if not plan.predict]
        if idle:  # a reduced run (max_arguments/max_fallacies) chose none of these folds' R_i: training them is waste
            log.info("folds %s hold none of the chosen R_i and are not trained", idle)
        results = run_folds(
            exp_dir,
            [plan for plan in plans if plan.predict],
            lambda plan: plan.index,
            lambda plan, fold_dir: run_fold(cfg, task, plan, fold_dir),
            wanted=set(cfg.cv.folds) if cfg.cv.get("folds") is not None else None,
            keep_checkpoints=bool((cfg.get("checkpoint") or {}).get("keep", False)),
        )
        if results is None:
            return {}
        return report(cfg, task, plans, results, exp_dir, load_split("test", data_dir))


def pooled_views(
    plans: list[FoldPlan], results: list[dict], official_test: list[Argument], official_cv: bool
) -> dict[str, list[Argument]]:
    """The predicted arguments of every finished fold, pooled: ``test`` (those of the official test split) and,
    for k-fold CV, ``all`` (each argument was predicted once, by the fold that held it out)."""
    by_index = {plan.index: plan for plan in plans}
    arguments = [a for result in results for a in by_index[result["fold"]].predict]
    test_ids = {a.id for a in official_test}
    views = {"test": [a for a in arguments if a.id in test_ids]}
    if not official_cv:
        views["all"] = arguments
    return views


def pooled_scores(
    cfg: DictConfig, task: LoraTask, plans: list[FoldPlan], results: list[dict], official_test: list[Argument]
) -> dict[str, TaskScores]:
    """Scores of all folds' predictions together, per view of :func:`pooled_views`."""
    settings = OmegaConf.to_container(cfg.task, resolve=True)
    outputs = [output for result in results for output in task.read(result["prediction_file"])]
    max_k, premises = int(settings.get("max_k", 6)), premise_metrics_from_settings(settings)
    views = pooled_views(plans, results, official_test, cfg.cv.name == "official")
    return {
        view: task.score(arguments, outputs, max_k, premises) if arguments else TaskScores({})
        for view, arguments in views.items()
    }


def report(
    cfg: DictConfig,
    task: LoraTask,
    plans: list[FoldPlan],
    results: list[dict],
    exp_dir: Path,
    official_test: list[Argument],
) -> dict[str, float]:
    finished = [r for r in results if "test" in r]
    if not finished:
        return {}
    scored = pooled_scores(cfg, task, plans, finished, official_test)
    pooled = {view: scores.metrics for view, scores in scored.items()}
    per_fold = {}
    for metric in finished[0]["test"]:
        per_fold[metric] = mean_std(r["test"][metric] for r in finished if metric in r["test"])
    table = results_table(
        f"{task.name} · LoRA · {cfg.llm.name} · cv={cfg.cv.name}",
        pooled,
        per_fold,
        len(finished),
        int(cfg.task.lora.candidates.num_candidates),
    )
    atomic_write_text(exp_dir / "results.md", table)
    views = pooled_views(plans, finished, official_test, cfg.cv.name == "official")
    evaluated = {
        view: {"arguments": len(arguments), "fallacies": sum(len(a.fallacies) for a in arguments)}
        for view, arguments in views.items()
    }
    summary = {
        "folds": finished,
        "pooled": pooled,
        "per_fold": per_fold,
        "evaluated": evaluated,
        # why a premise metric is missing (e.g. the NLI model is not available offline), and which models
        # produced the others: missci.report prints both under its table
        "unavailable": {k: v for scores in scored.values() for k, v in scores.unavailable.items()},
        "models": {k: v for scores in scored.values() for k, v in scores.models.items()},
    }
    if task.name == CLASSIFICATION.name:  # per-class scores and confusion of the pooled rows, beside Table 3
        rows = [row for result in finished for row in task.read(result["prediction_file"])]
        summary["classes"] = {}
        for view, arguments in views.items():
            wanted = {alt.id for a in arguments for f in a.fallacies for alt in f.interchangeable}
            if wanted:
                summary["classes"][view] = class_details([r for r in rows if r["id"] in wanted])
    atomic_write_json(exp_dir / "results.json", summary)
    print(table)
    metrics = {f"{view}/{k}": v for view, scores in pooled.items() for k, v in scores.items()}
    metrics.update({f"folds/{k}_{stat}": v[stat] for k, v in per_fold.items() for stat in ("mean", "std")})
    summary_run = resolved_for(cfg, None, EXPERIMENT_RUN_NAME, exp_dir)
    log_experiment_run(logger_blocks(summary_run), summary_run, metrics, len(finished))
    return metrics


def results_table(
    title: str, pooled: dict[str, dict[str, float]], per_fold: dict[str, dict[str, float]], num_folds: int, k: int
) -> str:
    names = [m for m in TABLE_METRICS + (f"p@{k}", f"arg@{k}") if m in per_fold]
    names = list(dict.fromkeys(names))
    views = [v for v in ("test", "all") if pooled.get(v)]
    header = ["metric"] + [f"pooled {v}" for v in views] + [f"{num_folds} fold{'s' * (num_folds != 1)} mean ± std"]
    lines = [f"### {title}", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in names:
        cells = [f"{pooled[v][name]:.3f}" if name in pooled[v] else "" for v in views]
        cells.append(f"{per_fold[name]['mean']:.3f} ± {per_fold[name]['std']:.3f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def run_lora_reconstruction(cfg: DictConfig) -> dict[str, float]:
    """``task=missci-gen mode=finetune``."""
    return run_lora(cfg, RECONSTRUCTION)


def run_lora_classification(cfg: DictConfig) -> dict[str, float]:
    """``task=missci-cls mode=finetune``."""
    return run_lora(cfg, CLASSIFICATION)
