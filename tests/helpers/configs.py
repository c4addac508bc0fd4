"""``conf/train.yaml`` composed as ``python train.py OVERRIDES...`` would compose it: the one place tests build a
configuration (importable as ``helpers.configs``)."""

from __future__ import annotations

from tests_paths import CONF


def compose_train(*overrides: str, with_hydra: bool = False):
    """The composed config (``with_hydra``: with the ``hydra`` node, what a launcher reads)."""
    from hydra import compose, initialize_config_dir

    from train import register_config_resolvers

    register_config_resolvers()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        return compose(config_name="train", overrides=list(overrides), return_hydra_config=with_hydra)
