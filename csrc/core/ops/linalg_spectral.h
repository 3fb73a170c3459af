// The spectral decompositions as ops (python/nuvec/_linalg_spectral.py builds nuvec.linalg's
// qr, svd, eigh, eigvalsh, eig and eigvals on them).
#pragma once
#include <vector>

#include "core/primitives/linalg_spectral.h"

namespace nuvec {

// The outputs of `kind` for `a` (..., M, N) (see Decompose). Raises OpError as MLX does: fewer
// than two axes, a dtype the kind does not take (qr: float32/float64; the others also
// complex64), a non-square matrix to the eigen-decompositions.
std::vector<Array> decompose(const Array& a, Decomposition kind, bool upper, Stream s);

}  // namespace nuvec
