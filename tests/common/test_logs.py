"""Progress goes to stderr through logging; ``-q`` / ``-v`` set how much of it shows."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from common.logs import show_progress, verbosity_from_argv
from tests_paths import REPO


def test_quiet_and_verbose_switches_are_taken_out_of_argv():
    assert verbosity_from_argv(["train.py", "-q", "task=span-f", "--verbose", "-v"]) == (1, ["train.py", "task=span-f"])
    assert verbosity_from_argv(["train.py", "-q", "--quiet"]) == (-2, ["train.py"])


def test_progress_goes_to_the_current_stderr_at_the_chosen_level(capsys):
    log = logging.getLogger("faina.some_module")
    try:
        show_progress(0)
        log.info("resuming")
        log.debug("details")
        show_progress(-1)
        log.info("hidden")
        log.warning("damaged")
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err == "resuming\ndamaged\n"
        show_progress(1)
        log.debug("details")
        assert capsys.readouterr().err == "details\n"
    finally:
        show_progress(0)


@pytest.mark.slow  # train.py processes
def test_train_py_takes_the_switches_before_hydra_parses_its_overrides():
    # (that INFO progress shows by default is checked by the fault tests, which read "resuming from" on stderr)
    for switch in ("-q", "-v"):
        done = subprocess.run(
            [sys.executable, "train.py", switch, "--cfg", "job", "task=post-f"],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr
        assert "name: post-f" in done.stdout and "Traceback" not in done.stderr


def test_a_library_with_its_own_handler_is_not_printed_twice(capsys):
    library = logging.getLogger("some_library.sub")
    own = logging.StreamHandler(sys.stderr)
    logging.getLogger("some_library").addHandler(own)
    try:
        show_progress(0)
        library.warning("once")
        logging.getLogger("other_library").info("an INFO of a library without a handler stays hidden")
        logging.getLogger("other_library").warning("its warning shows")
        err = capsys.readouterr().err
        assert err.count("once") == 1 and "its warning shows" in err and "stays hidden" not in err
    finally:
        logging.getLogger("some_library").removeHandler(own)
