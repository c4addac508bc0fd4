"""Faina: formats, tasks and tools for span- and post-level fallacy detection.

``from faina import FallacyTagger`` is imported lazily, so ``faina.formats.conll`` and the other light modules do
not pull in torch.
"""


def __getattr__(name: str):
    if name == "FallacyTagger":
        from faina.serving.tagger import FallacyTagger

        return FallacyTagger
    raise AttributeError(f"module 'faina' has no attribute {name!r}")
