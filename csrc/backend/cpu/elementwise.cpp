// The element-wise engine: broadcasting, strides and dtype conversion around contiguous kernels.
// The iteration space is collapsed, cut into runs of at most kChunk elements along the innermost
// axis, and each run's operands are passed straight through when they are contiguous in the
// compute dtype, or first gathered into a small per-thread buffer.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/kernels.h"
#include "core/primitives/elementwise.h"
#include "core/threads.h"

namespace nuvec {
namespace cpu {
namespace {

constexpr int64_t kChunk = 2048;
constexpr int64_t kTransposeMin = int64_t(1) << 14;   // elements; smaller transposed operands stay strided
constexpr int64_t kParallelGrain = int64_t(1) << 15;  // elements per thread below which we stay serial
constexpr int kMaxOperands = 3;

struct Operand {
  const char* data;
  Dtype dtype;
  Dtype compute;
  Strides strides;  // broadcast to the output's rank, in elements
};

// Input strides seen through broadcasting to `shape`.
Strides broadcast_strides(const Array& a, const Shape& shape) {
  Strides s(shape.size(), 0);
  size_t off = shape.size() - a.shape().size();
  for (size_t i = 0; i < a.shape().size(); ++i) s[off + i] = a.shape()[i] == 1 ? 0 : a.strides()[i];
  return s;
}

// Merges axes that every operand walks as one.
void collapse(Shape& shape, std::vector<Strides*> strides) {
  Shape ns;
  std::vector<Strides> nst(strides.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    bool merge = !ns.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k) merge = nst[k].back() == (*strides[k])[i] * shape[i];
    if (merge) {
      ns.back() *= shape[i];
      for (size_t k = 0; k < strides.size(); ++k) nst[k].back() = (*strides[k])[i];
    } else {
      ns.push_back(shape[i]);
      for (size_t k = 0; k < strides.size(); ++k) nst[k].push_back((*strides[k])[i]);
    }
  }
  if (ns.empty()) {
    ns.push_back(1);
    for (auto& s : nst) s.push_back(0);
  }
  shape = ns;
  for (size_t k = 0; k < strides.size(); ++k) *strides[k] = nst[k];
}

struct Scratch {
  alignas(64) char in[kMaxOperands][kChunk * 8];
  alignas(64) char out[kChunk * 8];
};

// Moves Item bytes per element: the conversion already happened while gathering the input.
template <size_t Item> void byte_copy(const void* const* in, const bool*, void* out, int64_t n, const OpParams&) {
  std::memcpy(out, in[0], size_t(n) * Item);
}

EwKernel byte_copy_of(size_t item) {
  switch (item) {
    case 1: return &byte_copy<1>;
    case 2: return &byte_copy<2>;
    case 4: return &byte_copy<4>;
    case 8: return &byte_copy<8>;
  }
  throw KernelError(EvalErrorKind::other, "no byte copy for items of " + std::to_string(item) + " bytes");
}

// Copies operand `op` (collapsed `shape`, strides (..., 1, S)) into dst with `dst_strides`, whose
// last two axes are row-major: one transpose of the last two axes per outer index.
void transpose_into(const Operand& op, const Shape& shape, char* dst, const Strides& dst_strides) {
  int nd = int(shape.size());
  int64_t rows = shape[nd - 2], cols = shape[nd - 1], outer = shape_size(shape) / (rows * cols);
  size_t item = size_of(op.dtype);
  constexpr int64_t kRowBlock = 64;
  int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  parallel_for(outer * blocks, 4, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      int64_t o = b / blocks, r0 = (b % blocks) * kRowBlock, n = std::min(kRowBlock, rows - r0);
      int64_t src_off = 0, dst_off = 0, rest = o;
      for (int d = nd - 3; d >= 0; --d) {
        src_off += (rest % shape[d]) * op.strides[d];
        dst_off += (rest % shape[d]) * dst_strides[d];
        rest /= shape[d];
      }
      kernels().transpose(op.data + (src_off + r0) * int64_t(item), op.strides[nd - 1],
                          dst + (dst_off + r0 * dst_strides[nd - 2]) * int64_t(item), dst_strides[nd - 2], n, cols,
                          item);
    }
  });
}

