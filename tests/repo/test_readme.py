"""Every Python example in the README runs exactly as written."""

from __future__ import annotations

import pathlib
import re
import textwrap

import pytest

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
# Blocks inside list items are indented; they run as written once dedented.
BLOCKS = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)]


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"README.md example {index}", "exec"), {})


def test_readme_starts_with_the_two_commands() -> None:
    commands = re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S)
    assert commands[0].strip() == "pip install . && parallel-pool bench CartPole-v1"
    test_command = (
        'pip install ".[test]" && pip install --no-deps minigrid==3.2.0 mpe2==1.1.1 vizdoom==1.3.2 && pytest -q'
    )
    assert commands[1].strip() == test_command
    ci = (README.parent / ".ci" / "run").read_text()
    assert commands[1].strip() in ci
