// Custom operations from C (nuvec_custom_op): a primitive whose shape rule, CPU kernel and
// differentiation and vmap rules are C callbacks. It is a primitive like any other: recorded
// lazily, evaluated by the scheduler, walked by the transforms.
#include <string>

#include "c_api/capi.h"
#include "core/backend.h"
#include "core/ops.h"
#include "core/primitive.h"

using namespace nuvec;
using namespace nuvec::capi;

namespace {

struct Spec {
  std::string name;
  nuvec_custom_op_callbacks cb;
  std::shared_ptr<void> payload;
};

// Handles over arrays for one callback (freed on return).
struct Args {
  explicit Args(const std::vector<Array>& v) : vec{new std::vector<Array>(v)} {}
  ~Args() { release(vec); }
  nuvec_vector_array vec;
};
struct Out {
  ~Out() { release(h); }
  nuvec_array h{nullptr};
};

class CustomC : public Primitive {
 public:
  explicit CustomC(std::shared_ptr<const Spec> spec) : spec_(std::move(spec)) {}
  const char* name() const override { return spec_->name.c_str(); }
  NUVEC_KERNEL_SLOT
  const Spec& spec() const { return *spec_; }

  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                         const std::vector<int>& argnums, const std::vector<Array>& outputs) override {
    if (!spec_->cb.vjp) throw OpError(name(), "this custom op has no vjp callback");
    Args p(primals);
    Out cot, out;
    cot.h = wrap_array(cotangents[0]);
    out.h = wrap_array(outputs[0]);
    nuvec_vector_array res{new std::vector<Array>()};
    int rc = spec_->cb.vjp(&res, p.vec, cot.h, out.h, spec_->payload.get());
    std::vector<Array> grads = std::move(*static_cast<std::vector<Array>*>(res.ctx));
    release(res);
    if (rc) throw OpError(name(), "the vjp callback returned " + std::to_string(rc));
    if (grads.size() != primals.size())
      throw OpError(name(), "the vjp callback gave " + std::to_string(grads.size()) + " cotangents for " +
                                std::to_string(primals.size()) + " inputs");
    std::vector<Array> picked;
    for (int k : argnums) picked.push_back(grads[size_t(k)]);
    return picked;
  }

  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                         const std::vector<int>& argnums, const std::vector<Array>& outputs) override {
    if (!spec_->cb.jvp) throw OpError(name(), "this custom op has no jvp callback");
    std::vector<Array> all;
    for (const Array& x : primals) all.push_back(zeros_of(x));
    for (size_t i = 0; i < argnums.size(); ++i) all[size_t(argnums[i])] = tangents[i];
    Args p(primals), t(all);
    Out res;
    if (int rc = spec_->cb.jvp(&res.h, p.vec, t.vec, spec_->payload.get()))
      throw OpError(name(), "the jvp callback returned " + std::to_string(rc));
    return {unwrap_array(res.h, name())};
  }

  // The callback's rule, else one application per example, stacked along axis 0.
  std::pair<std::vector<Array>, std::vector<int>> vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                                                       const std::vector<Array>& outputs) override {
    if (spec_->cb.vmap) {
      Args in(inputs);
      Out res;
      int out_axis = 0;
      if (int rc = spec_->cb.vmap(&res.h, &out_axis, in.vec, axes.data(), spec_->payload.get()))
        throw OpError(name(), "the vmap callback returned " + std::to_string(rc));
      return {{unwrap_array(res.h, name())}, {out_axis}};
    }
    int64_t n = -1;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (axes[i] >= 0) n = inputs[i].shape(axes[i]);
    Stream s = inputs[0].stream();
    std::vector<Array> results;
    for (int64_t b = 0; b < n; ++b) {
      std::vector<Array> one;
      for (size_t i = 0; i < inputs.size(); ++i)
        one.push_back(axes[i] < 0 ? inputs[i] : take(inputs[i], scalar_array(b, Dtype::int32), axes[i], s));
      results.push_back(apply(spec_, one, s));
    }
    return {{stack(results, 0, s)}, {0}};
  }

  static Array apply(const std::shared_ptr<const Spec>& spec, const std::vector<Array>& in, Stream s);

 private:
  static Array zeros_of(const Array& x) { return filled_like(x, scalar_array(int64_t(0), x.dtype()), x.stream()); }
  std::shared_ptr<const Spec> spec_;
};

Array CustomC::apply(const std::shared_ptr<const Spec>& spec, const std::vector<Array>& in, Stream s) {
  Args args(in);
  int shape[NUVEC_MAX_NDIM];
  int ndim = 0;
  nuvec_dtype dtype = NUVEC_FLOAT32;
  if (int rc = spec->cb.shape(shape, &ndim, &dtype, args.vec, spec->payload.get()))
    throw OpError(spec->name, "the shape callback returned " + std::to_string(rc));
  if (ndim < 0 || ndim > NUVEC_MAX_NDIM)
    throw OpError(spec->name, "the shape callback gave a rank of " + std::to_string(ndim));
  // The kernel reads row-major inputs.
  std::vector<Array> inputs;
  for (const Array& x : in) inputs.push_back(contiguous(x, s));
  return Array::lazy(Shape(shape, shape + ndim), to_dtype(dtype), std::make_shared<CustomC>(spec), std::move(inputs),
                     s);
}

void run(const CustomC& p, const std::vector<Array>& in, std::vector<Array>& out) {
  out[0].allocate_contiguous();
  Args args(in);
  if (int rc = p.spec().cb.kernel(out[0].data_bytes(), args.vec, p.spec().payload.get()))
    throw KernelError(EvalErrorKind::other, "the kernel callback returned " + std::to_string(rc));
}
const bool registered = add_device_free_kernel<CustomC, run>();

}  // namespace

namespace nuvec::capi {
template <> struct Held<nuvec_custom_op> { using type = std::shared_ptr<const Spec>; };
}  // namespace nuvec::capi

extern "C" {

nuvec_custom_op nuvec_custom_op_new(const char* name, nuvec_custom_op_callbacks callbacks, void* payload,
                                    void (*dtor)(void*)) {
  try {
    if (!name || !callbacks.shape || !callbacks.kernel)
      throw std::invalid_argument("a custom op needs a name, a shape callback and a kernel callback");
    std::shared_ptr<void> held(payload, [dtor](void* p) {
      if (dtor) dtor(p);
    });
    return nuvec_custom_op{new std::shared_ptr<const Spec>(new Spec{name, callbacks, std::move(held)})};
  } catch (...) {
    fail("nuvec_custom_op_new");
    return nuvec_custom_op{nullptr};
  }
}
int nuvec_custom_op_free(nuvec_custom_op op) { return release(op); }
int nuvec_custom_op_apply(nuvec_array* res, const nuvec_custom_op op, const nuvec_vector_array inputs,
                          const nuvec_stream s) {
  try {
    return set(res, CustomC::apply(get(op, "nuvec_custom_op_apply"), get(inputs, "nuvec_custom_op_apply"),
                                   get(s, "nuvec_custom_op_apply")));
  } catch (...) { return fail("nuvec_custom_op_apply"); }
}

}  // extern "C"
