// The reduction engine on the CPU: lays the input out as rows or as column blocks, cuts the
// work into pieces fixed by the shape (never by the thread count), runs the processor's kernels
// on them and joins partial results in a fixed pairwise order. So the bits of a result do not
// depend on how many threads computed it.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/ctypes.h"
#include "backend/cpu/items.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/reduce.h"
#include "core/primitives/reduce.h"
#include "core/threads.h"

namespace nuvec {
namespace cpu {

const ReduceTable& reduce_kernels() {
  return kernel_table<ReduceTable>([] { return NUVEC_FOR_ISA(fill_reduce); });
}

namespace {

constexpr int64_t kRowChunk = int64_t(1) << 16;      // elements of one row that one task reduces
constexpr int64_t kTile = 1024;                      // columns of one column-block task
constexpr int64_t kTargetTasks = 16;                 // pieces a column reduction is cut into, at least
constexpr int64_t kMinChunkRows = 256;               // rows of one piece when rows are cut
constexpr int64_t kTaskElements = int64_t(1) << 14;  // elements grouped into one row task
constexpr int64_t kSerialBelow = int64_t(1) << 15;   // total elements computed on the caller alone

// x itself when row-major, else a contiguous copy.
Array contiguous(const Array& x) {
  if (x.row_contiguous()) return x;
  Array c = Array::allocate(x.shape(), x.dtype());
  copy_into(x, c);
  return c;
}

// Runs fn(i) for i < n: on the pool when the work is large enough. Each i is computed the same
// way wherever it runs.
void for_tasks(int64_t n, int64_t elements, const std::function<void(int64_t)>& fn) {
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  };
  if (elements < kSerialBelow)
    body(0, n);
  else
    parallel_for(n, 1, body);
}

using MergeFn = void (*)(void*, const void*, int64_t);

// Joins n partial results (w accumulators each, `step` bytes apart) into the first, pairwise.
void merge_pairwise(char* parts, int64_t n, int64_t step, int64_t w, MergeFn merge) {
  if (n <= 1) return;
  int64_t h = n / 2;
  merge_pairwise(parts, h, step, w, merge);
  merge_pairwise(parts + h * step, n - h, step, w, merge);
  merge(parts, parts + h * step, w);
}

// The contiguous input seen as (outer, reduced, inner) blocks.
struct Layout { int64_t outer = 1, reduced = 1, inner = 1; };

// Empty when reduced axes are interleaved with kept ones (size-1 axes aside).
std::optional<Layout> split(const Shape& shape, const std::vector<int>& axes) {
  Layout l;
  enum { before, within, after } state = before;
  for (int i = 0; i < int(shape.size()); ++i) {
    if (shape[i] == 1) continue;
    if (std::binary_search(axes.begin(), axes.end(), i)) {
      if (state == after) return std::nullopt;
      state = within;
      l.reduced *= shape[i];
    } else if (state == before) {
      l.outer *= shape[i];
    } else {
      state = after;
      l.inner *= shape[i];
    }
  }
  return l;
}

// A contiguous copy of x as (kept, reduced, trailing kept) blocks: the kept axes that precede
// the last reduced one first, then the reduced axes, then the kept axes after the last reduced
// one, which stay innermost so the copy moves runs of them and the reduction runs on columns.
Array interleaved_to_blocks(const Array& x, const std::vector<int>& axes, Layout& l) {
  const int last = axes.back();
  auto reduced = [&](int i) { return std::binary_search(axes.begin(), axes.end(), i); };
  Shape shape;
  Strides strides;
  l = Layout{};
  for (int pass = 0; pass < 3; ++pass)
    for (int i = 0; i < x.ndim(); ++i) {
      const int group = reduced(i) ? 1 : (i < last ? 0 : 2);
      if (group != pass) continue;
      shape.push_back(x.shape(i));
      strides.push_back(x.strides()[i]);
      (group == 0 ? l.outer : group == 1 ? l.reduced : l.inner) *= x.shape(i);
    }
  Array view = Array::from_buffer(shape, x.dtype(), x.buffer(), strides, x.offset());
  Array c = Array::allocate(shape, x.dtype());
  copy_into(view, c);
  return c;
}

// acc[r] = reduction of row r (n contiguous elements); long rows are cut into kRowChunk pieces.
void reduce_rows(const ReduceKernel& k, const char* src, size_t isz, int64_t rows, int64_t n, char* acc, size_t asz) {
  int64_t chunks = std::max<int64_t>(1, ceil_div(n, kRowChunk));
  if (chunks == 1) {
    // At least four rows a task: the kernels reduce four at once.
    int64_t per = std::max<int64_t>(4, kTaskElements / std::max<int64_t>(n, 1));
    for_tasks(ceil_div(rows, per), rows * n, [&](int64_t t) {
      const int64_t r0 = t * per, r1 = std::min(rows, r0 + per);
      k.rows(src + r0 * n * isz, n, r1 - r0, acc + r0 * asz);
    });
    return;
  }
  std::vector<char> parts(size_t(rows * chunks) * asz);
  for_tasks(rows * chunks, rows * n, [&](int64_t t) {
    int64_t r = t / chunks, c = t % chunks, start = c * kRowChunk;
    k.row(src + (r * n + start) * isz, std::min(kRowChunk, n - start), parts.data() + t * asz);
  });
  for (int64_t r = 0; r < rows; ++r) {
    char* p = parts.data() + r * chunks * asz;
    merge_pairwise(p, chunks, int64_t(asz), 1, k.merge);
    std::memcpy(acc + r * asz, p, asz);
  }
}

// acc[o, j] = reduction over r of src[o, r, j]: column blocks of kTile, and when they are few,
// the rows cut into chunks whose partial results are joined pairwise.
void reduce_cols(const ReduceKernel& k, const char* src, size_t isz, const Layout& l, char* acc, size_t asz) {
  int64_t tiles = ceil_div(l.inner, kTile), pieces = l.outer * tiles;
  int64_t chunks = 1;
  if (pieces < kTargetTasks)
    chunks = std::clamp<int64_t>(kTargetTasks / pieces, 1, std::max<int64_t>(1, l.reduced / kMinChunkRows));
  int64_t per = ceil_div(l.reduced, chunks);
  chunks = std::max<int64_t>(1, ceil_div(l.reduced, std::max<int64_t>(per, 1)));
  std::vector<char> parts(chunks > 1 ? size_t(l.outer * chunks * l.inner) * asz : 0);
  char* dst = chunks > 1 ? parts.data() : acc;
  for_tasks(pieces * chunks, l.outer * l.reduced * l.inner, [&](int64_t t) {
    int64_t tile = t % tiles, c = (t / tiles) % chunks, o = t / (tiles * chunks);
    int64_t j0 = tile * kTile, w = std::min(kTile, l.inner - j0);
    int64_t r0 = c * per, rows = std::max<int64_t>(0, std::min(per, l.reduced - r0));
    k.cols(src + ((o * l.reduced + r0) * l.inner + j0) * isz, l.inner, rows, w,
           dst + ((o * chunks + c) * l.inner + j0) * asz);
  });
  if (chunks == 1) return;
  for_tasks(l.outer, l.outer * chunks * l.inner, [&](int64_t o) {
    char* p = parts.data() + o * chunks * l.inner * asz;
    merge_pairwise(p, chunks, l.inner * int64_t(asz), l.inner, k.merge);
    std::memcpy(acc + o * l.inner * asz, p, size_t(l.inner) * asz);
  });
}

void eval_reduce(const Reduce& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& y = out[0];
  y.allocate_contiguous();
  if (y.size() == 0) return;
  const Array& x = in[0];
  Dtype acc_t = accumulator(prim.op(), x.dtype());
  const ReduceKernel& k = reduce_kernels().reduce[int(prim.op())][int(x.dtype())];
  std::optional<Layout> l = split(x.shape(), prim.axes());
  Array src = l ? contiguous(x) : interleaved_to_blocks(x, prim.axes(), l.emplace());
  size_t asz = size_of(acc_t);
  std::vector<char> scratch(acc_t == y.dtype() ? 0 : size_t(y.size()) * asz);
  char* acc = acc_t == y.dtype() ? y.data_bytes() : scratch.data();
  if (l->inner == 1)
    reduce_rows(k, src.data_bytes(), src.itemsize(), l->outer, l->reduced, acc, asz);
  else
    reduce_cols(k, src.data_bytes(), src.itemsize(), *l, acc, asz);
  if (acc != y.data_bytes()) kernels().convert[int(acc_t)][int(y.dtype())](acc, 1, y.data_bytes(), y.size());
}

// Whether a is a strictly better extreme than b: NaN beats numbers (as NumPy), ties keep b.
template <class T> bool better(T a, T b, bool is_max) {
  if constexpr (is_complex_v<T>) {
    bool gt = a.real() > b.real() || (a.real() == b.real() && a.imag() > b.imag());
    bool lt = a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
    return is_max ? gt : lt;
  } else if constexpr (is_float_v<T>) {
    return (is_max ? a > b : a < b) || (std::isnan(a) && !std::isnan(b));
  } else {
    return is_max ? a > b : a < b;
  }
}

template <class S> void arg_reduce(const S* x, const Layout& l, bool is_max, uint32_t* out) {
  using T = std::conditional_t<std::is_same_v<S, f16> || std::is_same_v<S, bf16>, float, S>;
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    if (l.inner == 1 && l.reduced > 0) {  // along rows: logits to a token
      for_tasks(l.outer, l.outer * l.reduced, [&](int64_t o) {
        const S* row = x + o * l.reduced;
        out[o] = reduce_kernels().arg_row[is_max][int(std::is_same_v<S, float> ? Dtype::float32 : Dtype::float64)](
            row, l.reduced);
      });
      return;
    }
  }
  int64_t tiles = ceil_div(l.inner, kTile);
  for_tasks(l.outer * tiles, l.outer * l.reduced * l.inner, [&](int64_t t) {
    int64_t o = t / tiles, j0 = (t % tiles) * kTile, w = std::min(kTile, l.inner - j0);
    const S* base = x + o * l.reduced * l.inner + j0;
    uint32_t* idx = out + o * l.inner + j0;
    std::unique_ptr<T[]> best(new T[size_t(w)]);  // (std::vector<bool> has no element references)
    for (int64_t j = 0; j < w; ++j) best[j] = convert<T>(base[j]), idx[j] = 0;
    for (int64_t r = 1; r < l.reduced; ++r) {
      const S* row = base + r * l.inner;
      for (int64_t j = 0; j < w; ++j) {
        T v = convert<T>(row[j]);
        if (better(v, best[j], is_max)) best[j] = v, idx[j] = uint32_t(r);
      }
    }
  });
}

void eval_arg_reduce(const ArgReduce& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  if (out[0].size() == 0) return;
  Array x = contiguous(in[0]);
  Layout l;
  int axis = prim.axis();
  for (int i = 0; i < x.ndim(); ++i) (i < axis ? l.outer : i == axis ? l.reduced : l.inner) *= x.shape(i);
  for_each_dtype([&](auto d) {
    if (d.value == x.dtype()) arg_reduce(x.data<ctype_t<d.value>>(), l, prim.is_max(), out[0].data<uint32_t>());
  });
}

// Runs a row kernel over every row of the last axis; rows are grouped into tasks by size.
void for_rows(const Array& x, const std::function<void(int64_t, int64_t)>& row) {
  int64_t n = x.shape().back(), rows = x.size() / std::max<int64_t>(n, 1);
  int64_t per = std::max<int64_t>(1, kTaskElements / std::max<int64_t>(n, 1));
  for_tasks(ceil_div(rows, per), x.size(), [&](int64_t t) {
    for (int64_t r = t * per; r < std::min(rows, (t + 1) * per); ++r) row(r, n);
  });
}
void eval_softmax(const Softmax&, const std::vector<Array>& in, std::vector<Array>& out) {
  Array x = contiguous(in[0]);
  Array& y = out[0];
  y.allocate_contiguous();
  if (y.size() == 0) return;
  auto kernel = reduce_kernels().softmax[int(x.dtype())];
  const char* src = x.data_bytes();
  char* dst = y.data_bytes();
  size_t isz = x.itemsize();
  bool stream = stream_output(y.nbytes());
  for_rows(x, [&](int64_t r, int64_t n) { kernel(src + r * n * isz, dst + r * n * isz, n, stream); });
}

void eval_logsumexp(const LogSumExp&, const std::vector<Array>& in, std::vector<Array>& out) {
  Array x = contiguous(in[0]);
  Array& y = out[0];
  y.allocate_contiguous();
  if (y.size() == 0) return;
  auto kernel = reduce_kernels().logsumexp[int(x.dtype())];
  const char* src = x.data_bytes();
  char* dst = y.data_bytes();
  size_t isz = x.itemsize();
  for_rows(x, [&](int64_t r, int64_t n) { kernel(src + r * n * isz, n, dst + r * isz); });
}

}  // namespace

void register_reduce_kernels(Backend& b) {
  b.add<Reduce, eval_reduce>();
  b.add<ArgReduce, eval_arg_reduce>();
  b.add<Softmax, eval_softmax>();
  b.add<LogSumExp, eval_logsumexp>();
}

}  // namespace cpu
}  // namespace nuvec
