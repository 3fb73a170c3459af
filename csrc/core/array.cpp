#include "core/array.h"

#include "core/primitive.h"
#include "core/streams.h"

namespace nuvec {

int64_t shape_size(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Strides Array::row_strides(const Shape& shape) {
  Strides s(shape.size());
  int64_t st = 1;
  for (int i = int(shape.size()) - 1; i >= 0; --i) {
    s[i] = st;
    st *= shape[i];
  }
  return s;
}

Array Array::lazy(Shape shape, Dtype dtype, std::shared_ptr<Primitive> prim, std::vector<Array> inputs, Stream stream) {
  auto n = std::make_shared<Node>(std::move(shape), dtype);
  n->size = shape_size(n->shape);
  n->primitive = std::move(prim);
  for (const Array& in : inputs) n->traced |= in.node_->traced;
  n->inputs = std::move(inputs);
  if (n->traced) note_traced(n);
  n->stream = stream;
  n->site = capture_call_site();
  return Array(std::move(n));
}

std::vector<Array> Array::lazy_multi(std::vector<Shape> shapes, std::vector<Dtype> dtypes,
                                     std::shared_ptr<Primitive> prim, std::vector<Array> inputs, Stream stream) {
  std::vector<Array> outs;
  outs.reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) outs.push_back(lazy(shapes[i], dtypes[i], prim, inputs, stream));
  auto specs = std::make_shared<std::vector<std::pair<Shape, Dtype>>>();
  specs->reserve(shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) specs->emplace_back(shapes[i], dtypes[i]);
  auto list = std::make_shared<Siblings::List>();
  list->reserve(outs.size());
  for (auto& o : outs) list->push_back(o.node_);
  for (auto& o : outs) {
    o.node_->siblings.assign(list);
    o.node_->sibling_specs = specs;
  }
  return outs;
}

Array Array::from_buffer(Shape shape, Dtype dtype, std::shared_ptr<Buffer> buffer, Strides strides, int64_t offset) {
  auto n = std::make_shared<Node>(std::move(shape), dtype);
  n->size = shape_size(n->shape);
  n->stream = peek_default_stream(default_device());  // a label only: never raises, even after clear_streams
  Array a(std::move(n));
  a.set_data(std::move(buffer), std::move(strides), offset);
  a.node_->evaluated.store(true, std::memory_order_release);
  return a;
}

Array Array::allocate(Shape shape, Dtype dtype) {
  size_t bytes = size_t(shape_size(shape)) * size_of(dtype);
  Strides st = row_strides(shape);
  return from_buffer(std::move(shape), dtype, Buffer::allocate(bytes), std::move(st), 0);
}

void Array::set_data(std::shared_ptr<Buffer> buffer, Strides strides, int64_t offset) {
  Node& n = *node_;
  n.buffer = std::move(buffer);
  n.strides = std::move(strides);
  n.offset = offset;
  bool contiguous = true;
  int64_t expect = 1;
  for (int i = int(n.shape.size()) - 1; i >= 0; --i) {
    if (n.shape[i] != 1 && n.strides[i] != expect) contiguous = false;
    expect *= n.shape[i];
  }
  n.row_contiguous = contiguous;
}

namespace {
thread_local std::vector<std::weak_ptr<Node>> t_traced[32];
}

void note_traced(const std::shared_ptr<Node>& n) {
  for (uint32_t bits = n->traced; bits; bits &= bits - 1) t_traced[__builtin_ctz(bits)].push_back(n);
}

uint32_t& valueless_trace_bits() {
  static thread_local uint32_t bits = 0;
  return bits;
}

uint32_t& replay_only_trace_bits() {
  static thread_local uint32_t bits = 0;
  return bits;
}

const char*& valueless_trace_reason(int level) {
  static thread_local const char* reasons[32] = {};
  return reasons[level];
}

std::vector<std::weak_ptr<Node>> take_traced(int level) {
  std::vector<std::weak_ptr<Node>> out;
  out.swap(t_traced[level]);
  return out;
}

// Graphs can be chains of a million nodes: release inputs with an explicit stack rather than
// letting each destructor release the next one recursively.
Node::Node(Shape s, Dtype d) : shape(std::move(s)), dtype(d) {}

Node::~Node() {
  release_call_site(site);
  primitive.reset();
  if (inputs.empty()) return;
  static thread_local std::vector<std::shared_ptr<Node>>* pending = nullptr;
  std::vector<std::shared_ptr<Node>> local;
  bool drains = pending == nullptr;
  if (drains) pending = &local;
  // Every input goes through the list, not only those this node alone holds: a node can hold
  // the same input twice (x + x), and releasing the last of several references here would recurse.
  for (auto& in : inputs)
    if (in.node_) pending->push_back(std::move(in.node_));
  inputs.clear();
  if (drains) {
    while (!local.empty()) {
      std::shared_ptr<Node> n = std::move(local.back());
      local.pop_back();
      n.reset();
    }
    pending = nullptr;
  }
}

}  // namespace nuvec
