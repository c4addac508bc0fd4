"""One check of a GPU machine, no hub needed: trains and generates with the offline models, prints one table.

    bash scripts/gpu_check.sh [--out DIR] [--missci-data DIR] [--only mvmd,mvml,qlora,vllm] [--cpu] [--fast]
        [--dry-run] [--set KEY=VALUE ...]

The steps (MVMD span-f, MVML post-f, SmolLM2 QLoRA, vLLM zero-shot), each a train.py run: ``fallacy.gpu_check``.
The table gives per step its wall time, peak memory and score; the exit status is 1 when any step failed, 2 on a
user error (no GPU without ``--cpu``, an unknown step). ``--dry-run`` only prints the commands.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from common.errors import exit_on_user_error
from fallacy.gpu_check import DEFAULT_OUT, STEPS, CheckOptions, command, plan, run_checks, skip_reason


def parse_args(argv=None) -> tuple[CheckOptions, bool]:
    parser = argparse.ArgumentParser(
        prog="scripts/gpu_check.sh",
        description=__doc__.split("\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results folder")
    parser.add_argument(
        "--missci-data",
        default=None,
        help="folder with dev/test.missci.jsonl (default: $MISSCI_DATA, data/missci, shared/data/missci)",
    )
    parser.add_argument("--only", default=None, help=f"comma-separated steps: {', '.join(STEPS)}")
    parser.add_argument("--cpu", action="store_true", help="no GPU: trainer=default, no 4-bit, vLLM skipped")
    parser.add_argument("--fast", action="store_true", help="one batch per stage (a smoke test of this script)")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="extra override for every step (repeatable)"
    )
    parser.add_argument("--python", default=sys.executable, help="Python that runs train.py")
    args = parser.parse_args(argv)
    options = CheckOptions(args.out, args.missci_data, args.only, args.cpu, args.fast, tuple(args.set), args.python)
    return options, args.dry_run


@exit_on_user_error
def main(argv=None) -> int:
    options, dry_run = parse_args(argv)
    if dry_run:
        out = Path(options.out).resolve()
        for step in plan(options):
            reason = skip_reason(step, options)
            line = shlex.join(command(step, options, out))
            print(line if reason is None else f"# skipped ({reason}): {line}")
        return 0
    rows, failed = run_checks(options)
    device = "CPU" if options.cpu else "GPU"
    print(f"\ngpu_check ({device}{', fast' if options.fast else ''}), results in {Path(options.out).resolve()}")
    print("| step | status | time | peak memory | score |")
    print("|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
