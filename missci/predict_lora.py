"""Predict with a LoRA-tuned causal LM: ranked candidates per R_i, or classes of gold premises.

Shared by the fine-tuning runner (``missci/lora/runner.py``) and the command line::

    python -m missci.predict_lora ADAPTER_DIR --out PRED.jsonl [--split test] [--data DIR]
        [--num-candidates K] [--strategy beam|sample] [--max-new-tokens N] [--max-fallacies N]
        [--merge] [--evaluate [premise-metric options]]

ADAPTER_DIR is a ``fold<k>/adapter`` folder written by ``python train.py task=missci-gen mode=finetune``
(peft's ``adapter_model.safetensors`` + ``adapter_config.json``, and ``missci_lora.json``: base model,
task, prompt and generation settings, the training argument ids). The output uses the zero-shot formats:
``missci/dataset/prediction_file.py`` for missci-gen (score with ``python -m missci.evaluate PRED``), one JSON line per
interchangeable fallacy (gold, predicted) for missci-cls.

k candidates come from k returned sequences (beam search: the k best beams; sampling: k seeded samples),
each parsed by the shared parser; their pairs are concatenated in rank order, exact repeats dropped.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import UserError, exit_on_user_error
from missci.lora.tasks import (  # noqa: F401  (re-exported: the library API of this command)
    BUNDLE_FILE,
    CLASSIFICATION,
    RECONSTRUCTION,
    TASKS,
    CandidateSettings,
    ChatSettings,
    LoraTask,
    TaskScores,
    candidate_decoding,
    generate_candidates,
    load_tuned_backend,
    log,
    predict_classes,
    predict_reconstructions,
    ranked_pairs,
    read_bundle,
    read_class_rows,
    score_class_rows,
    score_reconstructions,
    write_bundle,
    write_class_rows,
)
from missci.prompting.prompts import PromptOptions
from models.llm.backends import BACKENDS
from models.llm.generation import DEFAULT_CANDIDATE_BATCH_SIZE


def build_parser() -> argparse.ArgumentParser:
    from missci.cli_options import add_shared_options, add_subset_options

    parser = command_parser("missci.predict_lora", __doc__.splitlines()[0])
    parser.add_argument("adapter", metavar="ADAPTER_DIR", help="fold<k>/adapter folder of a fine-tuning run")
    parser.add_argument("--out", required=True, help="prediction JSONL to write")
    parser.add_argument("--num-candidates", type=int, default=None, help="k ranked candidates (default: as trained)")
    parser.add_argument(
        "--strategy",
        choices=["beam", "sample"],
        default=None,
        help="k best beams or k seeded samples (default: as trained)",
    )
    parser.add_argument("--max-new-tokens", type=int, default=None, help="tokens per candidate (default: as trained)")
    add_subset_options(parser)
    parser.add_argument("--merge", action="store_true", help="merge the adapter into the base before predicting")
    parser.add_argument("--device", default=None, help="cpu, cuda, … (default: as the base model's config)")
    parser.add_argument(
        "--backend",
        choices=sorted(BACKENDS),
        default=None,
        help="generation engine (default: the trained llm config's, else transformers); "
        "vllm needs a CUDA GPU and pip install '.[vllm]'",
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="allow a base model that ships its own Python code (off: a bundle cannot switch it on; "
        "see docs/untrusted-files.md)",
    )
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help=f"prompts per generation batch of the transformers backend (default: {DEFAULT_CANDIDATE_BATCH_SIZE})",
    )
    parser.add_argument("--evaluate", action="store_true", help="score the predictions and print the metrics")
    add_shared_options(parser)
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    from missci.cli_options import chosen_arguments, premise_metrics_from_args, print_result

    args = build_parser().parse_args(argv)
    backend, bundle = load_tuned_backend(args.adapter, args.merge, args.device, args.backend, args.trust_remote_code)
    arguments = chosen_arguments(args)
    seen = set(bundle.get("trained_on_arguments", [])) & {a.id for a in arguments}
    if seen:
        log.warning(
            "%d of the %d arguments to predict were in this adapter's training data; their scores are "
            "not held-out scores (use the adapter of the fold that held them out).",
            len(seen),
            len(arguments),
        )
    # bundles written before batching existed say batch_size 1: the current default serves them faster
    settings = CandidateSettings(**{**bundle["candidates"], "batch_size": DEFAULT_CANDIDATE_BATCH_SIZE})
    overrides = {
        "num_candidates": args.num_candidates,
        "strategy": args.strategy,
        "max_new_tokens": args.max_new_tokens,
        "batch_size": args.batch_size,
    }
    settings = dataclasses.replace(settings, **{k: v for k, v in overrides.items() if v is not None})
    options, chat = PromptOptions(**bundle["prompt"]), ChatSettings(**bundle["chat"])
    task = TASKS.get(bundle.get("task"))
    if task is None:
        raise UserError(
            f"unknown task {bundle.get('task')!r} in {BUNDLE_FILE}.",
            path=Path(args.adapter),
            fix=f"the task must be one of {', '.join(TASKS)}.",
        )
    outputs = task.predict(backend, backend.tokenizer, arguments, options, settings, chat)
    task.write(args.out, outputs)
    result: dict = {"predictions": args.out, "task": task.name, "held_out": not seen}
    if args.evaluate:
        scores = task.score(arguments, outputs, max(6, settings.num_candidates), premise_metrics_from_args(args))
        result.update(metrics=scores.metrics, unavailable=scores.unavailable, models=scores.models)
    print_result(result, args.json)
    return result


if __name__ == "__main__":
    main()
