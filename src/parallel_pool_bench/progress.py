"""A progress bar on stderr for long measurements (tqdm)."""

from __future__ import annotations

import sys

from tqdm import tqdm


class Progress:
    """A tqdm bar over ``total`` units of work, on stderr, gone when closed; ``enabled=False``
    shows nothing.

    Example:
        >>> from parallel_pool_bench import Progress
        >>> bar = Progress(2, enabled=False)
        >>> bar.describe("first")
        >>> bar.advance()
        >>> bar.close()
    """

    def __init__(self, total: int, enabled: bool = True) -> None:
        self._bar = tqdm(total=total, file=sys.stderr, unit="run", leave=False, dynamic_ncols=True,
                         disable=not enabled)

    def describe(self, text: str) -> None:
        """Says what runs now."""
        self._bar.set_description_str(text)

    def advance(self, n: int = 1) -> None:
        """Counts ``n`` units as done."""
        self._bar.update(n)

    def close(self) -> None:
        """Removes the bar."""
        self._bar.close()
