"""The ``fallacy`` umbrella command: every Faina and Missci tool behind one name, ``fallacy --help``.

The package holds only the command dispatcher (``fallacy.cli``); the tools themselves stay in ``faina/`` and
``missci/``, where ``python -m faina.evaluate`` and the other module forms keep working.
"""
from __future__ import annotations

from common.cli import project_version

__version__ = project_version()