// Runs `kernel` over the output: usually contiguous (freshly allocated or donated), or a strided
// region of a larger array (concatenate's slabs).
void run(EwKernel kernel, const OpParams& params, std::vector<Operand> ops, char* out, Dtype out_dtype,
         Dtype out_compute, Shape shape, Strides out_strides) {
  const KernelTable& kt = kernels();
  std::vector<Strides*> all{&out_strides};
  for (auto& op : ops) all.push_back(&op.strides);
  collapse(shape, all);
  int nd = int(shape.size());
  int64_t inner = shape[nd - 1];
  int64_t rows = 1;
  for (int i = 0; i < nd - 1; ++i) rows *= shape[i];
  // A transposed operand (strided innermost axis, contiguous along the next one) is first copied
  // row-major by the register-transposing kernel: a strided gather over large power-of-two
  // strides thrashes the cache. A plain copy of one such operand is that transpose alone.
  // The first such operand of the output's dtype is transposed into the output itself, which the
  // kernel then updates in place (each element reads and writes one position), unless the output
  // is another operand's donated buffer, which must keep its values until the kernel reads them.
  std::vector<std::shared_ptr<Buffer>> keep;
  bool out_row_major = nd >= 2 && out_strides[nd - 1] == 1 && out_strides[nd - 2] == inner;
  bool out_used = std::any_of(ops.begin(), ops.end(), [&](const Operand& op) { return op.data == out; });
  for (auto& op : ops) {
    if (nd < 2 || op.strides[nd - 2] != 1 || op.strides[nd - 1] <= 1 || shape_size(shape) < kTransposeMin) continue;
    bool into_out = out_row_major && !out_used && op.dtype == out_dtype;
    char* dst = out;
    if (into_out) {
      out_used = true;
    } else {
      keep.push_back(Buffer::allocate(size_t(shape_size(shape)) * size_of(op.dtype)));
      dst = static_cast<char*>(keep.back()->data());
    }
    transpose_into(op, shape, dst, into_out ? out_strides : Array::row_strides(shape));
    if (into_out && ops.size() == 1 && kernel == byte_copy_of(size_of(out_dtype))) return;  // a plain copy is done
    op.data = dst;
    op.strides = Array::row_strides(shape);
  }
  int64_t pieces = (inner + kChunk - 1) / kChunk;
  int64_t units = rows * pieces;
  size_t osz = size_of(out_dtype);
  const bool stream = !out_used && stream_output(size_t(shape_size(shape)) * osz);
  const bool prefetch =
      stream && std::count_if(ops.begin(), ops.end(), [](const Operand& op) { return op.strides.back() == 1; }) == 1;
  ConvertKernel store = out_dtype == out_compute ? nullptr : kt.convert[int(out_compute)][int(out_dtype)];
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::min(inner, kChunk));
  parallel_for(units, grain, [&](int64_t u0, int64_t u1) {
    thread_local Scratch scratch;
    const void* in_ptr[kMaxOperands];
    bool in_scalar[kMaxOperands];
    for (int64_t u = u0; u < u1; ++u) {
      int64_t row = u / pieces, start = (u % pieces) * kChunk, len = std::min(kChunk, inner - start);
      int64_t rest = row;
      int64_t offsets[kMaxOperands] = {}, out_offset = 0;
      for (int d = nd - 2; d >= 0; --d) {
        int64_t idx = rest % shape[d];
        rest /= shape[d];
        for (size_t k = 0; k < ops.size(); ++k) offsets[k] += idx * ops[k].strides[d];
        out_offset += idx * out_strides[d];
      }
      for (size_t k = 0; k < ops.size(); ++k) {
        const Operand& op = ops[k];
        int64_t st = op.strides[nd - 1];
        const char* base = op.data + (offsets[k] + start * st) * int64_t(size_of(op.dtype));
        bool scalar = st == 0 && ops.size() > 1;
        int64_t n = scalar ? 1 : len;
        if (op.dtype == op.compute && (st == 1 || scalar)) {
          in_ptr[k] = base;
          // A streamed result's one input read element by element: its next chunk is asked for now
          // (the hardware prefetchers restart at each page). With two such inputs this measured
          // slower than without (a + b on 16M float32: 6.3 ms against 5.2).
          if (prefetch && st == 1 && start + 2 * kChunk <= inner)
            prefetch_elements(base, size_of(op.dtype), kChunk, kChunk);
        } else {
          kt.convert[int(op.dtype)][int(op.compute)](base, st, scratch.in[k], n);
          in_ptr[k] = scratch.in[k];
        }
        in_scalar[k] = scalar;
      }
      int64_t out_step = out_strides[nd - 1];
      char* dst = out + (out_offset + start * out_step) * int64_t(osz);
      if (out_step != 1) {
        // A strided output region: compute into scratch, convert in place, then spread.
        kernel(in_ptr, in_scalar, scratch.out, len, params);
        if (store) store(scratch.out, 1, scratch.out, len);
        for (int64_t i = 0; i < len; ++i) std::memcpy(dst + i * out_step * int64_t(osz), scratch.out + i * osz, osz);
      } else if (store) {
        kernel(in_ptr, in_scalar, scratch.out, len, params);
        store(scratch.out, 1, dst, len);
      } else if (stream) {
        kernel(in_ptr, in_scalar, scratch.out, len, params);
        stream_copy(dst, scratch.out, size_t(len) * osz);
      } else {
        kernel(in_ptr, in_scalar, dst, len, params);
      }
    }
    if (stream) stream_fence();
  });
}

