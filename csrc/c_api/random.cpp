// The C API's global random state: per thread, as nuvec.random's (python/nuvec/random.py keeps
// Python's, the list `compile` captures as mlx.core.random.state; a C caller's is this one).
// Seeded from the clock on first use; nuvec_random_seed sets it.
#include <chrono>

#include "c_api/capi_modules.h"

namespace nuvec::capi {

namespace {

thread_local std::optional<Array> state;

Array& thread_state() {
  if (!state)
    state = random::key(uint64_t(std::chrono::system_clock::now().time_since_epoch() / std::chrono::nanoseconds(1)));
  return *state;
}

}  // namespace

void seed_global(uint64_t seed) { state = random::key(seed); }

Array KEY(nuvec_array key, Stream s) {
  if (key.ctx) return A(key);
  // MLX's KeySequence: split the state in two, keep the first, use the second.
  std::vector<Array> pair = unstack(random::split(thread_state(), 2, s), 0, s);
  state = pair[0];
  return pair[1];
}

}  // namespace nuvec::capi
