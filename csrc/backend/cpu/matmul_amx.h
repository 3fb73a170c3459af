// bfloat16 products on AMX tiles (processors with AMX-BF16, where Linux grants the tile state).
//
// TDPBF16PS does not add a row's bfloat16 pairs one after another as VDPBF16PS does (a check on
// the AVX-512 Xeon found 69% of the sums different), so where AMX is ready every bfloat16 product
// takes it, whatever its rows: each element is the tiles' sum over K in chunks of 32, the same for
// any M, N, tiling or thread count, and rows stay independent (docs/matmul.md).
#pragma once
#include <cstdint>

namespace nuvec::cpu {

// Whether this process may run the tiles (asked once).
bool amx_ready();
// Whether it may also run their int8 dot products (AMX-INT8: the quantized kernels' totals).
bool amx_int8_ready();

// A tile configuration (palette 1): each tile's rows and bytes per row.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// C (row_blocks * 32 rows x 32 columns, rows ldc floats apart) = A B over kp values of k (a multiple
// of 32): A holds the rows, each kp bfloat16 values lda apart (lda >= kp); B is one panel of 32
// columns, for each pair of k rows the 32 columns' two values (kp / 2 * 32 words).
void amx_tiles(const uint16_t* a, int64_t lda, int64_t row_blocks, const uint16_t* b, int64_t kp, float* c,
               int64_t ldc);

// The same product with the operands' roles swapped, for few rows of x against W's rows (x @ W.T):
// C (16 x 16 floats, 16 apart) holds W x.T for 16 rows of W (kp values each, ldw apart, read in
// place) against x's rows packed as B panels of 16 columns (for each pair of k, the 16 columns' two
// values). A tile's sums do not depend on which operand is which (the products are the same).
void amx_tiles_t(const uint16_t* w, int64_t ldw, const uint16_t* xt, int64_t kp, float* c);

// Few rows of x against W laid out along N (x @ W): C (tiles of 16 x 16 floats, one after another,
// for W's columns [0, cols) in 16s) = x W, with x packed as one A tile's rows (16 rows of kp values,
// zero past k and past x's rows) and W's pairs of k rows (ldw apart; k of them) interleaved in
// registers for each tile. C goes through memory between chunks of 32 k (float32: no bits change).
void amx_rows_times_w(const uint16_t* xa, int64_t kp, const uint16_t* w, int64_t ldw, int64_t k, int64_t cols,
                      float* c);

}  // namespace nuvec::cpu
