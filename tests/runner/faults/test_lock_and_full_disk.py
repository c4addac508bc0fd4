"""Two runs of one experiment at once, and a disk that fills up: one clear message, nothing complete lost."""

from __future__ import annotations

import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from common.checkpointing import checkpoint_damage
from common.errors import UserError
from common.locking import experiment_lock
from faina.data import task_data
from runner.faults import harness
from tests_paths import REPO
from train import run


@pytest.mark.e2e
def test_second_run_of_the_same_experiment_stops_at_once(make_cfg, monkeypatch):
    cfg = make_cfg("task=post-c", "debug=fast", "cv.folds=[0]", "name=locked")
    exp = Path(cfg.paths.results_dir) / "locked"
    reads = []
    original_load = task_data.load_task_data

    def counting_load(*args, **kwargs):
        reads.append(args)
        return original_load(*args, **kwargs)

    monkeypatch.setattr(task_data, "load_task_data", counting_load)
    with experiment_lock(exp):
        with pytest.raises(UserError, match=r"another run of this experiment is in progress \(pid \d+ on .+, started"):
            run(cfg)
    assert reads == [] and not (exp / "fold0").exists()  # refused before reading the data or building a model
    run(cfg)  # the lock is free again once its holder is done
    assert len(reads) == 1 and (exp / "fold0" / "metrics.json").is_file()


def test_a_killed_run_leaves_no_stale_lock(tmp_path):
    holder = (
        "import os, signal, sys\nfrom common.locking import experiment_lock\n"
        "with experiment_lock(sys.argv[1]):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    result = subprocess.run([sys.executable, "-c", holder, str(tmp_path)], cwd=REPO)
    assert result.returncode == -signal.SIGKILL and (tmp_path / ".lock").is_file()
    with experiment_lock(tmp_path):  # the kernel released the dead process's lock
        pass


@pytest.mark.e2e
def test_disk_full_mid_training_is_one_message_and_keeps_the_last_checkpoint(make_cfg):
    common = ["task=post-c", "cv.folds=[0]", "trainer.max_epochs=2", "name=full", "checkpoint.keep=true"]
    common.append("checkpoint.resume_every_n_epochs=1")
    full = [
        "+callbacks.full._target_=runner.faults.harness.LimitFileSize",
        "+callbacks.full.epoch=1",
        "+callbacks.full.limit=200000",
    ]
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG for the writer, as on a full disk
    try:
        with pytest.raises(UserError, match="the disk is full") as info:
            run(make_cfg(*common, *full))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)
    checkpoints = Path(make_cfg(*common).paths.results_dir) / "full" / "fold0" / "checkpoints"
    assert Path(info.value.path).parent == checkpoints and "Fix: free space" in str(info.value)
    # epoch 0's checkpoint is whole and no partial file is left
    last = checkpoints / "last.ckpt"
    assert checkpoint_damage(last) is None and torch.load(last, weights_only=True)["epoch"] == 0
    assert sorted(p.name for p in checkpoints.iterdir()) == ["best-epoch=0.safetensors", "last.ckpt"]
    run(make_cfg(*common))  # with space again, the same command resumes and finishes
    assert (checkpoints.parent / "metrics.json").is_file()


@pytest.mark.slow
def test_full_disk_and_concurrent_run_through_the_command_line(tmp_path, tiny_encoder, fault_sample):
    cmd = harness.command(tmp_path, tiny_encoder, fault_sample)
    full = harness.run(cmd, fsize_limit=1_000_000)
    assert full.returncode == 2, harness.describe(full)
    assert "Traceback" not in full.stderr
    message = full.stderr.strip().splitlines()[-1]
    assert message.startswith("error: ") and "the disk is full" in message and "fold0/checkpoints/" in message
    exp = harness.experiment_dir(tmp_path)
    assert list(exp.rglob(".*.tmp")) == [] and (exp / "experiment.json").read_text().strip().endswith("}")

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom common.locking import experiment_lock\n"
            "with experiment_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(600)",
            str(exp),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        second = harness.run(cmd)
    finally:
        holder.kill()
        holder.wait()
    assert second.returncode == 2 and "Traceback" not in second.stderr, harness.describe(second)
    assert (
        second.stderr.strip().splitlines()[-1].startswith("error: ")
        and "another run of this experiment" in second.stderr
    )
