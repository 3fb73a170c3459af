// The CPU Hadamard transform, row by row on the thread pool (rows are independent, so the split
// changes no bits). Per row, in MLX's CPU kernel's order of operations, so the results are MLX's
// bits: the radix-2 butterfly over each run of 2^k values (stages h = 1, 2, 4, ...; half types
// round to their format after each stage, as MLX stores them), the scale applied after the last
// stage when m = 1; for m > 1 then, per position i of the runs, the m-point transform summed in
// float over the m runs in order, times the scale.
#include <algorithm>
#include <cstring>
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

// The m-point part over a row of m runs of n values, position by position; `round` brings each
// result to the output's format (identity for float32 and float64).
template <class T, class Round> void m_part(T* w, const Plan& p, std::vector<T>& acc, Round round) {
  const char* h = h_matrix(p.m);
  acc.resize(size_t(p.m));
  for (int64_t i = 0; i < p.n; ++i) {
    for (int64_t j = 0; j < p.m; ++j) {
      T sum = 0;
      for (int64_t k = 0; k < p.m; ++k) {
        T x = w[i + k * p.n];
        bool plus = (p.transposed ? h[j + k * p.m] : h[k + j * p.m]) == '+';
        sum = plus ? sum + x : sum - x;
      }
      acc[size_t(j)] = sum;
    }
    for (int64_t j = 0; j < p.m; ++j) w[i + j * p.n] = round(acc[size_t(j)] * T(p.scale));
  }
}

template <class T> using Stage = void (*)(T*, int64_t, int64_t, T, bool);

// One row in place (float32 or float64).
template <class T> void row_exact(T* w, const Plan& p, Stage<T> stage, std::vector<T>& acc) {
  for (int64_t h = 1; h < p.n; h <<= 1) stage(w, p.n * p.m, h, T(p.scale), p.m == 1 && 2 * h == p.n);
  if (p.m > 1) m_part(w, p, acc, [](T v) { return v; });
}

// One row of a half type through float32, rounded to the half type after each stage as MLX's
// kernel stores it.
void row_half(float* w, char* tmp, Dtype d, const Plan& p, Stage<float> stage, std::vector<float>& acc) {
  int64_t len = p.n * p.m;
  ConvertKernel to_half = kernels().convert[int(Dtype::float32)][int(d)];
  ConvertKernel to_float = kernels().convert[int(d)][int(Dtype::float32)];
  auto round_all = [&] {
    to_half(w, 1, tmp, len);
    to_float(tmp, 1, w, len);
  };
  for (int64_t h = 1; h < p.n; h <<= 1) {
    stage(w, len, h, 1.0f, false);
    round_all();
    if (p.m == 1 && 2 * h == p.n) {  // the last stage: the stored sums times the scale
      for (int64_t j = 0; j < len; ++j) w[j] *= p.scale;
      round_all();
    }
  }
  if (p.m > 1) {
    m_part(w, p, acc, [](float v) { return v; });
    round_all();
  }
}

void eval_hadamard(const Hadamard& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& y = out[0];
  y.allocate_contiguous();
  copy_into(in[0], y);
  int64_t len = y.shape(-1), rows = y.size() / len;
  Plan p{len / hadamard_m(len), hadamard_m(len), prim.scale(), prim.transposed()};
  Dtype d = y.dtype();
  Stage<float> s32 = NUVEC_FOR_ISA(hadamard_stage_f32);
  Stage<double> s64 = NUVEC_FOR_ISA(hadamard_stage_f64);
  parallel_for(rows, std::max<int64_t>(1, 16384 / len), [&](int64_t begin, int64_t end) {
    std::vector<float> acc32, buf;
    std::vector<double> acc64;
    std::vector<char> tmp;
    for (int64_t r = begin; r < end; ++r) {
      char* row = y.data_bytes() + r * len * int64_t(size_of(d));
      if (d == Dtype::float32) {
        row_exact(reinterpret_cast<float*>(row), p, s32, acc32);
      } else if (d == Dtype::float64) {
        row_exact(reinterpret_cast<double*>(row), p, s64, acc64);
      } else {
        buf.resize(size_t(len));
        tmp.resize(size_t(len) * 2);
        kernels().convert[int(d)][int(Dtype::float32)](row, 1, buf.data(), len);
        row_half(buf.data(), tmp.data(), d, p, s32, acc32);
        std::memcpy(row, tmp.data(), size_t(len) * 2);
      }
    }
  });
}

}  // namespace

void register_hadamard_kernels(Backend& b) { b.add<Hadamard, eval_hadamard>(); }

}  // namespace nuvec::cpu
