"""Training examples: the zero-shot prompts, one per interchangeable fallacy, answers the shared parser reads."""

from missci.dataset.reader import load_split
from missci.lora.sft_data import classification_examples, reconstruction_examples
from missci.prompting.answer_parser import parse_output
from missci.prompting.prompts import PromptOptions, classification_prompt, reconstruction_prompt


def test_reconstruction_targets_cover_every_interchangeable_fallacy(data_dir):
    options = PromptOptions(definitions=True, logical_forms=True)
    for split in ("dev", "test"):
        arguments = load_split(split, data_dir)
        examples = reconstruction_examples(arguments, options)
        assert len(examples) == sum(len(f.interchangeable) for a in arguments for f in a.fallacies)
        # the shared parser strips quotes around a premise (one dev premise starts with a quoted phrase)
        gold = [
            (alt.fallacy_class, " ".join(alt.premise.split()).strip('"“”'))
            for a in arguments
            for f in a.fallacies
            for alt in f.interchangeable
        ]
        assert [parse_output(e.answer).pairs for e in examples] == [[pair] for pair in gold]
    first = arguments[0]
    assert examples[0].prompt == reconstruction_prompt(first, first.fallacies[0], options)


def test_classification_targets_are_the_gold_classes(data_dir):
    arguments = load_split("dev", data_dir)
    examples = classification_examples(arguments, PromptOptions())
    alts = [(a, f, alt) for a in arguments for f in a.fallacies for alt in f.interchangeable]
    assert len(examples) == len(alts) > len(arguments)  # some R_i have several interchangeable fallacies
    assert [parse_output(e.answer).classes for e in examples] == [[alt.fallacy_class] for _, _, alt in alts]
    a, f, alt = alts[0]
    assert examples[0].prompt == classification_prompt(a, f, alt.premise, PromptOptions())