void prepare_output(const std::vector<Array>& in, Array& out) {
  for (const Array& a : in)
    if (donate(a, out)) return;
  out.allocate_contiguous();
}

// Small operands already laid out for the kernel (contiguous or single elements, in the compute
// dtype) skip the engine: per-op overhead is what small arrays pay for.
bool run_direct(const Elementwise& prim, EwKernel kernel, const std::vector<Array>& in, Array& out) {
  int64_t n = out.size();
  if (n > kParallelGrain || out.dtype() != prim.out_compute() || in.size() > size_t(kMaxOperands)) return false;
  const void* ptrs[kMaxOperands];
  bool scalar[kMaxOperands];
  for (size_t k = 0; k < in.size(); ++k) {
    const Array& a = in[k];
    bool one = a.size() == 1;
    if (a.dtype() != prim.compute()[k] || !(one || (a.size() == n && a.row_contiguous()))) return false;
    if (one && n > 1 && in.size() == 1) return false;  // a unary kernel reads n elements
    ptrs[k] = a.data_bytes();
    scalar[k] = one && n > 1;
  }
  kernel(ptrs, scalar, out.data_bytes(), n, prim.params());
  return true;
}

void eval_elementwise(const Elementwise& prim, EwKernel kernel, const std::vector<Array>& in, Array& out) {
  prepare_output(in, out);
  if (out.size() == 0 || run_direct(prim, kernel, in, out)) return;
  std::vector<Operand> ops;
  for (size_t k = 0; k < in.size(); ++k)
    ops.push_back({in[k].data_bytes(), in[k].dtype(), prim.compute()[k], broadcast_strides(in[k], out.shape())});
  run(kernel, prim.params(), std::move(ops), out.data_bytes(), out.dtype(), prim.out_compute(), out.shape(),
      out.strides());
}

void missing_kernel(const char* op, Dtype d) {
  throw KernelError(EvalErrorKind::other, std::string("no CPU kernel for dtype ") + name_of(d) + " in " + op);
}

}  // namespace

#if defined(__x86_64__)
namespace {
// Whole 64-byte lines in one store each in the AVX-512 build's choice: a core alone writes
// memory about 1.2x faster than in 16-byte stores (26.5 against 22 GB/s), which a thread that
// computes between its writes can use.
[[gnu::target("avx512f")]] size_t stream_lines(char* out, const char* from, size_t bytes) {
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(out + i), _mm512_loadu_si512(from + i));
  return i;
}
}  // namespace
#endif

// Out of line: inlined, the caller's thread-local source address is looked up per store.
[[gnu::noinline]] void stream_copy(char* out, const char* from, size_t bytes) {
  size_t i = 0;
#if defined(__SSE2__)
  i = std::min(bytes, (64 - reinterpret_cast<uintptr_t>(out) % 64) % 64);
  std::memcpy(out, from, i);
#if defined(__x86_64__)
  if (isa() == Isa::avx512) i += stream_lines(out + i, from + i, bytes - i);  // the kernels' choice
#endif
  for (; i + 16 <= bytes; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(out + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i)));
