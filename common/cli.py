"""The one way the project's command-line tools build their argument parsers.

Every CLI (``python -m faina.evaluate`` or its console command ``faina-evaluate``) gets the same things a
user of such tools expects: ``--help`` that lists each option with its default, ``--version``, and a program
name that matches how it was called. New CLIs call ``command_parser`` instead of ``argparse.ArgumentParser``.
"""

from __future__ import annotations

import argparse
import os
import sys

DISTRIBUTION = "fallacy-framework"


def project_version() -> str:
    """The installed distribution's version (``unknown`` when run from a source tree that is not installed)."""
    from importlib import metadata  # here, not at the top: it is a third of a scoring command's start-up

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults appended to each option's help; descriptions keep their line breaks.

    Nothing is appended where it would say nothing: a help text that already explains its default, an
    option whose default is None (it is required, or its help says what happens without it), and on/off flags.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default is None or action.default is False or "default" in text.lower():
            return text
        return super()._get_help_string(action)


def program_name(module: str) -> str:
    """``faina-evaluate`` when started as a console command, ``python -m faina.evaluate`` otherwise."""
    invoked = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if invoked and not invoked.endswith(".py") and invoked not in {"-c", "-m", "__main__.py"}:
        return invoked
    return f"python -m {module}"


def command_parser(module: str, description: str | None, **kwargs) -> argparse.ArgumentParser:
    """An ``ArgumentParser`` for the CLI in ``module`` (e.g. ``"faina.evaluate"``), with ``--version``."""
    kwargs.setdefault("formatter_class", _HelpFormatter)
    parser = argparse.ArgumentParser(prog=program_name(module), description=description, **kwargs)
    parser.add_argument("--version", action=_VersionAction)
    return parser


class _VersionAction(argparse.Action):
    """argparse's ``version`` action, looking the version up only when ``--version`` is given."""

    def __init__(
        self,
        option_strings,
        dest=argparse.SUPPRESS,
        default=argparse.SUPPRESS,
        help="show program's version number and exit",
    ):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(f"{parser.prog} {project_version()}\n", sys.stdout)
        parser.exit()
