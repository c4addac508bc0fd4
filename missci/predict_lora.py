"""Predict with a LoRA-tuned causal LM: ranked candidates per R_i, or classes of gold premises.

Shared by the fine-tuning runner (``missci/finetune.py``) and the command line::

    python -m missci.predict_lora ADAPTER_DIR --out PRED.jsonl [--split test] [--data DIR]
        [--num-candidates K] [--strategy beam|sample] [--max-new-tokens N] [--max-fallacies N]
        [--merge] [--evaluate [premise-metric options]]

ADAPTER_DIR is a ``fold<k>/adapter`` folder written by ``python train.py task=missci-gen mode=finetune``
(peft's ``adapter_model.safetensors`` + ``adapter_config.json``, and ``missci_lora.json``: base model,
task, prompt and generation settings, the training argument ids). The output uses the zero-shot formats:
``missci/predictions.py`` for missci-gen (score with ``python -m missci.evaluate PRED``), one JSON line per
interchangeable fallacy (gold, predicted) for missci-cls.

k candidates come from k returned sequences (beam search: the k best beams; sampling: k seeded samples),
each parsed by the shared parser; their pairs are concatenated in rank order, exact repeats dropped.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from common.cli import command_parser
from common.errors import UserError, exit_on_user_error
from common.io import atomic_write_json, atomic_write_text
from metrics.missci_classification import classification_metrics
from metrics.missci_premise import PremiseMetricConfig
from missci.data import Argument, iter_fallacies
from missci.parser import parse_output
from missci.predictions import FallacyPrediction, RankedPremise, read_predictions, write_predictions
from missci.prompts import PromptOptions, classification_prompt, reconstruction_prompt
from missci.sft_data import SftExample, classification_examples, reconstruction_examples
from models.backends import BACKENDS, Decoding, GenerationBackend, TransformersBackend, build_backend
from models.generation import DEFAULT_CANDIDATE_BATCH_SIZE

log = logging.getLogger(__name__)
BUNDLE_FILE = "missci_lora.json"


@dataclass
class CandidateSettings:
    """How the k ranked candidates are decoded (``lora.candidates`` in the task config)."""
    num_candidates: int = 3
    strategy: str = "beam"        # "beam": k best beams; "sample": k samples (temperature, top_p, seed)
    max_new_tokens: int = 96
    temperature: float = 0.7
    top_p: float = 0.95
    batch_size: int = DEFAULT_CANDIDATE_BATCH_SIZE
    seed: int = 1


@dataclass
class ChatSettings:
    use_chat_template: bool = True
    system_prompt: str | None = None


def candidate_decoding(settings: CandidateSettings, k: int) -> Decoding:
    """The backend-neutral decoding of ``k`` ranked candidates under ``settings.strategy``."""
    common = {"max_new_tokens": settings.max_new_tokens, "k": k, "seed": settings.seed,
              "batch_size": settings.batch_size}
    strategies = {
        "beam": lambda: Decoding(beams=k, **common),
        "sample": lambda: Decoding(sample=True, temperature=settings.temperature, top_p=settings.top_p, **common),
    }
    if settings.strategy not in strategies:
        raise UserError(f"unknown candidate strategy {settings.strategy!r}.",
                        fix=f"set lora.candidates.strategy to one of {', '.join(strategies)}.")
    return strategies[settings.strategy]()


def generate_candidates(model, tokenizer, prompts: Sequence[str], settings: CandidateSettings,
                        chat: ChatSettings = ChatSettings(), k: int | None = None) -> list[list[str]]:
    """For each task prompt, ``k`` generated continuations in rank order (best first), in input order.

    ``model`` is a loaded (peft) causal LM, run by the transformers backend in length-sorted batches of
    ``settings.batch_size`` prompts, or any ``GenerationBackend`` (e.g. vLLM; ``tokenizer`` is then unused)."""
    backend = model if isinstance(model, GenerationBackend) else TransformersBackend(model, tokenizer)
    return backend.complete_prompts(prompts, candidate_decoding(settings, k or settings.num_candidates),
                                    chat.use_chat_template, chat.system_prompt)


def ranked_pairs(texts: Sequence[str]) -> tuple[list[tuple[str, str]], int]:
    """Parsed (class, premise) pairs of all candidates in rank order, exact repeats dropped; unparsed count."""
    pairs: list[tuple[str, str]] = []
    unparsed = 0
    for text in texts:
        parsed = parse_output(text)
        unparsed += parsed.unparsed_lines + int(parsed.fallback)
        pairs.extend(pair for pair in parsed.pairs if pair not in pairs)
    return pairs, unparsed


def predict_reconstructions(model, tokenizer, arguments: Sequence[Argument], options: PromptOptions,
                            settings: CandidateSettings, chat: ChatSettings = ChatSettings()
                            ) -> list[FallacyPrediction]:
    """missci-gen: one ranked prediction per R_i of ``arguments``."""
    pairs = list(iter_fallacies(list(arguments)))
    outputs = generate_candidates(model, tokenizer, [reconstruction_prompt(a, f, options) for a, f in pairs],
                                  settings, chat)
    predictions = []
    for (argument, fallacy), texts in zip(pairs, outputs):
        ranked, unparsed = ranked_pairs(texts)
        predictions.append(FallacyPrediction(argument.id, fallacy.id, [RankedPremise(c, p) for c, p in ranked],
                                             raw_output="\n".join(texts), unparsed_lines=unparsed,
                                             extra={"candidate_outputs": list(texts)}))
    return predictions


def predict_classes(model, tokenizer, arguments: Sequence[Argument], options: PromptOptions,
                    settings: CandidateSettings, chat: ChatSettings = ChatSettings()) -> list[dict[str, Any]]:
    """missci-cls: the class of every interchangeable gold premise (greedy, one sequence)."""
    rows = [(f, alt) for a in arguments for f in a.fallacies for alt in f.interchangeable]
    prompts = [classification_prompt(a, f, alt.premise, options)
               for a in arguments for f in a.fallacies for alt in f.interchangeable]
    greedy = dataclasses.replace(settings, strategy="beam")
    outputs = generate_candidates(model, tokenizer, prompts, greedy, chat, k=1)
    return [{"id": alt.id, "fallacy_id": f.id, "gold": alt.fallacy_class,
             "predicted": parse_output(texts[0]).classes[0], "raw_output": texts[0]}
            for (f, alt), texts in zip(rows, outputs)]


def write_class_rows(path: str | Path, rows: Sequence[dict]) -> Path:
    return atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def read_class_rows(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


@dataclass(frozen=True)
class TaskScores:
    """A task's scores, and for premise metrics the models that produced them (``models``) or why a metric could
    not be computed (``unavailable``), so results files and ``missci.report`` can say so instead of a number."""
    metrics: dict[str, float]
    unavailable: dict[str, str] = dataclasses.field(default_factory=dict)
    models: dict[str, str] = dataclasses.field(default_factory=dict)


def score_reconstructions(arguments: Sequence[Argument], predictions: Sequence[FallacyPrediction], max_k: int,
                          premises: PremiseMetricConfig | None) -> TaskScores:
    from missci.evaluate import evaluate

    result = evaluate(list(arguments), list(predictions), max_k, premises)
    for metric, reason in result["unavailable"].items():
        log.warning("%s unavailable: %s", metric, reason)
    return TaskScores({k: float(v) for k, v in result["metrics"].items()}, dict(result["unavailable"]),
                      dict(result["models"]))


def score_class_rows(arguments: Sequence[Argument], rows: Sequence[dict], max_k: int = 1,
                     premises: PremiseMetricConfig | None = None) -> TaskScores:
    wanted = {alt.id for a in arguments for f in a.fallacies for alt in f.interchangeable}
    rows = [r for r in rows if r["id"] in wanted]
    return TaskScores(classification_metrics([r["gold"] for r in rows], [r["predicted"] for r in rows]))


@dataclass(frozen=True)
class LoraTask:
    """Everything task-specific of LoRA training and prediction, so runner and CLI stay generic."""
    name: str
    examples: Callable[..., list[SftExample]]   # (arguments, options) -> training examples
    predict: Callable[..., list]                # (model, tokenizer, arguments, options, settings, chat)
    write: Callable[..., Path]                  # (path, outputs)
    read: Callable[..., list]                   # (path) -> outputs
    score: Callable[..., TaskScores]            # (arguments, outputs, max_k, premise config)
    file_name: str


RECONSTRUCTION = LoraTask("missci-gen", reconstruction_examples, predict_reconstructions, write_predictions,
                          read_predictions, score_reconstructions, "predictions.jsonl")
CLASSIFICATION = LoraTask("missci-cls", classification_examples, predict_classes, write_class_rows,
                          read_class_rows, score_class_rows, "classify.jsonl")
TASKS = {task.name: task for task in (RECONSTRUCTION, CLASSIFICATION)}


# ---- adapter bundles: what a saved adapter needs to be used again ----

def write_bundle(directory: str | Path, *, task: str, llm: dict, prompt: dict, chat: ChatSettings,
                 candidates: CandidateSettings, lora: dict, trained_on: Sequence[str], fold: int | None) -> Path:
    return atomic_write_json(Path(directory) / BUNDLE_FILE, {
        "task": task, "llm": llm, "prompt": prompt, "chat": dataclasses.asdict(chat),
        "candidates": dataclasses.asdict(candidates), "lora": lora, "fold": fold,
        "trained_on_arguments": sorted(trained_on)})


def read_bundle(directory: str | Path) -> dict:
    path = Path(directory) / BUNDLE_FILE
    if not path.is_file():
        raise UserError(f"{BUNDLE_FILE} is missing, so the base model and prompt settings are unknown.",
                        path=path.parent, fix="pass a fold<k>/adapter folder written by `python train.py "
                                              "task=missci-gen mode=finetune` (or missci-cls).")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"not valid JSON ({err.msg}).", path=path, line=err.lineno,
                        fix="re-run the fine-tuning fold that wrote it.") from None


def load_tuned_backend(directory: str | Path, merge: bool = False, device: str | None = None,
                       backend: str | None = None) -> tuple[GenerationBackend, dict]:
    """``(backend, bundle)``: the bundle's base model with the adapter attached (or merged), served by the
    bundle's ``llm.backend`` or the named one of ``BACKENDS``."""
    bundle = read_bundle(directory)
    llm = dict(bundle["llm"])
    if backend is not None:
        llm["backend"] = BACKENDS[backend]
    engine = build_backend(llm, adapter=str(directory), **({"device": device} if device else {}))
    if merge:
        engine.merge_adapter()
    return engine, bundle


