"""Every console command declared in pyproject.toml: the entry-point table, --help with defaults, --version,
the `python -m` form, the installed scripts; and the umbrella ``fallacy`` command's own help.

The list comes from pyproject.toml itself, so a command added there later is checked without touching this file.
Running each command's success and failure paths end to end is ``tests/runner/test_console_commands.py``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import tomllib

from common import cli
from fallacy import cli as fallacy_cli

REPO = Path(__file__).resolve().parents[1]
# The names users and scripts already call; losing one breaks them.
KEPT_NAMES = {
    "faina-validate",
    "faina-evaluate",
    "faina-sample",
    "faina-predict",
    "missci-download",
    "missci-stats",
    "missci-evaluate",
    "missci-baseline",
    "missci-predict-lora",
    "missci-sample",
    "missci-report",
    "faina-stats",
    "faina-show",
    "faina-tag",
    "faina-export",
    "models-replicas",
    "models-install-mpnet",
}


def declared_console_scripts() -> dict[str, str]:
    """``{command: "module:attribute"}`` from pyproject.toml's ``[project.scripts]``."""
    with open(REPO / "pyproject.toml", "rb") as handle:
        return dict(tomllib.load(handle)["project"]["scripts"])


SCRIPTS = declared_console_scripts()
ALIASES = {name: target for name, target in SCRIPTS.items() if name != "fallacy"}


def resolve(target: str):
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def tool_main(name: str):
    """The ``main(argv)`` of the tool behind a console name (what the runner calls)."""
    return importlib.import_module(fallacy_cli.ALIASES[name].module).main


def test_pyproject_declares_the_umbrella_and_every_kept_name():
    assert SCRIPTS["fallacy"] == "fallacy.cli:main"
    assert set(ALIASES) == KEPT_NAMES == {command.alias for command in fallacy_cli.COMMANDS}


@pytest.mark.parametrize("name", sorted(KEPT_NAMES))
def test_every_alias_goes_through_the_runner(name):
    """faina-x -> fallacy.cli:faina_x, a ConsoleAlias of `fallacy faina x` whose module is faina.x."""
    assert ALIASES[name] == f"fallacy.cli:{name.replace('-', '_')}"
    target = resolve(ALIASES[name])
    assert isinstance(target, fallacy_cli.ConsoleAlias) and target.command is fallacy_cli.ALIASES[name]
    dataset, _, command = name.partition("-")
    assert fallacy_cli.DATASETS[dataset][command] is target.command
    # the naming rule of the project: faina-x -> faina.x, missci-x-y -> missci.x_y
    assert target.command.module == f"{dataset}.{command.replace('-', '_')}"


def test_the_command_table_is_closed_and_each_module_has_a_main():
    """Module names are fixed strings of the table; each names a module of this checkout with a ``main``."""
    for command in fallacy_cli.COMMANDS:
        spec = importlib.util.find_spec(command.module)
        assert spec is not None and Path(spec.origin).is_relative_to(REPO), command.module
        assert "\ndef main(" in Path(spec.origin).read_text(encoding="utf-8"), command.module
        assert command.summary and len(command.summary) <= 80 and "\n" not in command.summary


