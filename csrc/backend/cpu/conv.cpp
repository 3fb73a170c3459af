// The CPU convolution: an implicit GEMM over the matrix product's register tiles. Rows are output
// positions, columns output channels, k the (tap, input channel) pairs; the weights are packed
// once into column panels, and each tile of rows reads the input through a pointer per tap and
// row (zeros in the padding), so the im2col matrix is never built. Depthwise convolutions (one
// channel per group) have their own loop over channels. docs/design.md, "Convolutions".
#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/conv.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/items.h"
#include "backend/cpu/kernels.h"
#include "core/primitives/conv.h"

namespace nuvec {
namespace cpu {

const ConvKernels& conv_kernels() {
  return kernel_table<ConvKernels>([] { return NUVEC_FOR_ISA(fill_conv); });
}

namespace {

// An offset that marks a tap outside the input (offsets may be negative: strides can be).
constexpr int64_t kOutside = INT64_MIN;

// The shapes of one convolution, with missing spatial axes as size 1 (always three).
struct Geometry {
  int64_t n = 0, cin = 0, cout = 0, groups = 1, cig = 0, cog = 0, taps = 1, positions = 1;
  std::array<int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, o{1, 1, 1};
  // The input's strides in elements (its channels are contiguous): between positions along each
  // axis, and between examples. Strided views (negative strides too) run as they are.
  std::array<int64_t, 3> x_stride{};
  int64_t x_batch_stride = 0;
  std::vector<int64_t> w_tap;  // each tap's offset in the weight, and its strides
  int64_t w_out_stride = 0, w_in_stride = 0;
  // off[d][o * k[d] + t]: the element offset of output position o's tap t along axis d, or
  // kOutside where it falls in the padding or between dilated input positions.
  std::array<std::vector<int64_t>, 3> off;
  std::vector<std::array<int64_t, 3>> tap;  // each tap's index along each axis
  // last_inside[o]: every tap of output position o along the last spatial axis is an input
  // position, one step (last_step elements) after position o - 1's (no input dilation there).
  std::vector<bool> last_inside;
  int64_t last_step = 0;
  int last_axis = 0;

  // x and w as the kernel reads them (x may differ from the node's input only by a copy).
  Geometry(const ConvParams& p, const Array& x, const Array& w, const Array& y) {
    int dims = x.ndim() - 2;
    n = x.shape(0), cin = x.shape(-1), cout = w.shape(0), groups = p.groups;
    cig = cin / groups, cog = cout / groups;
    for (int d = 0; d < dims; ++d) in[d] = x.shape(d + 1), k[d] = w.shape(d + 1), o[d] = y.shape(d + 1);
    for (int d = 0; d < dims; ++d) x_stride[d] = x.strides()[d + 1];
    x_batch_stride = x.strides()[0];
    w_out_stride = w.strides()[0], w_in_stride = w.strides()[dims + 1];
    for (int d = 0; d < 3; ++d) {
      bool real = d < dims;
      off[d].assign(size_t(o[d] * k[d]), 0);
      for (int64_t oo = 0; oo < o[d] && real; ++oo)
        for (int64_t t = 0; t < k[d]; ++t) {
          int64_t u = oo * p.stride[d] + t * p.kernel_dilation[d] - p.pad_lo[d], di = p.input_dilation[d];
          bool valid = u >= 0 && u % di == 0 && u / di < in[d];
          off[d][size_t(oo * k[d] + t)] = valid ? u / di * x_stride[d] : kOutside;
        }
      taps *= k[d], positions *= o[d];
    }
    int last = dims - 1;
    last_axis = last;
    last_inside.assign(size_t(o[last]), p.input_dilation[size_t(last)] == 1);
    for (int64_t oo = 0; oo < o[last]; ++oo)
      for (int64_t t = 0; t < k[last]; ++t)
        last_inside[size_t(oo)] = last_inside[size_t(oo)] && off[last][size_t(oo * k[last] + t)] != kOutside;
    last_step = p.stride[size_t(last)] * x_stride[last];
    std::array<int64_t, 3> ws{};
    for (int d = 0; d < dims; ++d) ws[d] = w.strides()[d + 1];
    for (int64_t a = 0; a < k[0]; ++a)
      for (int64_t b = 0; b < k[1]; ++b)
        for (int64_t c = 0; c < k[2]; ++c) {
          tap.push_back({a, b, c});
          w_tap.push_back(a * ws[0] + b * ws[1] + c * ws[2]);
        }
  }

