// Reductions, arg-reductions, softmax and logsumexp on the GPU. No atomics: each output is reduced
// by a group of threads of one block (a whole block for long contiguous rows, one thread per
// output for column sums), each lane walking its elements in order and the lanes joined by a
// fixed tree; when the outputs are too few to fill the GPU the reduced range is cut into chunks
// fixed by the shape, whose partial results a second pass joins the same way. So the bits of a
// result depend on the input's layout alone.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "backend/cuda/accumulate.cuh"
#include "backend/cuda/layout.cuh"
#include "core/primitives/reduce.h"

namespace nuvec::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int64_t kTargetThreads = int64_t(1) << 18;  // enough to fill an H200
constexpr int64_t kPerLane = 16;                      // fewest elements a lane of a chunk reduces

// The type sums and products accumulate in (MLX's sum dtype; half types in float32).
template <class T> struct SumAccOf { using type = Compute<T>; };
template <> struct SumAccOf<bool> { using type = int32_t; };
template <> struct SumAccOf<int8_t> { using type = int32_t; };
template <> struct SumAccOf<int16_t> { using type = int32_t; };
template <> struct SumAccOf<uint8_t> { using type = uint32_t; };
template <> struct SumAccOf<uint16_t> { using type = uint32_t; };

template <class A> __device__ A identity(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return convert<A>(0);
    case ReduceOp::prod: return convert<A>(1);
    case ReduceOp::max: return extreme<A>(false);
    case ReduceOp::min: return extreme<A>(true);
    case ReduceOp::all: return convert<A>(1);
    case ReduceOp::any: return convert<A>(0);
  }
  return A{};
}

// The CPU's combining step: a NaN wins max and min and then stays; complex compares
// lexicographically.
template <class A> __device__ __forceinline__ A combine(ReduceOp op, A a, A b) {
  switch (op) {
    case ReduceOp::sum: return add(a, b);
    case ReduceOp::prod: return mul(a, b);
    case ReduceOp::max: return (greater(b, a) || (!is_complex_v<A> && is_nan(b))) ? b : a;
    case ReduceOp::min: return (greater(a, b) || (!is_complex_v<A> && is_nan(b))) ? b : a;
    case ReduceOp::all: return convert<A>(convert<bool>(a) && convert<bool>(b));
    case ReduceOp::any: return convert<A>(convert<bool>(a) || convert<bool>(b));
  }
  return a;
}

// Group g of `tpo` lanes reduces the elements [c * chunk, (c + 1) * chunk) of output o, where
// o = g % outputs and c = g / outputs; its result goes to out[o] (one chunk) or to `partial`:
// [c][o] for one lane per output (a column reduction again), [o][c] otherwise (rows again).
template <class T, class A, class O>
__global__ void reduce_kernel(const T* x, Strided kept, Strided red, int64_t outputs, int64_t n, int64_t chunks,
                              int64_t chunk, int tpo, ReduceOp op, O* out, A* partial) {
  A* smem = shared_slots<A, kBlock>();
  int lane = int(threadIdx.x) % tpo;
  int64_t g = int64_t(blockIdx.x) * (kBlock / tpo) + threadIdx.x / tpo;
  int64_t o = g % outputs, c = g / outputs;
  bool active = c < chunks;
  A acc = identity<A>(op), comp = convert<A>(0);
  if (active) {
    const T* base = x + kept.offset(o);
    int64_t end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
    for (int64_t r = c * chunk + lane; r < end; r += tpo) {
      A v = convert<A>(base[red.offset(r)]);
      if (op == ReduceOp::sum)
        add_compensated(acc, comp, v);
      else
        acc = combine(op, acc, v);
    }
  }
  acc = group_reduce(smem, acc, lane, tpo, [op](A a, A b) { return combine(op, a, b); });
  if (!active || lane != 0) return;
  if (chunks == 1)
    out[o] = convert<O>(acc);
  else
    partial[tpo == 1 ? c * outputs + o : o * chunks + c] = acc;
}