def test_umbrella_help_lists_every_command_with_its_summary_and_alias(capsys):
    assert fallacy_cli.main(["--help"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: fallacy ")
    for command in fallacy_cli.COMMANDS:
        line = next(line for line in text.splitlines() if line.split()[:2] == [command.name, command.alias])
        assert line.rstrip().endswith(command.summary)
    assert fallacy_cli.main(["faina", "--help"]) == 0
    text = capsys.readouterr().out
    assert all(f"  {name} " in text for name in fallacy_cli.DATASETS["faina"])


def test_umbrella_version_and_usage_errors(capsys):
    assert fallacy_cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"fallacy {cli.project_version()}"
    for argv, words in (
        ([], "name a dataset"),
        (["faina"], "name a faina command"),
        (["nope", "evaluate"], "unknown dataset 'nope'"),
        (["missci", "evalute"], "unknown missci command 'evalute'"),
    ):
        assert fallacy_cli.main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.startswith("usage: fallacy") and words in captured.err


def test_a_tool_subcommand_names_itself_in_help_and_version(capsys):
    assert fallacy_cli.main(["missci", "stats", "--version"]) == 0
    assert capsys.readouterr().out.strip() == f"fallacy missci stats {cli.project_version()}"
    assert fallacy_cli.main(["faina", "validate", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: fallacy faina validate ")
    assert fallacy_cli.main(["faina", "validate", "--no-such-option", "x"]) == 2  # argparse's own status
    assert "unrecognized arguments" in capsys.readouterr().err


def test_runner_maps_return_values_and_errors_to_exit_statuses(monkeypatch, capsys):
    """A returned value is dropped (status 0, nothing printed); a UserError that reaches the runner is one
    line and status 2; SystemExit keeps its status."""
    from common.errors import UserError

    command = fallacy_cli.ALIASES["missci-stats"]
    module = importlib.import_module(command.module)
    outcomes = {
        "value": lambda argv: {"a": 1},
        "error": lambda argv: (_ for _ in ()).throw(UserError("bad", fix="x")),
        "exit3": lambda argv: sys.exit(3),
        "message": lambda argv: sys.exit("stopped"),
    }
    expected = {"value": (0, ""), "error": (2, "error: bad Fix: x\n"), "exit3": (3, ""), "message": (1, "stopped\n")}
    for key, fake in outcomes.items():
        monkeypatch.setattr(module, "main", fake)
        assert fallacy_cli.run(command, [], prog="missci-stats") == expected[key][0], key
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", expected[key][1]), key


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_console_command_help_lists_defaults_and_version(name, monkeypatch, capsys):
    main = tool_main(name)
    parsers: list[argparse.ArgumentParser] = []
    parse_known_args = argparse.ArgumentParser.parse_known_args

    def recording(self, *args, **kwargs):
        parsers.append(self)
        return parse_known_args(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", recording)
    monkeypatch.setattr(sys, "argv", [f"/some/venv/bin/{name}"])  # as the console script starts it

    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: {name} ") and "--version" in text
    parser = parsers[0]
    assert isinstance(parser.formatter_class, type) and issubclass(parser.formatter_class, cli._HelpFormatter), (
        f"{name}: build the parser with common.cli.command_parser"
    )
    for action in parser._actions:
        if action.default in (None, False, argparse.SUPPRESS) or not action.option_strings:
            continue
        assert action.help and "default" in parser.formatter_class(name)._get_help_string(action), (
            f"{name} {action.option_strings[0]}: give it a help text (its default {action.default!r} is shown there)"
        )
        assert f"{action.option_strings[-1]}" in text

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"{name} {cli.project_version()}"


@pytest.mark.parametrize("name", sorted(ALIASES))
def test_python_m_form_is_kept(name):
    """`python -m module` runs the same main: the module has the ``__main__`` guard that calls it."""
    module = fallacy_cli.ALIASES[name].module
    source = Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8")
    assert 'if __name__ == "__main__":\n    main()' in source, f"{module}: add the __main__ guard calling main()"


def test_python_m_form_names_itself_and_runs():
    done = subprocess.run(
        [sys.executable, "-m", "missci.sample", "--version"], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == f"python -m missci.sample {cli.project_version()}"


def installed_from(dist: metadata.Distribution) -> Path | None:
    """The source folder of an editable/local install (from its direct_url.json), else None."""
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    url = urlparse(json.loads(text).get("url", ""))
    return Path(unquote(url.path)).resolve() if url.scheme == "file" else None


def test_installed_console_scripts_exist_and_match_this_checkout():
    """What pip installed is on PATH; when this very checkout is the installed one, exactly pyproject's list."""
    try:
        dist = metadata.distribution(cli.DISTRIBUTION)
    except metadata.PackageNotFoundError:
        assert cli.project_version() == "unknown"
        return
    installed = {ep.name: ep.value for ep in dist.entry_points if ep.group == "console_scripts"}
    scripts_dir = Path(sysconfig.get_path("scripts"))
    for name in installed:
        assert (scripts_dir / name).is_file(), f"{name} is declared by the installed package but not in {scripts_dir}"
    if installed_from(dist) == REPO:
        assert installed == SCRIPTS, "reinstall (bash scripts/setup.sh) after changing pyproject's [project.scripts]"
    if "missci-sample" in installed:
        done = subprocess.run(
            [str(scripts_dir / "missci-sample"), "--version"], capture_output=True, text=True, check=True
        )
        assert done.stdout.strip() == f"missci-sample {cli.project_version()}"
