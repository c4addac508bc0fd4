"""Module paths of earlier releases and where the code lives now, for files those releases saved.

Results folders (``experiment.json``, ``config.yaml``) and LoRA bundles written before the packages were split
into rooms name Hydra ``_target_`` objects under the old flat modules (``faina.experiment.run``). A rerun that
finishes such an experiment, or a loader of such a bundle, translates the names through this table before
comparing or using them. It is a table of strings, nothing is imported from it.
"""

from __future__ import annotations

from typing import Any

MOVED_MODULES = {
    "faina.agreement": "faina.analysis.agreement",
    "faina.conll": "faina.formats.conll",
    "faina.datamodule": "faina.data.datamodule",
    "faina.derive": "faina.data.coarse",
    "faina.ensemble": "faina.serving.loading",
    "faina.experiment": "faina.training.cross_validation",
    "faina.features": "faina.data.features",
    "faina.files": "faina.formats.any_file",
    "faina.folds": "faina.data.folds",
    "faina.hf": "faina.data.hf_datasets",
    "faina.labels": "faina.formats.labels",
    "faina.levels": "faina.data.levels",
    "faina.model_card": "faina.serving.model_card",
    "faina.model_folder": "faina.serving.model_folder",
    "faina.model_io": "faina.serving.fold_model",
    "faina.records": "faina.formats.records",
    "faina.results": "faina.training.results_table",
    "faina.sample_lexicon": "faina.data.synthetic_lexicon",
    "faina.stats_plots": "faina.analysis.stats_plots",
    "faina.tag_page": "faina.serving.tag_page",
    "faina.tagger": "faina.serving.tagger",
    "faina.targets": "faina.data.targets",
    "faina.task_data": "faina.data.task_data",
    "faina.textfile": "faina.formats.text_file",
    "faina.tokenization": "faina.formats.tokenization",
    "faina.tsv": "faina.formats.tsv",
    "faina.training.multitask": "faina.training.cross_validation",
    "faina.tuning": "faina.training.decision_tuning",
    "missci.classes": "missci.dataset.classes",
    "missci.classify_gold": "missci.zero_shot.classify_gold",
    "missci.data": "missci.dataset.reader",
    "missci.error_analysis": "missci.analysis.error_analysis",
    "missci.finetune": "missci.lora.runner",
    "missci.folds": "missci.dataset.folds",
    "missci.paper": "missci.analysis.paper_figures",
    "missci.parser": "missci.prompting.answer_parser",
    "missci.predictions": "missci.dataset.prediction_file",
    "missci.prompts": "missci.prompting.prompts",
    "missci.sft_data": "missci.lora.sft_data",
    "missci.zero_shot": "missci.zero_shot.reconstruction",
    "models.backends": "models.llm.backends",
    "models.converted_cache": "models.llm.converted_cache",
    "models.generation": "models.llm.generation",
    "models.llm": "models.llm.loading",
    "models.lora_lm": "models.llm.lora_lm",
    "models.vllm_backend": "models.llm.vllm_backend",
}

# objects renamed in their new module (after the module translation above)
RENAMED_OBJECTS = {
    "missci.lora.runner.run_classification": "missci.lora.runner.run_lora_classification",
    "missci.lora.runner.run_reconstruction": "missci.lora.runner.run_lora_reconstruction",
}


def current_name(dotted: str) -> str:
    """``dotted`` (a module or ``module.attribute`` path) under today's module layout."""
    if any(dotted == new or dotted.startswith(new + ".") for new in MOVED_MODULES.values()):
        return RENAMED_OBJECTS.get(dotted, dotted)  # already today's name (models.llm became a package)
    for old in sorted(MOVED_MODULES, key=len, reverse=True):
        if dotted == old or dotted.startswith(old + "."):
            new = MOVED_MODULES[old] + dotted[len(old) :]
            return RENAMED_OBJECTS.get(new, new)
    return RENAMED_OBJECTS.get(dotted, dotted)


def with_current_targets(node: Any) -> Any:
    """A copy of a config container with every ``_target_`` string translated by ``current_name``."""
    if isinstance(node, dict):
        return {
            key: current_name(value) if key == "_target_" and isinstance(value, str) else with_current_targets(value)
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [with_current_targets(item) for item in node]
    return node
