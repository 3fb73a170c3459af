// The CPU FFT: the transform over several axes as one pass per axis (the real axis first for a
// forward real transform, last for an inverse one; the others from the last listed to the first),
// the scale applied by the final pass. A pass views its array as (outer, n, inner) and transforms
// kFftLanes sequences at a time, gathered into a block (rows of the last axis, or neighbouring
// columns of another), on the pool; lengths with a four-step plan run one sequence at a time,
// parallel inside. Real transforms of even length n run a complex one of n / 2 (docs/fft.md).
#include <algorithm>
#include <cstring>
#include <memory>

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/fft_exec.h"
#include "core/primitives/fft.h"
#include "core/threads.h"

namespace nuvec::cpu {
namespace {

constexpr int64_t L = kFftLanes;
enum class Kind { c2c, r2c, c2r };

struct Pass {
  Kind kind;
  bool inverse;
  int64_t n;  // the logical length (the real side's for real passes)
  int64_t outer, inner;
  float scale;
  int64_t in_len() const { return kind == Kind::c2r ? n / 2 + 1 : n; }
  int64_t out_len() const { return kind == Kind::r2c ? n / 2 + 1 : n; }
  bool halved() const { return kind != Kind::c2c && n % 2 == 0; }
  const FftPlan& plan() const { return fft_plan(halved() ? n / 2 : n); }
};

// Where a block's sequences sit: element (row r, lane l) at base + r * rs + l * ls.
struct Place {
  int64_t base, rs, ls;
};

// One block of `valid` sequences from src (complex, or real for r2c) to dst.
void block(const Pass& ps, const FftPlan& p, FftScratch& s, const float* src, Place a, float* dst, Place b,
           int valid) {
  const FftLoops& f = fft_loops();
  int64_t n = ps.n, h = n / 2;
  const float* c = src + 2 * a.base;  // complex input
  switch (ps.kind) {
    case Kind::c2c:
      f.gather(c, c + 1, 2 * a.rs, 2 * a.ls, n, valid, s.re, s.im);
      s.run(p, ps.inverse);
      f.scatter(s.re, s.im, n, valid, ps.scale, dst + 2 * b.base, dst + 2 * b.base + 1, 2 * b.rs, 2 * b.ls);
      return;
    case Kind::r2c:
      if (ps.halved())  // z_k = x_2k + i x_2k+1
        f.gather(src + a.base, src + a.base + a.rs, 2 * a.rs, a.ls, h, valid, s.re, s.im);
      else
        f.gather(src + a.base, nullptr, a.rs, a.ls, n, valid, s.re, s.im);
      s.run(p, false);
      if (ps.halved()) f.real_post(s.re, s.im, L, h, int(L), p.real_w.data(), 0, h / 2 + 1);
      f.scatter(s.re, s.im, h + 1, valid, ps.scale, dst + 2 * b.base, dst + 2 * b.base + 1, 2 * b.rs, 2 * b.ls);
      return;
    case Kind::c2r:
      f.gather(c, c + 1, 2 * a.rs, 2 * a.ls, h + 1, valid, s.re, s.im);
      if (ps.halved()) {
        f.real_pre(s.re, s.im, L, h, int(L), p.real_w.data(), 0, h / 2 + 1);
        s.run(p, true);
        f.scatter(s.re, s.im, h, valid, ps.scale, dst + b.base, dst + b.base + b.rs, 2 * b.rs, b.ls);
        return;
      }
      for (int64_t r = h + 1; r < n; ++r)  // the Hermitian half
        for (int64_t l = 0; l < L; ++l) {
          s.re[r * L + l] = s.re[(n - r) * L + l];
          s.im[r * L + l] = -s.im[(n - r) * L + l];
        }
      std::fill(s.im, s.im + L, 0.0f);
      s.run(p, true);
      f.scatter(s.re, s.im, n, valid, ps.scale, dst + b.base, nullptr, b.rs, b.ls);
      return;
  }
}

// One long sequence through fft_long: prepared into a contiguous complex buffer unless
// it is one already, and back.
void long_sequence(const Pass& ps, const FftPlan& p, const float* src, Place a, float* dst, Place b) {
  const FftLoops& f = fft_loops();
  int64_t n = ps.n, h = n / 2, m = p.n;
  bool direct_in = a.rs == 1 && ps.kind != Kind::c2r && (ps.kind == Kind::c2c || ps.halved());
  bool direct_out = b.rs == 1 && (ps.kind == Kind::c2c || ps.halved());  // odd real: n values, fewer kept
  std::unique_ptr<float[]> ain(direct_in ? nullptr : new float[size_t(2 * m + 2)]);
  std::unique_ptr<float[]> aout(direct_out ? nullptr : new float[size_t(2 * m + 2)]);
  const float* x = direct_in ? src + (ps.kind == Kind::c2c ? 2 : 1) * a.base : ain.get();
  float* y = direct_out ? dst + (ps.kind == Kind::c2r ? 1 : 2) * b.base : aout.get();
  float* w = ain.get();
  // The input as m complex values.
  if (ps.kind == Kind::r2c && !direct_in) {
    for (int64_t k = 0; k < n; ++k) {
      float v = src[a.base + k * a.rs];
      if (ps.halved())
        w[k] = v;
      else
        w[2 * k] = v, w[2 * k + 1] = 0.0f;
    }
  } else if (!direct_in) {
    int64_t len = ps.in_len();
    if (a.rs == 1)
      std::memcpy(w, src + 2 * a.base, size_t(2 * len) * sizeof(float));
    else
      for (int64_t k = 0; k < len; ++k) {
        w[2 * k] = src[2 * (a.base + k * a.rs)];
        w[2 * k + 1] = src[2 * (a.base + k * a.rs) + 1];
      }
    if (ps.kind == Kind::c2r && ps.halved()) {
      parallel_for(h / 2 + 1, 16384, [&](int64_t k0, int64_t k1) {  // pairs (k, h - k) are independent
        f.real_pre(w, w + 1, 2, h, 1, p.real_w.data(), k0, k1);
      });
    } else if (ps.kind == Kind::c2r) {
      for (int64_t k = h + 1; k < n; ++k) w[2 * k] = w[2 * (n - k)], w[2 * k + 1] = -w[2 * (n - k) + 1];
      w[1] = 0.0f;
    }
  }
  bool post = ps.kind == Kind::r2c && ps.halved();
  fft_long(p, x, y, ps.kind == Kind::c2r || ps.inverse, post ? 1.0f : ps.scale);
  if (post) {
    parallel_for(h / 2 + 1, 16384, [&](int64_t k0, int64_t k1) {  // pairs (k, h - k) are independent
      f.real_post(y, y + 1, 2, h, 1, p.real_w.data(), k0, k1);
      for (int64_t k = k0; k < k1 && ps.scale != 1.0f; ++k) {
        y[2 * k] *= ps.scale, y[2 * k + 1] *= ps.scale;
        if (h - k != k) y[2 * (h - k)] *= ps.scale, y[2 * (h - k) + 1] *= ps.scale;
      }
    });
  }
  if (direct_out) return;
  int64_t len = ps.out_len();
  for (int64_t k = 0; k < len; ++k) {
    if (ps.kind == Kind::c2r) {
      dst[b.base + k * b.rs] = y[2 * k];
    } else {
      dst[2 * (b.base + k * b.rs)] = y[2 * k];
      dst[2 * (b.base + k * b.rs) + 1] = y[2 * k + 1];
    }
  }
}

void run_pass(const Pass& ps, const float* src, float* dst) {
  const FftPlan& p = ps.plan();
  int64_t nin = ps.in_len(), nout = ps.out_len();
  if (fft_is_long(p)) {
    for (int64_t o = 0; o < ps.outer; ++o)
      for (int64_t i = 0; i < ps.inner; ++i)
        long_sequence(ps, p, src, {o * nin * ps.inner + i, ps.inner, 0}, dst, {o * nout * ps.inner + i, ps.inner, 0});
    return;
  }
  // Rows of the last axis, or runs of neighbouring columns, kFftLanes at a time.
  bool rows = ps.inner == 1;
  int64_t chunks = rows ? 1 : (ps.inner + L - 1) / L;
  int64_t units = rows ? (ps.outer + L - 1) / L : ps.outer * chunks;
  int64_t grain = std::max<int64_t>(1, 4096 / (p.n * L));
  parallel_for(units, grain, [&](int64_t begin, int64_t end) {
    FftScratch s(p);
    for (int64_t u = begin; u < end; ++u) {
      if (rows) {
        int64_t o = u * L;
        block(ps, p, s, src, {o * nin, 1, nin}, dst, {o * nout, 1, nout}, int(std::min(L, ps.outer - o)));
      } else {
        int64_t o = u / chunks, i = u % chunks * L;
        block(ps, p, s, src, {o * nin * ps.inner + i, ps.inner, 1}, dst, {o * nout * ps.inner + i, ps.inner, 1},
              int(std::min(L, ps.inner - i)));
      }
    }
  });
}

void eval_fft(const FFT& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array x = in[0];
  if (!x.row_contiguous()) {
    Array c = Array::allocate(x.shape(), x.dtype());
    copy_into(x, c);
    x = c;
  }
  Array& y = out[0];
  y.allocate_contiguous();
  if (y.size() == 0 || x.size() == 0) return;
  const auto& axes = prim.axes();
  // The passes in order, each (kind, axis).
  std::vector<std::pair<Kind, int>> order;
  if (prim.real() && !prim.inverse()) order.push_back({Kind::r2c, axes.back()});
  for (size_t k = axes.size() - (prim.real() ? 1 : 0); k-- > 0;) order.push_back({Kind::c2c, axes[k]});
  if (prim.real() && prim.inverse()) order.push_back({Kind::c2r, axes.back()});
  Shape shape = x.shape();
  const float* cur = x.data<float>();
  std::unique_ptr<float[]> held;
  for (size_t k = 0; k < order.size(); ++k) {
    auto [kind, ax] = order[k];
    bool last = k + 1 == order.size();
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < ax; ++d) outer *= shape[d];
    for (size_t d = ax + 1; d < shape.size(); ++d) inner *= shape[d];
    int64_t n = kind == Kind::c2r ? y.shape(ax) : shape[ax];
    Pass ps{kind, prim.inverse(), n, outer, inner, last ? float(prim.scale()) : 1.0f};
    shape[ax] = ps.out_len();
    std::unique_ptr<float[]> next(last ? nullptr : new float[size_t(2 * shape_size(shape))]);
    float* dst = last ? y.data<float>() : next.get();
    run_pass(ps, cur, dst);
    held = std::move(next);
    cur = held.get();
  }
}

}  // namespace

void register_fft_kernels(Backend& b) { b.add<FFT, eval_fft>(); }

}  // namespace nuvec::cpu
