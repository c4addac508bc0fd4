"""Every selectable configuration resolved to plain data, for comparing ``conf/`` before and after a refactoring.

``python tests/runner/config_snapshot.py OUT.json`` (run from a checkout's root) writes the snapshot that
``test_config_snapshot.py`` compares today's ``conf/`` with. Machine-specific values (the checkout's and the
virtual environment's paths, the feature cache in the user's cache folder, Hydra's own node) are replaced or dropped, so a snapshot is the same on any machine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TASKS = ("post-c", "post-f", "span-c", "span-f", "missci-gen", "missci-cls")
EXPERIMENTS = (
    "demo",
    "best-span-f",
    *(f"faina/{t}-{e}" for t in ("post-c", "post-f", "span-c", "span-f") for e in ("alberto", "umberto")),
)


def selections() -> dict[str, list[str]]:
    chosen = {f"task={t}": [f"task={t}"] for t in TASKS}
    chosen.update({f"task={t} mode=zero-shot": [f"task={t}", "mode=zero-shot"] for t in TASKS})
    chosen.update({f"experiment={e}": [f"experiment={e}"] for e in EXPERIMENTS})
    return chosen


def normalise(node, repo: str, prefixes: tuple[str, ...]):
    if isinstance(node, dict):
        return {k: normalise(v, repo, prefixes) for k, v in node.items()}
    if isinstance(node, list):
        return [normalise(v, repo, prefixes) for v in node]
    if isinstance(node, str):
        for prefix in prefixes:
            if prefix and prefix in node:
                return node.replace(prefix, "<venv>")
        return node.replace(repo, "<repo>")
    return node


def snapshot() -> dict[str, dict]:
    sys.path.insert(0, str(REPO))
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from train import register_config_resolvers

    register_config_resolvers()
    site = [p for p in sys.path if p.endswith("site-packages")]
    out = {}
    with initialize_config_dir(version_base="1.3", config_dir=str(REPO / "conf")):
        for name, overrides in selections().items():
            cfg = compose(config_name="train", overrides=overrides)
            if "missci" in name:  # Missci runs drop the Faina data group, whose paths name Faina task keys
                OmegaConf.set_struct(cfg, False)
                del cfg["data"]
            container = OmegaConf.to_container(cfg, resolve=True)
            container.pop("hydra", None)
            container["paths"]["feature_cache"] = "<feature-cache>"  # in the user's cache folder: machine-specific
            out[name] = normalise(container, str(REPO), tuple(site))
    return out


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(json.dumps(snapshot(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
