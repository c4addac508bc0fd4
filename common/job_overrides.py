"""The overrides a Hydra job was started with: the command line's, and in a sweep the values of its own trial.

Hydra keeps them in its job state (``HydraConfig``), not in the job's config; a config composed without
``@hydra.main`` (the tests' ``compose``) has none, so this returns an empty list there.
"""

from __future__ import annotations


def job_overrides() -> list[str]:
    """``key=value`` strings as Hydra parsed them for this job (empty outside a Hydra job)."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return []
    return list(HydraConfig.get().overrides.task)


def override_key(override: str) -> str:
    """The config path an override sets: ``+model.x=1``, ``++model.x=1`` and ``~model.x`` all name ``model.x``."""
    return override.split("=", 1)[0].lstrip("+~").strip()
