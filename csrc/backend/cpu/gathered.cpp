// The CPU kernels of gather_mm and segmented_mm. Every product is cpu::gemm, matmul's own, on the
// operands in place where the gathered rows are evenly spaced, else on rows copied into a buffer
// (a copy changes no bits): so each row of a gathered product gets the bits of its one-row dense
// product, whatever the indices, their order or the thread count.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/matmul.h"
#include "core/primitives/gathered.h"
#include "core/primitives/matmul.h"

namespace nuvec::cpu {
namespace {

// An index array's values (any layout) in row-major order.
std::vector<uint32_t> index_values(const Array& idx) {
  Array c = Array::allocate(idx.shape(), Dtype::uint32);
  copy_into(idx, c);
  return std::vector<uint32_t>(c.data<uint32_t>(), c.data<uint32_t>() + c.size());
}

// Element offsets of x's batch entries (all axes but the last two), in row-major order.
std::vector<int64_t> batch_offsets(const Array& x) {
  int nb = x.ndim() - 2;
  int64_t n = 1;
  for (int d = 0; d < nb; ++d) n *= x.shape(d);
  std::vector<int64_t> off(size_t(n), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    for (int d = nb - 1; d >= 0; --d) {
      off[size_t(i)] += (rest % x.shape(d)) * x.strides()[d];
      rest /= x.shape(d);
    }
  }
  return off;
}

void check_range(const std::vector<uint32_t>& v, size_t n, const char* what) {
  for (uint32_t x : v)
    if (x >= n)
      throw KernelError(EvalErrorKind::index, std::string(what) + " " + std::to_string(x) + " is out of range for " +
                                                  std::to_string(n) + " batch entries");
}

// The positions i of `keys` grouped by key (keys below n), increasing i within a group.
std::vector<std::vector<int64_t>> groups_by(const std::vector<uint32_t>& keys, size_t n) {
  std::vector<std::vector<int64_t>> g(n);
  for (size_t i = 0; i < keys.size(); ++i) g[keys[i]].push_back(int64_t(i));
  return g;
}

// A matrix's rows as element offsets from its data, and its column stride.
struct Rows {
  const char* data;
  std::vector<int64_t> off;
  int64_t col_stride;
};

// The rows' common spacing, if they are evenly spaced (one row: any spacing, given as `fallback`).
bool even_spacing(const std::vector<int64_t>& off, size_t first, size_t n, int64_t fallback, int64_t& step) {
  step = n > 1 ? off[first + 1] - off[first] : fallback;
  for (size_t r = 1; r < n; ++r)
    if (off[first + r] - off[first + r - 1] != step) return false;
  return true;
}

// Rows [first, first + n) of `src` into a contiguous n x cols buffer.
void pack_rows(const Rows& src, size_t first, size_t n, int64_t cols, size_t es, char* dst) {
  for (size_t r = 0; r < n; ++r) {
    const char* row = src.data + src.off[first + r] * int64_t(es);
    if (src.col_stride == 1) {
      std::memcpy(dst + r * cols * es, row, size_t(cols) * es);
    } else {
      for (int64_t k = 0; k < cols; ++k)
        std::memcpy(dst + (r * cols + k) * es, row + k * src.col_stride * int64_t(es), es);
    }
  }
}

// C rows (contiguous, n of them at `dst` element offsets) = A rows @ B, in chunks of at most
// kRowIndependentRows rows, each chunk one gemm (on A and C in place when evenly spaced).
void rows_times(Dtype d, const Rows& a, GemmOperand b, int64_t n_cols, int64_t k, char* c,
                const std::vector<int64_t>& dst, std::vector<char>& abuf, std::vector<char>& cbuf) {
  size_t es = size_of(d);
  for (size_t first = 0; first < a.off.size(); first += size_t(kRowIndependentRows)) {
    size_t n = std::min(a.off.size() - first, size_t(kRowIndependentRows));
    int64_t a_step, c_step;
    // In place where the rows are evenly spaced, forward (sorted indices).
    bool even = even_spacing(a.off, first, n, k, a_step) && even_spacing(dst, first, n, n_cols, c_step);
    if (even && a_step > 0 && c_step > 0) {
      gemm(d, {a.data + a.off[first] * int64_t(es), a_step, a.col_stride}, b, int64_t(n), n_cols, k,
           c + dst[first] * int64_t(es), c_step);
      continue;
    }
    abuf.resize(std::max(abuf.size(), n * size_t(k) * es));
    cbuf.resize(std::max(cbuf.size(), n * size_t(n_cols) * es));
    pack_rows(a, first, n, k, es, abuf.data());
    gemm(d, {abuf.data(), k, 1}, b, int64_t(n), n_cols, k, cbuf.data(), n_cols);
    for (size_t r = 0; r < n; ++r)
      std::memcpy(c + dst[first + r] * int64_t(es), cbuf.data() + r * size_t(n_cols) * es, size_t(n_cols) * es);
  }
}

struct Gathered {
  std::vector<uint32_t> li, ri;
  std::vector<int64_t> aoff, boff;  // batch entries of the first two inputs
  std::vector<std::vector<int64_t>> by_rhs;
};

// The indices checked against the batch entries of the first two inputs (for grad_b, the
// output stands for b).
Gathered gathered(const Array& a, const Array& b, const Array& lhs, const Array& rhs) {
  Gathered g{index_values(lhs), index_values(rhs), batch_offsets(a), batch_offsets(b), {}};
  check_range(g.li, g.aoff.size(), "lhs index");
  check_range(g.ri, g.boff.size(), "rhs index");
  g.by_rhs = groups_by(g.ri, g.boff.size());
  return g;
}

void eval_product(const Array& a, const Array& b, const Array& lhs, const Array& rhs, Array& c) {
  int na = a.ndim(), nb = b.ndim();
  int64_t m = a.shape(na - 2), k = a.shape(na - 1), n = b.shape(nb - 1);
  Gathered g = gathered(a, b, lhs, rhs);
  size_t es = size_of(c.dtype());
  std::vector<char> abuf, cbuf;
  for (size_t e = 0; e < g.by_rhs.size(); ++e) {
    if (g.by_rhs[e].empty()) continue;
    Rows rows{a.data_bytes(), {}, a.strides()[na - 1]};
    std::vector<int64_t> dst;
    for (int64_t i : g.by_rhs[e])
      for (int64_t r = 0; r < m; ++r) {
        rows.off.push_back(g.aoff[g.li[size_t(i)]] + r * a.strides()[na - 2]);
        dst.push_back((i * m + r) * n);
      }
    GemmOperand w{b.data_bytes() + g.boff[e] * int64_t(es), b.strides()[nb - 2], b.strides()[nb - 1]};
    rows_times(c.dtype(), rows, w, n, k, c.data_bytes(), dst, abuf, cbuf);
  }
}

// out[e] = sum over i with rhs[i] = e of a[lhs[i]]^T @ g[i]: the rows of a and g of those i, in
// order, packed, then one product whose inner axis runs over them.
void eval_grad_b(const Array& a, const Array& gr, const Array& lhs, const Array& rhs, Array& out) {
  int na = a.ndim(), ng = gr.ndim(), no = out.ndim();
  int64_t m = a.shape(na - 2), k = a.shape(na - 1), n = gr.shape(ng - 1);
  Gathered g = gathered(a, out, lhs, rhs);
  std::vector<int64_t> goff = batch_offsets(gr);
  size_t es = size_of(out.dtype());
  std::memset(out.data_bytes(), 0, out.nbytes());
  std::vector<char> abuf, gbuf;
  for (size_t e = 0; e < g.by_rhs.size(); ++e) {
    const std::vector<int64_t>& items = g.by_rhs[e];
    if (items.empty()) continue;
    Rows ra{a.data_bytes(), {}, a.strides()[na - 1]}, rg{gr.data_bytes(), {}, gr.strides()[ng - 1]};
    for (int64_t i : items)
      for (int64_t r = 0; r < m; ++r) {
        ra.off.push_back(g.aoff[g.li[size_t(i)]] + r * a.strides()[na - 2]);
        rg.off.push_back(goff[size_t(i)] + r * gr.strides()[ng - 2]);
      }
    size_t rows = ra.off.size();
    abuf.resize(std::max(abuf.size(), rows * size_t(k) * es));
    gbuf.resize(std::max(gbuf.size(), rows * size_t(n) * es));
    pack_rows(ra, 0, rows, k, es, abuf.data());
    pack_rows(rg, 0, rows, n, es, gbuf.data());
    gemm(out.dtype(), {abuf.data(), 1, k}, {gbuf.data(), n, 1}, k, n, int64_t(rows),
         out.data_bytes() + g.boff[e] * int64_t(es), out.strides()[no - 2]);
  }
}

void eval_gather_mm(const GatherMM& p, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& c = out[0];
  c.allocate_contiguous();
  if (c.size() == 0) return;
  if (p.kind() == GatherMM::Kind::product)
    eval_product(in[0], in[1], in[2], in[3], c);
  else
    eval_grad_b(in[0], in[1], in[2], in[3], c);
}

void eval_segmented_mm(const SegmentedMM&, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array &a = in[0], &b = in[1];
  Array& c = out[0];
  c.allocate_contiguous();
  int64_t m = a.shape(0), k = a.shape(1), n = b.shape(1);
  std::vector<uint32_t> seg = index_values(in[2]);
  for (size_t i = 0; i < seg.size(); ++i)
    if (seg[i] > k)
      throw KernelError(EvalErrorKind::index, "segment bound " + std::to_string(seg[i]) +
                                                  " is out of range for an inner dimension of " + std::to_string(k));
  if (c.size() == 0) return;
  size_t es = size_of(c.dtype());
  for (size_t s = 0; s < seg.size() / 2; ++s) {
    int64_t k0 = seg[2 * s], k1 = seg[2 * s + 1];
    GemmOperand x{a.data_bytes() + k0 * a.strides()[1] * int64_t(es), a.strides()[0], a.strides()[1]};
    GemmOperand y{b.data_bytes() + k0 * b.strides()[0] * int64_t(es), b.strides()[0], b.strides()[1]};
    gemm(c.dtype(), x, y, m, n, std::max<int64_t>(k1 - k0, 0), c.data_bytes() + int64_t(s) * m * n * int64_t(es), n);
  }
}

}  // namespace

void register_gathered_kernels(Backend& b) {
  b.add<GatherMM, eval_gather_mm>();
  b.add<SegmentedMM, eval_segmented_mm>();
}

}  // namespace nuvec::cpu
