"""Every ```python block of docs/getting-started.md runs without an exception. Each block runs
alone, in a fresh namespace, compiled so that its line numbers are the page's."""

import os
import re

import pytest

pytestmark = pytest.mark.nuvec_only

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "getting-started.md")

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)


def python_blocks(text):
    """(first line number, source) of each ```python block."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _FENCE.finditer(text)]


with open(PAGE, encoding="utf-8") as _f:
    BLOCKS = python_blocks(_f.read())


def test_page_has_examples():
    assert len(BLOCKS) >= 5


@pytest.mark.parametrize("line,source", BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_example_runs(line, source):
    code = compile("\n" * (line - 1) + source, PAGE, "exec")
    exec(code, {"__name__": f"getting_started_line{line}"})
