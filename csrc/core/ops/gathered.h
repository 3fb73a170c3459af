// Gathered, segmented and block-masked matrix products, as MLX's (docs/matmul.md).
#pragma once
#include <optional>

#include "core/ops/common.h"

namespace nuvec {

// a[lhs] @ b[rhs] with flat indices into the batch axes of a and b (by default every batch
// entry, as arange over the batch shape); the indices broadcast together to I and the result is
// (I..., M, N). Without indices it is matmul. `sorted_indices` is a hint (it changes no result).
Array gather_mm(const Array& a, const Array& b, const std::optional<Array>& lhs, const std::optional<Array>& rhs,
                bool sorted_indices, Stream s);
// The cotangents of gather_mm's a and b for the cotangent g of its (I..., M, N) result (shapes of
// a and b given, indices already broadcast to I and uint32); deterministic accumulation.
Array gather_mm_grad_a(const Array& g, const Array& b, const Array& lhs, const Array& rhs, const Shape& a_shape,
                       Stream s);
Array gather_mm_grad_b(const Array& a, const Array& g, const Array& lhs, const Array& rhs, const Shape& b_shape,
                       Stream s);
// out[s] = a[:, s0:s1] @ b[s0:s1, :] for each (s0, s1) of segments (S..., 2): (S..., M, N).
Array segmented_mm(const Array& a, const Array& b, const Array& segments, Stream s);
// a @ b with blocks of block_size (32 or 64) masked: bool masks zero their blocks (which are
// never read), other masks scale them; mask_out over the result, mask_lhs / mask_rhs over a / b.
Array block_masked_mm(const Array& a, const Array& b, int block_size, const std::optional<Array>& mask_out,
                      const std::optional<Array>& mask_lhs, const std::optional<Array>& mask_rhs, Stream s);

}  // namespace nuvec
