"""The format registry (``faina.formats.any_file``): the one way Faina files are read and written.

A format is chosen by extension, among a level's formats where the level is known (a name none claims gets the
level's default, as the official scorers read any name); and no module outside ``faina/formats/`` calls a format's
reader or writer itself, so a format registered once is one every command reads.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from common.errors import UserError
from faina.formats.any_file import (
    FORMATS,
    check_readable_by,
    default_format,
    file_format,
    file_kind,
    read_any,
    write_any,
)
from faina.formats.records import PostCorpus, SpanCorpus
from faina.sample import default_sample_dir
from tests_paths import REPO

SAMPLE = default_sample_dir()


@pytest.mark.parametrize(
    "name, level, expected",
    [
        ("gold.conll", None, "conll"),
        ("gold.CONLL", None, "conll"),
        ("gold.txt", None, "conll"),
        ("gold.tsv", None, "tsv"),
        ("gold.tsv", "post", "tsv"),
        ("gold.data", "span", "conll"),  # a name no span format claims: the level's default
        ("gold", "post", "tsv"),
    ],
)
def test_the_format_follows_the_extension_and_the_level(name, level, expected):
    assert file_format(name, level).name == expected


def test_an_unknown_extension_without_a_level_is_refused_with_the_known_ones():
    with pytest.raises(UserError, match="cannot tell the file kind from the extension '.data'") as info:
        file_kind("gold.data")
    assert "*.conll" in info.value.fix and "*.tsv" in info.value.fix


def test_each_level_has_a_default_format_and_extensions_are_claimed_once():
    assert default_format("span").name == "conll" and default_format("post").name == "tsv"
    suffixes = [suffix for f in FORMATS for suffix in f.suffixes]
    assert len(suffixes) == len(set(suffixes))


@pytest.mark.parametrize("name, records", [("sample.conll", SpanCorpus), ("sample.tsv", PostCorpus)])
def test_read_any_and_write_any_give_the_same_bytes_back(tmp_path, name, records):
    corpus = read_any(SAMPLE / name)
    assert isinstance(corpus, records) and len(corpus) > 0
    out = write_any(corpus, tmp_path / name)
    assert out.read_bytes() == (SAMPLE / name).read_bytes()


def test_a_level_reads_a_file_of_another_level_as_its_own_format_and_says_what_is_wrong():
    with pytest.raises(UserError, match="expected the header line '# post_id = ...'") as info:
        read_any(SAMPLE / "sample.tsv", level="span")
    assert info.value.line == 1


def test_a_reader_of_one_level_refuses_the_extensions_of_the_other():
    check_readable_by("input.conll", "span", "span-level model")
    with pytest.raises(UserError, match=r"a span-level model reads \.conll or \.txt files") as info:
        check_readable_by("input.tsv", "span", "span-level model")
    assert "CONLL" in info.value.fix


READERS_AND_WRITERS = {
    "faina.formats.conll": {"read_conll", "write_conll", "format_conll"},
    "faina.formats.tsv": {"read_post_tsv", "write_post_tsv", "format_post_tsv"},
}


def _direct_uses(path: Path) -> list[str]:
    """``module.name`` of each format reader or writer imported by ``path`` (the registry's job)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module in READERS_AND_WRITERS:
            found += [f"{node.module}.{a.name}" for a in node.names if a.name in READERS_AND_WRITERS[node.module]]
    return found


def test_no_module_outside_the_formats_calls_a_reader_or_writer_itself():
    uses = {
        str(path.relative_to(REPO)): found
        for package in ("faina", "fallacy")
        for path in sorted((REPO / package).rglob("*.py"))
        if "formats" not in path.relative_to(REPO).parts[:2]
        if (found := _direct_uses(path))
    }
    assert uses == {}, f"read and write Faina files through faina.formats.any_file: {uses}"


def test_the_source_check_sees_a_direct_import(tmp_path):
    module = tmp_path / "reads.py"
    module.write_text("from faina.formats.conll import read_conll, OUTSIDE\n", encoding="utf-8")
    assert _direct_uses(module) == ["faina.formats.conll.read_conll"]