// Lanes per output: one for column-like layouts and short rows, else enough for four elements
// each (a power of two from 32 to the block).
int lanes_for(bool rows, int64_t n) {
  if (!rows || n < 16) return 1;
  int tpo = 32;
  while (tpo < kBlock && tpo * 4 < n) tpo *= 2;
  return tpo;
}

// Whether the reduced elements lie closer together than neighbouring outputs' (rows to reduce).
bool row_like(const Strided& kept, int64_t reduced_stride) {
  return kept.nd == 0 || llabs(reduced_stride) <= llabs(kept.strides[kept.nd - 1]);
}

// How many chunks of how many elements each output's n elements are cut into: enough groups to
// fill the GPU, at least kPerLane elements per lane. A function of the sizes alone.
struct Chunks { int64_t count = 1, size = 0; };
Chunks chunks_for(int64_t outputs, int tpo, int64_t n) {
  Chunks c{1, n};
  if (outputs * tpo < kTargetThreads)
    c.count = std::max<int64_t>(1, std::min(ceil_div(kTargetThreads, outputs * tpo), n / (tpo * kPerLane)));
  if (c.count > 1) c.size = ceil_div(n, c.count), c.count = ceil_div(n, c.size);
  return c;
}

// x's elements kept.offset(o) + red.offset(r) reduced over r < n into out[o] (o < outputs).
template <class T, class A, class O>
void reduce_into(const T* x, const Strided& kept, const Strided& red, int64_t outputs, int64_t n, ReduceOp op, O* out) {
  int tpo = lanes_for(red.nd > 0 && row_like(kept, red.strides[red.nd - 1]), n);
  auto [chunks, chunk] = chunks_for(outputs, tpo, n);
  std::shared_ptr<Buffer> parts = chunks > 1 ? scratch(size_t(outputs * chunks) * sizeof(A)) : nullptr;
  A* partial = parts ? scratch_data<A>(parts) : nullptr;
  int64_t blocks = ceil_div(outputs * chunks * tpo, kBlock);
  reduce_kernel<T, A, O>
      <<<unsigned(blocks), kBlock, 0, stream()>>>(x, kept, red, outputs, n, chunks, chunk, tpo, op, out, partial);
  check_launch("reducing");
  if (chunks == 1) return;
  Strided pk, pr;  // the partial results, [chunks][outputs] or [outputs][chunks]
  pk.nd = pr.nd = 1;
  pk.shape[0] = outputs, pr.shape[0] = chunks;
  pk.strides[0] = tpo == 1 ? 1 : chunks;
  pr.strides[0] = tpo == 1 ? outputs : 1;
  reduce_into<A, A, O>(partial, pk, pr, outputs, chunks, op, out);
}

template <class T, class A> void reduce_as(const Reduce& p, const Array& x, const Strided& kept, const Strided& red,
                                           Array& y, const std::vector<Array>& in, std::vector<Array>& out) {
  int64_t n = red.size();
  if (y.dtype() == dtype_of<A>())
    return reduce_into<T, A, A>(device_in<T>(x), kept, red, y.size(), n, p.op(), device_out<A>(y));
  if constexpr (is_half_v<T>)
    if (y.dtype() == x.dtype())
      return reduce_into<T, A, T>(device_in<T>(x), kept, red, y.size(), n, p.op(), device_out<T>(y));
  on_host(p, in, out);  // an output dtype no op gives (the CPU converts any)
}

void eval_reduce(const Reduce& p, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  auto reduced = [&](int i) { return std::binary_search(p.axes().begin(), p.axes().end(), i); };
  Strided kept, red;
  if (!walk(x, [&](int i) { return !reduced(i); }, kept) || !walk(x, reduced, red)) return on_host(p, in, out);
  allocate(out[0]);
  if (out[0].size() == 0) return;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = ctype_t<tag.value>;
    switch (p.op()) {
      case ReduceOp::sum:
      case ReduceOp::prod: return reduce_as<T, typename SumAccOf<T>::type>(p, x, kept, red, out[0], in, out);
      case ReduceOp::max:
      case ReduceOp::min: return reduce_as<T, Compute<T>>(p, x, kept, red, out[0], in, out);
      case ReduceOp::all:
      case ReduceOp::any: return reduce_as<T, bool>(p, x, kept, red, out[0], in, out);
    }
  });
}

