"""An exported model folder through ``transformers``' Auto classes, without remote code.

Importing this module registers the framework's config and model classes with ``AutoConfig`` and ``AutoModel``
under the model type ``fallacy-framework`` (the ``model_type`` of an exported ``config.json``)::

    import faina.serving.auto_classes  # noqa: F401  (or: from faina import FallacyModel)
    from transformers import AutoConfig, AutoModel

    config = AutoConfig.from_pretrained("my-model")   # FallacyModelConfig: task, labels, views, ...
    model = AutoModel.from_pretrained("my-model")     # FallacyModel (a folder, or a hub id once downloaded)
    model.tag(["post one", "post two"])               # FallacyTagger's TaggedPost list

Nothing is imported or executed from the folder: ``from_pretrained`` reads it with the framework's own checked
loader (``faina.serving.model_folder.load_model_folder``: the fixed list of architectures, safetensors only,
every config field checked), so ``trust_remote_code`` is never needed. There is no ``pipeline(...)`` task for
these models (overlapping spans of several annotator views fit none of transformers' pipelines), so the card
names none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel

from faina.serving.model_folder import MODEL_TYPE


class FallacyModelConfig(PretrainedConfig):
    """An exported folder's ``config.json`` (every field as an attribute: ``task``, ``labels``, ``views``, ...)."""

    model_type = MODEL_TYPE


class FallacyModel(PreTrainedModel):
    """A trained MVML / MVMD model of the framework (``.fallacy``) with its folder's metadata (``.meta``)."""

    config_class = FallacyModelConfig
    base_model_prefix = "fallacy"

    def __init__(self, config: FallacyModelConfig, fallacy=None, meta: dict | None = None):
        super().__init__(config)
        self.fallacy = fallacy
        self.meta = meta or {}

    def forward(self, **batch: Any):
        """The framework model's output on a batch of its features (decoded tags or label logits)."""
        return self.fallacy(batch)

    def tag(self, texts: list[str], batch_size: int = 32):
        """Tag raw posts (``faina.FallacyTagger`` on this model)."""
        from faina.serving.tagger import FallacyTagger

        return FallacyTagger(self.fallacy, self.meta, device=self.device, batch_size=batch_size)(texts)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, *args: Any, config=None, **kwargs: Any) -> FallacyModel:
        """Load a folder written by ``faina export`` (or download a hub repository holding one first)."""
        from faina.serving.model_folder import load_model_folder

        folder = _local_folder(str(pretrained_model_name_or_path), kwargs)
        fallacy, meta = load_model_folder(folder)
        if not isinstance(config, FallacyModelConfig):
            config = FallacyModelConfig.from_pretrained(folder)
        return cls(config, fallacy, meta).eval()


def _local_folder(name_or_path: str, kwargs: dict) -> Path:
    if Path(name_or_path).is_dir():
        return Path(name_or_path)
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(name_or_path, revision=kwargs.get("revision"), token=kwargs.get("token")))


def register_auto_classes() -> None:
    """Make ``AutoConfig`` / ``AutoModel`` know the model type ``fallacy-framework`` (idempotent)."""
    AutoConfig.register(MODEL_TYPE, FallacyModelConfig, exist_ok=True)
    AutoModel.register(FallacyModelConfig, FallacyModel, exist_ok=True)


register_auto_classes()
