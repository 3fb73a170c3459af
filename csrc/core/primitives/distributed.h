// The collectives of nuvec.distributed as graph nodes: evaluation runs them in graph order on their
// stream, like any other node, through the MPI engine (core/distributed.h). Every rank must build
// the same graph of collectives. Ops over a group of one process never make these nodes.
#pragma once
#include <memory>

#include "core/distributed.h"
#include "core/primitive.h"

namespace nuvec {

class DistPrimitive : public Primitive {
 public:
  explicit DistPrimitive(std::shared_ptr<dist::Group> g) : group_(std::move(g)) {}
  const dist::Group& group() const { return *group_; }
  const std::shared_ptr<dist::Group>& group_ptr() const { return group_; }

 private:
  std::shared_ptr<dist::Group> group_;
};

// The elementwise sum, max or min of x over the group. vjp: the cotangent itself (as MLX).
class AllReduce : public DistPrimitive {
 public:
  AllReduce(std::shared_ptr<dist::Group> g, dist::ReduceOp op) : DistPrimitive(std::move(g)), op_(op) {}
  const char* name() const override;
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
  dist::ReduceOp op() const { return op_; }

 private:
  dist::ReduceOp op_;
};

// Every rank's x concatenated along axis 0 (a 0-d x: a vector). vjp: this rank's block.
class AllGather : public DistPrimitive {
 public:
  using DistPrimitive::DistPrimitive;
  const char* name() const override { return "all_gather"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
  NUVEC_VMAP_RULE
};

// The sum over the group, cut along axis 0 into size() blocks: this rank's. vjp: all_gather.
class SumScatter : public DistPrimitive {
 public:
  using DistPrimitive::DistPrimitive;
  const char* name() const override { return "sum_scatter"; }
  NUVEC_KERNEL_SLOT
  NUVEC_GRAD_RULES
};

// Sends x to rank dst; its output is x (so that something can depend on the send).
class Send : public DistPrimitive {
 public:
  Send(std::shared_ptr<dist::Group> g, int dst) : DistPrimitive(std::move(g)), dst_(dst) {}
  const char* name() const override { return "send"; }
  NUVEC_KERNEL_SLOT
  NUVEC_VMAP_RULE
  int peer() const { return dst_; }

 private:
  int dst_;
};

// An array received from rank src (no inputs).
class Recv : public DistPrimitive {
 public:
  Recv(std::shared_ptr<dist::Group> g, int src) : DistPrimitive(std::move(g)), src_(src) {}
  const char* name() const override { return "recv"; }
  NUVEC_KERNEL_SLOT
  int peer() const { return src_; }

 private:
  int src_;
};

namespace distributed {
// Groups of more than one process (the Python module handles a group of one). float16 and
// bfloat16 reduce in float32 (MPI has no such types), complex64 sums as pairs of float32.
Array all_reduce(const Array& x, dist::ReduceOp op, const std::shared_ptr<dist::Group>& g, Stream s);
Array all_gather(const Array& x, const std::shared_ptr<dist::Group>& g, Stream s);
Array sum_scatter(const Array& x, const std::shared_ptr<dist::Group>& g, Stream s);
Array send(const Array& x, int dst, const std::shared_ptr<dist::Group>& g, Stream s);
Array recv(Shape shape, Dtype dtype, int src, const std::shared_ptr<dist::Group>& g, Stream s);
}  // namespace distributed

}  // namespace nuvec
