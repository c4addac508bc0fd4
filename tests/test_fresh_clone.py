"""A clone with no sibling ``shared/`` folder: no test skips for missing data except the ones that need the real
Missci files (marked ``real_missci``).

Two checks, one for each place a skip can sit:
- fixtures and skip marks: the repository's files (``git ls-files``, untracked non-ignored files included) are
  copied to a temporary folder, and pytest runs there with ``--setup-only --tiers all``: it collects every test of
  every tier and sets up its fixtures (where the data skips happen) without running the test bodies. Costly
  fixtures (the ones that train or build models, ``tiers.fixture_tier``) are not built there (``tiers.NotBuilt``):
  the fixtures they take still are, and a data skip in a costly fixture's own body is the next check's;
- test and fixture bodies: every ``pytest.skip(...)`` call under ``tests/`` is read (its reason must name a
  machine reason, one of ``ENVIRONMENT_SKIP_WORDS``), except the ``real_missci`` fixture's own.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tiers import PROBE_ENV

REPO = Path(__file__).resolve().parents[1]
# Skips that are about the machine, not about data (no GPU, a Debian package missing, a model the set-up installs
# only when asked: `bash scripts/setup.sh --mpnet`); any other skip in a fresh clone means a test depends on files
# the clone does not have.
ENVIRONMENT_SKIP_WORDS = (
    "gpu",
    "cuda",
    "chromium",
    "wordnet",
    "bitsandbytes",
    "cpu cores",
    "platform",
    "opt-in set-up",
)

PROBE = textwrap.dedent('''
    """Records every skipped test of the run (node id, phase, reason, real_missci marker)."""
    import json
    import os
    import sys

    import pytest

    SKIPPED = []


    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(item, call):
        outcome = yield
        report = outcome.get_result()
        if report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            SKIPPED.append({"test": item.nodeid, "reason": reason,
                            "real_missci": item.get_closest_marker("real_missci") is not None})


    def pytest_sessionfinish(session, exitstatus):
        missci = sys.modules.get("missci")
        with open(os.environ["FRESH_CLONE_REPORT"], "w", encoding="utf-8") as handle:
            json.dump({"collected": session.testscollected, "skipped": SKIPPED,
                       "missci_from": getattr(missci, "__file__", None)}, handle)
''')


def repository_files() -> list[str]:
    """Tracked and untracked-but-not-ignored files (what a commit of this checkout would hold)."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode("utf-8")
        .split("\0")
    )
    return [name for name in listed if name and (REPO / name).is_file()]


def copy_repository(target: Path) -> None:
    for name in repository_files():
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, destination)


@pytest.mark.slow
def test_no_test_skips_for_missing_data_in_a_fresh_clone(tmp_path):
    clone = tmp_path / "clone"
    copy_repository(clone)
    assert not (clone.parent / "shared").exists() and not (clone / "data").exists()
    (tmp_path / "probe").mkdir()
    (tmp_path / "probe" / "fresh_clone_probe.py").write_text(PROBE, encoding="utf-8")
    report_path = tmp_path / "report.json"
    env = {key: value for key, value in os.environ.items() if key not in {"MISSCI_DATA", "PYTEST_ADDOPTS"}}
    env.update(PYTHONPATH=str(tmp_path / "probe"), FRESH_CLONE_REPORT=str(report_path), **{PROBE_ENV: "1"})
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--setup-only",
            "--tiers",
            "all",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "fresh_clone_probe",
            "--basetemp",
            str(tmp_path / "basetemp"),
        ],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, (
        "collection or fixture set-up failed in the clone:\n" + done.stdout[-4000:] + done.stderr[-2000:]
    )
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["collected"] > 100
    assert Path(report["missci_from"]).resolve().is_relative_to(clone.resolve()), "the clone's code must run"

    real_data = [s for s in report["skipped"] if s["real_missci"]]
    assert real_data and all("needs the real Missci files" in s["reason"] for s in real_data)
    unexpected = [
        s
        for s in report["skipped"]
        if not s["real_missci"] and not any(word in s["reason"].lower() for word in ENVIRONMENT_SKIP_WORDS)
    ]
    assert not unexpected, (
        "these tests skip in a fresh clone (no ../shared, no MISSCI_DATA): run them on the packaged samples "
        "(fixtures missci_sample / data_dir), or, if they check the paper's own figures, take the real_missci "
        "fixture:\n" + "\n".join(f"  {s['test']}: {s['reason']}" for s in unexpected)
    )


def skip_calls(tree: ast.AST):
    """``(line, enclosing function, reason text)`` of every ``pytest.skip(...)`` / ``skip(...)`` call; the reason's
    literal parts only (an f-string's placeholders are left out, a computed reason reads as ``""``)."""
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Call):
                target = child.func
                called = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
                if called == "skip" and (
                    not isinstance(target, ast.Attribute) or getattr(target.value, "id", "") == "pytest"
                ):
                    reason = (
                        child.args[0]
                        if child.args
                        else next((k.value for k in child.keywords if k.arg == "reason"), None)
                    )
                    found.append((child.lineno, function, literal_text(reason)))
            visit(child, name)

    visit(tree, None)
    return found


def literal_text(node) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value for part in node.values if isinstance(part, ast.Constant))
    return ""


def test_no_test_body_skips_for_missing_data():
    offending = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        for line, function, reason in skip_calls(ast.parse(path.read_text(encoding="utf-8"))):
            if path.name == "conftest.py" and function == "real_missci":
                continue
            if not any(word in reason.lower() for word in ENVIRONMENT_SKIP_WORDS):
                offending.append(f"  {path.relative_to(REPO)}:{line} (in {function}): {reason or '<computed reason>'}")
    assert not offending, (
        "these skips are not about the machine (no GPU, a Debian package missing), so a fresh clone would skip "
        "the test for missing data: run it on the packaged samples (fixtures missci_sample / small_sample), take "
        "the real_missci fixture, or name the machine reason in a literal:\n" + "\n".join(offending)
    )


def test_the_body_check_finds_a_data_skip_and_lets_a_machine_skip_pass():
    source = (
        "import pytest\n"
        "def test_a():\n    pytest.skip(f'Missci data not found under {DIR}')\n"
        "def test_b():\n    pytest.skip('no GPU on this machine')\n"
    )
    calls = skip_calls(ast.parse(source))
    assert [(function, reason) for _, function, reason in calls] == [
        ("test_a", "Missci data not found under "),
        ("test_b", "no GPU on this machine"),
    ]
    assert [any(w in r.lower() for w in ENVIRONMENT_SKIP_WORDS) for _, _, r in calls] == [False, True]
