"""Zero-shot LLM baselines for the Faina tasks (prompts, answer parser, output audit, Hydra runner)."""

from faina.zero_shot.runner import run

__all__ = ["run"]
