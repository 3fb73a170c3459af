// Random primitives on the CPU: the Threefry stream split over threads by counter range (each
// word depends only on the key and its counter, so results never depend on the thread count).
#include "backend/cpu/backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/random_kernels.h"
#include "core/threads.h"

namespace nuvec::cpu {
namespace {

void eval_random_bits(const RandomBits& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& key = in[0];
  Array& o = out[0];
  const uint32_t* k = key.data<uint32_t>();
  uint32_t k0 = k[0], k1 = k[key.strides()[0]];
  // Whole words: a partial last word is written in full into the buffer's padding.
  int64_t words = (int64_t(o.nbytes()) + 3) / 4, pairs = words / 2, h = words - pairs;
  o.set_contiguous_data(Buffer::allocate(size_t(words) * 4));
  auto* w = reinterpret_cast<uint32_t*>(o.data_bytes());
  RandomKernel fill = NUVEC_FOR_ISA(random_fill);
  RandomKind kind = prim.kind();
  parallel_for(pairs, 1 << 14, [&](int64_t b, int64_t e) {
    fill(kind, k0, k1, uint32_t(b), uint32_t(b + h), e - b, w + b, w + b + h);
  });
  if (words % 2) fill(kind, k0, k1, uint32_t(pairs), 0, 1, w + pairs, nullptr);
}

}  // namespace

void register_random_kernels(Backend& b) { b.add<RandomBits, eval_random_bits>(); }

}  // namespace nuvec::cpu