  // Row m's batch index and output position along each axis.
  std::array<int64_t, 4> row(int64_t m) const {
    int64_t o2 = m % o[2], rest = m / o[2];
    int64_t o1 = rest % o[1];
    rest /= o[1];
    return {rest / o[0], rest % o[0], o1, o2};
  }

  // The row after r (its output position one step on, in the same order as row()).
  void next(std::array<int64_t, 4>& r) const {
    if (++r[3] < o[2]) return;
    r[3] = 0;
    if (++r[2] < o[1]) return;
    r[2] = 0;
    if (++r[1] < o[0]) return;
    r[1] = 0, ++r[0];
  }

  // Where row m's tap t starts in x (channel 0 of the input), or null in the padding.
  template <class T> const T* at(const T* x, const std::array<int64_t, 4>& r, int64_t t) const {
    const auto& tp = tap[size_t(t)];
    int64_t a = off[0][size_t(r[1] * k[0] + tp[0])], b = off[1][size_t(r[2] * k[1] + tp[1])],
            c = off[2][size_t(r[3] * k[2] + tp[2])];
    if (a == kOutside || b == kOutside || c == kOutside) return nullptr;
    return x + r[0] * x_batch_stride + a + b + c;
  }

  // Row r's pointers for taps t0 .. t0 + nt into dst[tt * step] (`zeros` in the padding). `run` is
  // the last-axis position of the row before, set when all its taps there were inside (else -2),
  // and `prev` that row's pointers: a row one step on from it moves each real tap one step.
  template <class T> void pointers(const T* x, const std::array<int64_t, 4>& r, int64_t t0, int64_t nt, const T* zeros,
                                   const T* const* prev, const T** dst, int64_t step, int64_t& run) const {
    int64_t pos = r[size_t(last_axis + 1)];
    bool inside = last_inside[size_t(pos)];
    if (inside && pos == run + 1) {
      for (int64_t tt = 0; tt < nt; ++tt) {
        const T* p = prev[tt * step];
        dst[tt * step] = p == zeros ? zeros : p + last_step;
      }
    } else {
      for (int64_t tt = 0; tt < nt; ++tt) {
        const T* p = at(x, r, t0 + tt);
        dst[tt * step] = p ? p : zeros;
      }
    }
    run = inside ? pos : -2;
  }
};

// The weights (any strides) as column panels per group: panel (g, j) holds, for each tap (flipped when asked)
// and input channel, NR output channels (zero past the group's last).
template <class T> std::vector<T> pack_weights(const Geometry& g, const T* w, bool flip, int nr) {
  int64_t panels = ceil_div(g.cog, nr), panel = g.taps * g.cig * nr;
  std::vector<T> packed(size_t(g.groups * panels * panel), T(0));
  for_each_item(g.groups * panels, g.cout * g.taps * g.cig, [&](int64_t item) {
    int64_t grp = item / panels, j0 = (item % panels) * nr, cols = std::min<int64_t>(nr, g.cog - j0);
    T* dst = packed.data() + item * panel;
    // Walk the source along its smaller stride: a transposed view (the weight gradient's
    // cotangent) has its output channels close and its taps in one image per input channel.
    auto src = [&](int64_t t) {
      return w + (grp * g.cog + j0) * g.w_out_stride + g.w_tap[size_t(flip ? g.taps - 1 - t : t)];
    };
    if (std::abs(g.w_out_stride) < std::abs(g.w_in_stride)) {
      for (int64_t ci = 0; ci < g.cig; ++ci)
        for (int64_t t = 0; t < g.taps; ++t) {
          const T* s = src(t) + ci * g.w_in_stride;
          T* d = dst + (t * g.cig + ci) * nr;
          for (int64_t j = 0; j < cols; ++j) d[j] = s[j * g.w_out_stride];
        }
    } else {
      for (int64_t t = 0; t < g.taps; ++t)
        for (int64_t j = 0; j < cols; ++j) {
          const T* s = src(t) + j * g.w_out_stride;
          T* d = dst + t * g.cig * nr + j;
          for (int64_t ci = 0; ci < g.cig; ++ci) d[ci * nr] = s[ci * g.w_in_stride];
        }
    }
  });
  return packed;
}

// Who computes which block of the output: row tiles by column blocks of one group, a split that
// depends on the shapes alone.
struct Tiling {
  int64_t rows_per_tile, row_tiles, panels, panels_per_block, col_blocks, taps_per_block;
  bool stream;  // the output's final values go around the caches (stream_output)
  int64_t items(const Geometry& g) const { return g.groups * row_tiles * col_blocks; }
};

// As the matrix product's blocking: a tap block's weight panel (k x NR) stays in L1, a tile's
// rows over that block (the input they read) in L2; then tiles shrink and column blocks narrow
// until there are enough work items to share.
constexpr int64_t kPanelBytes = 24 << 10, kTileBytes = 256 << 10, kMinItems = 8;

Tiling plan(const Geometry& g, int mr, int nr, size_t esz) {
  Tiling t{};
  int64_t m = g.n * g.positions, per_tap = std::max<int64_t>(1, g.cig * nr * int64_t(esz));
  int64_t blocks = ceil_div(g.taps * per_tap, kPanelBytes);
  t.taps_per_block = ceil_div(g.taps, blocks);
  int64_t k_bytes = std::max<int64_t>(1, t.taps_per_block * g.cig * int64_t(esz));
  int64_t tile_chunks = std::clamp<int64_t>(kTileBytes / k_bytes / mr, 1, ceil_div(m, mr));
  t.panels = ceil_div(g.cog, nr);
  t.panels_per_block = t.panels;
  auto items = [&] { return g.groups * ceil_div(m, tile_chunks * mr) * ceil_div(t.panels, t.panels_per_block); };
  while (items() < kMinItems && t.panels_per_block > 1) t.panels_per_block = ceil_div(t.panels_per_block, 2);
  while (items() < kMinItems && tile_chunks > 1) tile_chunks = ceil_div(tile_chunks, 2);
  t.rows_per_tile = tile_chunks * mr;
  t.row_tiles = ceil_div(m, t.rows_per_tile);
  t.col_blocks = ceil_div(t.panels, t.panels_per_block);
  t.stream = stream_output(size_t(m * g.cout) * esz);
  return t;
}

// The register tiles of one compute type: MR x NR micro-kernels, or MR x 1 dot products for a
// single output channel per group (NR would be wasted columns).
template <class T> struct Tiles {
  MicroShape shape;
  const ConvMicro<T>* by_rows;  // indexed by the rows of the chunk, 1 .. mr
};
template <class T> Tiles<T> tiles(bool one_column) {
  const ConvKernels& k = conv_kernels();
  if constexpr (std::is_same_v<T, float>)
    return one_column ? Tiles<T>{{k.f32_shape.mr, 1}, k.dot_f32} : Tiles<T>{k.f32_shape, k.f32};
  else
    return one_column ? Tiles<T>{{k.f64_shape.mr, 1}, k.dot_f64} : Tiles<T>{k.f64_shape, k.f64};
}

// One work item: rows [row0, row0 + rows) of group grp, columns of panels [p0, p1). Per tap block,
// the tile's row pointers are found once; then each weight panel (in L1) meets every row chunk.
template <class T> void compute_item(const Geometry& g, const Tiling& t, const Tiles<T>& tl, const T* x,
                                     const T* packed, const T* zeros, T* y, int64_t item) {
  const MicroShape& s = tl.shape;
  int64_t m = g.n * g.positions;
  int64_t grp = item / (t.row_tiles * t.col_blocks), rest = item % (t.row_tiles * t.col_blocks);
  int64_t row0 = (rest / t.col_blocks) * t.rows_per_tile, rows = std::min(t.rows_per_tile, m - row0);
  int64_t p0 = (rest % t.col_blocks) * t.panels_per_block, p1 = std::min(t.panels, p0 + t.panels_per_block);
  int64_t panel = g.taps * g.cig * s.nr, chunks = ceil_div(rows, s.mr);
  const T* xg = x + grp * g.cig;
  thread_local std::vector<const T*> ptrs;
  ptrs.resize(size_t(chunks * t.taps_per_block * s.mr));
  alignas(64) T full[kMaxMR * 64];
  bool streamed = false;
  for (int64_t t0 = 0; t0 < g.taps; t0 += t.taps_per_block) {
    int64_t nt = std::min(t.taps_per_block, g.taps - t0), per_chunk = nt * s.mr;
    // Chunk c's pointers: ptrs[c * per_chunk + tap * mr + row].
    const T** prev = nullptr;
    int64_t run = -2;
    auto pos = g.row(row0);
    for (int64_t c = 0; c < chunks; ++c)
      for (int64_t i = 0; i < s.mr && c * s.mr + i < rows; ++i, g.next(pos)) {
        const T** dst = ptrs.data() + c * per_chunk + i;
        g.pointers(xg, pos, t0, nt, zeros, prev, dst, s.mr, run);
        prev = dst;
      }
    for (int64_t pj = p0; pj < p1; ++pj) {
      const T* b = packed + (grp * t.panels + pj) * panel + t0 * g.cig * s.nr;
      int64_t col = grp * g.cog + pj * s.nr, cols = std::min<int64_t>(s.nr, g.cog - pj * s.nr);
      for (int64_t c = 0; c < chunks; ++c) {
        int rr = int(std::min<int64_t>(s.mr, rows - c * s.mr));
        ConvMicro<T> micro = tl.by_rows[rr];
        const T* const* rp = ptrs.data() + c * per_chunk;
        T* out = y + (row0 + c * s.mr) * g.cout + col;
        if (cols == s.nr) {
          bool st = t.stream && t0 + nt == g.taps && reinterpret_cast<uintptr_t>(out) % 64 == 0 &&
                    g.cout * int64_t(sizeof(T)) % 64 == 0;
          micro(nt, g.cig, rp, b, out, g.cout, t0 > 0, st);
          streamed = streamed || st;
          continue;
        }
        // The group's last, narrower panel: the same full-width kernel on a copy.
        for (int i = 0; i < rr && t0 > 0; ++i) std::memcpy(full + i * s.nr, out + i * g.cout, size_t(cols) * sizeof(T));
        micro(nt, g.cig, rp, b, full, s.nr, t0 > 0, false);
        for (int i = 0; i < rr; ++i) std::memcpy(out + i * g.cout, full + i * s.nr, size_t(cols) * sizeof(T));
      }
    }
  }
#if defined(__x86_64__)
  if (streamed) __builtin_ia32_sfence();  // the streamed lines reach memory before the item counts done
#endif
}

template <class T> DepthwiseKernel<T> depthwise_kernel() {
  if constexpr (std::is_same_v<T, float>)
    return conv_kernels().depthwise_f32;
  else
    return conv_kernels().depthwise_f64;
}

// One input and one output channel per group: each output position is a sum over taps of
// channel vectors.
template <class T> void depthwise(const Geometry& g, const T* x, const T* w, bool flip, T* y) {
  std::vector<T> wt(size_t(g.taps * g.cout)), zeros(size_t(g.cin), T(0));
  for (int64_t t = 0; t < g.taps; ++t)
    for (int64_t c = 0; c < g.cout; ++c)
      wt[size_t(t * g.cout + c)] = w[c * g.w_out_stride + g.w_tap[size_t(flip ? g.taps - 1 - t : t)]];
  int64_t m = g.n * g.positions;
  constexpr int64_t kRows = 64;
  DepthwiseKernel<T> kern = depthwise_kernel<T>();
  for_each_product(ceil_div(m, kRows), m * g.taps * g.cout, [&](int64_t item) {
    std::vector<const T*> ptrs(size_t(g.taps));
    int64_t run = -2;
    auto pos = g.row(item * kRows);
    for (int64_t row = item * kRows; row < std::min(m, (item + 1) * kRows); ++row, g.next(pos)) {
      g.pointers(x, pos, 0, g.taps, zeros.data(), ptrs.data(), ptrs.data(), 1, run);
      kern(g.taps, g.cout, ptrs.data(), wt.data(), y + row * g.cout);
    }
  });
}

template <class T> void convolve(const ConvParams& p, const Geometry& g, const T* x, const T* w, T* y) {
  int64_t m = g.n * g.positions;
  if (g.cig == 1 && g.cog == 1) return depthwise(g, x, w, p.flip, y);
  Tiles<T> tl = tiles<T>(g.cog == 1);
  Tiling t = plan(g, tl.shape.mr, tl.shape.nr, sizeof(T));
  std::vector<T> packed = pack_weights(g, w, p.flip, tl.shape.nr);
  std::vector<T> zeros(size_t(g.cig), T(0));
  for_each_product(t.items(g), m * g.cout * g.taps * g.cig,
                   [&](int64_t item) { compute_item(g, t, tl, x, packed.data(), zeros.data(), y, item); });
}

// `a` in the compute dtype (with unit stride along its last axis when `unit_last`, any other
// strides): itself, or a converted contiguous copy.
Array compute_view(const Array& a, Dtype d, bool unit_last) {
  if (a.dtype() == d && (!unit_last || a.shape(-1) == 1 || a.strides().back() == 1)) return a;
  Array c = Array::allocate(a.shape(), d);
  copy_into(a, c);
  return c;
}

void eval_conv(const Convolution& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& y = out[0];
  y.allocate_contiguous();
  if (y.size() == 0) return;
  const ConvParams& p = prim.params();
  if (in[1].size() == 0) {
    std::memset(y.data_bytes(), 0, y.nbytes());  // an empty sum
    return;
  }
  Dtype d = y.dtype() == Dtype::float64 ? Dtype::float64 : Dtype::float32;
  // The weight is packed through its strides; the input is read through them along all but its
  // channels, which the kernels walk with unit stride.
  Array x = compute_view(in[0], d, true), w = compute_view(in[1], d, false);
  Geometry g(p, x, w, y);
  if (d == Dtype::float64) return convolve(p, g, x.data<double>(), w.data<double>(), y.data<double>());
  if (y.dtype() == Dtype::float32) return convolve(p, g, x.data<float>(), w.data<float>(), y.data<float>());
  // Half types accumulate in float32 and round once.
  Array acc = Array::allocate(y.shape(), Dtype::float32);
  convolve(p, g, x.data<float>(), w.data<float>(), acc.data<float>());
  kernels().convert[int(Dtype::float32)][int(y.dtype())](acc.data_bytes(), 1, y.data_bytes(), y.size());
}

}  // namespace

void register_conv_kernels(Backend& b) { b.add<Convolution, eval_conv>(); }

}  // namespace cpu
}  // namespace nuvec
