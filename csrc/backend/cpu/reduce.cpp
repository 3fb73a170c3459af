// Reductions on the CPU.
#include "backend/cpu/copy.h"
#include "core/primitives/reduce.h"

namespace nuvec {

void ReduceAll::eval_cpu(const std::vector<Array>& in, std::vector<Array>& out) {
  Array flags = Array::allocate(in[0].shape(), Dtype::bool_);
  cpu::copy_into(in[0], flags);  // nonzero -> true
  const bool* f = flags.data<bool>();
  bool want = op_ == ReduceOp::any;
  bool result = !want;
  for (int64_t i = 0; i < flags.size(); ++i)
    if (f[i] == want) {
      result = want;
      break;
    }
  out[0].allocate_contiguous();
  *out[0].data<bool>() = result;
}

}  // namespace nuvec
