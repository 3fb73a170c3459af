// The C API's closures and transforms (vjp, jvp, value_and_grad, compile, vmap), as mlx-c's.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "c_api/capi.h"
#include "core/ops.h"
#include "transforms/autodiff.h"
#include "transforms/compile.h"
#include "transforms/vmap.h"

using namespace nuvec;
using namespace nuvec::capi;

namespace nuvec::capi {
using ValueAndGrad = std::function<std::pair<std::vector<Array>, std::vector<Array>>(const std::vector<Array>&)>;
template <> struct Held<nuvec_closure> { using type = ArrayFn; };
template <> struct Held<nuvec_closure_value_and_grad> { using type = ValueAndGrad; };
}  // namespace nuvec::capi

namespace {

using CFun = int (*)(nuvec_vector_array*, const nuvec_vector_array, void*);

// Calls a C closure: its error, already reported by the op that failed, stops the transform.
std::vector<Array> call(CFun fun, void* payload, const std::vector<Array>& in) {
  nuvec_vector_array input{new std::vector<Array>(in)};
  nuvec_vector_array out{new std::vector<Array>()};
  int rc = fun(&out, input, payload);
  std::vector<Array> result = std::move(*static_cast<std::vector<Array>*>(out.ctx));
  release(input);
  release(out);
  if (rc) throw std::runtime_error("the closure returned " + std::to_string(rc));
  return result;
}

int plain(nuvec_vector_array* res, const nuvec_vector_array in, void* fun) {
  return reinterpret_cast<int (*)(nuvec_vector_array*, const nuvec_vector_array)>(fun)(res, in);
}

nuvec_closure make(ArrayFn f) { return nuvec_closure{new ArrayFn(std::move(f))}; }

// The key of compile's trace cache: each input's dtype and shape (rank only when shapeless).
std::vector<int64_t> trace_key(const std::vector<Array>& in, bool shapeless) {
  std::vector<int64_t> key;
  for (const Array& a : in) {
    key.push_back(int64_t(a.dtype()));
    key.push_back(a.ndim());
    if (!shapeless) key.insert(key.end(), a.shape().begin(), a.shape().end());
  }
  return key;
}

// The axis of each of n items: `axes` (n of them), or 0 for every item when axes is NULL.
std::vector<int> axes_for(const int* axes, size_t axes_num, size_t n, const char* what) {
  if (!axes) return std::vector<int>(n, 0);
  if (axes_num != n)
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(axes_num) + " axes for " +
                                std::to_string(n) + (n == 1 ? " array" : " arrays"));
  return std::vector<int>(axes, axes + axes_num);
}

// fun mapped over in_axes of its inputs, each output's batch axis moved to out_axes (an output
// that does not depend on the batch is broadcast along it, as MLX's vmap does).
std::vector<Array> vmapped(const ArrayFn& f, const std::vector<Array>& in, const std::vector<int>& in_axes,
                           const std::vector<int>& out_spec) {
  auto [out, got] = vmap(f, in, in_axes);
  std::vector<int> out_axes =
      axes_for(out_spec.empty() ? nullptr : out_spec.data(), out_spec.size(), out.size(), "nuvec_vmap's out_axes");
  int64_t batch = 0;
  for (size_t i = 0; i < in.size(); ++i)
    if (in_axes[i] >= 0) batch = in[i].shape()[size_t(in_axes[i])];
  Stream s = default_stream(default_device());
  for (size_t i = 0; i < out.size(); ++i) {
    if (out_axes[i] < 0 || out_axes[i] > int(out[i].ndim()) - (got[i] >= 0 ? 1 : 0))
      throw std::invalid_argument("nuvec_vmap: out_axes[" + std::to_string(i) + "] is out of range");
    if (got[i] < 0) {
      Array e = expand_dims(out[i], {out_axes[i]}, s);
      Shape shape = e.shape();
      shape[size_t(out_axes[i])] = batch;
      out[i] = broadcast_to(e, shape, s);
    } else {
      out[i] = moveaxis(out[i], got[i], out_axes[i], s);
    }
  }
  return out;
}

}  // namespace

