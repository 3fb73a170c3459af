// The CPU kernel of adam_update: the new p, m and v in one multi-threaded pass, written over the
// old ones' buffers when nothing else holds them.
#include "backend/cpu/optimizer.h"

#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/sort.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t kGrain = int64_t(1) << 15;  // elements per piece below which one thread runs it

void eval_adam(const AdamUpdate& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  // Outputs p, m, v take over inputs 0, 2, 3 where those are otherwise unheld.
  const int from[3] = {0, 2, 3};
  for (int j = 0; j < 3; ++j)
    if (!donate(in[size_t(from[j])], out[size_t(j)], holders(in[size_t(from[j])], out)))
      out[size_t(j)].allocate_contiguous();
  int64_t n = out[0].size();
  if (n == 0) return;
  Array p = row_contiguous(in[0]), g = row_contiguous(in[1]), m = row_contiguous(in[2]), v = row_contiguous(in[3]);
  size_t k = 5;
  AdamOperands a{p.data<float>(),
                 g.data<float>(),
                 m.data<float>(),
                 v.data<float>(),
                 out[0].data<float>(),
                 out[1].data<float>(),
                 out[2].data<float>(),
                 prim.constants(),
                 in[4].data<float>()[0],
                 prim.corrected() ? in[k++].data<float>()[0] : 0.0f,
                 prim.decayed() ? in[k].data<float>()[0] : 0.0f,
                 prim.corrected(),
                 prim.decayed()};
  auto step = NUVEC_FOR_ISA(adam_step);
  // Elements are independent: any split gives the same bits (parallel_for's depends on n alone).
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { step(a, b, e); });
}

}  // namespace

void register_optimizer_kernels(Backend& b) { b.add<AdamUpdate, eval_adam>(); }

}  // namespace nuvec::cpu
