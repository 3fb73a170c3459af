// Element-wise primitives (Unary, Binary, Select) and converting copies on the GPU: the plan of
// each launch. The iteration space is collapsed as the CPU's engine does (axes every operand walks
// as one merge), outputs take a donated input's buffer when they can, and elementwise.cu runs the
// kernel (docs/cuda.md, "Element-wise ops and copies").
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/cuda/copy.h"
#include "backend/cuda/elementwise_launch.h"
#include "backend/cuda/runtime.h"
#include "core/primitives/elementwise.h"

namespace nuvec::cuda {
namespace {

// Input strides seen through broadcasting to `shape`.
Strides broadcast_strides(const Array& a, const Shape& shape) {
  Strides s(shape.size(), 0);
  size_t off = shape.size() - a.shape().size();
  for (size_t i = 0; i < a.shape().size(); ++i) s[off + i] = a.shape()[i] == 1 ? 0 : a.strides()[i];
  return s;
}

// Merges axes that every operand walks as one (the CPU engine's rule).
void collapse(Shape& shape, std::vector<Strides>& strides) {
  Shape ns;
  std::vector<Strides> nst(strides.size());
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    bool merge = !ns.empty();
    for (size_t k = 0; merge && k < strides.size(); ++k) merge = nst[k].back() == strides[k][i] * shape[i];
    if (merge) {
      ns.back() *= shape[i];
      for (size_t k = 0; k < strides.size(); ++k) nst[k].back() = strides[k][i];
    } else {
      ns.push_back(shape[i]);
      for (size_t k = 0; k < strides.size(); ++k) nst[k].push_back(strides[k][i]);
    }
  }
  if (ns.empty()) {
    ns.push_back(1);
    for (auto& s : nst) s.push_back(0);
  }
  shape = ns;
  strides = nst;
}

char* device_bytes(const Array& a) {
  return static_cast<char*>(a.buffer()->device_data()) + a.offset() * int64_t(a.itemsize());
}

// Runs kind's kernel over out (operand 0) and `in`, with the args' op and params set: one launch
// per index of the axes beyond kMaxDims (rare: collapsing leaves few axes).
void run(EwKind kind, Dtype compute, EwArgs args, const std::vector<Array>& in, Array& out) {
  Shape shape = out.shape();
  std::vector<Strides> strides{out.strides()};
  for (const Array& a : in) strides.push_back(broadcast_strides(a, shape));
  collapse(shape, strides);
  int nd = int(shape.size()), lead = std::max(0, nd - kMaxDims);
  std::vector<char*> base{device_bytes(out)};
  std::vector<int64_t> item{int64_t(out.itemsize())};
  for (const Array& a : in) {
    base.push_back(device_bytes(a));
    item.push_back(int64_t(a.itemsize()));
  }
  args.out_dtype = out.dtype();
  for (size_t k = 0; k < in.size(); ++k) args.in_dtype[k] = in[k].dtype();
  args.layout.ndim = nd - lead;
  args.size = 1;
  for (int d = lead; d < nd; ++d) {
    args.layout.shape[d - lead] = shape[d];
    args.size *= shape[d];
    for (size_t k = 0; k < strides.size(); ++k) args.layout.strides[k][d - lead] = strides[k][d];
  }
  args.layout.narrow = args.size < (int64_t(1) << 32);
  int64_t outer = 1;
  for (int d = 0; d < lead; ++d) outer *= shape[d];
  for (int64_t o = 0; o < outer; ++o) {
    std::vector<int64_t> off(strides.size(), 0);
    int64_t rest = o;
    for (int d = lead - 1; d >= 0; --d) {
      for (size_t k = 0; k < strides.size(); ++k) off[k] += (rest % shape[d]) * strides[k][d];
      rest /= shape[d];
    }
    args.out = base[0] + off[0] * item[0];
    for (size_t k = 0; k < in.size(); ++k) args.in[k] = base[k + 1] + off[k + 1] * item[k + 1];
    launch_elementwise(kind, compute, args);
  }
}

[[noreturn]] void missing_kernel(const char* op, Dtype d) {
  throw KernelError(EvalErrorKind::other, std::string("no CUDA kernel for dtype ") + name_of(d) + " in " + op);
}

void prepare_output(const std::vector<Array>& in, Array& out) {
  for (const Array& a : in)
    if (donate(a, out)) return;
  allocate(out);
}

// The hot float ops on operands of the output's dtype, contiguous and 16-byte aligned, or single
// elements: the vectorised kernel.
bool run_vectorized(const Binary& prim, const std::vector<Array>& in, Array& out) {
  Dtype d = out.dtype();
  if ((d != Dtype::float32 && !is_half(d)) || prim.compute()[0] != Dtype::float32) return false;
  auto aligned = [](const Array& a) { return reinterpret_cast<uintptr_t>(device_bytes(a)) % 16 == 0; };
  for (const Array& a : in) {
    bool one = a.size() == 1;
    if (a.dtype() != d || !(one || (a.size() == out.size() && a.row_contiguous())) || (!one && !aligned(a)))
      return false;
  }
  if (!aligned(out)) return false;
  int64_t n = out.size();
  return launch_binary_vec(int(prim.op()), d, device_bytes(in[0]), device_bytes(in[1]), device_bytes(out), n,
                           in[0].size() == 1 && n > 1, in[1].size() == 1 && n > 1);
}

void eval_elementwise(EwKind kind, const Elementwise& prim, int op, const std::vector<Array>& in, Array& out) {
  prepare_output(in, out);
  if (out.size() == 0) return;
  EwArgs args;
  args.op = op;
  args.params = kernel_params(prim.params());
  run(kind, prim.compute()[kind == EwKind::select ? 1 : 0], args, in, out);
}

void eval_unary(const Unary& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const Array& x = in[0];
  Array& o = out[0];
  if (prim.op() == UnaryOp::copy || prim.op() == UnaryOp::stop_gradient) {
    // Same bits: share our own buffer (as the CPU's); memory borrowed from outside is copied.
    if (x.dtype() == o.dtype() && x.shape() == o.shape() && x.buffer()->owned()) {
      o.set_data(x.buffer(), x.strides(), x.offset());
      return;
    }
    allocate(o);
    copy_into(x, o);
    return;
  }
  if (!unary_has_kernel(int(prim.op()), prim.compute()[0])) missing_kernel(prim.name(), prim.compute()[0]);
  eval_elementwise(EwKind::unary, prim, int(prim.op()), in, o);
}

void eval_binary(const Binary& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& o = out[0];
  if (!binary_has_kernel(int(prim.op()), prim.compute()[0])) missing_kernel(prim.name(), prim.compute()[0]);
  prepare_output(in, o);
  if (o.size() == 0 || run_vectorized(prim, in, o)) return;
  EwArgs args;
  args.op = int(prim.op());
  args.params = kernel_params(prim.params());
  run(EwKind::binary, prim.compute()[0], args, in, o);
}

void eval_select(const Select& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  eval_elementwise(EwKind::select, prim, 0, in, out[0]);
}

}  // namespace

