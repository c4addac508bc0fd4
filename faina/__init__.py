"""Faina: formats, tasks and tools for span- and post-level fallacy detection.

``from faina import FallacyTagger`` (and ``FallacyModel``, transformers' face of an exported folder) is imported lazily, so ``faina.formats.conll`` and the other light modules do
not pull in torch.
"""


def __getattr__(name: str):
    if name == "FallacyTagger":
        from faina.serving.tagger import FallacyTagger

        return FallacyTagger
    if name == "FallacyModel":  # importing it registers the framework with transformers' AutoConfig / AutoModel
        from faina.serving.auto_classes import FallacyModel

        return FallacyModel
    raise AttributeError(f"module 'faina' has no attribute {name!r}")
