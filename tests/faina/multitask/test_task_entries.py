"""``read_entries``: the entries of ``task=multi`` read, and each bad one refused with one message naming the entry and
the fix, before any model is built."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from common.errors import UserError
from faina.data import task_data, task_entries
from faina.data.entry_folds import follow_split, post_ids
from faina.data.folds import FoldSplit
from faina.data.task_entries import read_entries, target_entry
from faina.formats.any_file import read_any
from faina.formats.labels import LabelInventory
from faina.formats.tsv import post_corpus_from_spans
from helpers.configs import compose_train


@pytest.fixture
def entries(small_sample):
    """``task.entries`` of ``task=multi`` on the 60-post sample: span-f (target) and post-f of the same CoNLL file."""
    cfg = compose_train("task=multi")
    spec = OmegaConf.to_container(cfg.task.entries, resolve=True)
    for entry in spec.values():
        entry["data"]["train_path"] = str(small_sample / "sample.conll")
        entry["data"]["test_path"] = None
    return spec


def refused(spec) -> str:
    with pytest.raises(UserError) as caught:
        read_entries(spec)
    return str(caught.value)


def test_the_default_entries_are_span_f_and_post_f_of_one_file(entries, small_sample):
    read = read_entries(entries)
    assert [(e.name, e.level, e.grain, e.head, e.weight, e.target) for e in read] == [
        ("span_f", "span", "fine", "span_f", 1.0, True),
        ("post_f", "post", "fine", "post_f", 1.0, False),
    ]
    assert target_entry(read).name == "span_f" and read[0].corpus == read[1].corpus
    assert read[0].task == {
        "name": "span-f",
        "level": "span",
        "grain": "fine",
        "file_ext": "conll",
        "eval_task": "span-fine",
    }
    assert read[1].task["eval_task"] == "post-fine" and read[1].task["file_ext"] == "tsv"


def test_a_post_entry_given_a_conll_file_trains_on_the_labels_of_its_spans_read_once(
    entries, small_sample, monkeypatch
):
    calls = []
    real = task_data.read_level
    monkeypatch.setattr(task_data, "read_level", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    read = read_entries(entries)
    assert calls == [str(small_sample / "sample.conll")]  # one reading for both entries
    spans = read_any(small_sample / "sample.conll", LabelInventory.load("faina"), level="span")
    assert read[1].data.labelled.rows == post_corpus_from_spans(spans).rows


def test_no_entries(entries):
    assert "task=multi lists no task entries" in refused({})


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda s: s["post_f"].update(level="token"), "task.entries.post_f.level='token' is not a level"),
        (lambda s: s["post_f"].update(grain="medium"), "task.entries.post_f.grain='medium' is not a grain"),
        (
            lambda s: s["post_f"].update(weight=0),
            "task.entries.post_f.weight=0: a loss weight must be a number above 0",
        ),
        (lambda s: s["post_f"].update(weight=-1.5), "task.entries.post_f.weight=-1.5"),
        (lambda s: s["post_f"].update(weight="heavy"), "task.entries.post_f.weight='heavy'"),
        (lambda s: s["span_f"].update(target=False), "needs exactly one target entry; none is"),
        (lambda s: s["post_f"].update(target=True), "needs exactly one target entry; 2 are (span_f, post_f)"),
        (lambda s: s["post_f"].update(loss=2), "task.entries.post_f has unknown key(s): loss"),
        (lambda s: s["post_f"]["model"].update(name="mvmd"), "task.entries.post_f is a post-level entry and its model"),
        (
            lambda s: s["post_f"]["data"].update(train_path=None),
            "task.entries.post_f.data.train_path names no training file",
        ),
        (lambda s: s["post_f"]["data"].update(train_path="/nowhere/x.tsv"), "task entry 'post_f': data file not found"),
        (lambda s: s["post_f"].update(head="span_f"), "task entries 'span_f' and 'post_f' share the head 'span_f'"),
    ],
)
def test_a_bad_entry_is_one_message_naming_it_and_the_fix(entries, change, expected):
    change(entries)
    message = refused(entries)
    assert expected in message and "Fix:" in message


def test_an_unreadable_file_is_the_readers_message_said_of_the_entry(entries, tmp_path):
    broken = tmp_path / "broken.conll"
    broken.write_text("# post_id = 1\nnot a token line\n", encoding="utf-8")
    entries["post_f"]["data"]["train_path"] = str(broken)
    message = refused(entries)
    assert message.startswith(f"{broken}:") and "task entry 'post_f':" in message


def test_an_empty_file_is_refused(entries, tmp_path):
    empty = tmp_path / "empty.tsv"
    header = (
        (task_entries.Path(entries["span_f"]["data"]["train_path"]).parent / "sample.tsv").read_text().splitlines()[0]
    )
    empty.write_text(header + "\n", encoding="utf-8")
    entries["post_f"]["data"]["train_path"] = str(empty)
    message = refused(entries)
    assert "task entry 'post_f'" in message and "Fix:" in message


def test_a_label_outside_the_entrys_inventory_names_its_labels_option(entries, tmp_path, small_sample):
    inventory = tmp_path / "two.yaml"
    inventory.write_text("name: two\nfine:\n  Slogan: sl\n  Vagueness: va\ncoarse: []\n", encoding="utf-8")
    entries["post_f"]["data"]["labels"] = str(inventory)
    assert "task.entries.post_f.data.labels" in refused(entries)


def test_entries_sharing_a_head_must_agree_on_level_labels_and_views(entries, small_sample):
    second = copy.deepcopy(entries["post_f"])
    second["data"]["train_path"] = str(small_sample / "sample.tsv")
    second["target"] = False
    entries["post_tsv"] = second
    entries["post_tsv"]["head"] = "post_f"
    read = read_entries(entries)  # same level, labels and views: one head
    assert [e.head for e in read] == ["span_f", "post_f", "post_f"]
    entries["post_tsv"]["data"]["targets"] = "union"  # one view against two
    message = refused(entries)
    assert (
        "share the head 'post_f' but differ: post level, 20 labels, 2 view(s) against post level, 20 labels, 1"
        in message
    )


def test_posts_of_one_corpus_stay_in_the_same_part_of_every_fold(entries):
    span, post = read_entries(entries)
    ids = post_ids(span.data.gold_corpus)
    split = FoldSplit(0, tuple(range(0, 40)), tuple(range(40, 50)), tuple(range(50, 60)))
    followed = follow_split(split, ids, post_ids(post.data.gold_corpus), [[]] * 60, post.data.labels, 0.2, 1)
    assert followed == split  # the same posts in the same order: the same parts


def test_posts_of_another_corpus_train_in_every_fold_with_a_dev_part_of_their_own():
    split = FoldSplit(0, (0, 1, 2), (3,), (4,))
    labels = ["A", "B"]
    followed = follow_split(split, [], [f"x{i}" for i in range(10)], [["A"], ["B"]] * 5, labels, 0.2, 1)
    assert followed.test == () and len(followed.dev) == 2 and sorted(followed.train + followed.dev) == list(range(10))


@pytest.mark.parametrize(
    "override, message",
    [
        ("task.sampling.strategy=shuffled", "task.sampling.strategy='shuffled' is not a sampling strategy"),
        ("task.sampling.alpha=1.5", "task.sampling.alpha=1.5 must lie in [0, 1]"),
        ("task.sampling.auxiliary_epochs=-1", "task.sampling.auxiliary_epochs=-1 must be a whole number >= 0"),
        ("task.selection=best", "task.selection='best' is not a selection"),
    ],
)
def test_a_bad_sampling_or_selection_setting_is_one_message(override, message):
    from faina.training.run_entries import check_sampling

    with pytest.raises(UserError, match="Fix:") as caught:
        check_sampling(compose_train("task=multi", override))
    assert message in str(caught.value)


def test_sequential_sampling_that_leaves_the_target_no_epoch_is_one_message():
    from faina.training.run_entries import check_sampling

    cfg = compose_train(
        "task=multi", "task.sampling.strategy=sequential", "task.sampling.auxiliary_epochs=3", "trainer.max_epochs=3"
    )
    with pytest.raises(UserError, match="Fix: lower task.sampling.auxiliary_epochs below 3") as caught:
        check_sampling(cfg)
    assert "task.sampling.auxiliary_epochs=3 leaves the target no epoch of its own" in str(caught.value)
    cfg = compose_train(
        "task=multi", "task.sampling.strategy=sequential", "task.sampling.auxiliary_epochs=2", "trainer.max_epochs=3"
    )
    assert check_sampling(cfg)["auxiliary_epochs"] == 2


@pytest.mark.parametrize(
    "override, fix",
    [
        (
            "model.module.calibration.fallback=prior",
            "task.entries.span_f.model.module.calibration.fallback=prior "
            "task.entries.post_f.model.module.calibration.fallback=prior",
        ),
        (
            "+model.module.extra=1",
            "+task.entries.span_f.model.module.extra=1 +task.entries.post_f.model.module.extra=1",
        ),
        ("data.targets=soft", "task.entries.span_f.data.targets=soft task.entries.post_f.data.targets=soft"),
        ("~data.dir", "~task.entries.span_f.data.dir ~task.entries.post_f.data.dir"),
        ("model=mvml", "task.entries.<entry>.model.<key>=..."),
        ("data=hf", "task.entries.<entry>.data.<key>=..."),
    ],
)
def test_a_top_level_model_or_data_override_of_a_multi_task_run_is_refused_naming_the_entry_keys(override, fix):
    from faina.training.run_entries import check_entry_overrides

    with pytest.raises(UserError) as caught:
        check_entry_overrides(compose_train("task=multi"), ["task=multi", "seed=2", override])
    assert f"{override} changes nothing in a run of several task entries (task.entries: span_f, post_f)" in str(
        caught.value
    )
    assert fix in caught.value.fix


def test_overrides_the_run_reads_pass():
    from faina.training.run_entries import check_entry_overrides

    fine = ["task=multi", "data.name=custom", "task.entries.post_f.model.module.head_lr=0.5", "modelling=1"]
    assert check_entry_overrides(compose_train("task=multi"), fine) is None
    # a single-task run reads its top-level blocks
    single = ["task=span-f", "model.module.calibration.fallback=prior", "data.targets=soft", "data=hf"]
    assert check_entry_overrides(compose_train("task=span-f"), single) is None


EXPERIMENT_HEADER = "# @package _global_\ndefaults:\n  - override /task: multi\n  - _self_\n"


@pytest.mark.parametrize(
    "body, setting, fix",
    [
        (
            "model:\n  module:\n    head_lr: 0.5\n",
            "model.module.head_lr=0.5",
            "task.entries.span_f.model.module.head_lr=0.5 task.entries.post_f.model.module.head_lr=0.5",
        ),
        ("data:\n  targets: soft\n", "data.targets=soft", "task.entries.post_f.data.targets=soft"),
    ],
)
def test_an_experiment_file_setting_a_top_level_block_of_a_multi_task_run_is_refused_naming_the_file(
    tmp_path, body, setting, fix
):
    from faina.training.run_entries import check_entry_overrides

    experiment = tmp_path / "joint-lr.yaml"
    experiment.write_text(EXPERIMENT_HEADER + body)
    with pytest.raises(UserError) as caught:
        check_entry_overrides(compose_train("task=multi"), ["task=multi"], experiment)
    assert str(caught.value).startswith(f"{experiment} sets {setting}, which changes nothing in a run of several")
    assert fix in caught.value.fix


def test_what_an_experiment_file_sets_at_the_top_level_is_read_as_overrides(tmp_path):
    from faina.training.run_entries import experiment_block_settings

    experiment = tmp_path / "e.yaml"
    experiment.write_text(
        "# @package _global_\ndefaults:\n  - /model@task.entries.extra.model: mvmd\n  - override /model: mvml\n"
        "  - override /task: multi\n  - _self_\nname: x\ndata:\n  name: custom\nmodel:\n  module:\n"
        "    optimizer:\n      lr: 2e-5\n    loss_weights: {}\n"
    )
    # the entry's own block (/model@task.entries...) and the other groups are not top-level model or data settings
    assert experiment_block_settings(experiment) == [
        "model=mvml",
        "model.module.optimizer.lr=2e-05",
        "model.module.loss_weights={}",
        "data.name=custom",
    ]
    experiment.write_text("model:\n  module:\n    head_lr: 0.5\n")  # the group's own package: experiment.model
    assert experiment_block_settings(experiment) == []


def test_the_shipped_multi_task_experiments_pass_the_check():
    from faina.training.run_entries import check_entry_overrides

    conf = Path(__file__).resolve().parents[3] / "conf"
    checked = []
    for experiment in sorted((conf / "experiment").rglob("*.yaml")):
        name = experiment.relative_to(conf / "experiment").with_suffix("").as_posix()
        cfg = compose_train(f"experiment={name}")
        if cfg.task.get("entries") is not None:
            check_entry_overrides(cfg, [f"experiment={name}"], experiment)
            checked.append(name)
    assert "multi-two-corpora" in checked


def test_the_sampling_settings_pass_through_checked():
    from faina.training.run_entries import check_sampling

    cfg = compose_train("task=multi", "task.sampling.strategy=round-robin", "task.sampling.alpha=0")
    assert check_sampling(cfg) == {"strategy": "round-robin", "alpha": 0.0, "auxiliary_epochs": 1}


def test_an_entry_reads_its_own_context_and_a_wrong_one_is_said_of_the_entry(entries):
    entries["span_f"]["data"]["context"] = ["topic"]
    read = {entry.name: entry for entry in read_entries(entries)}
    assert read["span_f"].data.context == ("topic",) and read["post_f"].data.context == ()
    entries["post_f"]["data"]["context"] = ["mood"]
    message = refused(entries)
    assert "task.entries.post_f.data.context names 'mood', not a context field" in message
