// 4-bit weights kept a second time with sixteen rows side by side (the interleaved copy): one-row
// products with integer activations then take sixteen outputs per vector instruction, with no
// reduction across lanes. Made at a weight's second such product and cached with the weight's
// buffers (backend/cpu/quantized_rows16.cpp); the kernel is the AVX-512 VNNI build's
// (backend/cpu/simd/quantized_rows16.cpp). It gives the bits of the integer-activation sequence
// (backend/cpu/quantized.h): the same integer totals and the same float steps per output.
#pragma once
#include <cstdint>
#include <memory>

#include "backend/cpu/quantized.h"
#include "core/array.h"

namespace nuvec::cpu {

constexpr int kRows16 = 16;  // weight rows side by side in the interleaved copy

// In the allocator's buffers (an arena that other copies share, or a block of its own), so the
// memory counters (get_active_memory, get_peak_memory) count it.
struct QmmRows16 {
  std::shared_ptr<Buffer> memory;   // holds the codes and parameters
  const uint32_t* codes = nullptr;  // [n / 16 blocks][k / 8 words][16 rows]; rows past n zero
  // [blocks][groups][16 rows] scales, then as many biases: float16 where both are float16 (`half`),
  // else float32 (exact for every parameter dtype); rows past n zero.
  const void* params = nullptr;
  size_t bytes = 0;  // of codes and parameters
  bool half = false;
  int64_t n = 0, k = 0, blocks = 0;
  int group = 0;
};

#if defined(__x86_64__)
// The interleaved copy of transposed 4-bit weights (w, scales, biases: row-contiguous, on the CPU),
// made now or found in the cache, or null where none is kept (a weight's first product, another
// layout, a processor without VNNI, the cache full).
std::shared_ptr<const QmmRows16> rows16_for(const Array& w, const Array& scales, const Array& biases, int group);

namespace avx512 {
// Row blocks [b0, b1) of the product y = x @ W.T for x's integer rows in p (p.xq, p.xd, p.digits).
void qmm_rows16(const QmmRows16& w, const QmmProblem& p, int64_t b0, int64_t b1);
}  // namespace avx512
#endif

}  // namespace nuvec::cpu
