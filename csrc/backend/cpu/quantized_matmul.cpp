// The CPU kernel of quantized_matmul: the row kernels of backend/cpu/simd/quantized.cpp over the
// batch and over blocks of output columns on the thread pool. Every output element is computed by
// one thread with one fixed sequence of operations, so no split changes a bit.
#include <algorithm>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/ctypes.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/quantized.h"
#include "backend/cpu/sort.h"
#include "core/primitives/quantized.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t kGrainMacs = int64_t(1) << 16;  // multiply-adds below which one thread runs a piece

// `a` itself when each matrix (the last two axes) is row-contiguous, else a row-contiguous copy.
Array inner_contiguous(const Array& a) {
  int nd = a.ndim();
  if (a.strides()[nd - 1] == 1 && (a.shape(nd - 2) == 1 || a.strides()[nd - 2] == a.shape(nd - 1))) return a;
  return row_contiguous(a);
}

// The element offset of matrix `b` (a flat batch index) of `a`.
int64_t batch_offset(const Array& a, int64_t b) {
  int64_t off = 0;
  for (int d = a.ndim() - 3; d >= 0; --d) off += (b % a.shape(d)) * a.strides()[d], b /= a.shape(d);
  return off;
}

void eval_qmm(const QuantizedMatmul& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& y = out[0];
  y.allocate_contiguous();
  if (y.size() == 0) return;
  const QuantSpec& q = prim.spec();
  const bool shared = in[1].ndim() == 2, t = prim.transpose();
  Array x = shared ? row_contiguous(in[0]) : inner_contiguous(in[0]), w = inner_contiguous(in[1]),
        s = inner_contiguous(in[2]), b = inner_contiguous(in[3]);
  const int64_t k = x.shape(-1), n = y.shape(-1);
  const int64_t m = shared ? x.size() / k : x.shape(-2), batch = shared ? 1 : y.size() / (m * n);
  // x rows (float32) and, transposed, their group sums: per matrix, contiguous.
  std::vector<float> yf(y.dtype() == Dtype::float32 ? 0 : size_t(y.size()));
  float* ybase = y.dtype() == Dtype::float32 ? y.data<float>() : yf.data();
  const int64_t groups_k = k / q.group_size;
  std::vector<float> xsum(t ? size_t(batch * m * groups_k) : 0);
  auto sums = NUVEC_FOR_ISA(qmm_group_sums);
  if (t)
    for (int64_t bi = 0; bi < batch; ++bi)
      sums(x.data<float>() + (shared ? 0 : batch_offset(x, bi)), m, k, q.group_size, xsum.data() + bi * m * groups_k);
  auto problem = [&](int64_t bi) {
    QmmProblem p{};
    p.x = x.data<float>() + (shared ? 0 : batch_offset(x, bi));
    p.xsum = t ? xsum.data() + bi * m * groups_k : nullptr;
    p.w = w.data<uint32_t>() + (shared ? 0 : batch_offset(w, bi));
    size_t ss = size_of(s.dtype()), bs = size_of(b.dtype());
    p.scales = s.data_bytes() + (shared ? 0 : batch_offset(s, bi)) * int64_t(ss);
    p.biases = b.data_bytes() + (shared ? 0 : batch_offset(b, bi)) * int64_t(bs);
    p.sdtype = s.dtype(), p.bdtype = b.dtype();
    p.y = ybase + bi * m * n;
    p.m = m, p.n = n, p.k = k, p.bits = q.bits, p.group = q.group_size;
    return p;
  };
  // Work units per matrix: blocks of kQmmRowBlock weight rows (transposed) or column chunks.
  const int64_t units = t ? (n + kQmmRowBlock - 1) / kQmmRowBlock : (n + kQmmChunk - 1) / kQmmChunk;
  const int64_t unit_macs = m * k * (t ? kQmmRowBlock : kQmmChunk);
  auto tk = NUVEC_FOR_ISA(qmm_transposed);
  auto pk = NUVEC_FOR_ISA(qmm_plain);
  parallel_for(batch * units, std::max<int64_t>(1, kGrainMacs / unit_macs), [&](int64_t u0, int64_t u1) {
    std::vector<float> scratch(size_t(qmm_scratch(m, n, k)));
    for (int64_t u = u0; u < u1;) {
      int64_t bi = u / units, first = u % units, last = std::min(units, first + (u1 - u));
      QmmProblem p = problem(bi);
      if (t)
        tk(p, first * kQmmRowBlock, std::min(n, last * kQmmRowBlock), scratch.data());
      else
        pk(p, first, last, scratch.data());
      u += last - first;
    }
  });
  if (!yf.empty()) {
    auto conv = kernels().convert[int(Dtype::float32)][int(y.dtype())];
    conv(yf.data(), 1, y.data_bytes(), y.size());
  }
}

}  // namespace

void register_quantized_matmul_kernels(Backend& b) { b.add<QuantizedMatmul, eval_qmm>(); }

}  // namespace nuvec::cpu
