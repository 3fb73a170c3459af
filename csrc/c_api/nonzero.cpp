// nonzero for the C API: the two steps of core/ops/indexing.h with the evaluation between them,
// as the Python binding (csrc/python/shape.cpp) takes them.
#include "c_api/capi_ops.h"
#include "core/eval.h"
#include "core/ops/indexing.h"

namespace nuvec::capi {

std::vector<Array> nonzero(const Array& a, Stream s) {
  Array flags = nonzero_flags(a, s);
  eval({flags});
  return nuvec::nonzero(flags);
}

}  // namespace nuvec::capi
