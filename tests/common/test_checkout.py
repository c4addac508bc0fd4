"""Paths given to notebooks are read from the repository root, whichever folder inside it the kernel starts in."""

from __future__ import annotations

from common.checkout import from_repository, repository_root
from common.logs import process_rank
from tests_paths import REPO


def test_the_root_is_found_from_any_folder_inside_the_checkout():
    assert repository_root(REPO / "notebooks") == REPO == repository_root(REPO / "faina" / "serving")
    assert from_repository("results", REPO / "notebooks") == REPO / "results"
    assert from_repository("/elsewhere/results", REPO / "notebooks").as_posix() == "/elsewhere/results"


def test_outside_a_checkout_the_source_checkout_answers(tmp_path):
    assert repository_root(tmp_path) == REPO  # the checkout common/ was imported from


def test_a_ddp_replica_knows_its_rank(monkeypatch):
    for name in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert process_rank() == 0
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert process_rank() == 1
