// Gather, scatter and concatenate on the CPU.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/ctypes.h"
#include "core/primitives/indexing.h"
#include "core/threads.h"

namespace nuvec {
namespace {

// Index arrays as contiguous int64 over the broadcast index shape, each value checked and
// wrapped (negative counts from the end) before anything is read or written.
std::vector<Array> checked_indices(const std::vector<Array>& in, size_t first, const Shape& index_shape, const Array& x,
                                   const std::vector<int>& axes) {
  std::vector<Array> out;
  for (size_t k = 0; k < axes.size(); ++k) {
    Array idx = Array::allocate(index_shape, Dtype::int64);
    cpu::copy_into(in[first + k], idx);
    int64_t n = x.shape(axes[k]);
    int64_t* p = idx.data<int64_t>();
    // Negative indices wrap, in parallel and without branches (a vector loop); one out of bounds
    // is found again afterwards: below zero after the wrap (it was that minus n), or at least n.
    std::atomic<bool> bad{false};
    parallel_for(idx.size(), 1 << 16, [&](int64_t b, int64_t e) {
      bool ok = true;
      for (int64_t i = b; i < e; ++i) {
        int64_t v = p[i];
        ok &= (v >= -n) & (v < n);
        p[i] = v < 0 ? v + n : v;
      }
      if (!ok) bad.store(true, std::memory_order_relaxed);
    });
    if (bad.load())
      for (int64_t i = 0; i < idx.size(); ++i)
        if (p[i] < 0 || p[i] >= n)
          throw KernelError(EvalErrorKind::index, "index " + std::to_string(p[i] < 0 ? p[i] - n : p[i]) +
                                                      " is out of bounds for axis " + std::to_string(axes[k]) +
                                                      " with size " + std::to_string(n));
    out.push_back(std::move(idx));
  }
  return out;
}

// The element offset each index position p reaches in an array with `strides`: the sum over the
// indexed axes of index * stride (pointers and strides read once, not per element).
struct IndexOffsets {
  std::vector<const int64_t*> idx;
  std::vector<int64_t> stride;
  IndexOffsets(const std::vector<Array>& checked, const Strides& strides, const std::vector<int>& axes) {
    for (size_t k = 0; k < axes.size(); ++k)
      idx.push_back(checked[k].data<int64_t>()), stride.push_back(strides[axes[k]]);
  }
  int64_t at(int64_t p) const {
    int64_t off = 0;
    for (size_t k = 0; k < idx.size(); ++k) off += idx[k][p] * stride[k];
    return off;
  }
};

// Element offsets (in elements) of the axes of x not in `axes`, in row-major order.
std::vector<int64_t> rest_offsets(const Array& x, const Strides& strides, const std::vector<int>& axes) {
  Shape shape;
  Strides st;
  for (int d = 0; d < x.ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) shape.push_back(x.shape(d)), st.push_back(strides[d]);
  std::vector<int64_t> offsets(size_t(shape_size(shape)));
  for (size_t i = 0; i < offsets.size(); ++i) {
    int64_t rest = int64_t(i), off = 0;
    for (int d = int(shape.size()) - 1; d >= 0; --d) {
      off += (rest % shape[d]) * st[d];
      rest /= shape[d];
    }
    offsets[i] = off;
  }
  return offsets;
}

template <size_t N> void copy_elements(char* dst, const char* src, const std::vector<int64_t>& offsets) {
  for (size_t r = 0; r < offsets.size(); ++r) std::memcpy(dst + r * N, src + offsets[r] * int64_t(N), N);
}

// Random gathers ask for the element this many indices ahead into the L2 cache: the L2 keeps more
// misses in flight than the L1 fill buffers that the loop's own loads wait on.
constexpr int64_t kGatherAhead = 64;

// One element per index of a flat array (take), straight from a row-contiguous int32 or int64
// index array: each index wrapped and clamped into range before its read, so nothing outside x is
// read; an index out of bounds is then reported as checked_indices would (the result is dropped).
// Saves checked_indices' int64 copy and its pass (1M of 16M float32: 2.9 -> 1.8 ms). Returns false
// for element sizes it does not take.
template <class T, class I>
void gather_elements(const T* from, int64_t stride, int64_t n, const I* ip, int64_t count, T* to, int axis) {
  std::atomic<bool> bad{false};
  parallel_for(count, 1 << 15, [&](int64_t b, int64_t e) {
    auto at = [&](int64_t p) {
      const int64_t v = int64_t(ip[p]), w = v < 0 ? v + n : v;
      return std::min(std::max<int64_t>(w, 0), n - 1);
    };
    bool ok = true;
    int64_t p = b;
    for (; p < e; ++p) {
      const int64_t v = int64_t(ip[p]);
      ok &= (v >= -n) & (v < n);
      if (p + kGatherAhead < e) __builtin_prefetch(from + at(p + kGatherAhead) * stride);
      to[p] = from[at(p) * stride];
    }
    if (!ok) bad.store(true, std::memory_order_relaxed);
  });
  if (bad.load())
    for (int64_t p = 0; p < count; ++p)
      if (int64_t v = int64_t(ip[p]); v < -n || v >= n)
        throw KernelError(EvalErrorKind::index, "index " + std::to_string(v) + " is out of bounds for axis " +
                                                    std::to_string(axis) + " with size " + std::to_string(n));
}

template <class I> bool gather_flat(const Array& x, const Array& index, int axis, Array& o) {
  const int64_t n = x.shape(axis), stride = x.strides()[axis], count = o.size();
  const I* ip = index.data<I>();
  switch (x.itemsize()) {
    case 1: gather_elements(x.data<uint8_t>(), stride, n, ip, count, o.data<uint8_t>(), axis); return true;
    case 2: gather_elements(x.data<uint16_t>(), stride, n, ip, count, o.data<uint16_t>(), axis); return true;
    case 4: gather_elements(x.data<uint32_t>(), stride, n, ip, count, o.data<uint32_t>(), axis); return true;
    case 8: gather_elements(x.data<uint64_t>(), stride, n, ip, count, o.data<uint64_t>(), axis); return true;
    default: return false;
  }
}

void eval_gather(const Gather& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  const std::vector<int>& axes = prim.axes();
  Array& o = out[0];
  o.allocate_contiguous();
  if (o.size() == 0) return;
  int index_rank = o.ndim() - (x.ndim() - int(axes.size()));
  Shape index_shape(o.shape().begin(), o.shape().begin() + index_rank);
  if (axes.size() == 1 && x.ndim() == 1 && x.size() > 0 && in[1].shape() == index_shape && in[1].row_contiguous()) {
    if (in[1].dtype() == Dtype::int32 && gather_flat<int32_t>(x, in[1], axes[0], o)) return;
    if (in[1].dtype() == Dtype::int64 && gather_flat<int64_t>(x, in[1], axes[0], o)) return;
  }
  std::vector<Array> idx = checked_indices(in, 1, index_shape, x, axes);
  std::vector<int64_t> rest = rest_offsets(x, x.strides(), axes);
  int64_t count = shape_size(index_shape), block = int64_t(rest.size());
  size_t item = x.itemsize();
  const char* src = x.data_bytes();
  char* dst = o.data_bytes();
  bool rest_contiguous = true;  // the block is one run of memory: a single memcpy
  for (size_t r = 0; r < rest.size(); ++r) rest_contiguous &= rest[r] == int64_t(r);
  // One element per index (checked int64 indices of other dtypes or layouts): the same loop.
  if (block == 1 && axes.size() == 1 && gather_flat<int64_t>(x, idx[0], axes[0], o)) return;
  const IndexOffsets at(idx, x.strides(), axes);
  if (block == 1) {  // one element per index over several axes (take_along_axis): typed copies
    auto one = [&](auto zero) {
      using T = decltype(zero);
      parallel_for(count, 1 << 14, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) reinterpret_cast<T*>(dst)[p] = reinterpret_cast<const T*>(src)[at.at(p)];
      });
    };
    switch (item) {
      case 1: return one(uint8_t{});
      case 2: return one(uint16_t{});
      case 4: return one(uint32_t{});
      case 8: return one(uint64_t{});
      default: break;  // complex64 and wider: the general loop
    }
  }
  parallel_for(count, std::max<int64_t>(1, 16384 / std::max<int64_t>(block, 1)), [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) {
      const char* from = src + at.at(p) * int64_t(item);
      char* to = dst + p * block * int64_t(item);
      if (rest_contiguous) {
        std::memcpy(to, from, size_t(block) * item);
        continue;
      }
      switch (item) {
        case 1: copy_elements<1>(to, from, rest); break;
        case 2: copy_elements<2>(to, from, rest); break;
        case 4: copy_elements<4>(to, from, rest); break;
        default: copy_elements<8>(to, from, rest); break;
      }
    }
  });
}

