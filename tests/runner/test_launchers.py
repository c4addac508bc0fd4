"""Launchers and strategies compose with every trainer, and a submitit_local multirun really runs two jobs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import hydra
import pytest
from omegaconf import OmegaConf

from helpers.configs import compose_train
from tests_paths import REPO

LAUNCHERS = {
    "submitit_local": "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher",
    "submitit_slurm": "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher",
    "slurm": "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher",
    "slurm_ddp": "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher",
}
TRAINERS = ["default", "gpu", "ddp", "fsdp"]


def compose_with_hydra(*overrides: str):
    return compose_train(*overrides, with_hydra=True)


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
@pytest.mark.parametrize("trainer", TRAINERS)
def test_every_launcher_composes_with_every_trainer(launcher, trainer):
    cfg = compose_with_hydra(f"hydra/launcher={launcher}", f"trainer={trainer}", "task=span-f")
    assert cfg.hydra.launcher._target_ == LAUNCHERS[launcher]
    assert cfg.trainer._target_ == "lightning.pytorch.Trainer"
    OmegaConf.to_container(cfg.hydra.launcher, resolve=True)  # every interpolation resolves


def test_slurm_ddp_asks_for_the_trainers_nodes_and_gpus():
    cfg = compose_with_hydra(
        "hydra/launcher=slurm_ddp",
        "trainer=ddp",
        "trainer.num_nodes=3",
        "trainer.devices=8",
        "hydra.launcher.gpus_per_node=8",
        "hydra.launcher.partition=gpu",
    )
    launcher = OmegaConf.to_container(cfg.hydra.launcher, resolve=True)
    assert (launcher["nodes"], launcher["tasks_per_node"], launcher["gpus_per_node"]) == (3, 8, 8)
    assert launcher["partition"] == "gpu" and cfg.trainer.strategy == "ddp_find_unused_parameters_true"


def test_fsdp_strategy_is_built_with_llama_blocks_as_units():
    from lightning.pytorch.strategies import FSDPStrategy
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer

    cfg = compose_with_hydra("trainer=fsdp", "task=missci-gen", "llm=llama2-70b", "trainer.num_nodes=2")
    strategy = hydra.utils.instantiate(cfg.trainer.strategy)
    assert isinstance(strategy, FSDPStrategy) and cfg.trainer.precision == "bf16-true"
    assert strategy.num_nodes == 1  # Lightning passes trainer.num_nodes to the strategy when the Trainer is built
    assert cfg.trainer.num_nodes == 2
    assert strategy.kwargs["use_orig_params"] is True
    assert LlamaDecoderLayer in strategy.kwargs["auto_wrap_policy"]._module_classes
    assert strategy._activation_checkpointing_kwargs  # blocks recompute their activations in the backward pass


@pytest.mark.slow
def test_submitit_local_multirun_runs_two_jobs(tmp_path, tiny_encoder, small_sample):
    """``-m hydra/launcher=submitit_local`` with two tasks: two submitit jobs, each trains and scores its fold."""
    sweep = tmp_path / "sweep"
    command = [
        sys.executable,
        "train.py",
        "-m",
        "hydra/launcher=submitit_local",
        "task=post-c,post-f",
        "debug=fast",
        "cv.folds=[0]",
        f"paths.root_dir={tmp_path}",
        f"encoder.name_or_path={tiny_encoder}",
        "data=custom",
        f"data.train_path={small_sample / 'sample.tsv'}",
        "data.test_path=null",
        "loader.batch_size=8",
        f"hydra.sweep.dir={sweep}",
        "hydra.launcher.timeout_min=30",
        "hydra.launcher.cpus_per_task=1",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=1500, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    for task in ("post-c", "post-f"):
        metrics = json.loads((tmp_path / "results" / f"debug-{task}" / "fold0" / "metrics.json").read_text())
        assert metrics["fold"] == 0 and "test" in metrics
    # submitit ran them as two jobs: one folder of logs and results per job
    results = sorted((sweep / ".submitit").glob("*/*_result.pkl"))
    assert len(results) == 2 and len({r.parent for r in results}) == 2
    assert not (sweep / ".submitit" / "%j").exists()  # no empty folder named after submitit's placeholder
    # the jobs' tables are in their own logs; the console has a row per job pointing at its results, and the logs
    assert "### multirun: 2 jobs" in done.stdout
    for task in ("post-c", "post-f"):
        row = next(line for line in done.stdout.splitlines() if f"| task={task} |" in line)
        assert f"debug-{task}/results.md" in row and "COMPLETED" in row
    logs = [line.split(" is in ")[1] for line in done.stderr.splitlines() if "its output (table and progress)" in line]
    assert len(logs) == 2 and all("| strict | avg |" in open(log).read() for log in logs)
