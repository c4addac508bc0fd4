"""Other libraries' known-harmless notices, silenced at their source: the one place that owns every such filter.

Each filter names one message of one library and says why it is harmless; nothing else is hidden (no blanket
``warnings.filterwarnings("ignore")``): a new warning, or one of these messages from another place, still shows.
``quiet_libraries()`` is called by ``common.logs.show_progress``, so every entry point (``train.py``, the
commands) installs them; it imports none of the libraries, so a command that never loads them pays nothing.
The list and what each line looked like: docs/training.md#quiet-logs.

- Lightning, at every ``Trainer``: "GPU available: ...", "TPU available: ..." (the device is in the config and
  the run's resolved ``config.yaml``), the advertisement "Tip: ... try installing litlogger ...", "Loading
  `train_dataloader` to estimate number of stepping batches." (an internal step of the schedule), and
  "`Trainer.fit` stopped: `max_epochs=4` reached." at the end of every fold (the planned length, in the config;
  a fold stopped early by its patience is not this message).
- Lightning's ``_pytree`` helper building a ``LeafSpec``, which PyTorch deprecates (a ``FutureWarning`` about
  Lightning's own code, fixed upstream, nothing a user can act on).
- transformers' "Loading weights" bar while a (small) encoder is built: ``quiet_weight_loading`` around that
  call. LLM loading keeps its bar, it can take minutes. Inside the same call, the "LOAD REPORT" whose only row is
  the ``lm_head`` a causal LM's checkpoint holds and its base model (the encoder of ``encoder=tiny-llama`` or
  ``smollm2``) does not use; a report with any other row (a missing weight: a randomly initialised layer) shows.
- transformers' ``FutureWarning`` that ``is_gradient_checkpointing`` will be renamed, raised inside peft's
  ``get_peft_model`` at every LoRA model (Missci LoRA, a decoder-LLM encoder): peft's own call, nothing to act on.
- colour codes in redirected logs: with stderr not a terminal, ``NO_COLOR=1`` (https://no-color.org, honoured
  by colorlog, which Optuna's log lines use, and by rich), so a log file holds text, not escape sequences.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import warnings
from collections.abc import Iterator

# the loggers Lightning's rank-zero messages go through (lightning_utilities' rank_zero_info, re-pointed by each)
LIGHTNING_NOTICE_LOGGERS = ("lightning.pytorch.utilities.rank_zero", "lightning.fabric.utilities.rank_zero")
LIGHTNING_NOTICES = (
    "GPU available: ",
    "TPU available: ",
    "💡 Tip: For seamless cloud logging",
    "Loading `train_dataloader` to estimate number of stepping batches.",
    "`Trainer.fit` stopped: `max_epochs=",
)
PYTREE_DEPRECATION = r"`isinstance\(treespec, LeafSpec\)` is deprecated"
PYTREE_MODULE = r"lightning\.pytorch\.utilities\._pytree"
CHECKPOINTING_RENAME = r"`is_gradient_checkpointing` is deprecated"


class _DropNotices(logging.Filter):
    """Drops the records whose message starts with one of ``prefixes``."""

    def __init__(self, prefixes: tuple[str, ...]):
        super().__init__()
        self.prefixes = prefixes

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.prefixes)


def quiet_libraries() -> None:
    """Install the filters of this module (idempotent)."""
    for name in LIGHTNING_NOTICE_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _DropNotices) for f in logger.filters):
            logger.addFilter(_DropNotices(LIGHTNING_NOTICES))
    warnings.filterwarnings("ignore", message=PYTREE_DEPRECATION, category=FutureWarning, module=PYTREE_MODULE)
    warnings.filterwarnings("ignore", message=CHECKPOINTING_RENAME, category=FutureWarning)
    if not _is_terminal(sys.stderr):
        os.environ.setdefault("NO_COLOR", "1")


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # replaced or closed streams
        return False


@contextlib.contextmanager
def quiet_weight_loading() -> Iterator[None]:
    """transformers' weight-loading bar off while the block runs (restored afterwards): an encoder of a hundred
    tensors loads in a blink, and its bar is noise in every fold's log and in ``faina export``."""
    from transformers.utils import logging as transformers_logging

    was_on = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    report_logger = logging.getLogger("transformers.modeling_utils")
    unused_head = _UnusedLanguageModelHead()
    report_logger.addFilter(unused_head)
    try:
        yield
    finally:
        report_logger.removeFilter(unused_head)
        if was_on:
            transformers_logging.enable_progress_bar()


ANSI_CODE = re.compile(r"\x1b\[[0-9;]*m")


class _UnusedLanguageModelHead(logging.Filter):
    """Drops transformers' load report when its only rows say that ``lm_head.*`` was UNEXPECTED: a base model
    (``AutoModel``) loaded from a causal LM's checkpoint leaves its language-model head unused, by design."""

    def filter(self, record: logging.LogRecord) -> bool:
        text = ANSI_CODE.sub("", str(record.msg))
        if "LOAD REPORT" not in text:
            return True
        rows = [line.split("|") for line in text.splitlines() if line.count("|") >= 2]
        keys = [(cells[0].strip(), cells[1].strip()) for cells in rows[1:] if not cells[0].strip().startswith("-")]
        return not keys or any(not key.startswith("lm_head.") or status != "UNEXPECTED" for key, status in keys)
