// The CPU Hadamard transform, row by row on the thread pool (rows are independent, so the split
// changes no bits). Per row, in MLX's CPU kernel's order of operations, so the results are MLX's
// bits: the radix-2 butterfly over each run of 2^k values (stages h = 1, 2, 4, ...; half types
// round to their format after each stage, as MLX stores them), the scale applied after the last
// stage when m = 1; for m > 1 then, per position i of the runs, the m-point transform summed in
// float over the m runs in order, times the scale.
#include <algorithm>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/hadamard.h"
#include "backend/cpu/kernels.h"
#include "core/primitives/hadamard.h"
#include "core/threads.h"

namespace nuvec::cpu {
namespace {

// MLX's H_m (row j, column k: '+' for 1, '-' for -1), for the m-point part.
const char* const kH12 =
    "+-++++++++++--+-+-+-+-+-+++-++----+++---+--+-++-+++++-++----+-+---+--+-+++--+++-++--+--++---+--+++--"
    "--+++-+++--+-++---+-++++----+++-+-+--+-++---";
const char* const kH20 =
    "+----+----++--++-++--+----+---+++---+-++--+----+---+++-+-+-+---+----+---+++++-+-----+----++--++-++-+"
    "-+++++-----+--+++--++-+++-+---+-+--+++--++-++--+---+-+--+++-+++-+---+---+-+--+++++++-----++--+-+--++"
    "--++-+-++-+-----++++---++-+-++-+---+-++++---++-+-+--+--++-++++---++-+----+-+++-+-++---++-+----+++++-"
    "-+--+--++-+----+----+-+-----++-+----+----+-+-+---+--+----+----+-+++------+----+-+--+--++------+----+";
const char* const kH28 =
    "+------++----++-+--+-+--++---+-----+++-----+-+--+-+--++---+-----+++---+-+-+----+--++---+-----+++---+"
    "-+-+-+--+--+----+-----+++---+-+-+++--+-------+-----++++--+-+--++--+-------++----++-+--+-+--++--+--++"
    "++-+-------++--+++-+--+----++++-+-----+-++--+-+-+--++---+++--+----++-++--+-+-+--++---++---+----++-++"
    "--+-+-+-+++---+----+----++-++--+-+-+++++--------+-+--++-++--+-+--++++--------+++--++--+--+-+-+-++-++"
    "--++--+--------++++-+-+-++--+--++--+--------++++-+-+-++--+--++--+----+---++++-+-+-++--+--+---+---++-"
    "--++++-+-+-++--+------+--+++---+-++-+-+-++--+------+-++++---+-++-+---++--+------+-++++---++--++-+-++"
    "-+++----++------+-++--++-+-++-+++-----+-----++-++---+-+-++-+++-----+-----++-++-+-+-+-+--+++-----+---"
    "--++-++++-+-+----+++-----+--+--++-+-++-+-+----+++-----+-++--++-+-++-+-+----++------+";

const char* h_matrix(int64_t m) { return m == 12 ? kH12 : m == 20 ? kH20 : kH28; }

struct Plan {
  int64_t n;  // 2^k
  int64_t m;
  float scale;
  bool transposed;
};

template <class T> using Stage = void (*)(T*, int64_t, int64_t, T, bool);
template <class T> using MPoint = void (*)(T*, int64_t, int64_t, const char*, bool, T, T*);

template <class T> struct Loops {
  Stage<T> stage;
  MPoint<T> m_point;
  int (*first_stages)(T*, int64_t) = nullptr;  // stages 1, 2, 4 in one pass (float32, some builds)
};

// One row in place, in its own type (float32, float64, or float32 with `round` bringing every
// stored value to a half type, as MLX's kernel stores them).
template <class T, class Round> void row(T* w, const Plan& p, const Loops<T>& f, std::vector<T>& tmp, Round round) {
  int64_t len = p.n * p.m;
  int64_t h0 = 1;
  // The fused first stages are unscaled: they apply while the last stage (scaled for m = 1) is later.
  if (round.exact && f.first_stages && (p.n >= 16 || (p.n == 8 && p.m > 1))) h0 <<= f.first_stages(w, len);
  for (int64_t h = h0; h < p.n; h <<= 1) {
    bool last = p.m == 1 && 2 * h == p.n;
    if (round.exact) {
      f.stage(w, len, h, T(p.scale), last);
      continue;
    }
    f.stage(w, len, h, T(1), false);
    round(w, len);
    if (last) {  // the stored sums times the scale
      for (int64_t j = 0; j < len; ++j) w[j] *= p.scale;
      round(w, len);
    }
  }
  if (p.m > 1) {
    tmp.resize(size_t(len));
    f.m_point(w, p.n, p.m, h_matrix(p.m), p.transposed, T(p.scale), tmp.data());
    round(w, len);
  }
}

struct Exact {
  static constexpr bool exact = true;
  template <class T> void operator()(T*, int64_t) const {}
};

// Rounds float32 values to a half type, kept as floats.
struct ToHalf {
  static constexpr bool exact = false;
  void (*round)(float*, int64_t, bool);
  bool bfloat;
  void operator()(float* w, int64_t len) const { round(w, len, bfloat); }
};

void eval_hadamard(const Hadamard& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& y = out[0];
  y.allocate_contiguous();
  copy_into(in[0], y);
  int64_t len = y.shape(-1), rows = y.size() / len;
  Plan p{len / hadamard_m(len), hadamard_m(len), prim.scale(), prim.transposed()};
  Dtype d = y.dtype();
  Loops<float> f32{NUVEC_FOR_ISA(hadamard_stage_f32), NUVEC_FOR_ISA(hadamard_m_f32)};
  Loops<float> f32_fused{f32.stage, f32.m_point, NUVEC_FOR_ISA(hadamard_first_stages_f32)};
  Loops<double> f64{NUVEC_FOR_ISA(hadamard_stage_f64), NUVEC_FOR_ISA(hadamard_m_f64)};
  auto round_half = NUVEC_FOR_ISA(hadamard_round);
  parallel_for(rows, std::max<int64_t>(1, 16384 / len), [&](int64_t begin, int64_t end) {
    std::vector<float> tmp32, buf;
    std::vector<double> tmp64;
    for (int64_t r = begin; r < end; ++r) {
      char* data = y.data_bytes() + r * len * int64_t(size_of(d));
      if (d == Dtype::float32) {
        row(reinterpret_cast<float*>(data), p, f32_fused, tmp32, Exact{});
      } else if (d == Dtype::float64) {
        row(reinterpret_cast<double*>(data), p, f64, tmp64, Exact{});
      } else {
        buf.resize(size_t(len));
        kernels().convert[int(d)][int(Dtype::float32)](data, 1, buf.data(), len);
        row(buf.data(), p, f32, tmp32, ToHalf{round_half, d == Dtype::bfloat16});
        kernels().convert[int(Dtype::float32)][int(d)](buf.data(), 1, data, len);  // exact: values are rounded
      }
    }
  });
}
}  // namespace

void register_hadamard_kernels(Backend& b) { b.add<Hadamard, eval_hadamard>(); }

}  // namespace nuvec::cpu
