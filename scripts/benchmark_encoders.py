"""Training step time and peak memory of each encoder, side by side: MiniLM against SmolLM2 with LoRA (causal and
bidirectional).

    python scripts/benchmark_encoders.py [--task span-f] [--configs minilm smollm2-lora-causal ...]
        [--posts 32] [--batch-size 8] [--steps 5] [--threads 2]

Each configuration runs in its own process on the same posts and batches of the synthetic sample; the table has
the median seconds per optimiser step (wall and CPU), trainable and all parameters, the size of the state a saved
model holds and the peak resident memory. The work is ``faina.benchmarks.encoder_cost``; the figures measured here:
docs/models.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from common.cli import command_parser
from common.errors import exit_on_user_error
from faina.benchmarks.encoder_cost import CONFIGURATIONS, DEFAULT_CONFIGURATIONS, MODEL_OF_TASK, run, table


def build_parser():
    parser = command_parser("scripts.benchmark_encoders", __doc__.splitlines()[0])
    parser.add_argument("--task", default="span-f", choices=sorted(MODEL_OF_TASK))
    parser.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGURATIONS), choices=sorted(CONFIGURATIONS))
    parser.add_argument("--posts", type=int, default=32, help="the first posts of the sample trained on")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--steps", type=int, default=5, help="timed optimiser steps (after one warm-up step)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads of each configuration's process")
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> list[dict]:
    args = build_parser().parse_args(argv)
    rows = run(args.configs, args.task, args.posts, args.batch_size, args.steps, args.threads)
    print(table(rows, args.task, args.posts, args.batch_size, args.steps, args.threads))
    return rows


if __name__ == "__main__":
    main()
