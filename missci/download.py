"""Fetch the official Missci dev/test files at the pinned commit and verify their sha256 sums.

Usage: ``python -m missci.download DIR`` (then pass ``--data DIR`` or set ``MISSCI_DATA=DIR``).
Pinned to a commit so everyone evaluates on byte-identical data; a changed file fails the checksum.
"""

from __future__ import annotations

import hashlib
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from common.cli import command_parser
from common.errors import UserError, exit_on_user_error

REPOSITORY = "UKPLab/acl2024-missci"
COMMIT = "9b3ddc904d11244aa0f04b608969b5c4619bd8c1"
SHA256 = {
    "dev.missci.jsonl": "54604e55079ed3a171254c3818c04b6bfcfd3fc655b37fb86ea54faa2d08f0f5",
    "test.missci.jsonl": "cabd8eebb86f50d204badbb5c7ee6544da8368732a3cbf6e1e2d3cbcaacacc09",
}


def file_url(name: str) -> str:
    return f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/dataset/{name}"


def fetch_url(url: str, timeout: float = 30.0) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 - fixed https URL
            return response.read()
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise UserError(
            f"cannot download {url} ({reason}); this machine seems to be offline.",
            fix="run the command where GitHub is reachable, or copy the two files by hand into DIR "
            "(their sha256 sums are in missci/download.py).",
        ) from None


def download(target: str | Path, fetch: Callable[[str], bytes] = fetch_url) -> list[Path]:
    """Download both files into ``target``; files already there with the right checksum are kept."""
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise UserError("not a folder", path=target, fix="give a folder (it is created when missing) for the two files")
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, expected in SHA256.items():
        path = target / name
        if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == expected:
            written.append(path)
            continue
        content = fetch(file_url(name))
        actual = hashlib.sha256(content).hexdigest()
        if actual != expected:
            raise UserError(
                f"checksum mismatch for {name}: got {actual}, expected {expected}.",
                path=file_url(name),
                fix="retry; if it persists, the pinned file is not what was fetched.",
            )
        partial = path.with_suffix(".partial")
        partial.write_bytes(content)
        partial.replace(path)
        written.append(path)
    return written


@exit_on_user_error
def main(argv: Sequence[str] | None = None) -> list[Path]:
    parser = command_parser("missci.download", __doc__.splitlines()[0])
    parser.add_argument("directory", metavar="DIR", help="where to put dev/test.missci.jsonl")
    args = parser.parse_args(argv)
    paths = download(args.directory)
    for path in paths:
        print(f"ok {path}", file=sys.stderr)
    return paths


if __name__ == "__main__":
    main()
