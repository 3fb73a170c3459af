// ggml's quantized types that load dequantized to float16, as MLX's load gives the K-quants it
// can read: the K-quants (Q2_K to Q6_K, Q8_K: blocks of 256 with packed sub-block scales), and
// Q5_0 and Q5_1 (blocks of 32), which MLX cannot read.
#pragma once
#include <cstdint>

namespace nuvec::io {

struct DequantizedType {
  int block = 0;  // elements per block; 0: not one of these types
  int bytes = 0;  // bytes per block
};
DequantizedType dequantized_type(uint32_t type);

// Dequantizes `n_blocks` blocks as ggml does (float32 arithmetic), rounding each value to float16.
void dequantize(uint32_t type, const uint8_t* blocks, int64_t n_blocks, _Float16* out);

}  // namespace nuvec::io
