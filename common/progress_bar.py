"""Lightning's rich progress bar, drawn only on a terminal: what ``callbacks.rich_progress_bar`` and prediction use.

On a terminal it is Lightning's ``RichProgressBar`` on stderr (stdout keeps the results table). With stderr
redirected (a log file, a pipe, a batch job) rich cannot redraw in place and prints each bar's last frame, lines
that say nothing a log line does not: the bar is off there, checked when it would draw, so a process whose
stderr changes follows it (``common.progress.on_terminal``).
"""

from __future__ import annotations

from lightning.pytorch.callbacks import RichProgressBar

from common.progress import on_terminal


class TerminalProgressBar(RichProgressBar):
    """``RichProgressBar`` on stderr that draws nothing when stderr is not a terminal."""

    def __init__(self, **kwargs):
        console_kwargs = {"stderr": True, **(kwargs.pop("console_kwargs", None) or {})}
        super().__init__(console_kwargs=console_kwargs, **kwargs)

    @property
    def is_enabled(self) -> bool:
        return super().is_enabled and on_terminal()
