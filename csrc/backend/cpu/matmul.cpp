// The CPU matrix product: packing into panels (any strides and dtype, converted on the way),
// cache blocking, the split of the output over threads, and the skinny path for few rows.
//
// Compute modes: float32 (also float16, and bfloat16 where the processor lacks AVX512_BF16),
// float64, bfloat16 pairs (vdpbf16ps), and complex64 as a real float32 product of twice the
// size: A' (M x 2K) holds [re, im] along k, B' (2K x 2N) holds [[re, im], [-im, re]] blocks, so
// C' = A' B' is the complex result with [re, im] along n, written in place.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/items.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/matmul_amx.h"
#include "core/primitives/matmul.h"

namespace nuvec {
namespace cpu {

const MatmulKernels& matmul_kernels() {
  return kernel_table<MatmulKernels>([] { return NUVEC_FOR_ISA(fill_matmul); });
}

namespace {

enum class Mode { f32, f64, bf16, c64 };

// Per-thread scratch that grows as needed (64-byte aligned).
struct Scratch {
  void* p = nullptr;
  size_t n = 0;
  ~Scratch() { std::free(p); }
  void* get(size_t bytes) {
    if (bytes > n) {
      std::free(p);
      n = size_t(round_up(int64_t(bytes), 64));
      p = std::aligned_alloc(64, n);
      if (!p) {
        n = 0;
        throw KernelError(EvalErrorKind::memory, "matmul: out of memory for packing buffers");
      }
    }
    return p;
  }
};

// One operand as lanes (A's rows, B's columns) by k, in storage elements.
struct Operand {
  const char* data;
  Dtype dtype;
  int64_t lane_stride, k_stride;
  bool is_b;
  const char* at(int64_t lane, int64_t k) const {
    return data + (lane * lane_stride + k * k_stride) * int64_t(size_of(dtype));
  }
  // Walking k is cheaper than walking lanes: pack lane by lane.
  bool lane_major() const { return std::abs(k_stride) <= std::abs(lane_stride); }
};

// Runs of an operand in the pack type T (lanes and k in the mode's real units).
template <class T> struct Source {
  Operand op;
  Mode mode;
  Dtype target;  // float32, float64 or bfloat16

  const T* run(const char* src, int64_t stride, int64_t n, T* buf) const {
    if (op.dtype == target && stride == 1) return reinterpret_cast<const T*>(src);
    kernels().convert[int(op.dtype)][int(target)](src, stride, buf, n);
    return buf;
  }
  // Complex values along one axis as [re, im] floats in buf.
  void complex_run(const char* src, int64_t stride, int64_t n, float* buf) const {
    kernels().convert[int(op.dtype)][int(Dtype::complex64)](src, stride, buf, n);
  }

  // Values at (lane, k0 .. k0 + n).
  const T* lane_run(int64_t lane, int64_t k0, int64_t n, T* buf) const {
    if constexpr (std::is_same_v<T, float>) {
      if (mode == Mode::c64) {
        int64_t lane_c = op.is_b ? lane / 2 : lane;
        complex_run(op.at(lane_c, k0 / 2), op.k_stride, n / 2, buf);
        if (op.is_b) {
          // Column 2j of B' is [re, -im] along k; column 2j + 1 is [im, re].
          bool second = lane & 1;
          for (int64_t i = 0; i < n; i += 2) {
            float re = buf[i], im = buf[i + 1];
            buf[i] = second ? im : re;
            buf[i + 1] = second ? re : -im;
          }
        }
        return buf;
      }
    }
    return run(op.at(lane, k0), op.k_stride, n, buf);
  }
  // Values at (lane0 .. lane0 + n, k).
  const T* k_run(int64_t k, int64_t lane0, int64_t n, T* buf) const {
    if constexpr (std::is_same_v<T, float>) {
      if (mode == Mode::c64) {
        if (!op.is_b) {
          // Row k of A' across lanes: one component of A's column k / 2.
          const char* p = op.at(lane0, k / 2) + (k & 1) * 4;
          kernels().convert[int(Dtype::float32)][int(Dtype::float32)](p, 2 * op.lane_stride, buf, n);
          return buf;
        }
        complex_run(op.at(lane0 / 2, k / 2), op.lane_stride, n / 2, buf);
        if (k & 1)  // row 2k + 1 of B' is [-im, re] across n
          for (int64_t i = 0; i < n; i += 2) {
            float re = buf[i], im = buf[i + 1];
            buf[i] = -im, buf[i + 1] = re;
          }
        return buf;
      }
    }
    return run(op.at(lane0, k), op.lane_stride, n, buf);
  }
};

// Packs lanes [lane0, lane0 + lanes) by k [k0, k0 + kb) into panels of L lanes: panel p holds,
// for each group of P consecutive k, L lanes of P values; padding lanes and k are zero.
// `buf` holds at least 2 * max(kb, lanes) values.
template <class T, int P>
void pack(const Source<T>& src, int64_t lane0, int64_t lanes, int L, int64_t k0, int64_t kb, T* dst, T* buf) {
  int64_t kbp = round_up(kb, P), panel = kbp * L, panels = ceil_div(lanes, L);
  if (lanes % L || kb % P) std::memset(dst, 0, size_t(panels * panel) * sizeof(T));
  const Operand& op = src.op;
  if (op.lane_major() && src.mode != Mode::c64 && op.dtype == src.target && op.k_stride == 1) {
    // k-contiguous in the pack type: transpose units of P values (32 or 64 bits) in registers.
    const MatmulKernels& g = matmul_kernels();
    PackTransposeKernel tr = sizeof(T) * P == 8 ? g.transpose64 : g.transpose32;
    int64_t row_bytes = op.lane_stride * int64_t(sizeof(T));
    for (int64_t p = 0; p < panels; ++p) {
      int64_t rows = std::min<int64_t>(L, lanes - p * L);
      const char* first = op.at(lane0 + p * L, k0);
      tr(first, row_bytes, rows, kb / P, dst + p * panel, L);
      if (kb % P)  // the last, half-filled pair
        for (int64_t r = 0; r < rows; ++r)
          dst[p * panel + (kb / P) * L * P + r * P] = reinterpret_cast<const T*>(first + r * row_bytes)[kb - 1];
    }
  } else if (op.lane_major()) {
    for (int64_t lane = 0; lane < lanes; ++lane) {
      const T* r = src.lane_run(lane0 + lane, k0, kb, buf);
      T* d = dst + (lane / L) * panel + (lane % L) * P;
      for (int64_t k = 0; k < kb; ++k) d[(k / P) * L * P + k % P] = r[k];
    }
  } else if constexpr (P == 1) {
    for (int64_t k = 0; k < kb; ++k) {
      const T* r = src.k_run(k0 + k, lane0, lanes, buf);
      for (int64_t p = 0; p < panels; ++p)
        std::memcpy(dst + p * panel + k * L, r + p * L, size_t(std::min<int64_t>(L, lanes - p * L)) * sizeof(T));
    }
  } else {
    // Pairs of 16-bit values from two rows of k at a time, written as 32-bit words.
    std::vector<T> zeros(kb % 2 ? size_t(lanes) : 0, T(0));
    for (int64_t k = 0; k < kb; k += 2) {
      const T* r0 = src.k_run(k0 + k, lane0, lanes, buf);
      const T* r1 = k + 1 < kb ? src.k_run(k0 + k + 1, lane0, lanes, buf + lanes) : zeros.data();
      matmul_kernels().pack_pairs(reinterpret_cast<const uint16_t*>(r0), reinterpret_cast<const uint16_t*>(r1), lanes,
                                  L, reinterpret_cast<uint32_t*>(dst) + (k / 2) * L, panel / 2);
    }
  }
}

// The blocking of one product, in the mode's real units (complex: 2K, 2N; bfloat16: k in values).
struct Plan {
  Mode mode;
  int mr, nr, P;    // micro-tile and k grouping (2 for bfloat16 pairs)
  int64_t kc, mc;   // k block (a multiple of P) and the most rows per A block (a multiple of mr)
  size_t esz;       // bytes per packed element
  int64_t m, n, k;  // real sizes
  bool b_by_panel;  // one row panel and k-contiguous B: pack B a panel at a time, in long k blocks
};

Plan make_plan(Mode mode, int64_t m, int64_t n, int64_t k, bool b_k_contiguous) {
  const MatmulKernels& g = matmul_kernels();
  Plan p{mode, 0, 0, 1, 0, 0, 4, m, n, k, false};
  MicroShape s = mode == Mode::f64 ? g.f64_shape : mode == Mode::bf16 ? g.bf16_shape : g.f32_shape;
  p.mr = s.mr, p.nr = s.nr;
  p.P = mode == Mode::bf16 ? 2 : 1;
  p.esz = mode == Mode::f64 ? 8 : mode == Mode::bf16 ? 2 : 4;
  if (mode == Mode::c64) p.n = 2 * n, p.k = 2 * k;
  // A micro-panel of B (kc x nr) stays in L1 (32 KiB); a block of A (mc x kc) in L2 (256 KiB).
  p.kc = std::min<int64_t>(round_up(p.k, 2), std::max<int64_t>(64, (32768 / (int64_t(p.nr) * int64_t(p.esz))) & ~1));
  // With one panel of rows, each packed B value is used once: a B panel packed right before its
  // use stays in cache, and longer k blocks read k-contiguous B (x @ W.T) in longer runs, which
  // the prefetchers follow.
  p.b_by_panel = p.m <= p.mr && b_k_contiguous;
  if (p.b_by_panel) p.kc = std::min<int64_t>(round_up(p.k, 2), 4 * p.kc);
  p.mc = std::max<int64_t>(p.mr, (262144 / (p.kc * int64_t(p.esz))) / p.mr * p.mr);
  if (!p.b_by_panel && p.esz == 4) {
    // float32 compute: long k blocks (B micro-panels up to 256 KiB, read from L2) and row blocks
    // of about 256 rows. Each k block stores and reloads C; with K up to 2048 in one block there
    // is no reload at all. Measured at 2 threads on Zen 5 (1 MiB L2): 1024^3 and 2048^3 went
    // from about 435 to 455-475 GFLOP/s against 32 KiB / 256 KiB blocks.
    p.kc = std::min<int64_t>(round_up(p.k, 2), std::max<int64_t>(64, (262144 / (int64_t(p.nr) * int64_t(p.esz))) & ~1));
    p.mc = std::max<int64_t>(p.mr, 256 / p.mr * p.mr);
  }
  return p;
}

void call_micro(const Plan& p, int64_t rows, int64_t kb, const void* a, const void* b, void* c, int64_t ldc, bool acc) {
  const MatmulKernels& g = matmul_kernels();
  switch (p.mode) {
    case Mode::f64:
      g.f64[rows](kb, static_cast<const double*>(a), static_cast<const double*>(b), static_cast<double*>(c), ldc, acc);
      return;
    case Mode::bf16:
      g.bf16[rows](kb / 2, static_cast<const uint16_t*>(a), static_cast<const uint16_t*>(b), static_cast<float*>(c),
                   ldc, acc);
      return;
    default:
      g.f32[rows](kb, static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(c), ldc, acc);
  }
}

template <class T> void pack_block(const Plan& p, const Source<T>& src, int64_t lane0, int64_t lanes, int L, int64_t k0,
                                   int64_t kb, void* dst, void* buf) {
  if constexpr (std::is_same_v<T, uint16_t>) {
    if (p.P == 2) return pack<T, 2>(src, lane0, lanes, L, k0, kb, static_cast<T*>(dst), static_cast<T*>(buf));
  }
  pack<T, 1>(src, lane0, lanes, L, k0, kb, static_cast<T*>(dst), static_cast<T*>(buf));
}

Dtype pack_target(Mode m) {
  return m == Mode::f64 ? Dtype::float64 : m == Mode::bf16 ? Dtype::bfloat16 : Dtype::float32;
}

void pack_any(const Plan& p, const Operand& op, int64_t lane0, int64_t lanes, int L, int64_t k0, int64_t kb, void* dst,
              void* buf) {
  switch (p.mode) {
    case Mode::f64:
      return pack_block<double>(p, Source<double>{op, p.mode, Dtype::float64}, lane0, lanes, L, k0, kb, dst, buf);
    case Mode::bf16:
      return pack_block<uint16_t>(p, Source<uint16_t>{op, p.mode, Dtype::bfloat16}, lane0, lanes, L, k0, kb, dst, buf);
    default: return pack_block<float>(p, Source<float>{op, p.mode, Dtype::float32}, lane0, lanes, L, k0, kb, dst, buf);
  }
}

// The output of one product: straight into the result, or (half types) through float32 tiles.
struct Out {
  char* data;  // the result's first element of this product
  Dtype dtype;
  int64_t ld;               // result row stride in elements of the result dtype
  bool direct;              // float32 / float64 / complex64 results take the kernels' output as is
  bool accumulate = false;  // C += A B (direct results only): the first k block starts from C
};

// Who computes which block of C: row blocks by column blocks of output tiles, one tile per work
// item. The tiling decides who computes an element, never how, so it changes no bits.
struct Tiling {
  int64_t row_panels;     // mr-row panels of A (the last may be partial)
  int64_t row_blocks;     // tiles down C; each spans whole panels, blocks differing by one at most
  int64_t col_blocks;     // tiles across C
  int64_t tile_cols;      // columns per tile, a multiple of nr (the last tile may be narrower)
  int64_t max_tile_rows;  // the most rows in a tile, a multiple of mr (sizes A's packing buffer)
  int64_t padded_n;       // n in whole nr panels: the width of B packed for all row blocks
  bool shared_b;          // B packed once for all row blocks, else by each tile for its columns
  bool shared_a;          // A packed once for all column blocks, else by each tile for its rows

