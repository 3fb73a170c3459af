// The affine quantization's bit widths as compile-time constants, for every backend's kernels
// (a header without core types: CUDA kernel files include it).
#pragma once
#include <type_traits>

namespace nuvec {

// Calls f(std::integral_constant<int, B>{}) for the bit width `bits` (1 to 6, or 8).
template <class F> void with_bits(int bits, F&& f) {
  switch (bits) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    case 4: return f(std::integral_constant<int, 4>{});
    case 5: return f(std::integral_constant<int, 5>{});
    case 6: return f(std::integral_constant<int, 6>{});
    default: return f(std::integral_constant<int, 8>{});
  }
}

}  // namespace nuvec
