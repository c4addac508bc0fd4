"""What every Missci zero-shot runner takes and sets up alike: the model, the data subset, the prompt and
generation settings, and the output folder (reconstruction and gold-premise classification differ only after)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from missci.dataset.reader import Argument, load_split
from missci.dataset.selection import select
from missci.prompting.prompts import PromptOptions
from models.llm.backends import GenerationBackend, build_backend
from models.llm.generation import GenerationSettings


@dataclass(frozen=True)
class PromptingRun:
    """The arguments of a zero-shot run, as ``run_zero_shot`` / ``classify_split`` take them by keyword."""

    llm: dict[str, Any]
    split: str = "dev"
    data_dir: str | None = None
    prompt: dict[str, Any] | None = None
    generation: dict[str, Any] | None = None
    output_dir: str | Path = "outputs/missci"
    max_arguments: int | None = None
    max_fallacies: int | None = None

    def set_up(self) -> tuple[list[Argument], PromptOptions, GenerationSettings, GenerationBackend]:
        """The chosen arguments of the split, the prompt options, the generation settings and the model, built in
        that order (so a bad data folder or option is reported before a model is loaded)."""
        arguments = select(load_split(self.split, self.data_dir), self.max_arguments, self.max_fallacies)
        options = PromptOptions(**(self.prompt or {}))
        settings = GenerationSettings(**(self.generation or {}))
        return arguments, options, settings, build_backend(self.llm)

    @property
    def out(self) -> Path:
        return Path(self.output_dir)

    @property
    def model_name(self) -> str | None:
        """The name the metrics file records for the model."""
        return self.llm.get("name", self.llm.get("name_or_path"))


def run_from_config(cfg) -> tuple[dict, PromptingRun]:
    """``(task, run)``: the resolved task block and the run a composed config describes (model, split, data,
    prompt, generation with the run's seed, output, subset)."""
    from omegaconf import OmegaConf

    task = OmegaConf.to_container(cfg.task, resolve=True)
    generation = dict(task.get("generation") or {})
    if cfg.get("seed") is not None:
        generation["seed"] = int(cfg.seed)
    run = PromptingRun(
        llm=OmegaConf.to_container(cfg.llm, resolve=True),
        split=task["split"],
        data_dir=task.get("data_dir"),
        prompt=task.get("prompt"),
        generation=generation,
        output_dir=task["output_dir"],
        max_arguments=task.get("max_arguments"),
        max_fallacies=task.get("max_fallacies"),
    )
    return task, run