// Lexicographic order of complex numbers (real part, then imaginary part).
template <class T> bool lex_less(T a, T b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}

template <class T> T combine(ScatterOp op, T a, T b) {
  using cpu::convert;
  if constexpr (std::is_same_v<T, cpu::f16> || std::is_same_v<T, cpu::bf16>) {
    return convert<T>(combine(op, convert<float>(a), convert<float>(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ScatterOp::add:
      case ScatterOp::maximum: return a || b;
      case ScatterOp::multiply:
      case ScatterOp::minimum: return a && b;
      case ScatterOp::set: return b;
    }
  } else if constexpr (cpu::is_complex_v<T>) {
    switch (op) {
      case ScatterOp::add: return a + b;
      case ScatterOp::multiply: return a * b;
      // Complex numbers order lexicographically, as maximum and sort do.
      case ScatterOp::maximum: return lex_less(a, b) ? b : a;
      case ScatterOp::minimum: return lex_less(b, a) ? b : a;
      case ScatterOp::set: return b;
    }
  } else {
    switch (op) {
      case ScatterOp::add: return T(a + b);
      case ScatterOp::multiply: return T(a * b);
      case ScatterOp::maximum: return (b > a || b != b) ? b : a;
      case ScatterOp::minimum: return (b < a || b != b) ? b : a;
      case ScatterOp::set: return b;
    }
  }
  return b;  // unreachable: every op is a case (-Werror=switch)
}

// Index k of position j along axis k, of an index array that varies along that axis only.
int64_t axis_index(const Array& idx, int k, int64_t j) {
  const int64_t at = j * idx.strides()[size_t(k)];
  return idx.dtype() == Dtype::int32 ? idx.data<int32_t>()[at] : idx.data<int64_t>()[at];
}

// A `set` scatter whose index arrays are, axis by axis, runs of consecutive in-bounds indices
// (slice_update with an array start: an outer product of ranges) writes one rectangular window,
// copied as slice_update's: into x's own buffer when nothing else holds it. False for any other.
bool scatter_window(const Scatter& prim, const std::vector<Array>& in, Array& o) {
  const Array& x = in[0];
  const int nd = x.ndim();
  if (prim.op() != ScatterOp::set || int(prim.axes().size()) != nd || in.size() != size_t(nd) + 2 || in[1].ndim() != nd)
    return false;
  Shape first(size_t(nd), 0);  // the window's start on each axis
  for (int k = 0; k < nd; ++k) {
    const Array& idx = in[size_t(k) + 2];
    if (prim.axes()[size_t(k)] != k || idx.ndim() != nd || idx.shape(k) != in[1].shape(k) ||
        (idx.dtype() != Dtype::int32 && idx.dtype() != Dtype::int64))
      return false;
    for (int d = 0; d < nd; ++d)
      if (d != k && idx.shape(d) > 1 && idx.strides()[size_t(d)] != 0) return false;
    const int64_t n = x.shape(k), len = idx.shape(k);
    for (int64_t j = 0; j < len; ++j) {
      int64_t v = axis_index(idx, k, j);
      v = v < 0 ? v + n : v;
      if (j == 0) first[size_t(k)] = v;
      if (v != first[size_t(k)] + j || v < 0 || v >= n) return false;
    }
  }
  cpu::donate_or_copy(x, o);
  int64_t offset = o.offset();
  for (int k = 0; k < nd; ++k) offset += first[size_t(k)] * o.strides()[size_t(k)];
  Array window = Array::from_buffer(in[1].shape(), o.dtype(), o.buffer(), o.strides(), offset);
  cpu::copy_into(in[1], window);
  return true;
}

void eval_scatter(const Scatter& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  const std::vector<int>& axes = prim.axes();
  Array& o = out[0];
  if (scatter_window(prim, in, o)) return;
  Shape index_shape(in[1].shape().begin(), in[1].shape().begin() + (in[1].ndim() - (x.ndim() - int(axes.size()))));
  // Check the indices before the output exists: a bad one leaves nothing half written.
  std::vector<Array> idx = checked_indices(in, 2, index_shape, x, axes);
  Array updates = Array::allocate(in[1].shape(), x.dtype());
  cpu::copy_into(in[1], updates);
  cpu::donate_or_copy(x, o);  // in place where nothing else holds x
  if (updates.size() == 0) return;
  std::vector<int64_t> rest = rest_offsets(o, o.strides(), axes);
  int64_t count = shape_size(index_shape), block = int64_t(rest.size());
  cpu::for_each_dtype([&](auto d) {
    using T = cpu::ctype_t<d.value>;
    if (d.value != o.dtype()) return;
    T* dst = o.data<T>();
    const T* src = updates.data<T>();
    // In index order, so repeated indices combine deterministically; the op chosen once.
    const IndexOffsets at(idx, o.strides(), axes);
    auto each = [&](auto op) {
      for (int64_t p = 0; p < count; ++p) {
        const int64_t base = at.at(p);
        const T* u = src + p * block;
        for (int64_t r = 0; r < block; ++r) {
          T& t = dst[base + rest[r]];
          t = combine(op.value, t, u[r]);
        }
      }
    };
    switch (prim.op()) {
      case ScatterOp::set: return each(std::integral_constant<ScatterOp, ScatterOp::set>{});
      case ScatterOp::add: return each(std::integral_constant<ScatterOp, ScatterOp::add>{});
      case ScatterOp::multiply: return each(std::integral_constant<ScatterOp, ScatterOp::multiply>{});
      case ScatterOp::maximum: return each(std::integral_constant<ScatterOp, ScatterOp::maximum>{});
      case ScatterOp::minimum: return each(std::integral_constant<ScatterOp, ScatterOp::minimum>{});
    }
  });
}

void eval_concatenate(const Concatenate& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& o = out[0];
  o.allocate_contiguous();
  int64_t offset = 0;
  for (const Array& x : in) {
    if (x.size() > 0) {
      // A strided window of the output for this input, filled by the copy engine.
      Array window = Array::from_buffer(x.shape(), o.dtype(), o.buffer(), o.strides(), offset);
      cpu::copy_into(x, window);
    }
    offset += x.shape(prim.axis()) * o.strides()[prim.axis()];
  }
}

}  // namespace

void cpu::register_indexing_kernels(Backend& b) {
  b.add<Gather, eval_gather>();
  b.add<Scatter, eval_scatter>();
  b.add<Concatenate, eval_concatenate>();
}

}  // namespace nuvec
