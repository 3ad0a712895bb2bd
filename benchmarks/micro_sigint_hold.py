"""What one SIGINT hold of the Ray layer costs (integrations/ray/distributed.py, ``_sigint_held``):
setting and restoring the SIGINT handler through ``signal.signal`` against ``_signal.signal`` (the C
function it wraps), and the ``with`` block as a class against a ``contextlib.contextmanager``.

Usage:
    python benchmarks/micro_sigint_hold.py    # a few seconds; prints µs per pair or block
"""

from __future__ import annotations

import _signal
import contextlib
import platform
import signal
import timeit
from collections.abc import Iterator

SIGINT = int(signal.SIGINT)


def _handler(signum: int, frame: object) -> None:
    pass


def wrapped_pair() -> None:
    previous = signal.signal(signal.SIGINT, _handler)
    signal.signal(signal.SIGINT, previous)


def raw_pair() -> None:
    previous = _signal.signal(SIGINT, _handler)
    _signal.signal(SIGINT, previous)


class _Hold:
    __slots__ = ("outer",)

    def __enter__(self) -> None:
        self.outer = True

    def __exit__(self, *exc: object) -> None:
        pass


@contextlib.contextmanager
def _hold() -> Iterator[None]:
    yield


def class_block() -> None:
    with _Hold():
        pass


def generator_block() -> None:
    with _hold():
        pass


def main() -> None:
    print(f"Python {platform.python_version()}; best of 5 runs of 20,000 calls, µs per call")
    for name, fn in [("signal.signal, set and restore", wrapped_pair), ("_signal.signal, set and restore", raw_pair),
                     ("with-block, a class", class_block), ("with-block, contextlib.contextmanager", generator_block)]:
        us = min(timeit.repeat(fn, number=20_000, repeat=5)) / 20_000 * 1e6
        print(f"| {name} | {us:.2f} |")


if __name__ == "__main__":
    main()
