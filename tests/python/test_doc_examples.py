"""The Python examples of README.md and docs/*.md that are marked runnable (a fence opened
with ```python runnable) run, each in a fresh interpreter (configuration is per process)
in an empty folder, with ``mt`` and ``np`` imported. A block with ``>>>`` lines is a
doctest: its printed output must match (``...`` stands for any text); any other block
must run without an error. Unmarked blocks (fragments, GPU or cluster examples) are not
run."""

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\S*)(.*)$")

# Runs the block read from stdin; exits 1 (with the report on stdout) if it fails.
RUNNER = r"""
import doctest, sys
import numpy as np
import minitensor as mt
name, text = sys.argv[1], sys.stdin.read()
globs = {"mt": mt, "np": np, "__name__": "__main__"}
if any(line.startswith(">>> ") for line in text.splitlines()):
    test = doctest.DocTestParser().get_doctest(text, globs, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    sys.exit(1 if runner.run(test).failed else 0)
exec(compile(text, name, "exec"), globs)
"""


def runnable_blocks(text):
    """Returns (line, code) for each ```python runnable block of a Markdown text: the line of
    its fence, from 1. Raises ValueError for a runnable block that never closes."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise ValueError(f"line {i + 1}: a code block never closes")
        if match.group(1) == "python" and match.group(2).split() == ["runnable"]:
            blocks.append((i + 1, "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    return blocks


def _collect():
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line, code in runnable_blocks(path.read_text()):
            found.append(pytest.param(code, f"{path.relative_to(ROOT)}:{line}",
                                      id=f"{path.name}:{line}"))
    return found


BLOCKS = _collect()


def test_the_docs_mark_their_examples_runnable():
    names = {b.values[1].split(":")[0] for b in BLOCKS}
    assert {"README.md", "docs/function.md", "docs/keras.md", "docs/placement.md",
            "docs/trace.md", "docs/distribute.md"} <= names
    assert len(BLOCKS) >= 8


def test_the_extractor_finds_only_marked_blocks_and_refuses_an_open_one():
    text = "```python runnable\na = 1\n```\n```python\nb = 2\n```\n```\n>>> c\n```\n"
    assert runnable_blocks(text) == [(1, "a = 1\n")]
    with pytest.raises(ValueError, match="^line 2: a code block never closes$"):
        runnable_blocks("text\n```python runnable\na = 1\n")


@pytest.mark.parametrize("code, name", BLOCKS)
def test_a_runnable_doc_example_runs(code, name, tmp_path):
    done = subprocess.run([sys.executable, "-c", RUNNER, name], input=code, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{name}:\n{done.stdout}\n{done.stderr}"


def test_a_failing_doctest_fails(tmp_path):
    done = subprocess.run([sys.executable, "-c", RUNNER, "x.md:1"], input=">>> 1 + 1\n3\n",
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Expected:\n    3\nGot:\n    2" in done.stdout
