import pytest

from common.errors import UserError
from missci.dataset.folds import argument_fold, argument_folds
from missci.dataset.reader import load_split


def test_folds_partition_arguments_without_leakage(data_dir):
    arguments = load_split("test", data_dir)
    folds = argument_folds(arguments, 5, seed=3)
    seen = []
    for fold in folds:
        train_fallacies = {f.id for a in fold.train for f in a.fallacies}
        test_fallacies = {f.id for a in fold.test for f in a.fallacies}
        assert not train_fallacies & test_fallacies
        assert not {a.id for a in fold.train} & {a.id for a in fold.test}
        assert len(fold.train) + len(fold.test) == len(arguments)
        seen += [a.id for a in fold.test]
    assert sorted(seen) == sorted(a.id for a in arguments)
    sizes = [sum(len(a.fallacies) for a in f.test) for f in folds]
    assert max(sizes) - min(sizes) <= 6  # balanced by number of R_i
    assert [a.id for a in argument_fold(arguments, 2, 5, seed=3).test] == [a.id for a in folds[2].test]
    assert [a.id for a in argument_folds(arguments, 5, seed=4)[0].test] != [a.id for a in folds[0].test]


def test_bad_fold_settings(data_dir):
    arguments = load_split("dev", data_dir)
    with pytest.raises(UserError):
        argument_folds(arguments, 1)
    with pytest.raises(UserError):
        argument_fold(arguments, 5, 5)


def _hand_made_arguments() -> list:
    """14 arguments over 10 claims: one claim in 3 arguments, two in 2 (one written with other case and
    spacing), the rest alone; 1 to 4 fallacies each."""
    from missci.dataset.reader import Argument, Fallacy, InterchangeableFallacy

    claims = [
        "Masks cause hypoxia.",
        "Masks cause hypoxia.",
        "masks  cause HYPOXIA.",
        "Vitamin D prevents COVID-19.",
        "Vitamin D prevents COVID-19.",
        "Ivermectin cures COVID-19.",
        "Ivermectin cures COVID-19.",
        "5G spreads viruses.",
        "Garlic protects from flu.",
        "Vaccines alter DNA.",
        "Coffee prevents cancer.",
        "Zinc shortens colds.",
        "Sunlight kills the virus.",
        "Onions absorb germs.",
    ]
    arguments = []
    for number, claim in enumerate(claims):
        fallacies = tuple(
            Fallacy(f"a{number}:f{j}", "context", "", (InterchangeableFallacy(f"a{number}:f{j}:1", "p", "Ambiguity"),))
            for j in range(1 + number % 4)
        )
        arguments.append(Argument(f"a{number}", claim, "p0", (), fallacies, "u", {}))
    return arguments


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_claim_folds_keep_every_claim_and_argument_on_one_side(seed):
    from missci.dataset.folds import claim_key, grouped_folds

    arguments = _hand_made_arguments()
    folds = grouped_folds(arguments, 4, seed=seed)
    tested = []
    for fold in folds:
        train_claims, test_claims = {claim_key(a) for a in fold.train}, {claim_key(a) for a in fold.test}
        assert not train_claims & test_claims
        assert not {a.id for a in fold.train} & {a.id for a in fold.test}
        assert len(fold.train) + len(fold.test) == len(arguments)
        tested += [a.id for a in fold.test]
    assert sorted(tested) == sorted(a.id for a in arguments)  # each argument tested exactly once
    # the three spellings of the hypoxia claim are one group
    assert len({f.index for f in folds for a in f.test if a.id in {"a0", "a1", "a2"}}) == 1
    sizes = [sum(len(a.fallacies) for a in f.test) for f in folds]
    assert max(sizes) - min(sizes) <= 7  # within one group (the hypoxia claim holds 1+2+3 R_i)
    again = grouped_folds(list(reversed(arguments)), 4, seed=seed)  # deterministic, whatever the input order
    assert [sorted(a.id for a in f.test) for f in again] == [sorted(a.id for a in f.test) for f in folds]


def test_argument_grouping_keeps_the_earlier_folds_and_claims_can_leak_there():
    from missci.dataset.folds import claim_key, grouped_folds

    arguments = _hand_made_arguments()
    by_argument = grouped_folds(arguments, 4, seed=3, group_by="argument")
    assert [[a.id for a in f.test] for f in by_argument] == [
        [a.id for a in f.test] for f in argument_folds(arguments, 4, seed=3)
    ]
    assert any({claim_key(a) for a in f.train} & {claim_key(a) for a in f.test} for f in by_argument)
    assert [[a.id for a in f.test] for f in grouped_folds(arguments, 4, seed=3)] != [
        [a.id for a in f.test] for f in grouped_folds(arguments, 4, seed=4)
    ]
    with pytest.raises(UserError, match="group_by"):
        grouped_folds(arguments, 4, group_by="study")
    with pytest.raises(UserError, match="claim groups"):
        grouped_folds(arguments, 11)  # only 10 claims
