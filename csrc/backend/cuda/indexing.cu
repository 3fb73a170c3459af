// Gather, scatter and concatenate on the GPU. Indices are checked on the device and a bad one is
// reported from evaluation, as on the CPU (so a gather or scatter waits for the GPU once). Scatter
// combines repeated indices in index order, one thread per element of the updated block, so the
// result is the CPU's and the same run to run.
#include <string>

#include "backend/cuda/copy.h"
#include "backend/cuda/dtypes.cuh"
#include "backend/cuda/layout.cuh"
#include "core/errors.h"
#include "core/primitives/indexing.h"

namespace nuvec::cuda {
namespace {

// The index arrays of a gather or scatter, broadcast over the index shape.
struct Indices {
  int n = 0;
  const void* data[kMaxDims] = {};
  Dtype dtype[kMaxDims] = {};
  Strided walk[kMaxDims];         // over the index shape, 0 strides where broadcast
  int64_t size[kMaxDims] = {};    // the indexed axis' length
  int64_t stride[kMaxDims] = {};  // the indexed axis' stride in the source (or output)
};

// The first bad index: {found, which index array, its value}.
struct BadIndex {
  unsigned long long found;
  long long which, value;
};

__device__ inline int64_t read_index(const void* p, Dtype d, int64_t i) {
  return visit_dtype(d, [&](auto tag) -> int64_t {
    using T = ctype_t<tag.value>;
    if constexpr (is_int_v<T>)
      return int64_t(static_cast<const T*>(p)[i]);
    else
      return 0;  // index arrays are integers (the op checks)
  });
}

// The offset that index tuple p selects, or -1 after reporting a bad index.
__device__ inline int64_t index_base(const Indices& ix, int64_t p, BadIndex* bad) {
  int64_t base = 0;
  for (int k = 0; k < ix.n; ++k) {
    int64_t v = read_index(ix.data[k], ix.dtype[k], ix.walk[k].offset(p)), n = ix.size[k];
    if (v < -n || v >= n) {
      if (atomicCAS(&bad->found, 0ull, 1ull) == 0ull) bad->which = k, bad->value = v;
      return -1;
    }
    base += (v < 0 ? v + n : v) * ix.stride[k];
  }
  return base;
}

// False when a layout needs more than kMaxDims dimensions (the caller runs the CPU kernel).
bool indices_of(const std::vector<Array>& in, size_t first, const Shape& index_shape, const Array& x,
                const Strides& strides, const std::vector<int>& axes, Indices& ix) {
  if (axes.size() > size_t(kMaxDims) || index_shape.size() > size_t(kMaxDims)) return false;
  int rank = int(index_shape.size());
  ix.n = int(axes.size());
  for (int k = 0; k < ix.n; ++k) {
    const Array& a = in[first + size_t(k)];
    ix.data[k] = a.size() ? static_cast<const void*>(static_cast<const char*>(a.buffer()->device_data()) +
                                                     a.offset() * int64_t(a.itemsize()))
                          : nullptr;
    ix.dtype[k] = a.dtype();
    Strided& w = ix.walk[k];
    w.nd = rank;
    for (int d = 0; d < rank; ++d) {
      int src = d - (rank - a.ndim());
      w.shape[d] = index_shape[size_t(d)];
      w.strides[d] = src >= 0 && a.shape(src) != 1 ? a.strides()[size_t(src)] : 0;
    }
    ix.size[k] = x.shape(axes[size_t(k)]);
    ix.stride[k] = strides[size_t(axes[size_t(k)])];
  }
  return true;
}

// The walk over the axes of `x` (with `strides`) that are not indexed, in order.
bool rest_of(const Array& x, const Strides& strides, const std::vector<int>& axes, Strided& rest) {
  rest = Strided{};
  for (int d = 0; d < x.ndim(); ++d) {
    bool indexed = false;
    for (int a : axes) indexed |= a == d;
    if (indexed) continue;
    if (rest.nd == kMaxDims) return false;
    rest.shape[rest.nd] = x.shape(d), rest.strides[rest.nd] = strides[size_t(d)];
    ++rest.nd;
  }
  return true;
}

// A device flag for bad indices, then the check after the kernel ran (waits for it).
struct BadIndexFlag {
  std::shared_ptr<Buffer> buffer = scratch(sizeof(BadIndex));
  BadIndex* device() {
    auto* p = scratch_data<BadIndex>(buffer);
    check(cudaMemsetAsync(p, 0, sizeof(BadIndex), stream()), "clearing the index check");
    return p;
  }
  void raise_if_set(const Indices& ix, const std::vector<int>& axes) {
    BadIndex b{};
    check(cudaMemcpy(&b, buffer->device_data(), sizeof(b), cudaMemcpyDeviceToHost), "reading the index check");
    if (b.found)
      throw KernelError(EvalErrorKind::index, "index " + std::to_string(b.value) + " is out of bounds for axis " +
                                                  std::to_string(axes[size_t(b.which)]) + " with size " +
                                                  std::to_string(ix.size[b.which]));
  }
};

template <class T> __global__ void gather_kernel(const T* src, T* dst, Indices ix, Strided rest, int64_t count,
                                                 int64_t block, BadIndex* bad) {
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count * block) return;
  int64_t p = i / block, r = i - p * block;
  int64_t base = index_base(ix, p, bad);
  if (base >= 0) dst[i] = src[base + rest.offset(r)];
}

void eval_gather(const Gather& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  const std::vector<int>& axes = prim.axes();
  Array& o = out[0];
  int index_rank = o.ndim() - (x.ndim() - int(axes.size()));
  Shape index_shape(o.shape().begin(), o.shape().begin() + index_rank);
  Indices ix;
  Strided rest;
  if (!indices_of(in, 1, index_shape, x, x.strides(), axes, ix) || !rest_of(x, x.strides(), axes, rest))
    return on_host(prim, in, out);
  allocate(o);
  if (o.size() == 0) return;
  int64_t count = shape_size(index_shape), block = rest.size();
  BadIndexFlag flag;
  BadIndex* bad = flag.device();
  unsigned grid = unsigned(ceil_div(count * block, 256));
  auto launch = [&](auto tag) {
    using T = decltype(tag);
    gather_kernel<T><<<grid, 256, 0, stream()>>>(device_in<T>(x), device_out<T>(o), ix, rest, count, block, bad);
  };
  switch (x.itemsize()) {
    case 1: launch(uint8_t{}); break;
    case 2: launch(uint16_t{}); break;
    case 4: launch(uint32_t{}); break;
    default: launch(uint64_t{}); break;  // 8 bytes: int64, float64, complex64
  }
  check_launch("gather");
  flag.raise_if_set(ix, axes);
}

__global__ void check_kernel(Indices ix, int64_t count, BadIndex* bad) {
  int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p < count) index_base(ix, p, bad);
}

