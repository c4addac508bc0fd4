"""The synthetic sample corpus: deterministic, in Faina's layout, and shaped like Faina."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from statistics import mean

import pytest

from faina.data.synthetic import DEFAULT_POSTS, default_sample_dir, generate_sample, write_sample
from faina.formats.conll import read_conll
from faina.formats.labels import LabelInventory
from faina.formats.records import SpanCorpus
from faina.formats.tokenization import tokenize
from faina.formats.tsv import post_corpus_from_spans, read_post_tsv
from faina.sample import main

FILES = ("sample.conll", "sample.tsv", "sample-unlabelled.conll", "sample-unlabelled.tsv")
LL, AE, CR, ST = "Loaded-language", "Appeal-to-emotion", "Circular-reasoning", "Strawman"


@pytest.fixture(scope="module")
def corpus() -> SpanCorpus:
    return generate_sample()


def spans_of(corpus: SpanCorpus, view: int):
    return [span for post in corpus.posts for span in post.spans[view]]


def overlap(a, b) -> bool:
    return a.first <= b.last and b.first <= a.last


def test_same_seed_same_bytes_and_other_seed_other_bytes(tmp_path):
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        write_sample(tmp_path / name, posts=60, seed=seed, unlabelled=True)
    for file in FILES:
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()
    assert (tmp_path / "a" / "sample.conll").read_bytes() != (tmp_path / "c" / "sample.conll").read_bytes()


def test_committed_sample_equals_a_fresh_generation(tmp_path):
    write_sample(tmp_path, unlabelled=True)
    for file in FILES:
        assert (default_sample_dir() / file).read_bytes() == (tmp_path / file).read_bytes(), (
            f"{file} is stale: run `python -m faina.sample faina/sample_data --unlabelled`"
        )
    assert "synthetic" in (default_sample_dir() / "README.md").read_text(encoding="utf-8").lower()


def test_bytes_do_not_depend_on_hash_randomisation(tmp_path):
    """A fresh interpreter with another PYTHONHASHSEED writes the committed bytes (no set-order dependence)."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run(
        [sys.executable, "-m", "faina.sample", str(tmp_path)],
        check=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
    )
    assert (tmp_path / "sample.conll").read_bytes() == (default_sample_dir() / "sample.conll").read_bytes()


def test_committed_files_read_back_to_the_generated_records(corpus):
    span_file = read_conll(default_sample_dir() / "sample.conll")
    assert span_file.posts == corpus.posts and span_file.num_views == 2
    assert span_file.warnings == () and span_file.repairs == ()
    assert read_post_tsv(default_sample_dir() / "sample.tsv").rows == post_corpus_from_spans(corpus).rows


def test_unlabelled_copy_has_empty_cells_and_the_same_tokens(corpus):
    span_file = read_conll(default_sample_dir() / "sample-unlabelled.conll")
    assert not span_file.labelled and span_file.num_views == 2
    assert [p.tokens for p in span_file.posts] == [p.tokens for p in corpus.posts]
    assert [p.text for p in span_file.posts] == [p.text for p in corpus.posts]
    token_lines = [
        line
        for line in (default_sample_dir() / "sample-unlabelled.conll").read_text("utf-8").split("\n")
        if line and not line.startswith("# ")
    ]
    assert all(line.split("\t")[2:] == ["", ""] for line in token_lines)
    rows = read_post_tsv(default_sample_dir() / "sample-unlabelled.tsv").rows
    assert len(rows) == DEFAULT_POSTS and all(row.labels == ((), ()) for row in rows)


def test_posts_look_like_faina_posts(corpus):
    posts = corpus.posts
    assert len(posts) == DEFAULT_POSTS and len({p.post_id for p in posts}) == len(posts)
    assert {p.topic for p in posts} == {"migration", "climate change", "public health"}
    assert all("2019-01" <= p.date <= "2022-12" and len(p.date) == 7 for p in posts)
    assert all(tokenize(p.text) == list(p.tokens) for p in posts)
    assert all("\t" not in p.text and "\n" not in p.text for p in posts)
    assert any("[USER]" in p.tokens for p in posts) and any("[URL]" in p.tokens for p in posts)
    assert sum(len(p.tokens) >= 100 for p in posts) >= 3


def test_all_labels_present_in_both_views_with_faina_skew(corpus):
    fine = LabelInventory.load().fine
    for view in (0, 1):
        counts = Counter(span.label for span in spans_of(corpus, view))
        assert set(counts) == set(fine)
        assert counts.most_common(1)[0][0] == LL
        assert counts[CR] >= 2 and counts[LL] >= 10 * counts[CR]
        assert counts[AE] > counts["Doubt"] > counts["False-dilemma"]


def test_span_counts_and_lengths_match_the_brief(corpus):
    posts = corpus.posts
    view1 = spans_of(corpus, 0)
    assert 3.0 <= len(view1) / len(posts) <= 4.5
    assert 0.08 <= sum(not p.spans[0] for p in posts) / len(posts) <= 0.18
    assert 5.5 <= mean(s.length for s in view1) <= 8.5
    assert mean(s.length for s in view1 if s.label == LL) <= 3
    assert mean(s.length for s in view1 if s.label == ST) >= 20


def test_overlaps_of_different_labels_but_never_of_the_same_label(corpus):
    nested_ll_in_ae = 0
    for post in corpus.posts:
        for view in post.spans:
            for i, a in enumerate(view):
                for b in view[i + 1 :]:
                    if overlap(a, b):
                        assert a.label != b.label, f"post {post.post_id}: same-label spans overlap"
            nested_ll_in_ae += sum(
                1
                for a in view
                if a.label == AE
                for b in view
                if b.label == LL and a.first <= b.first and b.last <= a.last
            )
    assert nested_ll_in_ae >= 20


def test_views_disagree_systematically(corpus):
    longer = relabelled = 0
    for post in corpus.posts:
        view1, view2 = post.spans
        for a in view1:
            same_start = [b for b in view2 if b.first == a.first]
            longer += any(b.label == a.label and b.last > a.last for b in same_start)
            relabelled += any(b.label != a.label and b.last >= a.last for b in same_start) and not any(
                b.label == a.label for b in same_start
            )
    assert longer >= 200 and relabelled >= 30
    counts = [Counter(span.label for span in spans_of(corpus, view)) for view in (0, 1)]
    assert counts[1][ST] < counts[0][ST] and counts[1]["Hasty-generalization"] > counts[0]["Hasty-generalization"]


def test_small_corpora_are_well_formed(tmp_path):
    for posts in (1, 7):
        write_sample(tmp_path / str(posts), posts=posts, seed=1)
        assert len(read_conll(tmp_path / str(posts) / "sample.conll").posts) == posts


def test_cli_prints_a_summary_and_rejects_bad_arguments(tmp_path, capsys):
    main([str(tmp_path / "out"), "--posts", "40", "--seed", "2", "--unlabelled"])
    captured = capsys.readouterr()
    printed = captured.err  # a notice: the files are the output
    assert captured.out == ""
    assert "posts: 40" in printed and "view 2:" in printed and "synthetic" in printed
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(FILES)
    with pytest.raises(SystemExit) as exit_info:
        main([str(tmp_path / "other"), "--posts", "0"])
    assert exit_info.value.code == 2 and "error:" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit):
        main([str(tmp_path / "file")])
