"""Files saved before the restructuring name old module paths; reruns and loaders translate them."""

from __future__ import annotations

import importlib
import json

import pytest
from omegaconf import OmegaConf

from common.errors import UserError
from common.experiments import experiment_identity, guard_same_experiment
from common.renames import MOVED_MODULES, RENAMED_OBJECTS, current_name, with_current_targets


@pytest.mark.parametrize(
    "old, new",
    [
        ("faina.experiment.run", "faina.training.cross_validation.run"),
        ("missci.zero_shot.run", "missci.zero_shot.reconstruction.run"),
        ("missci.zero_shot.reconstruction.run", "missci.zero_shot.reconstruction.run"),
        ("models.backends.TransformersBackend.load", "models.llm.backends.TransformersBackend.load"),
        ("missci.finetune.run_classification", "missci.lora.runner.run_lora_classification"),
        ("faina.hf.load_hf_task_data", "faina.data.hf_datasets.load_hf_task_data"),
        ("torch.optim.AdamW", "torch.optim.AdamW"),
        ("models.mvmd.MVMD", "models.mvmd.MVMD"),
        ("models.llm.backends.TransformersBackend.load", "models.llm.backends.TransformersBackend.load"),
        ("models.llm.load_causal_lm", "models.llm.loading.load_causal_lm"),
    ],
)
def test_old_names_translate_to_todays(old, new):
    assert current_name(old) == new


def test_every_new_module_of_the_table_exists():
    for new in set(MOVED_MODULES.values()):
        importlib.import_module(new)
    for new in RENAMED_OBJECTS.values():
        module, _, name = new.rpartition(".")
        assert hasattr(importlib.import_module(module), name)


def test_targets_are_translated_at_any_depth():
    saved = {
        "task": {"runners": {"finetune": {"_target_": "faina.experiment.run"}}},
        "items": [{"_target_": "models.llm.load_causal_lm", "name": "faina.experiment.run"}],
    }
    assert with_current_targets(saved) == {
        "task": {"runners": {"finetune": {"_target_": "faina.training.cross_validation.run"}}},
        "items": [{"_target_": "models.llm.loading.load_causal_lm", "name": "faina.experiment.run"}],
    }


def test_rerun_of_an_experiment_saved_under_old_module_paths_is_the_same_experiment(tmp_path):
    cfg = OmegaConf.create(
        {
            "task": {"name": "span-f", "runners": {"finetune": {"_target_": "faina.training.cross_validation.run"}}},
            "seed": 1,
        }
    )
    old = experiment_identity(cfg)
    old["task"]["runners"]["finetune"]["_target_"] = "faina.experiment.run"
    (tmp_path / "experiment.json").write_text(json.dumps(old), encoding="utf-8")
    guard_same_experiment(cfg, tmp_path)  # no error: only the code moved
    changed = OmegaConf.merge(cfg, {"seed": 2})
    with pytest.raises(UserError, match="differs in: seed"):
        guard_same_experiment(changed, tmp_path)
