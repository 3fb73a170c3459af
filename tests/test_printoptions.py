"""printoptions / set_printoptions / get_printoptions as MLX's (issue 11): `precision` changes the
repr and str of floating and complex arrays (fixed decimals), never integers, booleans, item(),
tolist() or format specs. Runs on nuvec and on MLX."""

import pytest

from _impl import mx

X = [1.23456789, 2.0, 1e-7, 123456.789, -0.5, float("nan"), float("-inf")]


@pytest.fixture(autouse=True)
def _restore():
    yield
    mx.set_printoptions(precision=-1)


@pytest.mark.parametrize(
    "precision, want",
    [
        (-1, "array([1.23457, 2, 1e-07, ..., -0.5, nan, -inf], dtype=float32)"),
        (0, "array([1, 2, 0, ..., -0, nan, -inf], dtype=float32)"),
        (1, "array([1.2, 2.0, 0.0, ..., -0.5, nan, -inf], dtype=float32)"),
        (3, "array([1.235, 2.000, 0.000, ..., -0.500, nan, -inf], dtype=float32)"),
        (-5, "array([1.234568, 2.000000, 0.000000, ..., -0.500000, nan, -inf], dtype=float32)"),
    ],
)
def test_precision_changes_the_repr(precision, want):
    x = mx.array(X)
    with mx.printoptions(precision=precision):
        assert repr(x) == want and str(x) == want
    mx.set_printoptions(precision=precision)
    assert repr(x) == want
    assert mx.get_printoptions().precision == precision


def test_other_dtypes():
    with mx.printoptions(precision=3):
        assert repr(mx.array([1.23456 + 2.5j])) == "array([1.235+2.500j], dtype=complex64)"
        assert repr(mx.array([1.23456], mx.float16)) == "array([1.234], dtype=float16)"
        assert repr(mx.array([1.23456], mx.bfloat16)) == "array([1.234], dtype=bfloat16)"
        assert repr(mx.array([1, 2])) == "array([1, 2], dtype=int32)"
        assert repr(mx.array(True)) == "array(True, dtype=bool)"
        assert repr(mx.array(3.14159)) == "array(3.142, dtype=float32)"
        assert f"{mx.array(3.14159):.2f}" == "3.14"
        assert mx.array([1.5]).tolist() == [1.5]


def test_context_restores_and_nests():
    mx.set_printoptions(precision=4)
    with mx.printoptions(precision=2):
        assert mx.get_printoptions().precision == 2
        with mx.printoptions(1):
            assert repr(mx.array(0.25)) == "array(0.2, dtype=float32)"
        assert mx.get_printoptions().precision == 2
    assert mx.get_printoptions().precision == 4
    with pytest.raises(KeyError):
        with mx.printoptions(precision=2):
            raise KeyError
    assert mx.get_printoptions().precision == 4
    ctx = mx.printoptions(precision=1)
    assert type(ctx.__enter__()) is type(ctx)
    assert mx.get_printoptions().precision == 1
    ctx.__exit__(None, None, None)
    assert mx.get_printoptions().precision == 4
    mx.set_printoptions()
    assert mx.get_printoptions().precision == -1


def test_print_options_object():
    po = mx.get_printoptions()
    assert isinstance(po, mx.PrintOptions) and po.precision == -1
    po.precision = 5  # a copy: the options in effect are unchanged
    assert mx.get_printoptions().precision == -1
    assert mx.PrintOptions().precision == -1


@pytest.mark.parametrize(
    "call",
    [
        lambda: mx.set_printoptions(precision=2.5),
        lambda: mx.set_printoptions(precision="a"),
        lambda: mx.set_printoptions(foo=3),
        lambda: mx.printoptions(precision=None),
        lambda: mx.set_printoptions(precision=2**70),
        lambda: mx.get_printoptions(1),
    ],
)
def test_wrong_arguments_raise_type_error(call):
    with pytest.raises(TypeError):
        call()
    assert mx.get_printoptions().precision == -1
