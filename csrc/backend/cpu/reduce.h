// The table of reduction kernels, filled once for the processor found at run time from the
// per-ISA builds of backend/cpu/simd/reduce.cpp. Every kernel sums in an order fixed by its
// sizes (pairwise over blocks), so the engine may hand pieces to any thread.
#pragma once
#include <cstdint>

#include "core/dtype.h"
#include "core/primitives/reduce.h"

namespace nuvec::cpu {

// The dtype a reduction accumulates in: sums and products in their result dtype (half types
// in float32), max and min in the input's compute dtype, all and any in bool.
constexpr Dtype accumulator(ReduceOp op, Dtype in) {
  if (op == ReduceOp::all || op == ReduceOp::any) return Dtype::bool_;
  Dtype d = op == ReduceOp::sum || op == ReduceOp::prod ? sum_dtype(in) : in;
  return d == Dtype::float16 || d == Dtype::bfloat16 ? Dtype::float32 : d;
}

struct ReduceKernel {
  // *acc = the reduction of in[0, n).
  void (*row)(const void* in, int64_t n, void* acc);
  // acc[r] = row's reduction of row r < count of in (rows of n elements, back to back), each with
  // row's bits; several rows at once, so that several streams of loads are in flight.
  void (*rows)(const void* in, int64_t n, int64_t count, void* acc);
  // acc[j] = the reduction over i < rows of in[i * stride + j], for j < w (stride in elements).
  void (*cols)(const void* in, int64_t stride, int64_t rows, int64_t w, void* acc);
  // a[j] = combine(a[j], b[j]) for j < w: joins partial results.
  void (*merge)(void* a, const void* b, int64_t w);
  // float32 sums only (else null): *acc = row's sum of in[i] * in[i], each square rounded as the
  // square kernel rounds it, so the bits of a square reduced by row; compiled programs take it
  // for a square that nothing else reads, which then is never stored.
  void (*row_of_squares)(const void* in, int64_t n, void* acc) = nullptr;
};

struct ReduceTable {
  ReduceKernel reduce[kReduceOps][kNumDtypes] = {};
  // Rows of n elements of a float32 or half dtype (computed in float32). `stream` asks that
  // the output bypass the caches (for outputs larger than they are; the values are the same).
  void (*softmax[kNumDtypes])(const void* in, void* out, int64_t n, bool stream) = {};
  void (*logsumexp[kNumDtypes])(const void* in, int64_t n, void* out) = {};
  // float32 and float64 rows (argmin at [0], argmax at [1]): the first index of the row's extreme,
  // or of its first NaN (logits to a token: per instruction set, where the plain build's loops ran
  // lane by lane, 40 us for SmolLM2's 49152 logits).
  uint32_t (*arg_row[2][kNumDtypes])(const void* in, int64_t n) = {};
};

const ReduceTable& reduce_kernels();

namespace portable {
void fill_reduce(ReduceTable& t);
}
#if defined(__x86_64__)
namespace avx2 {
void fill_reduce(ReduceTable& t);
}
namespace avx512 {
void fill_reduce(ReduceTable& t);
}
#endif

}  // namespace nuvec::cpu
