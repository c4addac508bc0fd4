"""The ``fallacy`` umbrella command: every Faina and Missci tool behind one name, ``fallacy --help``.

The package holds only the command dispatcher (``fallacy.cli``); the tools themselves stay in ``faina/`` and
``missci/``, where ``python -m faina.evaluate`` and the other module forms keep working.
"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """``fallacy.__version__``: the installed distribution's version, looked up on first use (it costs
    start-up time that ``fallacy --help`` need not pay)."""
    if name == "__version__":
        from common.cli import project_version

        return project_version()
    raise AttributeError(f"module 'fallacy' has no attribute {name!r}")
