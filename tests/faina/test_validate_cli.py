"""``python -m faina.validate``: statistics (JSON keys) and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

from faina.data.synthetic import default_sample_dir
from faina.validate import main

REPO_ROOT = default_sample_dir().parents[1]


def test_json_statistics_of_a_span_file(capsys):
    stats = main([str(default_sample_dir() / "sample.conll"), "--json"])
    printed = json.loads(capsys.readouterr().out)
    assert printed == stats
    assert {"posts", "tokens", "views", "spans"} <= set(printed)
    assert printed["posts"] == 300 and printed["views"] == 2
    assert set(printed["spans"]) == {"a1", "a2"}
    assert len(printed["spans"]["a1"]) == 20
    assert printed["tokens"] > printed["posts"]


def test_post_file_counts_posts_per_label(capsys):
    stats = main([str(default_sample_dir() / "sample.tsv"), "--json"])
    assert stats["posts"] == 300 and stats["views"] == 2
    assert all(n <= 300 for n in stats["spans"]["a1"].values())


def test_table_output(capsys):
    main([str(default_sample_dir() / "sample.conll")])
    out = capsys.readouterr().out
    assert "OK" in out and "Loaded-language" in out and "total" in out


def test_bad_file_gives_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.conll"
    bad.write_text("# post_id = 1\n# post_date = d\n# post_topic_keywords = t\n# post_text = x\n1\tx\tB-Nope\tO\n")
    result = subprocess.run(
        [sys.executable, "-m", "faina.validate", str(bad)], capture_output=True, text=True, cwd=REPO_ROOT
    )
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {bad}:5: unknown label 'Nope'")
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_repair_flag_reports_repairs(tmp_path, capsys):
    path = tmp_path / "r.conll"
    path.write_text("# post_id = 1\n# post_date = d\n# post_topic_keywords = t\n# post_text = x\n1\tx\tI-Slogan\tO\n")
    stats = main([str(path), "--repair"])
    captured = capsys.readouterr()
    assert stats["repairs"] == 1 and "repaired:" in captured.err and "repaired:" not in captured.out
