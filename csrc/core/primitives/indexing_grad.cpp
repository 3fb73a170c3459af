// Differentiation rules of gather, scatter and concatenate (indices get no gradient).
#include "core/primitives/grad_util.h"
#include "core/primitives/indexing.h"

namespace nuvec {
using namespace grad;

namespace {
std::vector<Array> index_inputs(const std::vector<Array>& primals, size_t first) {
  return std::vector<Array>(primals.begin() + first, primals.end());
}
}  // namespace

std::vector<Array> Gather::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                               const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array& x = primals[0];
  std::vector<Array> out;
  for (int k : argnums)
    out.push_back(
        k == 0 ? scatter(zeros_like(x), index_inputs(primals, 1), cotangents[0], axes_, ScatterOp::add, x.stream())
               : zeros_like(primals[k]));
  return out;
}
std::vector<Array> Gather::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                               const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  if (argnums[0] != 0) return {zeros_like(outputs[0])};
  std::vector<Array> inputs{tangents[0]};
  for (size_t k = 1; k < primals.size(); ++k) inputs.push_back(primals[k]);
  return {Array::lazy(outputs[0].shape(), outputs[0].dtype(), shared_from_this(), inputs, outputs[0].stream())};
}

std::vector<Array> Scatter::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                const std::vector<int>& argnums, const std::vector<Array>&) {
  if (op_ != ScatterOp::set && op_ != ScatterOp::add)
    throw OpError(name(), "has no vjp rule: only set and add updates can be differentiated");
  const Array& g = cotangents[0];
  Stream s = g.stream();
  std::vector<Array> idx = index_inputs(primals, 2);
  std::vector<Array> out;
  for (int k : argnums) {
    if (k == 0) {
      // Overwritten positions did not reach the output.
      out.push_back(op_ == ScatterOp::set ? scatter(g, idx, zeros_like(primals[1]), axes_, ScatterOp::set, s) : g);
    } else if (k == 1) {
      out.push_back(reshape(gather(g, idx, axes_, s), primals[1].shape(), s));
    } else {
      out.push_back(zeros_like(primals[k]));
    }
  }
  return out;
}
std::vector<Array> Scatter::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  if (op_ != ScatterOp::set && op_ != ScatterOp::add)
    throw OpError(name(), "has no jvp rule: only set and add updates can be differentiated");
  Array tx = zeros_like(primals[0]), tu = zeros_like(primals[1]);
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] == 0) tx = tangents[i];
    if (argnums[i] == 1) tu = tangents[i];
  }
  std::vector<Array> inputs{tx, tu};
  for (size_t k = 2; k < primals.size(); ++k) inputs.push_back(primals[k]);
  return {Array::lazy(outputs[0].shape(), outputs[0].dtype(), shared_from_this(), inputs, outputs[0].stream())};
}

std::vector<Array> Concatenate::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                    const std::vector<int>& argnums, const std::vector<Array>&) {
  const Array& g = cotangents[0];
  std::vector<int64_t> starts{0};
  for (const Array& p : primals) starts.push_back(starts.back() + p.shape(axis_));
  std::vector<Array> out;
  for (int k : argnums) {
    Shape start(g.ndim(), 0), stop = g.shape(), step(g.ndim(), 1);
    start[axis_] = starts[k], stop[axis_] = starts[k + 1];
    out.push_back(slice(g, start, stop, step, g.stream()));
  }
  return out;
}
std::vector<Array> Concatenate::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                    const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  std::vector<Array> parts;
  for (const Array& p : primals) parts.push_back(zeros_like(p));
  for (size_t i = 0; i < argnums.size(); ++i)
    parts[argnums[i]] = astype(tangents[i], outputs[0].dtype(), outputs[0].stream());
  return {Array::lazy(outputs[0].shape(), outputs[0].dtype(), shared_from_this(), parts, outputs[0].stream())};
}

}  // namespace nuvec
