// The CPU kernels of the row normalizations: rows split among threads (a split by the shape
// alone; each row is computed alone, so the bits never depend on it), half rows converted to
// float32 and back around the per-ISA row loops (backend/cpu/fast_norms.h).
#include "backend/cpu/fast_norms.h"

#include <cstring>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/ctypes.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/sort.h"
#include "core/primitives/fast_norms.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t kGrain = int64_t(1) << 14;  // elements per piece below which one thread runs it

// Row r of a (rows, d) array as float32: in place for float32, else converted into buf.
const float* row_in(const Array& a, int64_t r, int64_t d, float* buf) {
  if (a.dtype() == Dtype::float32) return a.data<float>() + r * d;
  const char* p = a.data_bytes() + r * d * int64_t(a.itemsize());
  for (int64_t j = 0; j < d; ++j) buf[j] = load_float(p, a.dtype(), j);
  return buf;
}
// Where row r of `a` is computed: its own memory for float32, else buf (then row_out).
float* row_target(Array& a, int64_t r, int64_t d, float* buf) {
  return a.dtype() == Dtype::float32 ? a.data<float>() + r * d : buf;
}
void row_out(Array& a, int64_t r, int64_t d, const float* v) {
  if (a.dtype() == Dtype::float32) return;
  char* p = a.data_bytes() + r * d * int64_t(a.itemsize());
  for (int64_t j = 0; j < d; ++j) store_float(p, a.dtype(), j, v[j]);
}

const float* optional_data(const std::vector<Array>& in, bool present, int index, std::vector<Array>& keep) {
  if (!present) return nullptr;
  keep.push_back(row_contiguous(in[size_t(index)]));
  return keep.back().data<float>();
}

void eval_norm(const RowNorm& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  for (Array& o : out) o.allocate_contiguous();
  int64_t d = in[0].shape(-1), rows = d ? in[0].size() / d : 0;
  if (rows == 0) return;
  bool add = prim.kind() == NormKind::add_rms;
  Array x = row_contiguous(in[0]), res = add ? row_contiguous(in[1]) : x;
  std::vector<Array> keep;
  const float* w = optional_data(in, prim.weighted(), prim.weight_index(), keep);
  const float* b = optional_data(in, prim.biased(), prim.bias_index(), keep);
  auto rms = NUVEC_FOR_ISA(rms_row);
  auto layer = NUVEC_FOR_ISA(layer_row);
  float eps = prim.eps();
  Array& y = out[0];
  bool stream = y.dtype() == Dtype::float32 && stream_output(y.nbytes());
  bool layered = prim.kind() == NormKind::layer;
  bool plain = !add && x.dtype() == Dtype::float32 && y.dtype() == Dtype::float32;
  auto block = NUVEC_FOR_ISA(norm_rows);
  parallel_for(rows, std::max<int64_t>(1, kGrain / d), [&](int64_t r0, int64_t r1) {
    if (plain) {  // float32 in and out: rows straight from x into y
      block(layered, x.data<float>() + r0 * d, w, b, y.data<float>() + r0 * d, r1 - r0, d, eps, stream);
      if (stream) stream_fence();
      return;
    }
    std::vector<float> buf(size_t(3 * d));
    float *bx = buf.data(), *br = bx + d, *by = br + d;
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = row_in(x, r, d, bx);
      if (add) {  // h = x + residual, rounded to its dtype, is what the norm reads
        const float* rr = row_in(res, r, d, br);
        bool own = out[1].dtype() == Dtype::float32 && !stream;  // else h is made in the cache
        float* h = own ? out[1].data<float>() + r * d : bx;
        for (int64_t j = 0; j < d; ++j) h[j] = xr[j] + rr[j];
        xr = h;
        if (out[1].dtype() != Dtype::float32) {
          row_out(out[1], r, d, h);
          xr = row_in(out[1], r, d, bx);
        } else if (!own) {
          stream_copy(reinterpret_cast<char*>(out[1].data<float>() + r * d), reinterpret_cast<const char*>(h),
                      size_t(d) * 4);
        }
      }
      float* yr = row_target(y, r, d, by);
      if (prim.kind() == NormKind::layer)
        layer(xr, w, b, yr, d, eps, stream);
      else
        rms(xr, w, yr, d, eps, stream);
      row_out(y, r, d, yr);
    }
    if (stream) stream_fence();
  });
}

}  // namespace

void register_fast_norm_kernels(Backend& b) {
  b.add<RowNorm, eval_norm>();
  register_rope_kernels(b);
  register_cross_entropy_kernels(b);
}

}  // namespace nuvec::cpu
