// The collectives' ops and their rules: vjp as MLX's (an all-reduce passes its cotangent through,
// an all-gather gives back this rank's block), jvp of the linear ones, vmap over a batch axis.
#include "core/primitives/distributed.h"

#include <string>

#include "core/ops.h"
#include "core/primitives/vmap_util.h"

namespace nuvec {

using dist::ReduceOp;
using GroupPtr = std::shared_ptr<dist::Group>;

namespace {

bool half(Dtype d) { return d == Dtype::float16 || d == Dtype::bfloat16; }

void check_peer(const char* op, int peer, const dist::Group& g) {
  if (peer < 0 || peer >= g.size())
    throw OpError(op, "invalid rank " + std::to_string(peer) + " for a group of " + std::to_string(g.size()));
  if (peer == g.rank()) throw OpError(op, "a process cannot " + std::string(op) + " to or from itself");
}

}  // namespace

const char* AllReduce::name() const {
  static const char* names[] = {"all_sum", "all_max", "all_min"};
  return names[int(op_)];
}

namespace distributed {

Array all_reduce(const Array& x, ReduceOp op, const GroupPtr& g, Stream s) {
  if (half(x.dtype())) return astype(all_reduce(astype(x, Dtype::float32, s), op, g, s), x.dtype(), s);
  if (x.dtype() == Dtype::complex64 && op != ReduceOp::sum)
    throw OpError(op == ReduceOp::max ? "all_max" : "all_min", "complex arrays have no order");
  return Array::lazy(x.shape(), x.dtype(), std::make_shared<AllReduce>(g, op), {x}, s);
}

Array all_gather(const Array& x, const GroupPtr& g, Stream s) {
  Shape shape = x.shape();
  if (shape.empty())
    shape.push_back(g->size());
  else
    shape[0] *= g->size();
  return Array::lazy(std::move(shape), x.dtype(), std::make_shared<AllGather>(g), {x}, s);
}

Array sum_scatter(const Array& x, const GroupPtr& g, Stream s) {
  if (x.ndim() == 0 || x.shape(0) % g->size() != 0)
    throw OpError("sum_scatter", "the first axis must divide by the group's size " + std::to_string(g->size()));
  if (half(x.dtype())) return astype(sum_scatter(astype(x, Dtype::float32, s), g, s), x.dtype(), s);
  Shape shape = x.shape();
  shape[0] /= g->size();
  return Array::lazy(std::move(shape), x.dtype(), std::make_shared<SumScatter>(g), {x}, s);
}

Array send(const Array& x, int dst, const GroupPtr& g, Stream s) {
  check_peer("send", dst, *g);
  return Array::lazy(x.shape(), x.dtype(), std::make_shared<Send>(g, dst), {x}, s);
}

Array recv(Shape shape, Dtype dtype, int src, const GroupPtr& g, Stream s) {
  check_peer("recv", src, *g);
  for (int64_t d : shape)
    if (d < 0) throw OpError("recv", "negative dimensions are not allowed");
  return Array::lazy(std::move(shape), dtype, std::make_shared<Recv>(g, src), {}, s);
}

}  // namespace distributed

std::vector<Array> AllReduce::vjp(const std::vector<Array>&, const std::vector<Array>& cotangents,
                                  const std::vector<int>& argnums, const std::vector<Array>&) {
  return std::vector<Array>(argnums.size(), cotangents[0]);
}

std::vector<Array> AllReduce::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                  const std::vector<int>&, const std::vector<Array>&) {
  if (op_ != ReduceOp::sum) throw OpError(name(), "only all_sum has a jvp (as in MLX)");
  return {distributed::all_reduce(tangents[0], op_, group_ptr(), tangents[0].stream())};
}

batching::Result AllReduce::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                                 const std::vector<Array>&) {
  return {{distributed::all_reduce(inputs[0], op_, group_ptr(), inputs[0].stream())}, {axes[0]}};
}

std::vector<Array> AllGather::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                  const std::vector<int>&, const std::vector<Array>&) {
  const Array& x = primals[0];
  const Array& c = cotangents[0];
  Stream s = c.stream();
  int64_t rows = x.ndim() == 0 ? 1 : x.shape(0), r = group().rank();
  Shape start(size_t(c.ndim()), 0), stop = c.shape(), step(size_t(c.ndim()), 1);
  start[0] = r * rows;
  stop[0] = (r + 1) * rows;
  return {reshape(slice(c, start, stop, step, s), x.shape(), s)};
}

std::vector<Array> AllGather::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                  const std::vector<int>&, const std::vector<Array>&) {
  return {distributed::all_gather(tangents[0], group_ptr(), tangents[0].stream())};
}

// The batch axis goes last, so rank-major concatenation along axis 0 keeps each example's rows
// together; a batch of 0-d examples gathers to (size * B) = (size, B).
batching::Result AllGather::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes,
                                 const std::vector<Array>&) {
  const Array& x = inputs[0];
  Stream s = x.stream();
  int last = x.ndim() - 1;
  Array g = distributed::all_gather(moveaxis(x, axes[0], last, s), group_ptr(), s);
  if (last == 0) return {{reshape(g, {group().size(), x.shape(0)}, s)}, {1}};
  return {{g}, {last}};
}

std::vector<Array> SumScatter::vjp(const std::vector<Array>&, const std::vector<Array>& cotangents,
                                   const std::vector<int>&, const std::vector<Array>&) {
  return {distributed::all_gather(cotangents[0], group_ptr(), cotangents[0].stream())};
}

std::vector<Array> SumScatter::jvp(const std::vector<Array>&, const std::vector<Array>& tangents,
                                   const std::vector<int>&, const std::vector<Array>&) {
  return {distributed::sum_scatter(tangents[0], group_ptr(), tangents[0].stream())};
}

batching::Result Send::vmap(const std::vector<Array>& inputs, const std::vector<int>& axes, const std::vector<Array>&) {
  return {{distributed::send(inputs[0], dst_, group_ptr(), inputs[0].stream())}, {axes[0]}};
}

}  // namespace nuvec
