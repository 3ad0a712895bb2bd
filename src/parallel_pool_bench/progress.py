"""A progress bar on stderr for long measurements: tqdm when installed, else plain lines."""

from __future__ import annotations

import sys
from typing import Any


class Progress:
    """A progress bar over ``total`` units of work, on stderr.

    With tqdm installed it is a tqdm bar that disappears when closed; without it, ``describe``
    prints one line ``[done/total] text``. ``enabled=False`` prints nothing.

    Example:
        >>> from parallel_pool_bench import Progress
        >>> bar = Progress(2, enabled=False)
        >>> bar.describe("first")
        >>> bar.advance()
        >>> bar.close()
    """

    def __init__(self, total: int, enabled: bool = True) -> None:
        self._total, self._done, self._enabled = total, 0, enabled
        self._bar: Any = None
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                pass
            else:
                self._bar = tqdm(total=total, file=sys.stderr, unit="run", leave=False, dynamic_ncols=True)

    def describe(self, text: str) -> None:
        """Says what runs now."""
        if self._bar is not None:
            self._bar.set_description_str(text)
        elif self._enabled:
            print(f"[{self._done}/{self._total}] {text}", file=sys.stderr, flush=True)

    def advance(self, n: int = 1) -> None:
        """Counts ``n`` units as done."""
        self._done += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        """Removes the bar."""
        if self._bar is not None:
            self._bar.close()
