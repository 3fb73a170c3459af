// The CPU kernels of quantized_matmul and gather_qmm: the row kernels of
// backend/cpu/simd/quantized.cpp over the products (batch items, or runs of gathered items that
// share a weight) and over blocks of output columns on the thread pool. Every output element is
// computed by one thread with one fixed sequence of operations, so no split changes a bit.
#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/ctypes.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quantized.h"
#include "backend/cpu/quantized_rows16.h"
#include "backend/cpu/sort.h"
#include "backend/cpu/thread_buffer.h"
#include "core/primitives/matmul.h"
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

// The operands of products with the weight matrix at element offsets (ow, os, ob).
struct Weights {
  const Array &w, &s, &b;
  QmmProblem at(int64_t ow, int64_t os, int64_t ob) const {
    QmmProblem p{};
    p.w = w.data<uint32_t>() + ow;
    p.scales = s.data_bytes() + os * int64_t(size_of(s.dtype()));
    p.biases = b.data_bytes() + ob * int64_t(size_of(b.dtype()));
    p.sdtype = s.dtype(), p.bdtype = b.dtype();
    return p;
  }
};

constexpr int64_t kDenseBlock = 512;  // weight rows dequantized at a time for a dense product

// A transposed product of more rows than the row-independence promise covers (backend/cpu/
// quantized.h): blocks of weight rows dequantized to float32, then the dense product.
void run_dense(const QmmProblem& p) {
  std::vector<float> wd(size_t(std::min(p.n, kDenseBlock) * p.k));
  auto dq = NUVEC_FOR_ISA(qmm_dequantize);
  for (int64_t n0 = 0; n0 < p.n; n0 += kDenseBlock) {
    const int64_t n1 = std::min(p.n, n0 + kDenseBlock);
    parallel_for(n1 - n0, std::max<int64_t>(1, (int64_t(1) << 14) / p.k),
                 [&](int64_t r0, int64_t r1) { dq(p, n0 + r0, n0 + r1, wd.data() + r0 * p.k); });
    // B (k x rows) is the block transposed: element (kk, j) at wd[j * k + kk].
    gemm(Dtype::float32, {reinterpret_cast<const char*>(p.x), p.k, 1},
         {reinterpret_cast<const char*>(wd.data()), 1, p.k}, p.m, n1 - n0, p.k, reinterpret_cast<char*>(p.y + n0), p.n);
  }
}

// x's rows as integer activations' digit planes (each problem's xq and xd set here), in the calling
// thread's buffers: they live until its next call.
void int_rows(std::span<QmmProblem> ps, int64_t rows, int digits) {
  struct Digits;
  struct Steps;
  const int64_t k = ps[0].k, stride = 2 * qmm_q8_padded(k / ps[0].group), plane = qmm_q8_plane(k, ps[0].group);
  const size_t bytes = size_t(rows * plane * digits);
  int8_t* qat = thread_buffer<Digits, int8_t>(bytes);
  float* dat = thread_buffer<Steps, float>(size_t(rows * stride));
  std::memset(qat, 0, bytes);  // the planes' padding
  for (QmmProblem& p : ps) {
    NUVEC_FOR_ISA(qmm_q8_quantize)(p.x, p.m, k, p.group, p.bits, digits, qat, dat);
    p.xq = qat, p.xd = dat, p.digits = digits, qat += p.m * plane * digits, dat += p.m * stride;
  }
}

