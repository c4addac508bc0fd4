"""What a Hydra job was started with: the command line's overrides (in a sweep the values of its own trial), and
the experiment file it composed.

Hydra keeps both in its job state (``HydraConfig``), not in the job's config; a config composed without
``@hydra.main`` (the tests' ``compose``) has none, so these return an empty list and ``None`` there.
"""

from __future__ import annotations

from pathlib import Path


def job_overrides() -> list[str]:
    """``key=value`` strings as Hydra parsed them for this job (empty outside a Hydra job)."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return []
    return list(HydraConfig.get().overrides.task)


def override_key(override: str) -> str:
    """The config path an override sets: ``+model.x=1``, ``++model.x=1`` and ``~model.x`` all name ``model.x``."""
    return override.split("=", 1)[0].lstrip("+~").strip()


def experiment_file() -> Path | None:
    """The file of the experiment group option this job composed (``experiment=<name>``): the first
    ``<source>/experiment/<name>.yaml`` of Hydra's file config sources. ``None`` outside a Hydra job, without an
    experiment, or when it comes from a package source (read where it is checked, as data)."""
    from hydra.core.hydra_config import HydraConfig

    if not HydraConfig.initialized():
        return None
    runtime = HydraConfig.get().runtime
    name = runtime.choices.get("experiment")
    if not name:
        return None
    for source in runtime.config_sources:
        if source.schema == "file":
            path = Path(source.path) / "experiment" / f"{name}.yaml"
            if path.is_file():
                return path
    return None
