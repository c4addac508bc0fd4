"""The two LoRA tasks on Missci (reconstruction, classification of the gold premise): candidate generation, scoring, and the adapter bundle."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common.errors import UserError
from metrics.missci_classification import classification_metrics
from metrics.missci_premise import PremiseMetricConfig
from missci.dataset.prediction_file import FallacyPrediction, RankedPremise, read_predictions, write_predictions
from missci.dataset.reader import Argument, iter_fallacies
from missci.lora.bundle import BUNDLE_FILE, read_bundle, write_bundle  # noqa: F401  (the bundle's API, re-exported)
from missci.lora.sft_data import SftExample, classification_examples, reconstruction_examples
from missci.prompting.answer_parser import parse_output
from missci.prompting.gold_premises import (  # noqa: F401  (read_class_rows, write_class_rows: re-exported)
    class_rows,
    classification_prompts,
    gold_premises,
    read_class_rows,
    write_class_rows,
)
from missci.prompting.prompts import PromptOptions, reconstruction_prompt
from models.llm.backends import Decoding, GenerationBackend, TransformersBackend
from models.llm.generation import DEFAULT_CANDIDATE_BATCH_SIZE

log = logging.getLogger(__name__)


@dataclass
class CandidateSettings:
    """How the k ranked candidates are decoded (``lora.candidates`` in the task config)."""

    num_candidates: int = 3
    strategy: str = "beam"  # "beam": k best beams; "sample": k samples (temperature, top_p, seed)
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
    common = {
        "max_new_tokens": settings.max_new_tokens,
        "k": k,
        "seed": settings.seed,
        "batch_size": settings.batch_size,
    }
    strategies = {
        "beam": lambda: Decoding(beams=k, **common),
        "sample": lambda: Decoding(sample=True, temperature=settings.temperature, top_p=settings.top_p, **common),
    }
    if settings.strategy not in strategies:
        raise UserError(
            f"unknown candidate strategy {settings.strategy!r}.",
            fix=f"set lora.candidates.strategy to one of {', '.join(strategies)}.",
        )
    return strategies[settings.strategy]()


def generate_candidates(
    model,
    tokenizer,
    prompts: Sequence[str],
    settings: CandidateSettings,
    chat: ChatSettings = ChatSettings(),
    k: int | None = None,
) -> list[list[str]]:
    """For each task prompt, ``k`` generated continuations in rank order (best first), in input order.

    ``model`` is a loaded (peft) causal LM, run by the transformers backend in length-sorted batches of
    ``settings.batch_size`` prompts, or any ``GenerationBackend`` (e.g. vLLM; ``tokenizer`` is then unused)."""
    backend = model if isinstance(model, GenerationBackend) else TransformersBackend(model, tokenizer)
    return backend.complete_prompts(
        prompts, candidate_decoding(settings, k or settings.num_candidates), chat.use_chat_template, chat.system_prompt
    )


def ranked_pairs(texts: Sequence[str]) -> tuple[list[tuple[str, str]], int]:
    """Parsed (class, premise) pairs of all candidates in rank order, exact repeats dropped; unparsed count."""
    pairs: list[tuple[str, str]] = []
    unparsed = 0
    for text in texts:
        parsed = parse_output(text)
        unparsed += parsed.unparsed_lines + int(parsed.fallback)
        pairs.extend(pair for pair in parsed.pairs if pair not in pairs)
    return pairs, unparsed


def predict_reconstructions(
    model,
    tokenizer,
    arguments: Sequence[Argument],
    options: PromptOptions,
    settings: CandidateSettings,
    chat: ChatSettings = ChatSettings(),
) -> list[FallacyPrediction]:
    """missci-gen: one ranked prediction per R_i of ``arguments``."""
    pairs = list(iter_fallacies(list(arguments)))
    outputs = generate_candidates(
        model, tokenizer, [reconstruction_prompt(a, f, options) for a, f in pairs], settings, chat
    )
    predictions = []
    for (argument, fallacy), texts in zip(pairs, outputs):
        ranked, unparsed = ranked_pairs(texts)
        predictions.append(
            FallacyPrediction(
                argument.id,
                fallacy.id,
                [RankedPremise(c, p) for c, p in ranked],
                raw_output="\n".join(texts),
                unparsed_lines=unparsed,
                extra={"candidate_outputs": list(texts)},
            )
        )
    return predictions


def predict_classes(
    model,
    tokenizer,
    arguments: Sequence[Argument],
    options: PromptOptions,
    settings: CandidateSettings,
    chat: ChatSettings = ChatSettings(),
) -> list[dict[str, Any]]:
    """missci-cls: the class of every interchangeable gold premise (greedy, one sequence)."""
    items = gold_premises(arguments)
    greedy = dataclasses.replace(settings, strategy="beam")
    outputs = generate_candidates(model, tokenizer, classification_prompts(items, options), greedy, chat, k=1)
    return class_rows(items, [texts[0] for texts in outputs])


@dataclass(frozen=True)
class TaskScores:
    """A task's scores, and for premise metrics the models that produced them (``models``) or why a metric could
    not be computed (``unavailable``), so results files and ``missci.report`` can say so instead of a number."""

    metrics: dict[str, float]
    unavailable: dict[str, str] = dataclasses.field(default_factory=dict)
    models: dict[str, str] = dataclasses.field(default_factory=dict)


def score_reconstructions(
    arguments: Sequence[Argument],
    predictions: Sequence[FallacyPrediction],
    max_k: int,
    premises: PremiseMetricConfig | None,
) -> TaskScores:
    from missci.analysis.evaluation import evaluate

    result = evaluate(list(arguments), list(predictions), max_k, premises)
    for metric, reason in result["unavailable"].items():
        log.warning("%s unavailable: %s", metric, reason)
    return TaskScores(
        {k: float(v) for k, v in result["metrics"].items()}, dict(result["unavailable"]), dict(result["models"])
    )


def score_class_rows(
    arguments: Sequence[Argument], rows: Sequence[dict], max_k: int = 1, premises: PremiseMetricConfig | None = None
) -> TaskScores:
    wanted = {alt.id for a in arguments for f in a.fallacies for alt in f.interchangeable}
    rows = [r for r in rows if r["id"] in wanted]
    return TaskScores(classification_metrics([r["gold"] for r in rows], [r["predicted"] for r in rows]))


@dataclass(frozen=True)
class LoraTask:
    """Everything task-specific of LoRA training and prediction, so runner and CLI stay generic."""

    name: str
    examples: Callable[..., list[SftExample]]  # (arguments, options) -> training examples
    predict: Callable[..., list]  # (model, tokenizer, arguments, options, settings, chat)
    write: Callable[..., Path]  # (path, outputs)
    read: Callable[..., list]  # (path) -> outputs
    score: Callable[..., TaskScores]  # (arguments, outputs, max_k, premise config)
    file_name: str


RECONSTRUCTION = LoraTask(
    "missci-gen",
    reconstruction_examples,
    predict_reconstructions,
    write_predictions,
    read_predictions,
    score_reconstructions,
    "predictions.jsonl",
)


CLASSIFICATION = LoraTask(
    "missci-cls",
    classification_examples,
    predict_classes,
    write_class_rows,
    read_class_rows,
    score_class_rows,
    "classify.jsonl",
)


TASKS = {task.name: task for task in (RECONSTRUCTION, CLASSIFICATION)}


def load_tuned_backend(
    directory: str | Path,
    merge: bool = False,
    device: str | None = None,
    backend: str | None = None,
    trust_remote_code: bool = False,
) -> tuple[GenerationBackend, dict]:
    """``(backend, bundle)``: the bundle's base model with the adapter attached (or merged), served by the
    bundle's backend or the one named by the user (``--backend``). The bundle is checked first
    (``missci.lora.bundle``); its names map through ``models.llm.backend_registry``, nothing in it is imported."""
    from models.llm.backends import spec_from_config
    from models.llm.saved_llm import backend_of, check_llm_block

    bundle = read_bundle(directory, trust_remote_code)
    llm = check_llm_block(bundle["llm"], Path(directory) / BUNDLE_FILE, trust_remote_code)
    spec = spec_from_config({**llm.spec, **({"device": device} if device else {})})
    engine = backend_of(llm, backend)(spec=spec, adapter=str(directory))
    if merge:
        engine.merge_adapter()
    return engine, bundle
