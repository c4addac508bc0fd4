"""faina.data.hf_datasets: DatasetDict round trips, features cached by fingerprint, and data=hf training on a saved dataset."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import torch

from common.errors import UserError
from faina.data.feature_cache import encode_cached
from faina.data.hf_datasets import from_dataset_dict, load_hf_task_data, to_dataset_dict
from faina.data.levels import LEVELS
from faina.formats.conll import read_conll
from faina.formats.labels import LabelInventory
from faina.formats.tsv import read_post_tsv
from faina.serving.fold_model import load_tokenizer
from train import run

NAMES = ["O", "B-Claim", "I-Claim", "B-Insult", "I-Insult"]


def test_faina_corpora_round_trip_through_a_dataset_dict(small_sample):
    inventory = LabelInventory.load()
    span = read_conll(small_sample / "sample.conll", inventory)
    unlabelled = read_conll(small_sample / "sample-unlabelled.conll", inventory)
    posts = read_post_tsv(small_sample / "sample.tsv", inventory)
    dataset_dict = to_dataset_dict(span, unlabelled)
    assert set(dataset_dict) == {"train", "test"} and len(dataset_dict["train"]) == 60
    assert dataset_dict["train"].column_names == [
        "post_id",
        "post_date",
        "post_topic_keywords",
        "post_text",
        "tokens",
        "tags_a1",
        "tags_a2",
    ]
    back = from_dataset_dict(dataset_dict, inventory)
    assert back["train"].posts == span.posts and back["test"].posts == unlabelled.posts
    assert any("|" in cell for row in dataset_dict["train"]["tags_a1"] for cell in row)  # overlapping spans kept
    assert from_dataset_dict(to_dataset_dict(posts), inventory)["train"].rows == posts.rows


@pytest.mark.parametrize("level, name", [("span", "sample.conll"), ("post", "sample.tsv")])
def test_cached_features_equal_the_direct_encoding_and_are_reused(small_sample, tiny_encoder, tmp_path, level, name):
    inventory = LabelInventory.load()
    corpus = (read_conll if level == "span" else read_post_tsv)(small_sample / name, inventory)
    tokenizer = load_tokenizer({"name_or_path": tiny_encoder})
    labels = list(inventory.labels_of("fine"))
    direct = LEVELS[level].encode(corpus, tokenizer, labels, 2)
    first, note1 = encode_cached(corpus, level, tokenizer, labels, 2, tmp_path)
    second, note2 = encode_cached(corpus, level, tokenizer, labels, 2, tmp_path)
    assert (note1["cached"], note2["cached"]) == (False, True) and note1["file"] == note2["file"]
    key = "tags" if level == "span" else "labels"
    for a, b in zip(direct, second):
        assert (a["input_ids"], a["word_starts"], a["post_index"]) == (
            b["input_ids"],
            b["word_starts"],
            b["post_index"],
        )
        assert torch.equal(a[key], b[key]) and a[key].dtype == b[key].dtype
    # another setting (here: one view) -> another fingerprint, another file
    _, note3 = encode_cached(corpus, level, tokenizer, labels, 1, tmp_path)
    assert note3["file"] != note1["file"] and not note3["cached"]


def _save_dataset(folder: Path) -> Path:
    """24 posts, two views: ClassLabel tags (like CoNLL-2003) and plain tag strings, plus a non-label column."""
    import random

    from datasets import ClassLabel, Dataset, DatasetDict, Features, Sequence, Value

    rng = random.Random(0)
    words = "i soliti politici ci rubano tutto è una vergogna il vaccino sicuro lo studio dice che".split()
    rows = {"tokens": [], "view_one": [], "view_two": [], "lang": []}
    for _ in range(24):
        n = rng.randint(4, 12)
        tags = ["O"] * n
        start, label = rng.randrange(n - 2), rng.choice(["Claim", "Insult"])
        tags[start], tags[start + 1] = f"B-{label}", f"I-{label}"
        rows["tokens"].append([rng.choice(words) for _ in range(n)])
        rows["view_one"].append([NAMES.index(t) for t in tags])
        rows["view_two"].append(tags)
        rows["lang"].append("it")
    features = Features(
        {
            "tokens": Sequence(Value("string")),
            "view_one": Sequence(ClassLabel(names=NAMES)),
            "view_two": Sequence(Value("string")),
            "lang": Value("string"),
        }
    )
    dataset = Dataset.from_dict(rows, features=features)
    DatasetDict({"train": dataset, "test": dataset.select(range(6))}).save_to_disk(str(folder))
    return folder


@pytest.mark.e2e
def test_data_hf_trains_on_a_saved_dataset_and_reuses_its_features(make_cfg, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    folder = _save_dataset(tmp_path / "claims")
    data = load_hf_task_data(str(folder), "span", "fine")
    assert data.labels == ("Claim", "Insult") and data.num_views == 2 and len(data.labelled) == 24
    assert all(len(post.spans[0]) == 1 and post.spans[0] == post.spans[1] for post in data.labelled.posts)
    cfg = make_cfg("task=span-f", "debug=fast", "cv.num_folds=2", "data=hf", f"data.path={folder}", sample=False)
    metrics = run(cfg)
    assert "test/strict/avg/f1_mean" in metrics
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
    assert "B-Claim" in (fold / "gold.conll").read_text() or "B-Insult" in (fold / "gold.conll").read_text()
    assert json.loads((fold / "model.json").read_text())["labels"] == ["Claim", "Insult"]
    assert "features of 24 posts tokenised" in caplog.text
    caplog.clear()
    run(
        make_cfg(
            "task=span-f", "debug=fast", "cv.num_folds=2", "data=hf", f"data.path={folder}", "name=again", sample=False
        )
    )
    assert "features of 24 posts read from the cache" in caplog.text


def test_data_hf_bad_datasets_get_one_message(tmp_path):
    from datasets import Dataset

    folder = tmp_path / "nolabels"
    Dataset.from_dict({"tokens": [["a", "b"]], "pos": [["DET", "NOUN"]]}).save_to_disk(str(folder))
    with pytest.raises(UserError, match="has no BIO label columns .*columns: tokens, pos"):
        load_hf_task_data(str(folder), "span", "fine")
    with pytest.raises(UserError, match="no token column 'words'"):
        load_hf_task_data(str(folder), "span", "fine", tokens_column="words")
    with pytest.raises(UserError, match="cannot open the dataset"):
        load_hf_task_data(str(tmp_path / "missing"), "span", "fine")
    claims = _save_dataset(tmp_path / "claims")
    with pytest.raises(UserError, match="column 'lang' holds .*not a tag per token"):
        load_hf_task_data(str(claims), "span", "fine", label_columns=["lang"])


@pytest.mark.e2e
def test_data_hf_aggregates_its_views_like_a_faina_file(make_cfg, tmp_path):
    """data.targets applies to a dataset as to a Faina file: one trained view, every annotator's view scored."""
    folder = _save_dataset(tmp_path / "claims")
    union = load_hf_task_data(str(folder), "post", "fine", targets="union")
    assert union.targets == "union" and union.num_views == 1 and union.gold_corpus.num_views == 2
    assert union.model_views == 1 and len(union.labelled) == len(union.gold_corpus) == 24
    assert load_hf_task_data(str(folder), "span", "fine").num_views == 2  # views: as the dataset holds them
    with pytest.raises(UserError, match="majority"):  # two views: majority would be the intersection
        load_hf_task_data(str(folder), "span", "fine", targets="majority")
    cfg = make_cfg(
        "task=span-f",
        "debug=fast",
        "cv.num_folds=2",
        "data=hf",
        f"data.path={folder}",
        "data.targets=union",
        sample=False,
    )
    assert cfg.name.endswith("-union")
    run(cfg)
    fold = Path(cfg.paths.results_dir) / cfg.name / "fold0"
    assert json.loads((fold / "model.json").read_text())["num_views"] == 1
    assert (fold / "gold.conll").read_text().splitlines()[4].count("\t") == 3  # index, token, both gold views
