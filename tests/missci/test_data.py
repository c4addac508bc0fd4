import pytest

from common.errors import UserError
from missci.dataset.reader import is_sample, load_split, read_arguments, resolve_data_dir
from missci.dataset.synthetic import default_sample_dir
from tests.missci.conftest import make_argument


def test_official_files_load_with_expected_counts(real_missci):
    data_dir = real_missci
    for split, (args, fallacies, alternatives) in {"dev": (30, 72, 96), "test": (154, 363, 454)}.items():
        arguments = load_split(split, data_dir)
        assert len(arguments) == args
        assert sum(len(a.fallacies) for a in arguments) == fallacies
        assert sum(len(f.interchangeable) for a in arguments for f in a.fallacies) == alternatives
    first = load_split("dev", data_dir)[0]
    assert first.id == "arg-34" and first.fallacies[0].gold_classes == ("Hasty Generalization",)
    assert first.accurate_premise.startswith("Daily dose of curcumin")


def test_valid_minimal_line(write_jsonl):
    argument = read_arguments(write_jsonl("x.jsonl", [make_argument()]))[0]
    assert argument.claim == "Turmeric cures cancer."
    assert argument.fallacies[0].interchangeable[0].premise == "One patient is enough."


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda o: o["argument"].pop("claim"), "argument.claim' is missing"),
        (
            lambda o: o["argument"]["fallacies"][0]["interchangeable_fallacies"][0].update({"class": "Red Herring"}),
            "unknown fallacy class 'Red Herring'",
        ),
        (lambda o: o["argument"].update({"fallacies": []}), "argument.fallacies' must be a non-empty list"),
        (
            lambda o: o["argument"]["fallacies"][0]["interchangeable_fallacies"][0].pop("premise"),
            "argument.fallacies[0].interchangeable_fallacies[0].premise' is missing",
        ),
        (lambda o: o["argument"]["accurate_premise_p0"].update({"premise": 3}), "must be a non-empty string"),
    ],
)
def test_malformed_lines_name_file_line_and_field(write_jsonl, mutate, expected):
    bad = make_argument("arg-2")
    mutate(bad)
    path = write_jsonl("bad.jsonl", [make_argument("arg-1"), bad])
    with pytest.raises(UserError) as info:
        read_arguments(path)
    message = str(info.value)
    assert expected in message and f"{path}:2:" in message and "Fix:" in message


def test_invalid_json_and_duplicates(write_jsonl):
    with pytest.raises(UserError, match=r":2: not valid JSON"):
        read_arguments(write_jsonl("a.jsonl", [make_argument()], raw_lines=["{oops"]))
    with pytest.raises(UserError, match=r":2: duplicate argument id 'arg-1'"):
        read_arguments(write_jsonl("b.jsonl", [make_argument(), make_argument()]))


def test_data_dir_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("MISSCI_DATA", raising=False)
    assert resolve_data_dir().parts[-2:] == ("data", "missci")
    monkeypatch.setenv("MISSCI_DATA", str(tmp_path))
    assert resolve_data_dir() == tmp_path
    assert resolve_data_dir("elsewhere").name == "elsewhere"
    # `sample` names the packaged synthetic sample, as an argument or in MISSCI_DATA, and only when asked
    assert resolve_data_dir("sample") == default_sample_dir() and is_sample("sample")
    assert not is_sample() and not is_sample("elsewhere")
    with pytest.raises(UserError, match="Missci data file not found.*missci.download.*--data sample"):
        load_split("dev")
    monkeypatch.setenv("MISSCI_DATA", "sample")
    assert resolve_data_dir() == default_sample_dir() and is_sample()
    assert load_split("dev")[0].id == load_split("dev", default_sample_dir())[0].id
    with pytest.raises(UserError, match="unknown Missci split"):
        load_split("train", tmp_path)


def test_reading_the_sample_warns_once_that_it_is_synthetic(caplog):
    from missci.dataset import reader as data

    data._warn_synthetic_once.cache_clear()
    with caplog.at_level("WARNING", logger="missci.dataset.reader"):
        load_split("dev", "sample")
        load_split("test", default_sample_dir())
    assert [r.getMessage() for r in caplog.records].count(
        f"reading the synthetic Missci sample ({default_sample_dir()}), not Missci: its scores say nothing about "
        "the paper's task"
    ) == 1
