"""Every console command declared in setup.cfg: --help with defaults, --version, the `python -m` form, installed.

The list comes from setup.cfg itself, so a CLI added there later is checked without touching this file.
"""
from __future__ import annotations

import argparse
import configparser
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

from common import cli

REPO = Path(__file__).resolve().parents[1]


def declared_console_scripts() -> dict[str, str]:
    """``{command: "module:function"}`` from setup.cfg's ``[options.entry_points] console_scripts``."""
    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg", encoding="utf-8")
    lines = config.get("options.entry_points", "console_scripts", fallback="").strip().splitlines()
    scripts = {}
    for line in lines:
        name, _, target = (part.strip() for part in line.partition("="))
        scripts[name] = target
    return scripts


SCRIPTS = declared_console_scripts()


def resolve(target: str):
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def test_setup_cfg_declares_the_project_commands():
    assert {"faina-validate", "faina-evaluate", "faina-sample", "faina-predict", "missci-download", "missci-stats",
            "missci-evaluate", "missci-baseline", "missci-predict-lora", "missci-sample"} <= set(SCRIPTS)
    for name, target in SCRIPTS.items():
        module = target.partition(":")[0]
        # the naming rule of the project: faina-x -> faina.x:main, missci-x-y -> missci.x_y:main
        assert target == f"{module}:main" and name == module.replace(".", "-").replace("_", "-"), name


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_console_command_help_lists_defaults_and_version(name, monkeypatch, capsys):
    main = resolve(SCRIPTS[name])
    parsers: list[argparse.ArgumentParser] = []
    parse_known_args = argparse.ArgumentParser.parse_known_args

    def recording(self, *args, **kwargs):
        parsers.append(self)
        return parse_known_args(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", recording)
    monkeypatch.setattr(sys, "argv", [f"/some/venv/bin/{name}"])   # as the console script starts it

    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: {name} ") and "--version" in text
    parser = parsers[0]
    assert isinstance(parser.formatter_class, type) and issubclass(parser.formatter_class, cli._HelpFormatter), \
        f"{name}: build the parser with common.cli.command_parser"
    for action in parser._actions:
        if action.default in (None, False, argparse.SUPPRESS) or not action.option_strings:
            continue
        assert action.help and "default" in parser.formatter_class(name)._get_help_string(action), \
            f"{name} {action.option_strings[0]}: give it a help text (its default {action.default!r} is shown there)"
        assert f"{action.option_strings[-1]}" in text

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"{name} {cli.project_version()}"


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_python_m_form_is_kept(name):
    """`python -m module` runs the same main: the module has the ``__main__`` guard that calls it."""
    module = SCRIPTS[name].partition(":")[0]
    source = Path(importlib.util.find_spec(module).origin).read_text(encoding="utf-8")
    assert 'if __name__ == "__main__":\n    main()' in source, f"{module}: add the __main__ guard calling main()"


def test_python_m_form_names_itself_and_runs():
    done = subprocess.run([sys.executable, "-m", "missci.sample", "--version"], cwd=REPO, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == f"python -m missci.sample {cli.project_version()}"


def installed_from(dist: metadata.Distribution) -> Path | None:
    """The source folder of an editable/local install (from its direct_url.json), else None."""
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    url = urlparse(json.loads(text).get("url", ""))
    return Path(unquote(url.path)).resolve() if url.scheme == "file" else None


def test_installed_console_scripts_exist_and_match_this_checkout():
    """What pip installed is on PATH; when this very checkout is the installed one, exactly setup.cfg's list."""
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
        assert installed == SCRIPTS, "reinstall (bash scripts/setup.sh) after changing setup.cfg's console_scripts"
    if "missci-sample" in installed:
        done = subprocess.run([str(scripts_dir / "missci-sample"), "--version"], capture_output=True, text=True,
                              check=True)
        assert done.stdout.strip() == f"missci-sample {cli.project_version()}"
