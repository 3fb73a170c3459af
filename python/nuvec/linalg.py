"""nuvec.linalg: MLX's mx.linalg (docs/linalg.md)."""

from ._linalg_spectral import cross, eig, eigh, eigvals, eigvalsh, norm, pinv, qr, svd

__all__ = ["cross", "eig", "eigh", "eigvals", "eigvalsh", "norm", "pinv", "qr", "svd"]
