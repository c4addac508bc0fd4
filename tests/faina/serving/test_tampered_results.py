"""A rerun of an experiment whose saved configs were tampered with never executes them.

``experiment.json`` is only compared with the configuration composed from ``conf/`` and the command line: a
tampered one (a hostile ``_target_`` in it) makes the rerun refuse, with one message, and nothing in it runs.
``config.yaml`` is never read back on a rerun (it is a record for people and for the model card, read with
``yaml.safe_load``): a tampered one is ignored and replaced by the run's own config.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml

from common.errors import UserError
from helpers.hostile import issue_payload, tripwires
from helpers.trained import compose_run
from tiers import fixture_tier


@pytest.fixture
@fixture_tier("fast")  # built on the shared trained run: the fresh-clone probe does not build it
def rerun(trained, tmp_path):
    """A copy of the trained run under a fresh root, and the config that reruns it (the same experiment)."""
    root = tmp_path / "root"
    exp_dir = root / "results" / trained["run"].name
    shutil.copytree(trained["run"], exp_dir)
    saved = json.loads((exp_dir / "experiment.json").read_text(encoding="utf-8"))
    # the one setting of the identity that follows the root folder (the zero-shot mode's output folder)
    cfg = compose_run(
        root,
        trained["encoder"],
        trained["sample"],
        "span-f",
        "cv.num_folds=2",
        f"task.zero_shot.output_dir={saved['task']['zero_shot']['output_dir']}",
    )
    return cfg, exp_dir


def test_a_tampered_experiment_json_refuses_the_rerun_and_runs_nothing(rerun, tmp_path, monkeypatch):
    from train import run

    cfg, exp_dir = rerun
    victim = tmp_path / "VICTIM"
    victim.write_text("keep me\n", encoding="utf-8")
    saved = json.loads((exp_dir / "experiment.json").read_text(encoding="utf-8"))
    saved["model"]["module"]["optimizer"] = issue_payload(victim)
    (exp_dir / "experiment.json").write_text(json.dumps(saved), encoding="utf-8")
    calls = tripwires(monkeypatch)
    with pytest.raises(UserError, match="another configuration") as caught:
        run(cfg)
    monkeypatch.undo()
    differs = re.search(r"differs in: ([^)]*)\)", str(caught.value)).group(1).split(", ")
    assert differs and all(key.startswith("model.module.optimizer.") for key in differs) and calls == []
    assert victim.read_text(encoding="utf-8") == "keep me\n"


def test_a_damaged_experiment_json_is_one_message(rerun):
    from train import run

    cfg, exp_dir = rerun
    (exp_dir / "experiment.json").write_text("{ not json", encoding="utf-8")
    with pytest.raises(UserError, match="experiment.json"):
        run(cfg)


def test_a_tampered_config_yaml_is_ignored_and_replaced(rerun, tmp_path):
    from train import run

    cfg, exp_dir = rerun
    victim = tmp_path / "VICTIM"
    victim.write_text("keep me\n", encoding="utf-8")
    (exp_dir / "config.yaml").write_text(
        f"model:\n  module:\n    optimizer: !!python/object/apply:os.remove [{str(victim)!r}]\n"
        f"trainer:\n  _target_: pathlib.Path.unlink\n  _args_: [{str(victim)!r}]\n",
        encoding="utf-8",
    )
    run(cfg)  # the finished folds are reused
    assert victim.read_text(encoding="utf-8") == "keep me\n"
    rewritten = yaml.safe_load((exp_dir / "config.yaml").read_text(encoding="utf-8"))
    assert rewritten["trainer"]["_target_"] == "lightning.pytorch.Trainer"
