"""export_to_dot as MLX's (issue 11): the lazy graph behind arrays in DOT. Node ids are
addresses, so graphs are compared by structure: sources, primitives (labels) with their input
and output arrays, sinks. Runs on nuvec and on MLX."""

import io
import re

import pytest

from _impl import mx


def dot(*args, **kwargs):
    f = io.StringIO()
    mx.export_to_dot(f, *args, **kwargs)
    return f.getvalue()


def structure(text):
    """(sources, sinks, [(label, inputs, outputs)]) with the primitives' ids dropped."""
    assert text.startswith("digraph {\n") and text.endswith("}")
    labels = dict(re.findall(r'\{ (\d+) \[label ="(\w+)", shape=rectangle\]; \}', text))
    ins, outs = {i: [] for i in labels}, {i: [] for i in labels}
    for a, b in re.findall(r'^"(\w+)" -> (\d+)$', text, re.M):
        ins[b].append(a)
    for a, b in re.findall(r'^(\d+) -> "(\w+)"$', text, re.M):
        outs[a].append(b)
    sources = re.findall(r'\{ rank=source; "(\w+)"; \}', text)
    sinks = re.findall(r'\{ rank=sink; "(\w+)"; \}', text)
    return sources, sinks, [(labels[i], ins[i], outs[i]) for i in labels]


def test_empty_and_evaluated():
    assert dot() == "digraph {\n}"
    assert dot(mx.array(1)) == 'digraph {\n{ rank=source; "A"; }\n}'


def test_chain_and_shared_input():
    x = mx.array([1.0, 2.0])
    y = mx.array([3.0, 4.0])
    assert structure(dot(mx.exp(x + y))) == (
        ["A", "B"],
        ["D"],
        [("Add", ["A", "B"], ["C"]), ("Exp", ["C"], ["D"])],
    )
    assert structure(dot(x + x)) == (["A"], ["B"], [("Add", ["A", "A"], ["B"])])


def test_names_and_several_outputs():
    x = mx.array([1.0, 2.0])
    y = mx.array([3.0, 4.0])
    s = x * y
    t = mx.negative(s)
    assert structure(dot(t, s, x=x, y=y)) == (
        ["x", "y"],
        ["D"],
        [("Multiply", ["x", "y"], ["C"]), ("Negative", ["C"], ["D"])],
    )
    assert structure(dot([s, (t,)], s=s)) == (  # given names take the first letters' places
        ["B", "C"],
        ["D"],
        [("Multiply", ["B", "C"], ["s"]), ("Negative", ["s"], ["D"])],
    )


def test_writes_a_file(tmp_path):
    x = mx.array([1.0])
    mx.export_to_dot(str(tmp_path / "g.dot"), x + 1.0)
    assert (tmp_path / "g.dot").read_text().startswith("digraph {\n")


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.export_to_dot(io.StringIO(), 1),
        lambda: mx.export_to_dot(io.StringIO(), mx.array(1) + 1, x=2),
        lambda: mx.export_to_dot(3, mx.array(1) + 1),
    ],
)
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()