// Runs the products (x, w, y, m, n, k, bits and group set; x's sums or integer rows filled here when
// transposed), each over its blocks of output columns, on the pool.
void run_products(std::vector<QmmProblem>& ps, bool t, int activation_bits) {
  if (ps.empty()) return;
  // Products past the row-independence promise take the dense path (no copy of the list unless
  // one does: this runs for every decode step's products).
  if (t && std::any_of(ps.begin(), ps.end(), [](const QmmProblem& p) { return p.m > kRowIndependentRows; })) {
    std::vector<QmmProblem> rest;
    for (const QmmProblem& p : ps) p.m > kRowIndependentRows ? run_dense(p) : rest.push_back(p);
    ps.swap(rest);
    if (ps.empty()) return;
  }
  const int64_t n = ps[0].n, k = ps[0].k, group = ps[0].group;
  int64_t rows = 0, max_m = 0;
  for (const QmmProblem& p : ps) rows += p.m, max_m = std::max(max_m, p.m);
  const int digits = t ? qmm_q8_digits(ps[0].bits, int(group), activation_bits) : 0;
  if (digits) int_rows(ps, rows, digits);
  if (t && !digits) {
    struct Sums;
    float* at = thread_buffer<Sums, float>(size_t(rows * (k / group)));
    for (QmmProblem& p : ps)
      NUVEC_FOR_ISA(qmm_group_sums)(p.x, p.m, k, int(group), at), p.xsum = at, at += p.m * (k / group);
  }
  // Work units per product: blocks of kQmmRowBlock weight rows (transposed) or column chunks.
  const int64_t units = t ? (n + kQmmRowBlock - 1) / kQmmRowBlock : (n + kQmmChunk - 1) / kQmmChunk;
  const int64_t unit_macs = std::max<int64_t>(1, rows / int64_t(ps.size())) * k * (t ? kQmmRowBlock : kQmmChunk);
  auto tk = digits ? NUVEC_FOR_ISA(qmm_q8_transposed) : NUVEC_FOR_ISA(qmm_transposed);
  auto pk = NUVEC_FOR_ISA(qmm_plain);
  parallel_for(int64_t(ps.size()) * units, std::max<int64_t>(1, kGrainMacs / unit_macs), [&](int64_t u0, int64_t u1) {
    struct Pieces;  // a decode step's ~1800 pieces each allocated 32 KiB before
    float* scratch = thread_buffer<Pieces, float>(size_t(qmm_scratch(max_m, n, k)));  // written before read
    for (int64_t u = u0; u < u1;) {
      int64_t pi = u / units, first = u % units, last = std::min(units, first + (u1 - u));
      const QmmProblem& p = ps[size_t(pi)];
      if (t)
        tk(p, first * kQmmRowBlock, std::min(n, last * kQmmRowBlock), scratch);
      else
        pk(p, first, last, scratch);
      u += last - first;
    }
  });
}

#if defined(__x86_64__)
// A product of at most kRowIndependentRows rows with integer activations on the weight's
// interleaved copy: blocks of sixteen weight rows over the pool, two runs of whole blocks per
// thread. Long runs are what the hardware prefetchers follow (they restart at each piece), and an
// even split leaves no thread idle at the end (SmolLM2's 960-row products made 9 pieces of ~2.5 us,
// run 5 against 4): its decode's layer products ran 15% faster than in pieces of ~64K
// multiply-adds.
void run_rows16(const QmmRows16& copy, QmmProblem p) {
  int_rows({&p, 1}, p.m, p.digits);
  const int64_t pieces = 2 * int64_t(get_num_threads());
  const int64_t grain = std::max({int64_t(1), kGrainMacs / (p.m * kRows16 * p.k), (copy.blocks + pieces - 1) / pieces});
  parallel_for(copy.blocks, grain, [&](int64_t b0, int64_t b1) { avx512::qmm_rows16(copy, p, b0, b1); });
}
#endif

// Calls fn(float32 output base) and converts into y when y is not float32.
template <class F> void into_output(Array& y, F&& fn) {
  y.allocate_contiguous();
  if (y.size() == 0) return;
  if (y.dtype() == Dtype::float32) return fn(y.data<float>());
  std::vector<float> yf(size_t(y.size()));
  fn(yf.data());
  kernels().convert[int(Dtype::float32)][int(y.dtype())](yf.data(), 1, y.data_bytes(), y.size());
}

