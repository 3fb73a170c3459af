// The CPU kernel of cross_entropy: one row of logits per loss, read once from memory (its max,
// then the sum of exponentials from the cache), rows split among threads by the shape alone.
#include <cmath>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/ctypes.h"
#include "backend/cpu/fast_norms.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/sort.h"
#include "core/primitives/fast_loss.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

void eval_cross_entropy(const CrossEntropy&, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& y = out[0];
  y.allocate_contiguous();
  int64_t rows = y.size(), d = in[0].shape(-1);
  if (rows == 0) return;
  Array x = row_contiguous(in[0]), t = row_contiguous(in[1]);
  auto row = NUVEC_FOR_ISA(xent_row);
  Dtype dt = x.dtype();
  parallel_for(rows, std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(d, 1)), [&](int64_t r0, int64_t r1) {
    std::vector<float> buf(dt == Dtype::float32 ? 0 : size_t(d));
    for (int64_t r = r0; r < r1; ++r) {
      const float* xr = x.data<float>() + r * d;
      if (dt != Dtype::float32) {
        for (int64_t j = 0; j < d; ++j)
          buf[size_t(j)] =
              dt == Dtype::float16 ? float(x.data<f16>()[r * d + j]) : bf16_to_float(x.data<bf16>()[r * d + j]);
        xr = buf.data();
      }
      y.data<float>()[r] = row(xr, d, t.data<int32_t>()[r]);
    }
  });
}

}  // namespace

void register_cross_entropy_kernels(Backend& b) { b.add<CrossEntropy, eval_cross_entropy>(); }

}  // namespace nuvec::cpu
