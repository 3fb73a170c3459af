// Differentiation rules of gather, scatter (every update mode) and concatenate (indices get no
// gradient).
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

namespace {
// What the rules of the combining scatters (multiply, maximum, minimum) need: the value each
// update met in `a` (gathered at its index, in the update's shape), and the reverse (sums over
// the updates landing on each element of a zero array shaped like x).
struct ScatterParts {
  const Array& x;
  const Array& updates;
  std::vector<Array> idx;
  const std::vector<int>& axes;
  Stream s;
  Array at(const Array& a) const { return reshape(gather(a, idx, axes, s), updates.shape(), s); }
  Array sum_into_x(const Array& u) const { return scatter(zeros_like(x), idx, u, axes, ScatterOp::add, s); }
  // For each update, the product of x's other factors at its element: the product of the other
  // updates landing there, exact when some are zero (no division by a zero).
  Array others(const Array& u) const {
    Array one = scalar_array(int64_t(1), u.dtype());
    Array is_zero = binary(BinaryOp::equal, u, scalar_array(int64_t(0), u.dtype()), s);
    Array nonzero_prod =
        scatter(full(x.shape(), one, std::nullopt, s), idx, where(is_zero, one, u, s), axes, ScatterOp::multiply, s);
    Array zeros = sum_into_x(astype(is_zero, x.dtype(), s));
    Array p = at(nonzero_prod), z = at(zeros), zero = zeros_like(u);
    auto count_is = [&](int64_t n) { return binary(BinaryOp::equal, z, scalar_array(n, z.dtype()), s); };
    return where(is_zero, where(count_is(1), p, zero, s), where(count_is(0), div(p, u), zero, s), s);
  }
  // The product of the updates at each element of x (1 where none lands).
  Array product() const {
    return scatter(full(x.shape(), scalar_array(int64_t(1), x.dtype()), std::nullopt, s), idx, updates, axes,
                   ScatterOp::multiply, s);
  }
};
bool combines(ScatterOp op) {
  return op == ScatterOp::multiply || op == ScatterOp::maximum || op == ScatterOp::minimum;
}
}  // namespace

// maximum/minimum: every element equal to the result (x or an update; ties all) gets the whole
// cotangent, as MLX. multiply: the product rule over x and the updates at each element.
std::vector<Array> Scatter::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  const Array& g = cotangents[0];
  Stream s = g.stream();
  ScatterParts parts{primals[0], primals[1], index_inputs(primals, 2), axes_, s};
  const Array& result = outputs[0];
  std::vector<Array> out;
  for (int k : argnums) {
    if (k == 0) {
      if (op_ == ScatterOp::multiply)
        out.push_back(mul(g, parts.product()));
      else if (combines(op_))
        out.push_back(where(binary(BinaryOp::equal, primals[0], result, s), g, zeros_like(g), s));
      else  // set: overwritten positions did not reach the output
        out.push_back(op_ == ScatterOp::set ? scatter(g, parts.idx, zeros_like(primals[1]), axes_, ScatterOp::set, s)
                                            : g);
    } else if (k == 1) {
      Array g_at = parts.at(g);
      if (op_ == ScatterOp::multiply)
        out.push_back(mul(parts.at(mul(g, primals[0])), parts.others(primals[1])));
      else if (combines(op_))
        out.push_back(where(binary(BinaryOp::equal, primals[1], parts.at(result), s), g_at, zeros_like(g_at), s));
      else
        out.push_back(g_at);
    } else {
      out.push_back(zeros_like(primals[k]));
    }
  }
  return out;
}
std::vector<Array> Scatter::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  Array tx = zeros_like(primals[0]), tu = zeros_like(primals[1]);
  for (size_t i = 0; i < argnums.size(); ++i) {
    if (argnums[i] == 0) tx = astype(tangents[i], primals[0].dtype(), tx.stream());
    if (argnums[i] == 1) tu = astype(tangents[i], primals[1].dtype(), tu.stream());
  }
  const Array& result = outputs[0];
  Stream s = result.stream();
  ScatterParts parts{primals[0], primals[1], index_inputs(primals, 2), axes_, s};
  // The transposes of the vjp rules above.
  if (op_ == ScatterOp::multiply)
    return {add(mul(tx, parts.product()), mul(primals[0], parts.sum_into_x(mul(tu, parts.others(primals[1])))))};
  if (combines(op_)) {
    Array from_x = where(binary(BinaryOp::equal, primals[0], result, s), tx, zeros_like(tx), s);
    Array hit = binary(BinaryOp::equal, primals[1], parts.at(result), s);
    return {add(from_x, parts.sum_into_x(where(hit, tu, zeros_like(tu), s)))};
  }
  std::vector<Array> inputs{tx, tu};
  for (size_t k = 2; k < primals.size(); ++k) inputs.push_back(primals[k]);
  return {Array::lazy(result.shape(), result.dtype(), shared_from_this(), inputs, result.stream())};
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
