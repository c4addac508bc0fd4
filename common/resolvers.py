"""OmegaConf resolvers the configs use (registered once by train.py and by tests that compose configs)."""
from __future__ import annotations

from omegaconf import OmegaConf


def _sample_data(name: str) -> str:
    from faina.sample import default_sample_dir

    return str(default_sample_dir() / name)


def _offline_encoder() -> str:
    from models.encoder import offline_encoder_path

    return str(offline_encoder_path())


def _targets_suffix(targets: str) -> str:
    """``""`` for the paper's per-view targets, ``"-union"`` etc. otherwise (so each target has its folder)."""
    return "" if targets in (None, "views") else f"-{targets}"


def register_resolvers() -> None:
    for name, fn in {"sample_data": _sample_data, "offline_encoder": _offline_encoder,
                     "targets_suffix": _targets_suffix}.items():
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, fn)
