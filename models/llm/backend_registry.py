"""The generation backends a saved file may name (``"backend": {"name": "vllm", ...}`` in a LoRA bundle).

Runs pick their backend from ``conf/llm/backend/*.yaml`` through Hydra; a saved bundle only names it, and
``models.llm.saved_llm`` maps the name here. ``targets`` are the ``_target_`` paths that earlier bundles held
(today's paths; ``common.renames`` translates the ``models.backends.*`` ones of older releases).
"""

from __future__ import annotations

from common.untrusted import Registry
from models.llm.backends import TransformersBackend
from models.llm.vllm_backend import VllmBackend

BACKEND_NAMES = Registry(
    "generation backend",
    {"transformers": TransformersBackend.load, "vllm": VllmBackend.load},
    targets={
        "models.llm.backends.TransformersBackend.load": "transformers",
        "models.llm.vllm_backend.VllmBackend.load": "vllm",
    },
)
