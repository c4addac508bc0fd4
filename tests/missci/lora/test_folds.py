"""Fold leakage: whole arguments per fold, each predicted once, training data never holds a test argument."""

from omegaconf import OmegaConf

from missci.dataset.reader import load_split
from missci.lora.runner import fold_plans
from missci.lora.sft_data import reconstruction_examples
from missci.prompting.prompts import PromptOptions


def test_kfold_predicts_every_argument_once_with_no_leak(data_dir):
    plans = fold_plans(OmegaConf.create({"name": "kfold", "num_folds": 5}), seed=42, data_dir=str(data_dir))
    all_ids = [a.id for split in ("dev", "test") for a in load_split(split, data_dir)]
    assert len(plans) == 5 and len(set(all_ids)) == len(all_ids) > 5
    tested = [a.id for plan in plans for a in plan.test]
    assert sorted(tested) == sorted(all_ids)  # each argument predicted exactly once
    for plan in plans:
        train_ids, test_ids = {a.id for a in plan.train}, {a.id for a in plan.test}
        assert not train_ids & test_ids and len(train_ids | test_ids) == len(all_ids)
        trained_fallacies = {e.fallacy_id for e in reconstruction_examples(plan.train, PromptOptions())}
        assert not trained_fallacies & {f.id for a in plan.test for f in a.fallacies}


def test_folds_are_deterministic_and_seeded(data_dir):
    cv = OmegaConf.create({"name": "kfold", "num_folds": 5})
    first = [[a.id for a in p.test] for p in fold_plans(cv, 1, str(data_dir))]
    assert first == [[a.id for a in p.test] for p in fold_plans(cv, 1, str(data_dir))]
    assert first != [[a.id for a in p.test] for p in fold_plans(cv, 2, str(data_dir))]


def test_official_trains_on_dev_and_tests_on_test(data_dir):
    (plan,) = fold_plans(OmegaConf.create({"name": "official", "num_folds": 1}), 42, str(data_dir))
    assert [a.id for a in plan.train] == [a.id for a in load_split("dev", data_dir)]
    assert [a.id for a in plan.test] == [a.id for a in load_split("test", data_dir)]


def test_default_folds_keep_claims_together_on_the_real_data(data_dir):
    from missci.dataset.folds import claim_key
    from missci.dataset.selection import select

    plans = fold_plans(OmegaConf.create({"name": "kfold", "num_folds": 5, "group_by": "claim"}), 42, str(data_dir))
    for plan in plans:
        assert not {claim_key(a) for a in plan.train} & {claim_key(a) for a in plan.test}
    sizes = [sum(len(a.fallacies) for a in p.test) for p in plans]
    assert max(sizes) - min(sizes) <= 8
    # a reduced run predicts the first R_i of the test split, whichever fold holds them
    reduced = fold_plans(OmegaConf.create({"name": "kfold", "num_folds": 5}), 42, str(data_dir), max_fallacies=20)
    predicted = {f.id for p in reduced for a in p.predict for f in a.fallacies}
    assert predicted == {f.id for a in select(load_split("test", data_dir), None, 20) for f in a.fallacies}
    assert all({a.id for a in p.predict} <= {a.id for a in p.test} for p in reduced)