def build_parser() -> argparse.ArgumentParser:
    from missci.cli_options import add_data_options, add_premise_options

    parser = command_parser("missci.predict_lora", __doc__.splitlines()[0])
    parser.add_argument("adapter", metavar="ADAPTER_DIR", help="fold<k>/adapter folder of a fine-tuning run")
    parser.add_argument("--out", required=True, help="prediction JSONL to write")
    parser.add_argument("--num-candidates", type=int, default=None, help="k ranked candidates (default: as trained)")
    parser.add_argument("--strategy", choices=["beam", "sample"], default=None,
                        help="k best beams or k seeded samples (default: as trained)")
    parser.add_argument("--max-new-tokens", type=int, default=None, help="tokens per candidate (default: as trained)")
    parser.add_argument("--max-arguments", type=int, default=None, help="only the first N arguments")
    parser.add_argument("--max-fallacies", type=int, default=None, help="only the first N fallacies")
    parser.add_argument("--merge", action="store_true", help="merge the adapter into the base before predicting")
    parser.add_argument("--device", default=None, help="cpu, cuda, … (default: as the base model's config)")
    parser.add_argument("--backend", choices=sorted(BACKENDS), default=None,
                        help="generation engine (default: the trained llm config's, else transformers); "
                             "vllm needs a CUDA GPU and pip install '.[vllm]'")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="prompts per generation batch of the transformers backend "
                             f"(default: {DEFAULT_CANDIDATE_BATCH_SIZE})")
    parser.add_argument("--evaluate", action="store_true", help="score the predictions and print the metrics")
    add_data_options(parser)
    add_premise_options(parser)
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    from missci.cli_options import premise_config, print_result
    from missci.data import load_split
    from missci.zero_shot import select

    args = build_parser().parse_args(argv)
    backend, bundle = load_tuned_backend(args.adapter, args.merge, args.device, args.backend)
    arguments = select(load_split(args.split, args.data), args.max_arguments, args.max_fallacies)
    seen = set(bundle.get("trained_on_arguments", [])) & {a.id for a in arguments}
    if seen:
        log.warning("%d of the %d arguments to predict were in this adapter's training data; their scores are "
                    "not held-out scores (use the adapter of the fold that held them out).", len(seen),
                    len(arguments))
    # bundles written before batching existed say batch_size 1: the current default serves them faster
    settings = CandidateSettings(**{**bundle["candidates"], "batch_size": DEFAULT_CANDIDATE_BATCH_SIZE})
    overrides = {"num_candidates": args.num_candidates, "strategy": args.strategy,
                 "max_new_tokens": args.max_new_tokens, "batch_size": args.batch_size}
    settings = dataclasses.replace(settings, **{k: v for k, v in overrides.items() if v is not None})
    options, chat = PromptOptions(**bundle["prompt"]), ChatSettings(**bundle["chat"])
    task = TASKS.get(bundle.get("task"))
    if task is None:
        raise UserError(f"unknown task {bundle.get('task')!r} in {BUNDLE_FILE}.", path=Path(args.adapter),
                        fix=f"the task must be one of {', '.join(TASKS)}.")
    outputs = task.predict(backend, backend.tokenizer, arguments, options, settings, chat)
    task.write(args.out, outputs)
    result: dict = {"predictions": args.out, "task": task.name, "held_out": not seen}
    if args.evaluate:
        scores = task.score(arguments, outputs, max(6, settings.num_candidates), premise_config(args))
        result.update(metrics=scores.metrics, unavailable=scores.unavailable, models=scores.models)
    print_result(result, args.json)
    return result


if __name__ == "__main__":
    main()
