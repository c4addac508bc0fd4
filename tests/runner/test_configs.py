"""Every config group option composes, and the composed objects are the ones the runner needs."""

from __future__ import annotations

import subprocess
import sys

import hydra
import pytest
from omegaconf import OmegaConf

from helpers.configs import compose_train
from tests_paths import CONF, REPO

TASK_MODEL = {"post-c": "mvml", "post-f": "mvml", "span-c": "mvmd", "span-f": "mvmd"}


@pytest.mark.parametrize("task, model", sorted(TASK_MODEL.items()))
def test_task_selects_its_model(task, model):
    cfg = compose_train(f"task={task}")
    assert cfg.model.name == model
    assert cfg.task.level == task.split("-")[0] and cfg.task.grain == {"c": "coarse", "f": "fine"}[task[-1]]
    assert cfg.trainer.max_epochs == (20 if task.startswith("span") else 10)


@pytest.mark.parametrize("experiment", [f"faina/{t}-{e}" for t in TASK_MODEL for e in ("alberto", "umberto")])
def test_paper_experiments_compose(experiment):
    cfg = compose_train(f"experiment={experiment}")
    task, encoder = experiment.split("/")[1].rsplit("-", 1)
    assert cfg.task.name == task and cfg.encoder.name == encoder and cfg.data.name == "faina"
    assert cfg.model.name == TASK_MODEL[task]
    assert cfg.model.module.discriminative_decay == 0.38 and cfg.model.module.gradual_unfreezing
    assert cfg.model.module.optimizer.lr == 1e-4 and list(cfg.model.module.optimizer.betas) == [0.9, 0.99]
    assert cfg.loader.batch_size == 32 and cfg.encoder.max_length == 128


def test_command_line_overrides_reach_the_optimiser():
    cfg = compose_train("task=post-f", "model.module.optimizer.lr=3e-5", "model.module.decision.fixed=0.5")
    optimizer = hydra.utils.instantiate(cfg.model.module.optimizer)
    assert optimizer.keywords["lr"] == 3e-5 and cfg.model.module.decision.fixed == 0.5


@pytest.mark.parametrize(
    "group, option",
    [
        ("logger", "csv"),
        ("logger", "wandb"),
        ("logger", "none"),
        ("trainer", "ddp"),
        ("trainer", "gpu"),
        ("cv", "official"),
        ("debug", "fast"),
        ("encoder", "alberto"),
        ("encoder", "umberto"),
        ("encoder", "mpnet"),
        ("data", "faina"),
        ("mode", "zero-shot"),
    ],
)
def test_group_options_compose(group, option):
    """Each value the option's file sets is the composed config's (its own package, or the top for
    ``# @package _global_`` files), so choosing the option really selects that file."""
    cfg = compose_train(f"{group}={option}")
    path = CONF / group / f"{option}.yaml"
    text = path.read_text(encoding="utf-8")
    own = OmegaConf.load(path)
    own.pop("defaults", None)
    root = cfg if "# @package _global_" in text else cfg[group]
    leaves = list(leaf_values(OmegaConf.to_container(own, resolve=False)))
    assert leaves or group == "logger", f"{path} sets nothing to check"
    composed = OmegaConf.to_container(root, resolve=False)
    for keys, value in leaves:
        node = composed
        for key in keys:
            assert isinstance(node, dict) and key in node, f"{'.'.join(keys)} of {path} is not in the composed config"
            node = node[key]
        assert node == value, f"{'.'.join(keys)}: {path} sets {value!r}, the composed config has {node!r}"
    if group == "logger" and option == "none":
        assert cfg.logger == {}


def leaf_values(node, keys=()):
    if isinstance(node, dict) and node:
        for key, value in node.items():
            yield from leaf_values(value, (*keys, key))
    else:
        yield keys, node


def test_demo_experiment_is_offline_default():
    cfg = compose_train("experiment=demo")
    assert cfg.data.name == "sample" and cfg.encoder.name == "minilm" and cfg.task.name == "span-f"
    assert cfg.data.train_path.endswith("sample.conll")


@pytest.mark.e2e  # a train.py process each (refused before Hydra composes, but it starts Python and train.py)
@pytest.mark.parametrize(
    "override, new",
    [
        ("model.module.threshold=tuned", "model.module.decision.tuned=true"),
        ("model.module.tuning_scope=shared", "model.module.decision.scope"),
        ("model.module.min_dev_spans=10", "model.module.decision.min_evidence"),
    ],
)
def test_a_decision_setting_under_its_former_key_is_one_message_naming_the_new_one(override, new):
    """Typed as the docs of earlier releases wrote it, the override ends in one line, before Hydra composes."""
    done = subprocess.run(
        [sys.executable, "train.py", "task=post-f", override], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"error: {override.split('=')[0]}") and new in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.e2e  # a train.py process (refused before Hydra composes)
def test_a_withdrawn_recipe_on_the_command_line_is_one_message():
    done = subprocess.run(
        [sys.executable, "train.py", "experiment=best-post-f", "data=custom"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr.startswith("error: experiment=best-post-f was withdrawn") and "Fix: run task=post-f" in done.stderr
    )
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("overrides", "monitor", "mode"),
    [
        ((), "val/f1", "max"),
        (("data.targets=majority",), "val/f1", "max"),
        (("data.targets=soft",), "val/loss", "min"),
        (("task=post-f", "data.targets=soft"), "val/loss", "min"),
        (("data.targets=soft", "checkpoint.monitor=val/f1"), "val/f1", "max"),  # the override still wins
        (("checkpoint.monitor=val/a1/loss",), "val/a1/loss", "min"),
        (("data.targets=soft", "checkpoint.mode=max"), "val/loss", "max"),
    ],
)
def test_a_soft_target_run_selects_on_its_dev_loss_unless_told_otherwise(overrides, monitor, mode):
    cfg = compose_train(*overrides)
    assert (cfg.checkpoint.monitor, cfg.checkpoint.mode) == (monitor, mode)


@pytest.mark.parametrize(
    ("task", "kind"), [("span-f", "SpanCalibrationSettings"), ("post-f", "PostCalibrationSettings")]
)
def test_runs_fit_a_temperature_per_label_and_the_schema_reads_it(task, kind):
    from faina.training.model_building import check_model_config

    cfg = compose_train(f"task={task}")
    checked = check_model_config(cfg.model)
    assert type(checked.module.calibration).__name__ == kind
    assert checked.module.calibration.model_dump() == {
        "method": "temperature",
        "scope": "own",
        "min_evidence": 5,
        "fallback": "none",
        "fallback_folds": 5,
        "fallback_margin": 0.0,
    }
    from common.errors import UserError

    wrong = "platt" if task == "span-f" else "isotonic"  # Platt has no meaning for a CRF; isotonic is not offered
    with pytest.raises(UserError, match="calibration.method"):
        check_model_config(compose_train(f"task={task}", f"model.module.calibration.method={wrong}").model)
    with pytest.raises(UserError, match="calibration.fallback_margin"):  # standard errors: not below 0
        check_model_config(compose_train(f"task={task}", "model.module.calibration.fallback_margin=-1").model)
