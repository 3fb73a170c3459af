"""docs/nn.md's layer list is what docs/make_nn.py generates from the code now, and it lists every
public class and function of nuvec.nn (and of nn.losses, nn.init and nn.utils)."""

import importlib
import importlib.util
import inspect
import os

import pytest

pytestmark = pytest.mark.nuvec_only

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "nn.md")


@pytest.fixture(scope="module")
def make_nn():
    spec = importlib.util.spec_from_file_location(
        "make_nn", os.path.join(ROOT, "docs", "make_nn.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def page():
    with open(PAGE, encoding="utf-8") as f:
        return f.read()


def test_layer_list_is_generated_from_the_code(make_nn, page):
    assert page.count(make_nn.BEGIN) == 1 and page.count(make_nn.END) == 1
    assert make_nn.updated(page) == page, (
        "docs/nn.md's layer list is out of step with nuvec.nn: run `python docs/make_nn.py`"
    )


def test_every_public_name_is_listed(make_nn):
    block = make_nn.render()
    unlisted = []
    for name in ("nuvec.nn", "nuvec.nn.losses", "nuvec.nn.init", "nuvec.nn.utils"):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            continue  # brought by another branch of issue 12
        for n in dir(module):
            obj = getattr(module, n)
            if n.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if not (getattr(obj, "__module__", "") or "").startswith("nuvec.nn"):
                continue  # imported from elsewhere (typing, nuvec.utils)
            if f"| `nn.{n}` |" not in block and f"| `{n}` |" not in block:
                unlisted.append(f"{name}.{n}")
    assert not unlisted, f"public names docs/make_nn.py does not list: {unlisted}"


def test_summary_is_one_table_cell(make_nn):
    def f():
        """First | paragraph
        on two lines.

        Details."""

    assert make_nn.summary(f) == "First \\| paragraph on two lines."