  int64_t first_row(const Plan& p, int64_t row_block) const {
    return std::min(p.m, row_block * row_panels / row_blocks * p.mr);
  }
};

// The most bytes of A packed once for all column blocks (Tiling::shared_a).
constexpr int64_t kMaxSharedA = int64_t(64) << 20;

// Columns split until there are this many tiles: enough for threads, claiming one at a time, to
// finish together.
constexpr int64_t kMinTiles = 32;
// Column blocks stay at least this many B panels wide, so each packed A block serves several.
constexpr int64_t kMinTilePanels = 8;

// With two row blocks per thread or more, tiles span all columns, so each block of A is packed
// once; the number of row blocks is a multiple of the thread count, and blocks differ by at most
// one panel, so threads get equal shares. With fewer, column blocks split until there are enough
// tiles to share.
Tiling plan_tiling(const Plan& p) {
  Tiling t{};
  t.padded_n = round_up(p.n, p.nr);
  t.row_panels = ceil_div(p.m, p.mr);
  t.row_blocks = ceil_div(p.m, p.mc);
  t.tile_cols = t.padded_n;
  int64_t threads = get_num_threads();
  if (t.row_blocks > 1 && t.row_blocks >= 2 * threads) {
    t.row_blocks = std::min(t.row_panels, round_up(t.row_blocks, threads));
  } else {
    while (t.row_blocks * ceil_div(p.n, t.tile_cols) < kMinTiles && t.tile_cols > kMinTilePanels * p.nr)
      t.tile_cols = round_up(t.tile_cols / 2, p.nr);
  }
  t.col_blocks = ceil_div(p.n, t.tile_cols);
  t.max_tile_rows = ceil_div(t.row_panels, t.row_blocks) * p.mr;
  // With several row blocks, B is packed once for all of them; with one, each tile packs its own
  // columns block by block, so B goes through memory once.
  t.shared_b = t.row_blocks > 1;
  // With several column blocks, each would pack the same rows of A again (for 256 x 1024 x 1024
  // at 2 threads, eight times: a fifth of the product's time went to transposing A); packed once
  // up front, A costs its size again in memory, bounded here.
  t.shared_a = t.col_blocks > 1 && t.row_panels * p.mr * round_up(p.k, p.P) * int64_t(p.esz) <= kMaxSharedA;
  return t;
}

// Bytes per element of C as the micro-kernels write it (float64, else float32).
size_t c_bytes(const Plan& p) { return p.mode == Mode::f64 ? 8 : 4; }

// Bytes from the start of an operand packed whole (`padded` lanes in panels of `width`) to the
// panels of lanes [lane, ...) of the k block that starts at k0: k blocks follow each other, each
// with the panels of all lanes.
int64_t shared_offset(const Plan& p, int64_t padded, int64_t k0, int64_t lane) {
  int64_t kb_padded = round_up(std::min(p.kc, p.k - k0), p.P);
  return (k0 * padded + lane * kb_padded) * int64_t(p.esz);
}

// Packs all lanes (`lanes` of them, `padded` rounded up to panels of `width`) of an operand
// before any tile runs, in parallel, a few panels per work item.
std::shared_ptr<Buffer> pack_for_all(const Plan& p, const Operand& op, int64_t lanes, int64_t padded, int width) {
  std::shared_ptr<Buffer> packed = Buffer::allocate(std::max<size_t>(size_t(round_up(p.k, p.P) * padded) * p.esz, 64));
  int64_t panels = padded / width;
  constexpr int64_t kPanelsPerItem = 4;
  for_each_product(ceil_div(panels, kPanelsPerItem), p.k * padded, [&](int64_t item) {
    int64_t first = item * kPanelsPerItem, end = std::min(panels, first + kPanelsPerItem);
    int64_t lane0 = first * width, count = std::min(lanes, end * width) - lane0;
    thread_local Scratch run;
    void* buf = run.get(size_t(std::max<int64_t>(p.kc, width * kPanelsPerItem) + 64) * 8);
    for (int64_t k0 = 0; k0 < p.k; k0 += p.kc) {
      char* dst = static_cast<char*>(packed->data()) + shared_offset(p, padded, k0, lane0);
      pack_any(p, op, lane0, count, width, k0, std::min(p.kc, p.k - k0), dst, buf);
    }
  });
  return packed;
}

// One work item's block of C: rows [row0, row0 + rows) by columns [col0, col0 + cols).
struct Tile {
  int64_t row0, rows, col0, cols;
  char* c;      // where the micro-kernels write: the result itself, or a float32 tile (half types)
  int64_t ldc;  // c's row stride, in elements of the compute type
};

Tile locate_tile(const Plan& p, const Tiling& t, const Out& out, int64_t item, Scratch& c_tile) {
  Tile tile;
  int64_t row_block = item / t.col_blocks;
  tile.row0 = t.first_row(p, row_block);
  tile.rows = t.first_row(p, row_block + 1) - tile.row0;
  tile.col0 = (item % t.col_blocks) * t.tile_cols;
  tile.cols = std::min(t.tile_cols, p.n - tile.col0);
  if (out.direct) {
    // complex64: C's columns are [re, im] floats, two per element of the result.
    int64_t result_col = p.mode == Mode::c64 ? tile.col0 / 2 : tile.col0;
    tile.c = out.data + (tile.row0 * out.ld + result_col) * int64_t(size_of(out.dtype));
    tile.ldc = p.mode == Mode::c64 ? 2 * out.ld : out.ld;
  } else {
    tile.c = static_cast<char*>(c_tile.get(size_t(tile.rows * tile.cols) * 4));
    tile.ldc = tile.cols;
  }
  return tile;
}

// The k block being multiplied: k [k0, k0 + kb), padded to kb_padded (whole groups of P).
struct KBlock {
  int64_t k0, kb, kb_padded;
  bool accumulate;  // every block but the first adds to what C holds
};

// C (rows x cols at c) from one A panel and one B panel. Fewer than nr columns (the tile's last)
// run the same full-width kernel on a copy, so the arithmetic is unchanged.
void micro_tile(const Plan& p, const KBlock& kblk, int64_t rows, int64_t cols, const char* a_panel, const char* b_panel,
                char* c, int64_t ldc) {
  if (cols == p.nr) return call_micro(p, rows, kblk.kb_padded, a_panel, b_panel, c, ldc, kblk.accumulate);
  size_t csz = c_bytes(p);
  alignas(64) char full[kMaxMR * 64 * 8];
  for (int64_t i = 0; i < rows && kblk.accumulate; ++i)
    std::memcpy(full + i * p.nr * csz, c + i * ldc * int64_t(csz), size_t(cols) * csz);
  call_micro(p, rows, kblk.kb_padded, a_panel, b_panel, full, p.nr, kblk.accumulate);
  for (int64_t i = 0; i < rows; ++i) std::memcpy(c + i * ldc * int64_t(csz), full + i * p.nr * csz, size_t(cols) * csz);
}

// One B panel (the tile's columns [col, col + nr)) against every A panel of the tile: the B panel
// stays in L1 while A's panels stream from L2.
void b_panel_times_a(const Plan& p, const KBlock& kblk, const Tile& tile, const char* a_packed, int64_t col,
                     const char* b_panel) {
  int64_t cols = std::min<int64_t>(p.nr, tile.cols - col);
  size_t csz = c_bytes(p);
  for (int64_t row = 0; row < tile.rows; row += p.mr) {
    const char* a_panel = a_packed + row * kblk.kb_padded * int64_t(p.esz);
    char* c = tile.c + (row * tile.ldc + col) * int64_t(csz);
    micro_tile(p, kblk, std::min<int64_t>(p.mr, tile.rows - row), cols, a_panel, b_panel, c, tile.ldc);
  }
}

// Converts a float32 tile into the half-type result.
void store_tile(const Tile& tile, const Out& out) {
  ConvertKernel store = kernels().convert[int(Dtype::float32)][int(out.dtype)];
  int64_t item = int64_t(size_of(out.dtype));
  for (int64_t i = 0; i < tile.rows; ++i)
    store(tile.c + i * tile.ldc * 4, 1, out.data + ((tile.row0 + i) * out.ld + tile.col0) * item, tile.cols);
}

// One tile of C over all of k: per k block, find or pack the tile's rows of A, find or pack B's
// panels of its columns, and run the micro-kernels.
void compute_tile(const Plan& p, const Tiling& t, const Operand& a, const Operand& b, const Out& out,
                  const Buffer* shared_a, const Buffer* shared_b, int64_t item) {
  thread_local Scratch a_pack, b_pack, run, c_tile;
  int64_t kc_padded = round_up(p.kc, p.P);
  char* a_own = shared_a ? nullptr : static_cast<char*>(a_pack.get(size_t(t.max_tile_rows * kc_padded) * p.esz));
  char* b_packed =
      shared_b ? nullptr
               : static_cast<char*>(b_pack.get(size_t((p.b_by_panel ? p.nr : t.tile_cols) * kc_padded) * p.esz));
  void* buf = run.get(size_t(std::max({p.kc, t.max_tile_rows, t.tile_cols}) + 64) * 8);
  Tile tile = locate_tile(p, t, out, item, c_tile);
  for (int64_t k0 = 0; k0 < p.k; k0 += p.kc) {
    int64_t kb = std::min(p.kc, p.k - k0);
    KBlock kblk{k0, kb, round_up(kb, p.P), k0 > 0 || out.accumulate};
    const char* a_packed = a_own;
    if (shared_a)
      a_packed = static_cast<const char*>(shared_a->data()) + shared_offset(p, t.row_panels * p.mr, k0, tile.row0);
    else
      pack_any(p, a, tile.row0, tile.rows, p.mr, k0, kb, a_own, buf);
    const char* b_panels = nullptr;  // this k block's panels of the tile's columns, when packed whole
    if (shared_b) {
      b_panels = static_cast<const char*>(shared_b->data()) + shared_offset(p, t.padded_n, k0, tile.col0);
    } else if (!p.b_by_panel) {
      pack_any(p, b, tile.col0, tile.cols, p.nr, k0, kb, b_packed, buf);
      b_panels = b_packed;
    }
    for (int64_t col = 0; col < tile.cols; col += p.nr) {
      if (b_panels) {
        b_panel_times_a(p, kblk, tile, a_packed, col, b_panels + col * kblk.kb_padded * int64_t(p.esz));
      } else {  // B packed a panel at a time, right before its use (see Plan::b_by_panel)
        pack_any(p, b, tile.col0 + col, std::min<int64_t>(p.nr, tile.cols - col), p.nr, k0, kb, b_packed, buf);
        b_panel_times_a(p, kblk, tile, a_packed, col, b_packed);
      }
    }
  }
  if (!out.direct) store_tile(tile, out);
}

// One product C = A B (A: m x k, B: k x n, sizes of the dtype), blocked and split over threads.
void gemm_blocked(const Plan& p, const Operand& a, const Operand& b, const Out& out) {
  Tiling t = plan_tiling(p);
  std::shared_ptr<Buffer> shared_a = t.shared_a ? pack_for_all(p, a, p.m, t.row_panels * p.mr, p.mr) : nullptr;
  std::shared_ptr<Buffer> shared_b = t.shared_b ? pack_for_all(p, b, p.n, t.padded_n, p.nr) : nullptr;
  for_each_product(t.row_blocks * t.col_blocks, p.m * p.n * p.k,
                   [&](int64_t item) { compute_tile(p, t, a, b, out, shared_a.get(), shared_b.get(), item); });
}

// Products that share A, one for each of `count` Bs and Cs `b_stride` and `c_stride` elements
// apart (x @ T[i] for a stack T of matrices; with count 1, one product).
struct Batches { int64_t count = 1, b_stride = 0, c_stride = 0; };

// Few rows against B with unit stride along n: the weights are read once, straight from B.
bool gemm_skinny(Mode mode, const Operand& a, const Operand& b, int64_t m, int64_t n, int64_t k, const Out& out,
                 const Batches& bat = {}) {
  const MatmulKernels& g = matmul_kernels();
  // x @ W.T with float32 W contiguous along k: a kernel that transposes W in registers.
  bool along_k =
      b.lane_stride != 1 && b.k_stride == 1 && mode == Mode::f32 && b.dtype == Dtype::float32 && g.skinny_t_f32;
  if (m > g.skinny_rows || (b.lane_stride != 1 && !along_k) || mode == Mode::c64 || out.accumulate) return false;
  SkinnyKernel kern = nullptr;
  if (along_k)
    kern = g.skinny_t_f32;
  else if (mode == Mode::bf16)
    kern = g.skinny_bf16;
  else if (b.dtype == Dtype::float32)
    kern = g.skinny_f32;
  else if (b.dtype == Dtype::float16)
    kern = g.skinny_f16;
  else if (b.dtype == Dtype::bfloat16)
    kern = g.skinny_bf16_as_f32;
  else if (b.dtype != Dtype::float64)
    return false;
  // A's rows as the kernels read them: in place when they already are float32 (float64) values
  // contiguous along k (a copy into cold memory cost each of a decode step's products ~0.5 us),
  // else converted: float32 / float64 values, or bfloat16 pairs (zero past k).
  const bool in_place = a.dtype == pack_target(mode) && mode != Mode::bf16 && a.k_stride == 1;
  int64_t lda = in_place ? a.lane_stride : mode == Mode::bf16 ? round_up(k, 2) : k;
  size_t asz = mode == Mode::f64 ? 8 : mode == Mode::bf16 ? 2 : 4;
  std::vector<char> abuf(in_place ? 0 : size_t(m * lda) * asz + 64, 0);
  for (int64_t i = 0; i < m && !in_place; ++i)
    kernels().convert[int(a.dtype)][int(pack_target(mode))](a.at(i, 0), a.k_stride, abuf.data() + i * lda * asz, k);
  const char* ap = in_place ? a.data : abuf.data();
  std::vector<float> cbuf(out.direct ? 0 : size_t(bat.count * m * n));
  const int64_t b_item = int64_t(size_of(b.dtype)), c_item = mode == Mode::f64 ? 8 : 4;
  // Columns [j0, j1) of product `bi`.
  auto run = [&](int64_t bi, int64_t j0, int64_t j1) {
    const char* bp = b.at(j0, 0) + bi * bat.b_stride * b_item;
    char* c = out.direct ? out.data + (bi * bat.c_stride + j0) * c_item
                         : reinterpret_cast<char*>(cbuf.data() + bi * m * n + j0);
    int64_t ldc = out.direct ? out.ld : n;
    if (mode == Mode::f64)
      g.skinny_f64(m, k, reinterpret_cast<const double*>(ap), lda, reinterpret_cast<const double*>(bp), b.k_stride,
                   j1 - j0, reinterpret_cast<double*>(c), ldc);
    else
      kern(m, k, ap, mode == Mode::bf16 ? lda / 2 : lda, bp, along_k ? b.lane_stride : b.k_stride, j1 - j0,
           reinterpret_cast<float*>(c), ldc);
  };
  // One piece of equal whole blocks of 16 columns a thread, the products' columns taken in turn:
  // each thread's weights one long run, which the prefetchers follow (SmolLM2's float32 decode
  // step 1.2% faster than in four pieces on two threads; pieces of at least 256 columns had left
  // one thread a third more of a 576-column product than the other). Each column is its own chain
  // over k, so the split changes no bit.
  const int64_t total = bat.count * n, chunk = round_up(ceil_div(total, get_num_threads()), 16);
  for_each_product(ceil_div(total, chunk), bat.count * m * n * k, [&](int64_t item) {
    for (int64_t g0 = item * chunk, g1 = std::min(total, g0 + chunk); g0 < g1;) {
      int64_t bi = g0 / n, j0 = g0 % n, j1 = std::min(n, j0 + (g1 - g0));
      run(bi, j0, j1);
      g0 += j1 - j0;
    }
  });
  if (!out.direct) {
    ConvertKernel store = kernels().convert[int(Dtype::float32)][int(out.dtype)];
    const int64_t item = int64_t(size_of(out.dtype));
    for (int64_t bi = 0; bi < bat.count; ++bi)
      for (int64_t i = 0; i < m; ++i)
        store(cbuf.data() + (bi * m + i) * n, 1, out.data + (bi * bat.c_stride + i * out.ld) * item, n);
  }
  return true;
}

// bfloat16 on AMX tiles (matmul_amx.h): A packed once into rows of kp values (zero past k, and
// past m up to whole blocks of 32 rows); each work item packs a group of B's panels (32 columns,
// pairs of k rows, as the vdpbf16ps panels; zero past k and n; packed once for all chunks when
// there are several) and multiplies them by one chunk of row blocks, through float32 tiles
// converted into the result. Items run chunk by chunk, a chunk's groups in turn, so the chunk of
// A stays in L2 while the panels stream.
constexpr int64_t kAmxChunkRows = 256, kAmxGroupPanels = 8, kAmxPackedA = int64_t(32) << 20;

// Columns [col0, col0 + cols) of B as amx_tiles' panels, kp * 32 values apart.
void pack_amx_b(const Source<uint16_t>& sb, int64_t col0, int64_t cols, int64_t k, int64_t kp, uint16_t* bp,
                uint16_t* buf) {
  const int64_t panels = ceil_div(cols, 32), panel = kp * 32, kb = round_up(k, 2);
  if (cols % 32) std::memset(bp, 0, size_t(panels * panel) * 2);
  if (sb.op.lane_major()) {  // k-contiguous columns (x @ W.T): one panel at a time, transposed in registers
    for (int64_t p = 0; p < panels; ++p)
      pack<uint16_t, 2>(sb, col0 + p * 32, std::min<int64_t>(32, cols - p * 32), 32, 0, k, bp + p * panel, buf);
  } else {  // rows of B along n: each pair of k rows across all the group's columns at once
    const std::vector<uint16_t> zeros(k % 2 ? size_t(cols) : 0, 0);
    for (int64_t q = 0; q < kb / 2; ++q) {
      const uint16_t* r0 = sb.k_run(2 * q, col0, cols, buf);
      const uint16_t* r1 = 2 * q + 1 < k ? sb.k_run(2 * q + 1, col0, cols, buf + cols) : zeros.data();
      matmul_kernels().pack_pairs(r0, r1, cols, 32, reinterpret_cast<uint32_t*>(bp) + q * 32, panel / 2);
    }
  }
  for (int64_t p = 0; p < panels; ++p) std::memset(bp + p * panel + kb * 32, 0, size_t(panel - kb * 32) * 2);
}

// Lane `lane` of an operand as a row of kp values, zero past k; all zeros where `present` is false
// (the rows that round a block up). `buf` holds 2 * k + 64 values.
void pack_amx_row(const Source<uint16_t>& src, int64_t lane, bool present, int64_t k, int64_t kp, uint16_t* row,
                  uint16_t* buf) {
  int64_t filled = 0;
  if (present) pack<uint16_t, 2>(src, lane, 1, 1, 0, k, row, buf), filled = round_up(k, 2);
  std::memset(row + filled, 0, size_t(kp - filled) * 2);
}

// Up to 16 rows of x against W's rows (B = W.T, bfloat16, contiguous along k): W x.T, W's 16-row
// blocks read in place (a block past n, or all of them when k is not a multiple of 32, packed with
// zeros first), x's rows packed once; each 16 x 16 tile transposed into the result.
constexpr int64_t kAmxFewRows = 16;

void gemm_amx_few_rows(const Operand& a, const Operand& b, int64_t m, int64_t n, int64_t k, const Out& out) {
  const int64_t kp = round_up(k, 32);
  const Source<uint16_t> sa{a, Mode::bf16, Dtype::bfloat16}, sb{b, Mode::bf16, Dtype::bfloat16};
  std::vector<uint16_t> xt(size_t(kp * 16), 0), buf(size_t(2 * k + 64));
  pack<uint16_t, 2>(sa, 0, m, 16, 0, k, xt.data(), buf.data());  // one panel of 16 lanes: x's rows
  const auto* w = reinterpret_cast<const uint16_t*>(b.data);
  const int64_t ldw = b.lane_stride, blocks = ceil_div(n, 16);
  ConvertKernel store = kernels().convert[int(Dtype::float32)][int(out.dtype)];
  const int64_t item_bytes = int64_t(size_of(out.dtype));
  constexpr int64_t kBlocksPerItem = 16;
  for_each_item(ceil_div(blocks, kBlocksPerItem), m * n * k, [&](int64_t item) {
    thread_local Scratch w_pack, run;
    alignas(64) float c[16 * 16], t[16 * 16];
    for (int64_t blk = item * kBlocksPerItem; blk < std::min(blocks, (item + 1) * kBlocksPerItem); ++blk) {
      const int64_t j0 = blk * 16, rows = std::min<int64_t>(16, n - j0);
      if (rows == 16 && k == kp) {
        amx_tiles_t(w + j0 * ldw, ldw, xt.data(), kp, c);
      } else {
        auto* wp = static_cast<uint16_t*>(w_pack.get(size_t(16 * kp) * 2));
        auto* rb = static_cast<uint16_t*>(run.get(size_t(2 * k + 64) * 2));
        for (int64_t r = 0; r < 16; ++r) pack_amx_row(sb, j0 + r, r < rows, k, kp, wp + r * kp, rb);
        amx_tiles_t(wp, kp, xt.data(), kp, c);
      }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < rows; ++j) t[i * 16 + j] = c[j * 16 + i];
      for (int64_t i = 0; i < m; ++i) store(t + i * 16, 1, out.data + (i * out.ld + j0) * item_bytes, rows);
    }
  });
}

// Up to 16 rows of x against W laid out along N (bfloat16, unit column stride): x packed once as
// one A tile's rows; each work item takes 256 of W's columns over all of k (amx_rows_times_w).
void gemm_amx_few_rows_n(const Operand& a, const Operand& b, int64_t m, int64_t n, int64_t k, const Out& out) {
  const int64_t kp = round_up(k, 32);
  const Source<uint16_t> sa{a, Mode::bf16, Dtype::bfloat16};
  std::vector<uint16_t> xa(size_t(16 * kp)), buf(size_t(2 * k + 64));
  for (int64_t i = 0; i < 16; ++i) pack_amx_row(sa, i, i < m, k, kp, xa.data() + i * kp, buf.data());
  const auto* w = reinterpret_cast<const uint16_t*>(b.data);
  ConvertKernel store = kernels().convert[int(Dtype::float32)][int(out.dtype)];
  const int64_t item_bytes = int64_t(size_of(out.dtype));
  constexpr int64_t kCols = 256;
  for_each_item(ceil_div(n, kCols), m * n * k, [&](int64_t item) {
    thread_local Scratch c_tiles;
    auto* c = static_cast<float*>(c_tiles.get(size_t(kCols * 16) * 4));
    const int64_t col0 = item * kCols, cols = std::min(kCols, n - col0);
    amx_rows_times_w(xa.data(), kp, w + col0, b.k_stride, k, cols, c);
    for (int64_t t = 0; t * 16 < cols; ++t)
      for (int64_t i = 0; i < m; ++i)
        store(c + t * 256 + i * 16, 1, out.data + (i * out.ld + col0 + 16 * t) * item_bytes,
              std::min<int64_t>(16, cols - 16 * t));
  });
}

void gemm_amx(const Operand& a, const Operand& b, int64_t m, int64_t n, int64_t k, const Out& out) {
  if (m <= kAmxFewRows && b.dtype == Dtype::bfloat16 && b.lane_major() && b.k_stride == 1)
    return gemm_amx_few_rows(a, b, m, n, k, out);
  if (m <= kAmxFewRows && b.dtype == Dtype::bfloat16 && b.lane_stride == 1)
    return gemm_amx_few_rows_n(a, b, m, n, k, out);
  const int64_t kp = round_up(k, 32), group_cols = 32 * kAmxGroupPanels;
  const Source<uint16_t> sa{a, Mode::bf16, Dtype::bfloat16}, sb{b, Mode::bf16, Dtype::bfloat16};
  // A is packed a block of rows at a time, at most about kAmxPackedA bytes: the packed copy of a
  // long prompt's rows would otherwise double its memory.
  const int64_t block_rows = std::max(kAmxChunkRows, kAmxPackedA / (kp * 2) / kAmxChunkRows * kAmxChunkRows);
  std::shared_ptr<Buffer> a_packed = Buffer::allocate(size_t(std::min(round_up(m, 32), block_rows) * kp) * 2);
  auto* ap = static_cast<uint16_t*>(a_packed->data());
  ConvertKernel store = kernels().convert[int(Dtype::float32)][int(out.dtype)];
  const int64_t item_bytes = int64_t(size_of(out.dtype)), groups = ceil_div(n, group_cols);
  // With more than one chunk of rows, B is packed once for all of them.
  std::shared_ptr<Buffer> b_packed;
  if (m > kAmxChunkRows) {
    b_packed = Buffer::allocate(size_t(groups * kp * group_cols) * 2);
    for_each_item(groups, k * n, [&](int64_t g) {
      thread_local Scratch run;
      auto* buf = static_cast<uint16_t*>(run.get(size_t(2 * std::max(k, group_cols) + 64) * 2));
      pack_amx_b(sb, g * group_cols, std::min(group_cols, n - g * group_cols), k, kp,
                 static_cast<uint16_t*>(b_packed->data()) + g * kp * group_cols, buf);
    });
  }
  for (int64_t first = 0; first < m; first += block_rows) {
    const int64_t rows = std::min(round_up(m - first, 32), block_rows);  // this block's, in whole 32s
    for_each_item(rows / 32, rows * k, [&](int64_t item) {
      thread_local Scratch run;
      auto* buf = static_cast<uint16_t*>(run.get(size_t(2 * k + 64) * 2));
      for (int64_t i = item * 32; i < (item + 1) * 32; ++i)
        pack_amx_row(sa, first + i, first + i < m, k, kp, ap + i * kp, buf);
    });
    const int64_t chunks = ceil_div(rows, kAmxChunkRows);
    for_each_item(chunks * groups, rows * n * k, [&](int64_t item) {
      thread_local Scratch b_pack, run, c_tile;
      const int64_t row0 = (item / groups) * kAmxChunkRows, chunk_rows = std::min(kAmxChunkRows, rows - row0);
      const int64_t col0 = (item % groups) * group_cols, cols = std::min(group_cols, n - col0);
      uint16_t* bp;
      if (b_packed) {
        bp = static_cast<uint16_t*>(b_packed->data()) + (item % groups) * kp * group_cols;
      } else {
        bp = static_cast<uint16_t*>(b_pack.get(size_t(kp * group_cols) * 2));
        pack_amx_b(sb, col0, cols, k, kp, bp,
                   static_cast<uint16_t*>(run.get(size_t(2 * std::max(k, group_cols) + 64) * 2)));
      }
      auto* c = static_cast<float*>(c_tile.get(size_t(chunk_rows * 32) * 4));
      for (int64_t p = 0; p * 32 < cols; ++p) {
        amx_tiles(ap + row0 * kp, kp, chunk_rows / 32, bp + p * kp * 32, kp, c, 32);
        const int64_t j0 = col0 + p * 32, width = std::min<int64_t>(32, n - j0);
        for (int64_t i = 0; i < chunk_rows && first + row0 + i < m; ++i)
          store(c + i * 32, 1, out.data + ((first + row0 + i) * out.ld + j0) * item_bytes, width);
      }
    });
  }
}

Mode mode_for(Dtype d) {
  switch (d) {
    case Dtype::float64: return Mode::f64;
    case Dtype::complex64: return Mode::c64;
    case Dtype::bfloat16: return matmul_kernels().bf16[1] ? Mode::bf16 : Mode::f32;
    default: return Mode::f32;
  }
}

void gemm(const Operand& a, const Operand& b, int64_t m, int64_t n, int64_t k, const Out& out) {
  Mode mode = mode_for(out.dtype);
  if (mode == Mode::bf16 && amx_ready()) return gemm_amx(a, b, m, n, k, out);
  if (gemm_skinny(mode, a, b, m, n, k, out)) return;
  gemm_blocked(make_plan(mode, m, n, k, b.lane_major()), a, b, out);
}

// Axes [0, last] of `x` that merge into one strided axis: with `last` the rows' axis, the batch
// axes with the rows; with the axis before it, the batch axes alone.
bool axes_merge(const Array& x, int last, int64_t& stride) {
  int64_t expect = -1;
  stride = 0;
  for (int d = last; d >= 0; --d) {
    if (x.shape(d) == 1) continue;
    if (expect >= 0 && x.strides()[d] != expect) return false;
    if (expect < 0) stride = x.strides()[d];
    expect = x.strides()[d] * x.shape(d);
  }
  return true;
}

void eval_matmul(const Matmul&, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array &a = in[0], &b = in[1];
  Array& c = out[0];
  c.allocate_contiguous();
  int nd = c.ndim();
  int64_t m = c.shape(nd - 2), n = c.shape(nd - 1), k = a.shape(nd - 1);
  if (c.size() == 0) return;
  if (k == 0) {
    std::memset(c.data_bytes(), 0, c.nbytes());  // an empty sum: zeros (all-zero bits in every float type)
    return;
  }
  Dtype d = c.dtype();
  bool direct = d == Dtype::float32 || d == Dtype::float64 || d == Dtype::complex64;
  int64_t batch = c.size() / (m * n);
  bool a_shared = true, b_shared = true;
  for (int i = 0; i < nd - 2; ++i) {
    a_shared &= a.strides()[i] == 0 || a.shape(i) == 1;
    b_shared &= b.strides()[i] == 0 || b.shape(i) == 1;
  }
  int64_t row_stride, b_stride;
  if (b_shared && axes_merge(a, nd - 2, row_stride)) {
    // Every batch uses the same B: one product over all rows.
    Operand oa{a.data_bytes(), d, row_stride, a.strides()[nd - 1], false};
    Operand ob{b.data_bytes(), d, b.strides()[nd - 1], b.strides()[nd - 2], true};
    gemm(oa, ob, batch * m, n, k, {c.data_bytes(), d, n, direct});
    return;
  }
  // Few rows against a stack of matrices (x @ T with T of shape (count, k, n)): one pass over
  // the stack, split between threads as one product's columns (bfloat16 on AMX keeps its tiles).
  Mode mode = mode_for(d);
  if (a_shared && axes_merge(b, nd - 3, b_stride) && !(mode == Mode::bf16 && amx_ready())) {
    Operand oa{a.data_bytes(), d, a.strides()[nd - 2], a.strides()[nd - 1], false};
    Operand ob{b.data_bytes(), d, b.strides()[nd - 1], b.strides()[nd - 2], true};
    if (gemm_skinny(mode, oa, ob, m, n, k, {c.data_bytes(), d, n, direct}, {batch, b_stride, m * n})) return;
  }
  for (int64_t bi = 0; bi < batch; ++bi) {
    int64_t oa = 0, ob = 0, rest = bi;
    for (int i = nd - 3; i >= 0; --i) {
      int64_t idx = rest % c.shape(i);
      rest /= c.shape(i);
      oa += idx * a.strides()[i], ob += idx * b.strides()[i];
    }
    size_t item = size_of(d);
    Operand A{a.data_bytes() + oa * int64_t(item), d, a.strides()[nd - 2], a.strides()[nd - 1], false};
    Operand B{b.data_bytes() + ob * int64_t(item), d, b.strides()[nd - 1], b.strides()[nd - 2], true};
    gemm(A, B, m, n, k, {c.data_bytes() + bi * m * n * int64_t(item), d, n, direct});
  }
}

}  // namespace

void gemm(Dtype d, GemmOperand a, GemmOperand b, int64_t m, int64_t n, int64_t k, char* c, int64_t ldc,
          bool accumulate) {
  if (m == 0 || n == 0 || (k == 0 && accumulate)) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::memset(c + i * ldc * int64_t(size_of(d)), 0, size_t(n) * size_of(d));
    return;
  }
  bool direct = d == Dtype::float32 || d == Dtype::float64 || d == Dtype::complex64;
  if (accumulate && !direct)
    throw KernelError(EvalErrorKind::other, "gemm: accumulates float32, float64, complex64 only");
  gemm(Operand{a.data, d, a.row_stride, a.col_stride, false}, Operand{b.data, d, b.col_stride, b.row_stride, true}, m,
       n, k, {c, d, ldc, direct, accumulate});
}

void register_matmul_kernels(Backend& b) { b.add<Matmul, eval_matmul>(); }

}  // namespace cpu
}  // namespace nuvec