KernelParams kernel_params(const OpParams& p) {
  KernelParams k;
  if (auto* r = std::get_if<RoundParams>(&p)) {
    k.decimals = r->decimals;
    k.round_scale = std::pow(10.0, std::abs(r->decimals));
  } else if (auto* n = std::get_if<NanToNumParams>(&p)) {
    k.nan = n->nan, k.posinf = n->posinf, k.neginf = n->neginf;
  } else if (auto* c = std::get_if<IsCloseParams>(&p)) {
    k.rtol = c->rtol, k.atol = c->atol, k.equal_nan = c->equal_nan;
  }
  return k;
}

Array row_major_copy(const Array& x) {
  Array flat =
      Array::from_buffer(x.shape(), x.dtype(), Buffer::allocate_device(x.nbytes()), Array::row_strides(x.shape()));
  copy_into(x, flat);
  return flat;
}

void copy_into(const Array& in, Array& out) {
  if (out.size() == 0) return;
  if (in.dtype() == out.dtype() && in.shape() == out.shape() && in.row_contiguous() && out.row_contiguous()) {
    check(cudaMemcpyAsync(device_bytes(out), device_bytes(in), out.nbytes(), cudaMemcpyDeviceToDevice, stream()),
          "copying an array");
    return;
  }
  run(EwKind::copy, out.dtype(), EwArgs{}, {in}, out);
}

void register_elementwise_kernels(Backend& b) {
  b.add<Unary, eval_unary>();
  b.add<Binary, eval_binary>();
  b.add<Select, eval_select>();
}

}  // namespace nuvec::cuda
