// Copies (with conversion and broadcasting) and buffer donation, for other kernel families.
#pragma once
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/array.h"

namespace nuvec::cpu {
// `out` has its data (contiguous, or a strided view into a larger array); `in` broadcasts to out's shape.
void copy_into(const Array& in, Array& out);
// Gives `out` (unevaluated) the buffer of `in` when nothing else uses that buffer and it has out's
// shape, item size and a plain contiguous layout: the element-wise kernels then write in place.
// `holders`: the handles to `in` that the evaluating nodes themselves hold (a multi-output
// primitive's siblings each hold its inputs).
bool donate(const Array& in, Array& out, long holders = 1);
// `out` holds in's values: in's own buffer where donate allows, else a contiguous copy (a kernel
// that then writes part of out: slice_update, scatter, a cache write).
void donate_or_copy(const Array& in, Array& out, long holders = 1);
// Whether a fresh result of `bytes` goes to memory with non-temporal stores, written without first
// being read into the cache, which it would not fit (a 64 MiB x * 2 + 1 ran 1.6x faster). Results
// written in place (a donated input) keep plain stores: their lines are in the cache already.
inline bool stream_output(size_t bytes) { return bytes >= (size_t(16) << 20); }
// Copies `bytes` from a cached buffer to `out`, with non-temporal stores from out's first 16-byte
// boundary; the thread calls stream_fence() after its last one, before another thread reads.
void stream_copy(char* out, const char* from, size_t bytes);
// Orders a thread's streamed stores before what it does next (the pool's hand-off included).
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}
// Asks the caches for elements [start, start + count) of `data` (`item` bytes each), a line at a
// time: the hardware prefetchers restart at every 4 KiB page, so the chunked kernels ask ahead.
inline void prefetch_elements(const char* data, size_t item, int64_t start, int64_t count, bool into_l2 = false) {
  for (int64_t at = start * int64_t(item), end = (start + count) * int64_t(item); at < end; at += 64)
    into_l2 ? __builtin_prefetch(data + at, 0, 2) : __builtin_prefetch(data + at);
}
// The handles to `x` held by a multi-output primitive's outputs' nodes (each sibling holds the inputs).
inline long holders(const Array& x, const std::vector<Array>& out) {
  long n = 0;
  for (const Array& o : out)
    for (const Array& in : o.inputs()) n += in.is(x);
  return n;
}
}  // namespace nuvec::cpu
