"""Every ``train.py`` command in a code block of the README and the docs composes, and every config key it sets
resolves in the composed config.

A renamed key leaves the docs pointing at nothing (``data.batch_size`` for ``loader.batch_size``), and a user who
copies the command gets Hydra's error instead of a run. Each command is composed with Hydra's compose API exactly as
``train.py`` would compose it (``helpers.configs.compose_train``): group choices (``task=multi``) are applied with
the keys they bring, a ``+key=`` addition is added, and a sweep (``a=1,2``, ``-m``) is composed at its first value.
Then each dotted key the command sets must be in the composed config, and a command of several task entries
(``task=multi``) must not set the top-level ``model`` or ``data`` blocks, which its entries do not read (the runner
refuses such a command: ``faina.training.run_entries.check_entry_overrides``). Nothing is run or downloaded.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests_paths import REPO

MARKDOWN_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# train.py's and Hydra's flags, not overrides
FLAGS = {"-m", "--multirun", "-q", "--quiet", "-v", "--verbose", "--help", "-h"}


def train_commands(path: Path) -> list[tuple[str, list[str]]]:
    """``(where, overrides)`` of each ``python train.py ...`` in ``path``'s fenced code blocks (continued lines
    joined, shell comments dropped)."""
    commands, fenced, text, start = [], False, "", 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fenced, text = not fenced, ""
            continue
        if not fenced:
            continue
        text, start = (f"{text} {line.strip()}", start) if text else (line.strip(), number)
        if text.endswith("\\"):
            text = text[:-1]
            continue
        words = shlex.split(text, comments=True) if "python" in text and "train.py" in text else []
        for k, word in enumerate(words):
            if word == "train.py" and k > 0 and words[k - 1].endswith("python"):
                where = f"{path.relative_to(REPO)}:{start}"
                commands.append((where, [w for w in words[k + 1 :] if w not in FLAGS]))
        text = ""
    return commands


COMMANDS = [command for path in MARKDOWN_FILES for command in train_commands(path)]


def first_of_sweeps(overrides: list[str]) -> list[str]:
    """The overrides with each sweep (``key=a,b``, ``range(...)``) at its first value, as one job of it composes."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides(overrides)
    return [
        f"{text.split('=', 1)[0]}={next(override.sweep_string_iterator())}" if override.is_sweep_override() else text
        for override, text in zip(parsed, overrides, strict=True)
    ]


def unresolved_keys(overrides: list[str]) -> list[str]:
    """The dotted keys the overrides set that the composed config does not have (composing raises on worse)."""
    from omegaconf import OmegaConf

    from faina.training.run_entries import check_entry_overrides
    from helpers.configs import compose_train

    plain = first_of_sweeps(overrides)
    cfg = compose_train(*plain, with_hydra=any(o.lstrip("+~").startswith("hydra") for o in plain))
    check_entry_overrides(cfg, plain)  # raises: train.py would refuse the command
    missing = []
    for override in plain:
        if override.startswith("~"):
            continue
        key = override.lstrip("+").split("=", 1)[0]
        if "." in key and "/" not in key and OmegaConf.select(cfg, key, default=KeyError) is KeyError:
            missing.append(key)
    return missing


def test_the_docs_hold_train_commands_to_check():
    assert len(COMMANDS) >= 40
    assert any(where.startswith("README.md") for where, _ in COMMANDS)


@pytest.mark.parametrize(("where", "overrides"), COMMANDS, ids=[where for where, _ in COMMANDS])
def test_every_documented_train_command_composes_and_its_keys_resolve(where, overrides):
    assert unresolved_keys(overrides) == [], f"{where}: python train.py {' '.join(overrides)}"


def test_a_multi_task_command_setting_the_top_level_model_block_is_caught():
    from common.errors import UserError

    with pytest.raises(UserError, match="changes nothing in a run of several task entries"):
        unresolved_keys(["task=multi", "model.module.head_lr=0.5"])
    assert unresolved_keys(["task=multi", "task.entries.post_f.model.module.head_lr=0.5"]) == []


def test_a_key_that_is_not_in_the_config_is_caught():
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException):
        unresolved_keys(["experiment=demo", "data.batch_size=8"])  # the key is loader.batch_size
    assert unresolved_keys(["experiment=demo", "loader.batch_size=8"]) == []
    assert first_of_sweeps(["task=post-c,post-f", "seed=1"]) == ["task=post-c", "seed=1"]
