"""Deterministic kill points for the fault-injection tests: ``FALLACY_KILL_AT=<point>[@<n>][:TERM]``.

A crash that depends on timing cannot be reproduced; a named point can. The code that writes results calls
``kill_point("write:metrics.json")``, ``kill_point("train-batch")`` … at the moments where a real job could
die (mid-epoch, halfway through a file write, between folds). When the environment variable names the point,
the process SIGKILLs itself the n-th time it gets there (default: the first), exactly like ``kill -9``: no
``finally`` blocks, no atexit handlers, files left as they are. Unset (always, outside the tests), a kill
point costs one dictionary lookup. ``:TERM`` sends SIGTERM instead, as a scheduler or ``kill`` does: the process
may then stop as it chooses (Lightning finishes the batch and raises; ``train.py`` exits 143).
"""

from __future__ import annotations

import collections
import os
import signal

ENV_VAR = "FALLACY_KILL_AT"
_hits: collections.Counter[str] = collections.Counter()


def kill_point(name: str) -> None:
    """SIGKILL (or, with ``:TERM``, SIGTERM) this process if ``FALLACY_KILL_AT`` names ``name`` and this is its n-th hit."""
    spec = os.environ.get(ENV_VAR)
    if not spec:
        return
    term = spec.endswith(":TERM")  # point names hold colons themselves ("write:last.ckpt")
    target, _, nth = spec.removesuffix(":TERM").partition("@")
    if name != target:
        return
    _hits[name] += 1
    if _hits[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGTERM if term else signal.SIGKILL)
