"""``python -m fallacy ...``: the umbrella command without the installed console script."""

from __future__ import annotations

import sys

from fallacy.cli import main

if __name__ == "__main__":
    sys.exit(main())
