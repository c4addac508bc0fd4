"""``python -m faina.predict MODEL_DIR INPUT OUTPUT``: predict any Faina-format file with a trained model.

MODEL_DIR is a fold folder of a finished run (``results/<name>/fold0``: ``model.safetensors`` +
``model.json``), or the run's results folder (``results/<name>``): then every fold model predicts and
their ensemble decides (``faina.serving.loading``: averaged probabilities for post models, averaged emissions
decoded once for span models). INPUT is a span-level ``.conll`` (span models) or post-level ``.tsv`` (post models),
labelled or not; OUTPUT gets the same posts with the model's labels in the official layout (a
submission file), so ``python -m faina.evaluate`` scores it. ``--probabilities PATH`` also writes the model's
probabilities of the same posts (``probabilities.jsonl`` layout; ``faina.evaluate --probabilities PATH`` scores
them; docs/soft-labels.md): calibrated when the model is, its raw ones with ``--uncalibrated``. A fold folder of a
multi-task run predicts with each of its heads whose level reads INPUT (``.conll``: span heads, ``.tsv``: post heads;
with several, ``OUTPUT`` becomes ``<stem>.<head><suffix>`` per head), or with the one ``--head NAME`` chooses
(docs/multitask.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error
from faina.formats.probability_file import refuse_uncalibrated_alone


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("faina.predict", __doc__.splitlines()[0])
    parser.add_argument(
        "model_dir",
        help="fold folder with model.safetensors and model.json, or a results folder (ensemble of all its fold models)",
    )
    parser.add_argument("input", help="Faina-format file to label (.conll for span models, .tsv for post models)")
    parser.add_argument("output", help="where to write the predictions (official layout)")
    parser.add_argument("--batch-size", type=int, default=32, help="posts per forward pass")
    parser.add_argument(
        "--head",
        metavar="NAME",
        default=None,
        help="a multi-task model's head to use (default: every head, one output each; docs/multitask.md)",
    )
    parser.add_argument(
        "--trust-remote-code",
        action="store_true",
        help="allow an encoder that ships its own Python code (off: a model folder cannot switch "
        "it on; see docs/untrusted-files.md)",
    )
    parser.add_argument(
        "--probabilities",
        metavar="PATH",
        default=None,
        help="also write the model's probabilities as JSONL, gzip-compressed when PATH ends in .gz "
        "(docs/soft-labels.md)",
    )
    parser.add_argument(
        "--uncalibrated",
        action="store_true",
        help="with --probabilities: write the model's raw probabilities, not the calibrated ones it reports "
        "(docs/soft-labels.md#calibration)",
    )
    return parser


@exit_on_user_error
def main(argv: list[str] | None = None) -> str | list[str]:
    args = build_parser().parse_args(argv)
    refuse_uncalibrated_alone(args)
    from faina.serving.heads import head_folders, head_output, heads_reading
    from faina.serving.prediction import predict_file  # torch and Lightning: only once the arguments are read

    heads = heads_reading(head_folders(args.model_dir, args.head), args.input)
    several = len(heads) > 1
    written = []
    for head, folder in heads:
        probabilities = args.probabilities and head_output(args.probabilities, head, several)
        path = predict_file(
            str(folder),
            args.input,
            head_output(args.output, head, several),
            args.batch_size,
            args.trust_remote_code,
            probabilities or None,
            args.uncalibrated,
            head if folder == Path(args.model_dir) else None,  # a results folder: that head's ensemble
        )
        named = f" (head {head})" if head is not None else ""
        print(f"predictions written{named}: {path}", file=sys.stderr)
        if probabilities:
            print(f"probabilities written{named}: {probabilities}", file=sys.stderr)
        written.append(path)
    return written[0] if len(written) == 1 else written


if __name__ == "__main__":
    main()
