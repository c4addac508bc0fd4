"""The synthetic Missci sample: deterministic, in the official layout, and covering what the tests need."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from common.errors import UserError
from missci.dataset.classes import CLASS_NAMES
from missci.dataset.reader import load_split, read_arguments
from missci.dataset.synthetic import SPLIT_FILES, default_sample_dir, generate_arguments, write_sample
from missci.sample import main

REPO = Path(__file__).resolve().parents[2]


def layout(value):
    """The JSON shape of a value: keys in order for objects, the union of item shapes for lists."""
    if isinstance(value, dict):
        return {key: layout(inner) for key, inner in value.items()}
    if isinstance(value, list):
        shapes = {json.dumps(layout(item), sort_keys=False) for item in value}
        return ["list", sorted(shapes)]
    return type(value).__name__


def test_committed_sample_equals_a_fresh_generation(tmp_path):
    write_sample(tmp_path)
    for name in SPLIT_FILES.values():
        assert (default_sample_dir() / name).read_bytes() == (tmp_path / name).read_bytes(), (
            f"{name} is stale: run `python -m missci.sample missci/sample_data`"
        )
    assert "synthetic" in (default_sample_dir() / "README.md").read_text(encoding="utf-8").lower()


def test_seed_changes_the_bytes_and_hash_randomisation_does_not(tmp_path):
    """`python -m missci.sample` in a fresh interpreter with another PYTHONHASHSEED writes the committed bytes."""
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-m", "missci.sample", str(tmp_path / "a")],
        check=True,
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert "synthetic data (not Missci)" in done.stderr and done.stdout == ""
    for name in SPLIT_FILES.values():
        assert (tmp_path / "a" / name).read_bytes() == (default_sample_dir() / name).read_bytes()
    write_sample(tmp_path / "b", seed=1)
    assert (tmp_path / "b" / "dev.missci.jsonl").read_bytes() != (tmp_path / "a" / "dev.missci.jsonl").read_bytes()


def test_sample_reads_with_the_validating_reader_and_covers_every_path():
    for split in ("dev", "test"):
        arguments = load_split(split, "sample")
        fallacies = [f for a in arguments for f in a.fallacies]
        first_classes = Counter(f.interchangeable[0].fallacy_class for f in fallacies)
        assert set(first_classes) == set(CLASS_NAMES) and min(first_classes.values()) >= 2, split
        assert Counter(len(f.interchangeable) for f in fallacies).keys() >= {1, 2}  # interchangeable fallacies
        assert any(f.context == "" for f in fallacies) and any(f.context for f in fallacies)
        assert any(a.hidden_premises for a in arguments) and any(not a.hidden_premises for a in arguments)
        assert len({len(a.fallacies) for a in arguments}) >= 3
        for f in fallacies:  # one R_i never lists a class twice; ids follow the official scheme
            assert len(set(f.gold_classes)) == len(f.gold_classes)
            assert [alt.id for alt in f.interchangeable] == [f"{f.id}:{j}" for j in range(1, len(f.gold_classes) + 1)]
        assert all(f.id.startswith(a.id + ":") for a in arguments for f in a.fallacies)
    everything = load_split("dev", "sample") + load_split("test", "sample")
    assert len({a.id for a in everything}) == len(everything)
    claims = Counter(a.claim for a in everything)
    dev_claims, test_claims = ({a.claim for a in load_split(s, "sample")} for s in ("dev", "test"))
    assert sum(n > 1 for n in claims.values()) >= 5 and dev_claims & test_claims  # claims recur
    fact_checks = Counter(a.meta["fc_article_url"] for a in everything)
    reworded = [url for url in fact_checks if len({a.claim for a in everything if a.meta["fc_article_url"] == url}) > 1]
    assert reworded and all(url.startswith("https://example.org/") for url in fact_checks)


def test_sample_has_the_layout_of_the_real_files(real_missci):
    for name in SPLIT_FILES.values():
        real = [json.loads(line) for line in (real_missci / name).read_text().splitlines()]
        sample = [json.loads(line) for line in (default_sample_dir() / name).read_text().splitlines()]
        assert layout(sample[0]["meta"]) == layout(real[0]["meta"])
        assert list(sample[0]) == list(real[0]) and list(sample[0]["argument"]) == list(real[0]["argument"])
        real_fallacy = real[0]["argument"]["fallacies"][0]
        sample_fallacy = sample[0]["argument"]["fallacies"][0]
        assert list(sample_fallacy) == list(real_fallacy)
        assert list(sample_fallacy["interchangeable_fallacies"][0]) == list(
            real_fallacy["interchangeable_fallacies"][0]
        )
        # written like the official files: json.dumps defaults (ASCII escapes, ", " and ": "), one line each
        assert (default_sample_dir() / name).read_text().splitlines()[0] == json.dumps(sample[0])
        assert (real_missci / name).read_text().splitlines()[0] == json.dumps(real[0])


def test_other_sizes_and_bad_sizes(tmp_path, capsys):
    paths = main([str(tmp_path), "--dev", "2", "--test", "40", "--seed", "3"])
    assert [p.name for p in paths] == ["dev.missci.jsonl", "test.missci.jsonl"]
    dev, test = read_arguments(paths[0]), read_arguments(paths[1])
    assert len(dev) == 2 and len(test) == 40
    # even two arguments hold every class (the arguments grow until the classes fit)
    assert {alt.fallacy_class for a in dev for f in a.fallacies for alt in f.interchangeable} == set(CLASS_NAMES)
    assert "dev: 2 arguments" in capsys.readouterr().err
    with pytest.raises(UserError, match="at least one argument"):
        generate_arguments(dev=0)
    with pytest.raises(SystemExit) as info:
        main([str(tmp_path), "--test", "0"])
    assert info.value.code == 2
