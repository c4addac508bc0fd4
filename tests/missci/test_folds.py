import pytest

from common.errors import UserError
from missci.data import load_split
from missci.folds import argument_fold, argument_folds


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