template <class T> __device__ inline bool lex_less(T a, T b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}

// The CPU's combine (backend/cpu/indexing.cpp): half types through float32, bool as logic,
// complex numbers ordered lexicographically, NaN wins maximum and minimum.
template <class T> __device__ inline T combine(ScatterOp op, T a, T b) {
  if constexpr (is_half_v<T>) {
    return convert<T>(combine(op, convert<float>(a), convert<float>(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ScatterOp::add:
      case ScatterOp::maximum: return a || b;
      case ScatterOp::multiply:
      case ScatterOp::minimum: return a && b;
      case ScatterOp::set: return b;
    }
  } else if constexpr (is_complex_v<T>) {
    switch (op) {
      case ScatterOp::add: return a + b;
      case ScatterOp::multiply: return a * b;
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
  return b;
}

// Thread r owns element r of every indexed block and applies the updates in index order.
template <class T> __global__ void scatter_kernel(ScatterOp op, T* dst, const T* upd, Strided upd_walk, Indices ix,
                                                  Strided rest, int64_t count, int64_t block) {
  int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= block) return;
  int64_t at = rest.offset(r);
  for (int64_t p = 0; p < count; ++p) {
    int64_t base = index_base(ix, p, nullptr);  // checked before: never bad here
    T& t = dst[base + at];
    t = combine(op, t, upd[upd_walk.offset(p * block + r)]);
  }
}

void eval_scatter(const Scatter& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  const Array& updates = in[1];
  const std::vector<int>& axes = prim.axes();
  Array& o = out[0];
  Shape index_shape(updates.shape().begin(),
                    updates.shape().begin() + (updates.ndim() - (x.ndim() - int(axes.size()))));
  Strides out_strides = Array::row_strides(x.shape());  // the output is contiguous
  Indices ix;
  Strided rest, upd_walk;
  if (!indices_of(in, 2, index_shape, x, out_strides, axes, ix) || !rest_of(x, out_strides, axes, rest) ||
      !walk(updates, [](int) { return true; }, upd_walk) || updates.dtype() != x.dtype())
    return on_host(prim, in, out);
  int64_t count = shape_size(index_shape), block = rest.size();
  // Check the indices before the output exists: a bad one leaves nothing half written.
  if (count > 0 && block > 0) {
    BadIndexFlag flag;
    check_kernel<<<unsigned(ceil_div(count, 256)), 256, 0, stream()>>>(ix, count, flag.device());
    check_launch("scatter's index check");
    flag.raise_if_set(ix, axes);
  }
  allocate(o);
  copy_into(x, o);
  if (count == 0 || block == 0) return;
  visit_dtype(o.dtype(), [&](auto tag) {
    using T = ctype_t<tag.value>;
    scatter_kernel<T><<<unsigned(ceil_div(block, 128)), 128, 0, stream()>>>(
        prim.op(), device_out<T>(o), device_in<T>(updates), upd_walk, ix, rest, count, block);
  });
  check_launch("scatter");
}

void eval_concatenate(const Concatenate& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& o = out[0];
  allocate(o);
  int64_t offset = 0;
  for (const Array& x : in) {
    if (x.size() > 0) {
      // A strided window of the output for this input, filled by the copy kernel.
      Array window = Array::from_buffer(x.shape(), o.dtype(), o.buffer(), o.strides(), offset);
      copy_into(x, window);
    }
    offset += x.shape(prim.axis()) * o.strides()[size_t(prim.axis())];
  }
}

}  // namespace

void register_indexing_kernels(Backend& b) {
  b.add<Gather, eval_gather>();
  b.add<Scatter, eval_scatter>();
  b.add<Concatenate, eval_concatenate>();
}

}  // namespace nuvec::cuda