// ------------------------------------------------------------------------------ arg-reductions
template <class C> struct Arg {
  C v;
  uint32_t i;  // kNone: no element yet
};
constexpr uint32_t kNone = ~0u;

// Whether a beats b: the extreme value, a NaN before any number (NumPy's), the first index on ties.
template <class C> __device__ __forceinline__ bool beats(Arg<C> a, Arg<C> b, bool is_max) {
  if (b.i == kNone || a.i == kNone) return a.i != kNone;
  if constexpr (!is_complex_v<C>) {
    bool na = is_nan(a.v), nb = is_nan(b.v);
    if (na || nb) return na && (!nb || a.i < b.i);
  }
  if (greater(a.v, b.v)) return is_max;
  if (greater(b.v, a.v)) return !is_max;
  return a.i < b.i;
}

// As reduce_kernel: group g reduces chunk c = g / outputs of output o = g % outputs, into out[o]
// or, with several chunks, into partial[o * chunks + c] (whose indices are the row's).
template <class T> __global__ void arg_kernel(const T* x, Strided kept, int64_t stride, int64_t outputs, int64_t n,
                                              int64_t chunks, int64_t chunk, int tpo, bool is_max, uint32_t* out,
                                              Arg<Compute<T>>* partial) {
  using C = Compute<T>;
  Arg<C>* smem = shared_slots<Arg<C>, kBlock>();
  int lane = int(threadIdx.x) % tpo;
  int64_t g = int64_t(blockIdx.x) * (kBlock / tpo) + threadIdx.x / tpo;
  int64_t o = g % outputs, c = g / outputs;
  bool active = c < chunks;
  Arg<C> best{C{}, kNone};
  if (active) {
    const T* base = x + kept.offset(o);
    int64_t end = (c + 1) * chunk < n ? (c + 1) * chunk : n;
    for (int64_t r = c * chunk + lane; r < end; r += tpo) {
      Arg<C> a{convert<C>(base[r * stride]), uint32_t(r)};
      if (beats(a, best, is_max)) best = a;
    }
  }
  best = group_reduce(smem, best, lane, tpo, [is_max](Arg<C> a, Arg<C> b) { return beats(b, a, is_max) ? b : a; });
  if (!active || lane != 0) return;
  if (chunks == 1)
    out[o] = best.i;
  else
    partial[o * chunks + c] = best;
}

// out[o] = the best of output o's chunks, taken in order.
template <class C>
__global__ void arg_join_kernel(const Arg<C>* partial, int64_t outputs, int64_t chunks, bool is_max, uint32_t* out) {
  int64_t o = int64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (o >= outputs) return;
  Arg<C> best{C{}, kNone};
  for (int64_t c = 0; c < chunks; ++c)
    if (beats(partial[o * chunks + c], best, is_max)) best = partial[o * chunks + c];
  out[o] = best.i;
}

void eval_arg_reduce(const ArgReduce& p, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  Strided kept;
  if (!walk(x, [&](int i) { return i != p.axis(); }, kept)) return on_host(p, in, out);
  allocate(out[0]);
  int64_t outputs = out[0].size(), n = x.shape(p.axis()), stride = x.strides()[p.axis()];
  if (outputs == 0) return;
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = ctype_t<tag.value>;
    using C = Compute<T>;
    // Complex NaNs compare with nothing, so the CPU's result depends on its sequential order:
    // one lane per output walking the whole row keeps it.
    constexpr bool sequential = is_complex_v<T>;
    int tpo = lanes_for(!sequential && row_like(kept, stride), n);
    Chunks ch = sequential ? Chunks{1, n} : chunks_for(outputs, tpo, n);
    auto parts = ch.count > 1 ? scratch(size_t(outputs * ch.count) * sizeof(Arg<C>)) : nullptr;
    Arg<C>* partial = parts ? scratch_data<Arg<C>>(parts) : nullptr;
    uint32_t* y = device_out<uint32_t>(out[0]);
    arg_kernel<T><<<unsigned(ceil_div(outputs * ch.count * tpo, kBlock)), kBlock, 0, stream()>>>(
        device_in<T>(x), kept, stride, outputs, n, ch.count, ch.size, tpo, p.is_max(), y, partial);
    check_launch("arg-reducing");
    if (ch.count == 1) return;
    arg_join_kernel<C>
        <<<unsigned(ceil_div(outputs, kBlock)), kBlock, 0, stream()>>>(partial, outputs, ch.count, p.is_max(), y);
    check_launch("arg-reducing");
  });
}