extern "C" {

nuvec_closure nuvec_closure_new(void) { return nuvec_closure{nullptr}; }
nuvec_closure nuvec_closure_new_func(int (*fun)(nuvec_vector_array*, const nuvec_vector_array)) {
  void* f = reinterpret_cast<void*>(fun);
  return make([f](const std::vector<Array>& in) { return call(plain, f, in); });
}
nuvec_closure nuvec_closure_new_func_payload(int (*fun)(nuvec_vector_array*, const nuvec_vector_array, void*),
                                             void* payload, void (*dtor)(void*)) {
  // The payload lives while any copy of the closure does (transforms keep copies).
  std::shared_ptr<void> held(payload, [dtor](void* p) {
    if (dtor) dtor(p);
  });
  return make([fun, held](const std::vector<Array>& in) { return call(fun, held.get(), in); });
}
int nuvec_closure_set(nuvec_closure* cls, const nuvec_closure src) {
  try {
    return set(cls, get(src, "nuvec_closure_set"));
  } catch (...) { return fail("nuvec_closure_set"); }
}
int nuvec_closure_free(nuvec_closure cls) { return release(cls); }
int nuvec_closure_apply(nuvec_vector_array* res, nuvec_closure cls, const nuvec_vector_array input) {
  try {
    return set(res, get(cls, "nuvec_closure_apply")(get(input, "nuvec_closure_apply")));
  } catch (...) { return fail("nuvec_closure_apply"); }
}

int nuvec_vjp(nuvec_vector_array* res_0, nuvec_vector_array* res_1, const nuvec_closure fun,
              const nuvec_vector_array primals, const nuvec_vector_array cotangents) {
  try {
    auto [out, grads] = vjp(get(fun, "nuvec_vjp"), get(primals, "nuvec_vjp"), get(cotangents, "nuvec_vjp"));
    set(res_0, std::move(out));
    return set(res_1, std::move(grads));
  } catch (...) { return fail("nuvec_vjp"); }
}
int nuvec_jvp(nuvec_vector_array* res_0, nuvec_vector_array* res_1, const nuvec_closure fun,
              const nuvec_vector_array primals, const nuvec_vector_array tangents) {
  try {
    auto [out, tans] = jvp(get(fun, "nuvec_jvp"), get(primals, "nuvec_jvp"), get(tangents, "nuvec_jvp"));
    set(res_0, std::move(out));
    return set(res_1, std::move(tans));
  } catch (...) { return fail("nuvec_jvp"); }
}

nuvec_closure_value_and_grad nuvec_closure_value_and_grad_new(void) { return nuvec_closure_value_and_grad{nullptr}; }
int nuvec_closure_value_and_grad_free(nuvec_closure_value_and_grad cls) { return release(cls); }
int nuvec_value_and_grad(nuvec_closure_value_and_grad* res, const nuvec_closure fun, const int* argnums,
                         size_t argnums_num) {
  try {
    ArrayFn f = get(fun, "nuvec_value_and_grad");
    std::vector<int> nums = argnums_num ? std::vector<int>(argnums, argnums + argnums_num) : std::vector<int>{0};
    return set(
        res, ValueAndGrad([f, nums](const std::vector<Array>& in) {
          for (int i : nums)
            if (i < 0 || size_t(i) >= in.size())
              throw std::out_of_range("argnum " + std::to_string(i) + " of " + std::to_string(in.size()) + " inputs");
          std::vector<Array> primals, outputs;
          for (int i : nums) primals.push_back(in[i]);
          // The gradient of the first output; the others are returned as values.
          auto first = [&](const std::vector<Array>& ps) {
            std::vector<Array> args = in;
            for (size_t k = 0; k < nums.size(); ++k) args[nums[k]] = ps[k];
            outputs = f(args);
            if (outputs.empty() || outputs[0].size() != 1)
              throw std::invalid_argument("the function's first output must be a scalar");
            return std::vector<Array>{outputs[0]};
          };
          auto [value, grads] = vjp(first, primals, {});
          outputs[0] = value[0];
          return std::pair{outputs, grads};
        }));
  } catch (...) { return fail("nuvec_value_and_grad"); }
}
int nuvec_closure_value_and_grad_apply(nuvec_vector_array* res_0, nuvec_vector_array* res_1,
                                       nuvec_closure_value_and_grad cls, const nuvec_vector_array input) {
  try {
    auto [values, grads] =
        get(cls, "nuvec_closure_value_and_grad_apply")(get(input, "nuvec_closure_value_and_grad_apply"));
    set(res_0, std::move(values));
    return set(res_1, std::move(grads));
  } catch (...) { return fail("nuvec_closure_value_and_grad_apply"); }
}

int nuvec_vmap(nuvec_closure* res, const nuvec_closure fun, const int* in_axes, size_t in_axes_num, const int* out_axes,
               size_t out_axes_num) {
  try {
    ArrayFn f = get(fun, "nuvec_vmap");
    std::vector<int> ins = in_axes ? std::vector<int>(in_axes, in_axes + in_axes_num) : std::vector<int>();
    std::vector<int> outs = out_axes ? std::vector<int>(out_axes, out_axes + out_axes_num) : std::vector<int>();
    bool all_in = !in_axes;
    return set(res, ArrayFn([f, ins, outs, all_in](const std::vector<Array>& in) {
                 std::vector<int> axes =
                     axes_for(all_in ? nullptr : ins.data(), ins.size(), in.size(), "nuvec_vmap's in_axes");
                 return vmapped(f, in, axes, outs);
               }));
  } catch (...) { return fail("nuvec_vmap"); }
}
int nuvec_compile(nuvec_closure* res, const nuvec_closure fun, bool shapeless) {
  try {
    struct Cache {
      std::mutex mutex;
      std::map<std::vector<int64_t>, std::shared_ptr<const Tape>> tapes;
    };
    auto cache = std::make_shared<Cache>();
    ArrayFn f = get(fun, "nuvec_compile");
    return set(res, ArrayFn([f, cache, shapeless](const std::vector<Array>& in) {
                 std::vector<int64_t> key = trace_key(in, shapeless);
                 std::shared_ptr<const Tape> tape;
                 {
                   std::lock_guard<std::mutex> lock(cache->mutex);
                   auto it = cache->tapes.find(key);
                   if (it != cache->tapes.end()) tape = it->second;
                 }
                 if (!tape) {
                   tape = trace_tape(f, in, shapeless);
                   std::lock_guard<std::mutex> lock(cache->mutex);
                   cache->tapes.emplace(key, tape);
                 }
                 return tape->replay(in);
               }));
  } catch (...) { return fail("nuvec_compile"); }
}

}  // extern "C"
