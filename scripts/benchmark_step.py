"""The framework's training step against a bare encoder + linear loop (and a bare encoder + the framework's CRF),
in one process, over the same batches.

    python scripts/benchmark_step.py [--steps 20] [--rounds 3] [--batch-size 16] [--out step.json] [OVERRIDE ...]

The run is ``train.py experiment=demo`` (MVMD span-f, the offline MiniLM, the synthetic sample) trained whole
(``model.module.gradual_unfreezing=false``, as the bare loops train), with any further Hydra ``OVERRIDE``s
(``encoder.name_or_path=DIR``). Prints the table and writes every figure with the command line to ``--out``
(JSON). The work is ``faina.benchmarks.step_cost``; the figures measured: docs/speed-and-scale.md.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
RUN = ("experiment=demo", "model.module.gradual_unfreezing=false")


def build_parser():
    parser = command_parser("scripts.benchmark_step", __doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="optimiser steps per round (the first is a warm-up)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per variant (median)")
    parser.add_argument("--batch-size", type=int, default=16, help="posts per batch (loader.batch_size)")
    parser.add_argument("--out", type=Path, help="a JSON file for every figure and the command line")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides of the run (after the demo's)")
    return parser


def composed(batch_size: int, overrides: Sequence[str] = ()):
    """``conf/train.yaml`` as ``train.py experiment=demo ...`` composes it."""
    from hydra import compose, initialize_config_dir

    if str(REPO) not in sys.path:  # train.py (its config resolvers) sits at the checkout's top, not in a package
        sys.path.insert(0, str(REPO))
    from train import register_config_resolvers

    register_config_resolvers()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        return compose(config_name="train", overrides=[*RUN, f"loader.batch_size={batch_size}", *overrides])


def benchmark(steps: int, rounds: int, batch_size: int, overrides: Sequence[str] = (), log=print) -> dict:
    """The figures of ``faina.benchmarks.step_cost.measure`` for the composed run, with its overrides."""
    from faina.benchmarks.step_cost import measure

    cfg = composed(batch_size, overrides)
    result = measure(cfg, steps, rounds, log)
    return {"overrides": [*RUN, f"loader.batch_size={batch_size}", *overrides], **result}


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    from faina.benchmarks.step_cost import table

    result = benchmark(
        args.steps, args.rounds, args.batch_size, args.overrides, lambda line: print(line, file=sys.stderr)
    )
    result["command"] = " ".join(["python", "scripts/benchmark_step.py", *(sys.argv[1:] if argv is None else argv)])
    print(table(result))
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