// --------------------------------------------------------------------- softmax and logsumexp
// One group per row of the last axis: the max (NaNs skipped, as the CPU's), then Σ exp(x - max)
// compensated per lane and joined by the tree, then the outputs (or log of the sum).
template <class T> __global__ void softmax_kernel(const T* x, Strided kept, int64_t stride, int64_t rows, int64_t n,
                                                  int tpo, bool lse, T* out) {
  float* smem = shared_slots<float, kBlock>();
  int lane = int(threadIdx.x) % tpo;
  int64_t o = int64_t(blockIdx.x) * (kBlock / tpo) + threadIdx.x / tpo;
  bool active = o < rows;
  const T* base = x + (active ? kept.offset(o) : 0);
  float m = -INFINITY;
  if (active)
    for (int64_t r = lane; r < n; r += tpo) {
      float v = convert<float>(base[r * stride]);
      m = v > m ? v : m;
    }
  m = group_reduce(smem, m, lane, tpo, [](float a, float b) { return b > a ? b : a; });
  // logsumexp: an infinite max is replaced by 0, so exp gives the right infinity (or 0).
  float shift = lse && !isfinite(m) ? 0.0f : m;
  float s = 0.0f, c = 0.0f;
  if (active)
    for (int64_t r = lane; r < n; r += tpo) add_compensated(s, c, expf(convert<float>(base[r * stride]) - shift));
  s = group_reduce(smem, s, lane, tpo, [](float a, float b) { return a + b; });
  if (!active) return;
  if (lse) {
    if (lane == 0) out[o] = convert<T>(shift + logf(s));
    return;
  }
  float inv = 1.0f / s;
  for (int64_t r = lane; r < n; r += tpo) out[o * n + r] = convert<T>(expf(convert<float>(base[r * stride]) - m) * inv);
}

void rows_of_last_axis(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out, bool lse) {
  const Array& x = in[0];
  Strided kept;
  if (!walk(x, [&](int i) { return i != x.ndim() - 1; }, kept)) return on_host(p, in, out);
  allocate(out[0]);
  if (out[0].size() == 0) return;
  int64_t n = x.shape(-1), rows = x.size() / n, stride = x.strides().back();
  int tpo = lanes_for(true, n);
  if (tpo == 1) tpo = 32;  // (lanes without elements add nothing)
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = ctype_t<tag.value>;
    if constexpr (std::is_same_v<T, float> || is_half_v<T>) {
      softmax_kernel<T><<<unsigned(ceil_div(rows * tpo, kBlock)), kBlock, 0, stream()>>>(
          device_in<T>(x), kept, stride, rows, n, tpo, lse, device_out<T>(out[0]));
      check_launch(lse ? "logsumexp" : "softmax");
    } else {
      on_host(p, in, out);  // the ops compose other dtypes
    }
  });
}

void eval_softmax(const Softmax& p, const std::vector<Array>& in, std::vector<Array>& out) {
  rows_of_last_axis(p, in, out, false);
}
void eval_logsumexp(const LogSumExp& p, const std::vector<Array>& in, std::vector<Array>& out) {
  rows_of_last_axis(p, in, out, true);
}

}  // namespace

void register_reduce_kernels(Backend& b) {
  b.add<Reduce, eval_reduce>();
  b.add<ArgReduce, eval_arg_reduce>();
  b.add<Softmax, eval_softmax>();
  b.add<LogSumExp, eval_logsumexp>();
}

}  // namespace nuvec::cuda
