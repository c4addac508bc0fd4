"""The helpers of ``common.untrusted`` that the saved-file readers share: a mapping or one message, and an earlier
release's Hydra partial translated to a registry name (never imported)."""

from __future__ import annotations

import pytest

from common.errors import UserError
from common.untrusted import Registry, require_mapping

REGISTRY = Registry("optimizer", {"adamw": object()}, targets={"torch.optim.AdamW": "adamw"})


def test_require_mapping_gives_the_mapping_back_or_names_the_field():
    block = {"a": 1}
    assert require_mapping(block, "model", "m.json", "fix it") is block
    with pytest.raises(UserError, match="model must be a mapping, not list") as info:
        require_mapping([1], "model", "m.json", "fix it")
    assert info.value.path == "m.json" and info.value.fix == "fix it"


def test_a_known_partial_becomes_its_name_and_arguments():
    node = {"_target_": "torch.optim.AdamW", "_partial_": True, "lr": 0.1}
    assert REGISTRY.named_partial(node, "m.json", "model.optimizer") == {"name": "adamw", "lr": 0.1}
    assert "_target_" in node  # the file's data is not changed


@pytest.mark.parametrize(
    "node, message",
    [
        ({"_target_": "os.system", "_partial_": True}, "model.optimizer._target_ is 'os.system'"),
        ({"_target_": "torch.optim.AdamW", "_partial_": False}, r"model.optimizer._partial_ must be true"),
    ],
)
def test_anything_else_is_refused(node, message):
    with pytest.raises(UserError, match=message):
        REGISTRY.named_partial(node, "m.json", "model.optimizer")
