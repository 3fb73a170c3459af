// Array: a cheap handle to a graph node, evaluated lazily.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/allocator.h"
#include "core/device.h"
#include "core/dtype.h"
#include "core/errors.h"

namespace nuvec {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements

class Primitive;
class Array;
struct Node;

// The outputs of one multi-output primitive, self included: one list that they all share (a
// compiled decode step has 61 outputs, and a list of its own on each made 3721 weak references a
// step to count up and down: half of the 129 us its replay took).
class Siblings {
 public:
  using List = std::vector<std::weak_ptr<Node>>;
  bool empty() const { return !list_ || list_->empty(); }
  size_t size() const { return list_ ? list_->size() : 0; }
  const std::weak_ptr<Node>& operator[](size_t i) const { return (*list_)[i]; }
  List::const_iterator begin() const { return list_ ? list_->begin() : none().begin(); }
  List::const_iterator end() const { return list_ ? list_->end() : none().end(); }
  void assign(std::shared_ptr<const List> list) { list_ = std::move(list); }
  void clear() { list_.reset(); }

 private:
  static const List& none() {
    static const List empty;
    return empty;
  }
  std::shared_ptr<const List> list_;
};

struct Node {
  Node(Shape s, Dtype d);  // out of line: Array is incomplete here (nvcc's front end instantiates eagerly)
  ~Node();

  Shape shape;
  Dtype dtype;
  int64_t size = 1;
  // Set by evaluation (or at creation for constants).
  std::shared_ptr<Buffer> buffer;
  Strides strides;
  int64_t offset = 0;  // in elements
  bool row_contiguous = false;
  std::atomic<bool> evaluated{false};
  // Until evaluated: how to make it.
  std::shared_ptr<Primitive> primitive;
  std::vector<Array> inputs;
  Siblings siblings;
  std::shared_ptr<const std::vector<std::pair<Shape, Dtype>>> sibling_specs;  // to remake dropped ones
  Stream stream;
  CallSite site;
  uint32_t mark = 0;  // eval's visit stamp
  // Bit k is set while the node depends on the inputs of the k-th nested transform (vjp, jvp):
  // such nodes keep their inputs after evaluation, since the transform walks the graph.
  uint32_t traced = 0;
};

class Array {
 public:
  Array() = default;
  explicit Array(std::shared_ptr<Node> n) : node_(std::move(n)) {}

  // A node recorded by an op: shape and dtype known now, data made on evaluation.
  static Array lazy(Shape shape, Dtype dtype, std::shared_ptr<Primitive> prim, std::vector<Array> inputs,
                    Stream stream);
  // Several outputs of one primitive (sort with indices, ...).
  static std::vector<Array> lazy_multi(std::vector<Shape> shapes, std::vector<Dtype> dtypes,
                                       std::shared_ptr<Primitive> prim, std::vector<Array> inputs, Stream stream);
  // An evaluated array over `buffer` with the given strides and element offset.
  static Array from_buffer(Shape shape, Dtype dtype, std::shared_ptr<Buffer> buffer, Strides strides,
                           int64_t offset = 0);
  // An evaluated contiguous array with fresh memory (throws KernelError on memory limits).
  static Array allocate(Shape shape, Dtype dtype);

  const Shape& shape() const { return node_->shape; }
  int64_t shape(int axis) const { return node_->shape[axis < 0 ? axis + ndim() : axis]; }
  int ndim() const { return int(node_->shape.size()); }
  int64_t size() const { return node_->size; }
  Dtype dtype() const { return node_->dtype; }
  size_t itemsize() const { return size_of(node_->dtype); }
  size_t nbytes() const { return size_t(size()) * itemsize(); }
  bool evaluated() const { return node_->evaluated.load(std::memory_order_acquire); }
  const Strides& strides() const { return node_->strides; }
  int64_t offset() const { return node_->offset; }
  bool row_contiguous() const { return node_->row_contiguous; }
  const std::shared_ptr<Buffer>& buffer() const { return node_->buffer; }
  char* data_bytes() const { return static_cast<char*>(node_->buffer->data()) + node_->offset * int64_t(itemsize()); }
  template <class T> T* data() const { return reinterpret_cast<T*>(data_bytes()); }
  const std::shared_ptr<Primitive>& primitive() const { return node_->primitive; }
  const std::vector<Array>& inputs() const { return node_->inputs; }
  Stream stream() const { return node_->stream; }
  Node* node() const { return node_.get(); }
  uint32_t traced() const { return node_->traced; }
  const std::shared_ptr<Node>& node_ptr() const { return node_; }
  long use_count() const { return node_.use_count(); }
  bool is(const Array& o) const { return node_ == o.node_; }

  // For kernels: give this (unevaluated) array its data.
  void set_data(std::shared_ptr<Buffer> buffer, Strides strides, int64_t offset);
  void set_contiguous_data(std::shared_ptr<Buffer> buffer) { set_data(std::move(buffer), row_strides(shape()), 0); }
  void allocate_contiguous() { set_contiguous_data(Buffer::allocate(nbytes())); }

  static Strides row_strides(const Shape& shape);

 private:
  friend struct Node;
  std::shared_ptr<Node> node_;
};

int64_t shape_size(const Shape& shape);  // product; checks for overflow in ops, not here

// Nodes recorded with transform bit `level` set on this thread, so the transform can clear the
// bit from all of them (those of its backward pass too) when it ends.
void note_traced(const std::shared_ptr<Node>& n);
std::vector<std::weak_ptr<Node>> take_traced(int level);
// Transform bits (on this thread) whose traced arrays have no value to read: vmap's, whose arrays
// stand for every example at once. Evaluating such an array raises at the call.
uint32_t& valueless_trace_bits();
// Transform bits (on this thread) of levels that only record the graph and replay it (compile):
// a primitive without differentiation or vmap rules may be recorded under them.
uint32_t& replay_only_trace_bits();
// Why the arrays of such a level have no value (the transform's words), for the error.
const char*& valueless_trace_reason(int level);

}  // namespace nuvec
