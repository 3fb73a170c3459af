// vmap rule of the random bits. A batch of keys draws each key's stream: the kernel reads
// one key, so the rule records one draw per key and stacks them (one graph, no Python loop).
#include "core/primitives/random.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {
using namespace batching;

Result RandomBits::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                        const std::vector<Array>& outputs) {
  const Array& out = outputs[0];
  Stream s = out.stream();
  Array keys = to_front(inputs[0], axes[0]);
  int64_t n = keys.shape(0);
  if (n == 0) return {{full(with_batch(out.shape(), 0), scalar_array(int64_t(0), out.dtype()), std::nullopt, s)}, {0}};
  std::vector<Array> draws;
  for (int64_t i = 0; i < n; ++i) {
    Array key = reshape(slice(keys, {i, 0}, {i + 1, 2}, {1, 1}, s), {2}, s);
    draws.push_back(remake(*this, out.shape(), out, {key}));
  }
  return {{stack(draws, 0, s)}, {0}};
}

}  // namespace nuvec
