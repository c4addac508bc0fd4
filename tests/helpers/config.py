"""Composing the project's training config in a test (importable as ``helpers.config``): ``conf/train.yaml`` with
overrides, its resolvers registered, exactly as ``train.py`` composes it on the command line."""

from __future__ import annotations

from collections.abc import Sequence

from tests_paths import CONF


def compose_train(overrides: Sequence[str]):
    """The composed (unresolved) ``DictConfig`` of ``train.yaml`` with ``overrides``."""
    from hydra import compose, initialize_config_dir

    from train import register_config_resolvers

    register_config_resolvers()
    with initialize_config_dir(version_base="1.3", config_dir=str(CONF)):
        return compose(config_name="train", overrides=list(overrides))
