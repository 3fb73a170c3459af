"""Print options as MLX's: `precision` (-1: C++ streams' default, six significant digits; n >= 0:
n decimals, fixed; below -1: fixed with six) for the repr of floating and complex arrays."""


class PrintOptions:
    """The options arrays print with (a copy: change them with `set_printoptions`)."""

    def __init__(self, precision: int = -1) -> None:
        self.precision = precision


_current = PrintOptions()


def _check(precision):
    if isinstance(precision, bool) or not isinstance(precision, int):
        raise TypeError(f"precision must be an int, not {type(precision).__name__}")
    if not -(2**31) <= precision < 2**31:
        raise TypeError("precision must fit a 32-bit int, as MLX's")


def set_printoptions(precision: int = -1) -> None:
    """Sets the number of decimals arrays print with (-1: the default)."""
    _check(precision)
    _current.precision = precision


def get_printoptions() -> PrintOptions:
    """The print options in effect (a copy)."""
    return PrintOptions(_current.precision)


class _PrintOptionsContext:
    """Sets print options for a `with` block and restores the previous ones after it."""

    def __init__(self, precision):
        self._precision = precision
        self._saved = []

    def __enter__(self) -> "_PrintOptionsContext":
        self._saved.append(_current.precision)
        _current.precision = self._precision
        return self

    def __exit__(self, *exc: object) -> None:
        _current.precision = self._saved.pop()


def printoptions(precision: int = -1) -> _PrintOptionsContext:
    """A context manager setting print options temporarily."""
    _check(precision)
    return _PrintOptionsContext(precision)


def real_text(v):
    """A float as MLX prints it under the current precision (C++ streams: %g, or fixed)."""
    p = _current.precision
    if p == -1:
        return f"{v:g}"
    return f"{v:.{p if p >= 0 else 6}f}"