#endif
  std::memcpy(out + i, from + i, bytes - i);
}

bool donate(const Array& in, Array& out, long holders) {
  // A traced node keeps its value for the transform walking the graph: never overwrite it.
  if (in.traced() || in.use_count() != holders || !in.buffer() || in.buffer().use_count() != 1 || !in.buffer()->owned())
    return false;
  if (in.itemsize() != out.itemsize() || in.shape() != out.shape() || !in.row_contiguous() || in.offset() != 0)
    return false;
  in.buffer()->written_on_host();  // a copy on a GPU goes stale
  out.set_contiguous_data(in.buffer());
  return true;
}

void donate_or_copy(const Array& in, Array& out, long holders) {
  if (donate(in, out, holders)) return;
  out.allocate_contiguous();
  copy_into(in, out);
}

// A small row-contiguous `in` into `out` of the same shape and dtype with unit stride along its
// last axis: row by row with memmove (a decode step's key and value written into its cache, 60 a
// step, went through the strided engine's set-up at ~2 us each).
bool copy_rows(const Array& in, Array& out) {
  constexpr int64_t kMaxRowsCopy = int64_t(1) << 14;  // elements; larger copies share threads
  constexpr int kMaxRowsDims = 8;
  const int nd = out.ndim();
  if (nd == 0 || nd > kMaxRowsDims || in.dtype() != out.dtype() || in.shape() != out.shape() || !in.row_contiguous() ||
      out.strides()[size_t(nd - 1)] != 1 || out.size() > kMaxRowsCopy)
    return false;
  const int64_t item = int64_t(out.itemsize()), row = out.shape(nd - 1) * item;
  const char* src = in.data_bytes();
  char* base = out.data_bytes();
  int64_t idx[kMaxRowsDims] = {};
  for (int64_t r = 0, rows = out.size() / out.shape(nd - 1); r < rows; ++r, src += row) {
    int64_t at = 0;
    for (int d = 0; d < nd - 1; ++d) at += idx[d] * out.strides()[size_t(d)];
    std::memmove(base + at * item, src, size_t(row));
    for (int d = nd - 2; d >= 0 && ++idx[d] == out.shape(d); --d) idx[d] = 0;
  }
  return true;
}

void copy_into(const Array& in, Array& out) {
  if (out.size() == 0 || copy_rows(in, out)) return;
  std::vector<Operand> ops{{in.data_bytes(), in.dtype(), out.dtype(), broadcast_strides(in, out.shape())}};
  run(byte_copy_of(out.itemsize()), NoParams{}, std::move(ops), out.data_bytes(), out.dtype(), out.dtype(), out.shape(),
      out.strides());
}

namespace {

void eval_unary(const Unary& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  if (prim.op() == UnaryOp::copy || prim.op() == UnaryOp::stop_gradient) {
    // Same bits: share our own buffer; memory borrowed from outside (NumPy, DLPack) is copied,
    // since its owner may change it.
    if (in[0].dtype() == out[0].dtype() && in[0].shape() == out[0].shape() && in[0].buffer()->owned()) {
      out[0].set_data(in[0].buffer(), in[0].strides(), in[0].offset());
      return;
    }
    out[0].allocate_contiguous();
    copy_into(in[0], out[0]);
    return;
  }
  EwKernel k = kernels().unary[int(prim.op())][int(prim.compute()[0])];
  if (!k) missing_kernel(prim.name(), prim.compute()[0]);
  eval_elementwise(prim, k, in, out[0]);
}

void eval_binary(const Binary& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  EwKernel k = kernels().binary[int(prim.op())][int(prim.compute()[0])];
  if (!k) missing_kernel(prim.name(), prim.compute()[0]);
  eval_elementwise(prim, k, in, out[0]);
}

void eval_select(const Select& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  eval_elementwise(prim, kernels().select[int(prim.compute()[1])], in, out[0]);
}

}  // namespace

void register_elementwise_kernels(Backend& b) {
  b.add<Unary, eval_unary>();
  b.add<Binary, eval_binary>();
  b.add<Select, eval_select>();
}

}  // namespace cpu
}  // namespace nuvec
