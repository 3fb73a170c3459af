"""Which array framework the suite runs against.

By default the tests exercise nuvec (``import nuvec as mx``). With the environment variable
``NUVEC_TEST_IMPL=mlx`` they run against MLX (``import mlx.core as mx``) instead, which is how
the tests themselves are validated: everything not marked ``nuvec_only`` must pass on MLX.
"""

import os

IMPL = os.environ.get("NUVEC_TEST_IMPL", "nuvec").strip().lower() or "nuvec"
if IMPL not in ("nuvec", "mlx"):
    raise RuntimeError(f"NUVEC_TEST_IMPL must be 'nuvec' or 'mlx', not {IMPL!r}")

IS_MLX = IMPL == "mlx"

if IS_MLX:
    import mlx.core as mx
else:
    try:
        import nuvec as mx
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "nuvec is not importable: build and install it first (`pip install .`), "
            "or run the suite against MLX with NUVEC_TEST_IMPL=mlx"
        ) from exc

__all__ = ["mx", "IMPL", "IS_MLX"]
