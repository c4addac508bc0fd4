"""Registering OmegaConf resolvers, once per process, whoever supplies them.

The floor knows no task: the resolvers that name the project's data or models (``${sample_data:...}``,
``${offline_encoder:}``) are supplied by the entry point (``train.config_resolvers``); this module only
registers what it is given, skipping names that are registered already (tests compose configs many times).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from omegaconf import OmegaConf


def register_resolvers(resolvers: Mapping[str, Callable[..., Any]]) -> None:
    for name, fn in resolvers.items():
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)
