"""Check that ``faina.evaluate`` gives the official scorer's figures on random valid files.

    python scripts/check_official_parity.py OFFICIAL_SCRIPT [--files N] [--seed S] [--tolerance T] [--keep DIR]

OFFICIAL_SCRIPT is your own copy of the Faina scorer (``scripts/evaluate.py`` of dhfbk/faina) or of the FadeIT 2026
scorer (``eval.py`` of dhfbk/fadeit-evalita2026); the project never ships either. For every task the script
supports it scores N random valid gold/prediction pairs with both and reports the largest absolute difference of
any P/R/F1 figure; how the official figures are read unrounded: ``faina.scoring.official_parity``.
Exit status: 0 when every difference is within the tolerance, 1 otherwise, 2 when the script is not the scorer.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

from common.errors import UserError, exit_on_user_error
from faina.scoring.official_parity import check_task, official_flavour


@exit_on_user_error
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("official_script", type=Path, help="your copy of the official scorer")
    parser.add_argument("--files", type=int, default=200, help="random file pairs per task and mode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=1e-9)
    parser.add_argument("--keep", type=Path, default=None, help="keep the generated files in this folder")
    args = parser.parse_args(argv)
    if not args.official_script.is_file():
        raise UserError("file not found", path=args.official_script, fix="give the path to the official scorer")
    flavour = official_flavour(args.official_script)
    runs = [(t, o) for t in ("span-fine", "span-coarse", "post-fine", "post-coarse") for o in (False, True)]
    if flavour == "fadeit":
        runs = [("post-fine", False), ("span-fine", False)]
    rng = random.Random(args.seed)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        print(f"official scorer: {args.official_script} ({flavour}); {args.files} random file pairs per run")
        for task, one_pred in runs:
            report = check_task(args.official_script, flavour, task, one_pred, args.files, rng, workdir)
            bad = report["max_abs_diff"] > args.tolerance or report["problems"]
            failed = failed or bool(bad)
            print(
                f"{task:12} {'-O' if one_pred else '  '}  compared {report['compared']:4} score sets, "
                f"({report['bit_identical']:4} bit-identical), official zero-division {report['zero_division']:3}, "
                f"max |diff| {report['max_abs_diff']:.3e}"
                f"  {'FAIL' if bad else 'ok'}"
            )
            for problem in report["problems"][:5]:
                print(f"    {problem}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
