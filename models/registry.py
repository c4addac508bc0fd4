"""The closed sets of model parts a saved file may name: architectures, optimisers, schedules (and encoders).

Training builds these from ``conf/`` through Hydra; a saved ``model.json`` or exported ``config.json`` only
names them (``"architecture": "MVMD"``, ``{"name": "adamw", "lr": 1e-4}``), and loaders look the names up here
(``common.untrusted.Registry``). ``targets`` are the Hydra paths that earlier releases wrote into model.json, so
their folders still load; any other path is refused, never imported.
"""

from __future__ import annotations

import torch

from common.untrusted import Registry
from models import schedules
from models.encoder import ENCODERS
from models.mvmd import MVMD
from models.mvml import MVML

__all__ = ["ARCHITECTURES", "ENCODERS", "OPTIMIZERS", "SCHEDULERS", "NO_SCHEDULER"]

ARCHITECTURES = Registry(
    "architecture", {"MVML": MVML, "MVMD": MVMD}, targets={"models.mvml.MVML": "MVML", "models.mvmd.MVMD": "MVMD"}
)

OPTIMIZERS = Registry(
    "optimizer",
    {"adamw": torch.optim.AdamW, "adam": torch.optim.Adam, "sgd": torch.optim.SGD},
    targets={
        "torch.optim.AdamW": "adamw",
        "torch.optim.adamw.AdamW": "adamw",
        "torch.optim.Adam": "adam",
        "torch.optim.adam.Adam": "adam",
        "torch.optim.SGD": "sgd",
        "torch.optim.sgd.SGD": "sgd",
    },
)

NO_SCHEDULER = "none"
SCHEDULERS = Registry(
    "scheduler",
    {"slanted_triangular": schedules.slanted_triangular, "constant": schedules.constant, NO_SCHEDULER: None},
    targets={"models.schedules.slanted_triangular": "slanted_triangular", "models.schedules.constant": "constant"},
)
