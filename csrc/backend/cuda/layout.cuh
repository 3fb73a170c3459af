// How the reduction, scan and sort kernels address their (possibly strided or broadcast) inputs:
// an array is split into kept axes and walked axes, each merged into as few dimensions as its
// strides allow, so the common layouts index with one multiply. Also the way out for a case a
// kernel does not take: the CPU kernel on host copies (as the backend's fallback).
#pragma once
#include <cstdint>
#include <vector>

#include "backend/cuda/runtime.h"
#include "core/backend.h"

namespace nuvec::cuda {

constexpr int kMaxDims = 8;

// Element offsets of a row-major walk over `shape` with `strides` (in elements).
struct Strided {
  int nd = 0;
  int64_t shape[kMaxDims] = {}, strides[kMaxDims] = {};
  int64_t size() const {
    int64_t n = 1;
    for (int i = 0; i < nd; ++i) n *= shape[i];
    return n;
  }
  __device__ __forceinline__ int64_t offset(int64_t i) const {
    int64_t off = 0;
    for (int d = nd - 1; d > 0; --d) {
      off += (i % shape[d]) * strides[d];
      i /= shape[d];
    }
    return nd ? off + i * strides[0] : 0;
  }
};

// The walk over the axes of x that `pick` selects, in order, with size-1 axes dropped and
// neighbours merged where one stride continues the other. Empty when it needs more than
// kMaxDims dimensions.
template <class Pick> bool walk(const Array& x, Pick pick, Strided& s) {
  s = Strided{};
  for (int i = 0; i < x.ndim(); ++i) {
    if (!pick(i) || x.shape(i) == 1) continue;
    if (s.nd && s.strides[s.nd - 1] == x.strides()[i] * x.shape(i)) {
      s.shape[s.nd - 1] *= x.shape(i);
      s.strides[s.nd - 1] = x.strides()[i];
      continue;
    }
    if (s.nd == kMaxDims) return false;
    s.shape[s.nd] = x.shape(i), s.strides[s.nd] = x.strides()[i];
    ++s.nd;
  }
  return true;
}

// Runs the CPU kernel of p on host copies of the inputs (the backend's fallback).
inline void on_host(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out) {
  backend_for(DeviceType::cpu)->kernel(p.kernel_slot())(p, in, out);
}

// Device scratch memory, freed (to the pool) with the last reference; safe to reuse after:
// every kernel queues on the one stream.
inline std::shared_ptr<Buffer> scratch(size_t bytes) { return Buffer::allocate_device(bytes ? bytes : 1); }
template <class T> T* scratch_data(const std::shared_ptr<Buffer>& b) { return static_cast<T*>(b->device_data()); }

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace nuvec::cuda