void eval_qmm(const QuantizedMatmul& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const QuantSpec& q = prim.spec();
  const bool shared = in[1].ndim() == 2, t = prim.transpose();
  Array x = shared ? row_contiguous(in[0]) : inner_contiguous(in[0]), w = inner_contiguous(in[1]),
        s = inner_contiguous(in[2]), b = inner_contiguous(in[3]);
  Array& y = out[0];
  into_output(y, [&](float* ybase) {
    const int64_t k = x.shape(-1), n = y.shape(-1);
    const int64_t m = shared ? x.size() / k : x.shape(-2), batch = shared ? 1 : y.size() / (m * n);
    Weights ws{w, s, b};
#if defined(__x86_64__)
    const int digits = t ? qmm_q8_digits(q.bits, q.group_size, prim.activation_bits()) : 0;
    if (shared && digits && q.bits == 4 && q.mode == QuantMode::affine && m <= kRowIndependentRows)
      if (auto copy = rows16_for(w, s, b, q.group_size)) {
        QmmProblem p = ws.at(0, 0, 0);
        p.x = x.data<float>(), p.y = ybase, p.m = m, p.n = n, p.k = k, p.bits = q.bits, p.group = q.group_size;
        p.digits = digits;
        return run_rows16(*copy, p);
      }
#endif
    std::vector<QmmProblem> ps;
    for (int64_t bi = 0; bi < batch; ++bi) {
      QmmProblem p = shared ? ws.at(0, 0, 0) : ws.at(batch_offset(w, bi), batch_offset(s, bi), batch_offset(b, bi));
      p.x = x.data<float>() + (shared ? 0 : batch_offset(x, bi));
      p.y = ybase + bi * m * n;
      p.m = m, p.n = n, p.k = k, p.bits = q.bits, p.group = q.group_size;
      ps.push_back(p);
    }
    run_products(ps, t, prim.activation_bits());
  });
}

// Items in order; a run of items that use one weight and consecutive x matrices is one product
// of more rows (which changes no bits: rows are independent).
void eval_gather_qmm(const GatherQmm& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const QuantSpec& q = prim.spec();
  Array x = row_contiguous(in[0]), w = row_contiguous(in[1]), s = row_contiguous(in[2]), b = row_contiguous(in[3]);
  Array lhs = row_contiguous(in[4]), rhs = row_contiguous(in[5]);
  Array& y = out[0];
  const int64_t k = x.shape(-1), m = x.shape(-2), n = y.shape(-1), items = lhs.size();
  const int64_t x_items = x.size() / std::max<int64_t>(1, m * k), w_items = w.size() / (w.shape(-2) * w.shape(-1));
  const uint32_t *li = lhs.data<uint32_t>(), *ri = rhs.data<uint32_t>();
  check_gather_qmm_indices(li, ri, items, x_items, w_items);
  into_output(y, [&](float* ybase) {
    if (m * k == 0) return std::fill(ybase, ybase + y.size(), 0.0f);
    Weights ws{w, s, b};
    const int64_t wsize = w.shape(-2) * w.shape(-1), ssize = s.shape(-2) * s.shape(-1);
    std::vector<QmmProblem> ps;
    for (int64_t i = 0; i < items;) {
      int64_t j = i + 1;
      while (j < items && ri[j] == ri[i] && li[j] == li[j - 1] + 1) ++j;
      QmmProblem p = ws.at(ri[i] * wsize, ri[i] * ssize, ri[i] * ssize);
      p.x = x.data<float>() + li[i] * m * k;
      p.y = ybase + i * m * n;
      p.m = (j - i) * m, p.n = n, p.k = k, p.bits = q.bits, p.group = q.group_size;
      ps.push_back(p);
      i = j;
    }
    run_products(ps, prim.transpose(), prim.activation_bits());
  });
}

}  // namespace

void register_quantized_matmul_kernels(Backend& b) {
  b.add<QuantizedMatmul, eval_qmm>();
  b.add<GatherQmm, eval_gather_qmm>();
}

}  // namespace nuvec::cpu
