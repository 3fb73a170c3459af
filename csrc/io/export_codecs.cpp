// The codec rows of the core primitives (element-wise, reductions, shapes, indexing, sorting,
// scans, random, matmul), and codec_for / codec_named over every family's table
// (export_codecs_*.cpp): how each class's parameters are written to the header, rebuilt from it,
// and (for shapeless export) how its output shape follows its inputs'.
#include <algorithm>
#include <mutex>
#include <set>

#include "core/ops/common.h"
#include "core/primitives/creation.h"
#include "core/primitives/depends.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/indexing.h"
#include "core/primitives/matmul.h"
#include "core/primitives/random.h"
#include "core/primitives/reduce.h"
#include "core/primitives/scan.h"
#include "core/primitives/shape.h"
#include "core/primitives/sort.h"
#include "io/export_codec_util.h"

namespace nuvec::io {
namespace codec {
namespace {

const char* reduce_name(ReduceOp op) { return op_name(op); }
const char* scatter_name(ScatterOp op) { return Scatter(op, {}).name(); }
const char* random_name(RandomKind k) { return RandomBits(k, 4).name(); }

// Unary labels (astype, full) name ops sharing another's kernel; the primitive keeps the pointer.
const char* interned(const std::string& s) {
  static std::mutex m;
  static std::set<std::string> labels;
  std::lock_guard<std::mutex> lock(m);
  return labels.insert(s).first->c_str();
}

template <class... F> struct Overload : F... { using F::operator()...; };
template <class... F> Overload(F...) -> Overload<F...>;

Json params_json(const OpParams& p) {
  return std::visit(
      Overload{[](const NoParams&) { return json_list({}); },
               [](const RoundParams& r) { return json_list({json_int(r.decimals)}); },
               [](const NanToNumParams& n) { return json_list({real(n.nan), real(n.posinf), real(n.neginf)}); },
               [](const IsCloseParams& c) { return json_list({real(c.rtol), real(c.atol), json_int(c.equal_nan)}); }},
      p);
}
// The parameter struct is the op's (params_fit), told apart here by the values' count.
OpParams params_of(const Json& j) {
  if (j.type != Json::array) bad("expected a list of parameters");
  const auto& v = j.items;
  switch (v.size()) {
    case 0: return NoParams{};
    case 1: return RoundParams{int(integer(v[0]))};
    case 3:
      if (v[2].type == Json::integer) return IsCloseParams{real_of(v[0]), real_of(v[1]), integer(v[2]) != 0};
      return NanToNumParams{real_of(v[0]), real_of(v[1]), real_of(v[2])};
  }
  bad("unknown element-wise parameters");
}

Json elementwise_json(const Elementwise& e, const char* op, const char* name) {
  std::vector<std::pair<std::string, Json>> m{{"op", json_str(op)},
                                              {"compute", json_str(name_of(e.compute().back()))},
                                              {"out", json_str(name_of(e.out_compute()))},
                                              {"params", params_json(e.params())}};
  if (std::string(name) != op) m.emplace_back("label", json_str(name));
  return json_obj(std::move(m));
}
Dtype dtype_at(const Json& j, const char* key) { return dtype_named(text(member(j, key))); }

template <class Op> OpParams fitted(Op op, const Json& j) {
  OpParams p = params_of(member(j, "params"));
  if (!params_fit(op, p)) bad(std::string("wrong parameters for ") + op_name(op));
  return p;
}

// Shapes for shapeless replay.
Shape broadcast_all(const Primitive&, const std::vector<Array>& in, const Shape&) {
  Shape s = in[0].shape();
  for (size_t i = 1; i < in.size(); ++i) s = broadcast_shapes(s, in[i].shape(), kOp);
  return s;
}
Shape same(const Primitive&, const std::vector<Array>& in, const Shape&) { return in[0].shape(); }
Shape reduced(const std::vector<int>& axes, const Array& x, const Shape& recorded) {
  bool keep = int(recorded.size()) == x.ndim();
  Shape s;
  for (int d = 0; d < x.ndim(); ++d) {
    bool r = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!r)
      s.push_back(x.shape(d));
    else if (keep)
      s.push_back(1);
  }
  return s;
}
Shape matmul_shape(const Primitive&, const std::vector<Array>& in, const Shape&) {
  const Array &a = in[0], &b = in[1];
  Shape s(a.shape().begin(), a.shape().end() - 1);
  if (a.shape(-1) != b.shape(-2) ||
      Shape(a.shape().begin(), a.shape().end() - 2) != Shape(b.shape().begin(), b.shape().end() - 2))
    throw OpError(kOp, "matmul of shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
  s.push_back(b.shape(-1));
  return s;
}
Shape concatenate_shape(const Primitive& p, const std::vector<Array>& in, const Shape&) {
  int axis = as<Concatenate>(p).axis();
  Shape s = in[0].shape();
  for (size_t i = 1; i < in.size(); ++i) {
    Shape t = in[i].shape();
    s[axis] += t[axis];
    t[axis] = s[axis];
    if (t != s)
      throw OpError(kOp, "concatenate of shapes " + shape_str(in[0].shape()) + " and " + shape_str(in[i].shape()));
  }
  return s;
}
Shape gather_shape(const Primitive& p, const std::vector<Array>& in, const Shape&) {
  const auto& axes = as<Gather>(p).axes();
  Shape s = in.size() > 1 ? in[1].shape() : Shape{};
  for (size_t i = 2; i < in.size(); ++i) s = broadcast_shapes(s, in[i].shape(), kOp);
  for (int d = 0; d < in[0].ndim(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) s.push_back(in[0].shape(d));
  return s;
}
Shape partition_shape(const Primitive& p, const std::vector<Array>& in, const Shape&) {
  const auto& q = as<Partition>(p);
  if (q.kth() >= in[0].shape(q.axis())) throw OpError(kOp, "partition's kth is out of range for the new shape");
  return in[0].shape();
}

const Codec kCodecs[] = {
    {"unary", is<Unary>,
     [](const Primitive& p) { return elementwise_json(as<Unary>(p), op_name(as<Unary>(p).op()), p.name()); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       UnaryOp op = by_name<UnaryOp>(member(j, "op"), kUnaryOps, op_name);
       const Json* label = j.find("label");
       return std::make_shared<Unary>(op, dtype_at(j, "compute"), dtype_at(j, "out"), fitted(op, j),
                                      label ? interned(text(*label)) : nullptr);
     },
     broadcast_all},
    {"binary", is<Binary>, [](const Primitive& p) { return elementwise_json(as<Binary>(p), p.name(), p.name()); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       BinaryOp op = by_name<BinaryOp>(member(j, "op"), kBinaryOps, op_name);
       return std::make_shared<Binary>(op, dtype_at(j, "compute"), dtype_at(j, "out"), fitted(op, j));
     },
     broadcast_all},
    {"where", is<Select>,
     [](const Primitive& p) { return json_obj({{"compute", json_str(name_of(as<Select>(p).out_compute()))}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> { return std::make_shared<Select>(dtype_at(j, "compute")); },
     broadcast_all},
    {"reduce", is<Reduce>,
     [](const Primitive& p) { return json_obj({{"op", json_str(p.name())}, {"axes", ints(as<Reduce>(p).axes())}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Reduce>(by_name<ReduceOp>(member(j, "op"), kReduceOps, reduce_name),
                                       int32_list(member(j, "axes")));
     },
     [](const Primitive& p, const std::vector<Array>& in, const Shape& r) {
       return reduced(as<Reduce>(p).axes(), in[0], r);
     }},
    {"argreduce", is<ArgReduce>,
     [](const Primitive& p) {
       return json_obj({{"max", json_int(as<ArgReduce>(p).is_max())}, {"axis", json_int(as<ArgReduce>(p).axis())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<ArgReduce>(integer(member(j, "max")) != 0, int(integer(member(j, "axis"))));
     },
     [](const Primitive& p, const std::vector<Array>& in, const Shape& r) {
       return reduced({as<ArgReduce>(p).axis()}, in[0], r);
     }},
    NUVEC_PLAIN(Softmax, "softmax", same),
    NUVEC_PLAIN(LogSumExp, "logsumexp",
                [](const Primitive&, const std::vector<Array>& in, const Shape&) {
                  return Shape(in[0].shape().begin(), in[0].shape().end() - 1);
                }),
    {"slice", is<Slice>,
     [](const Primitive& p) {
       return json_obj({{"start", ints(as<Slice>(p).start())}, {"step", ints(as<Slice>(p).step())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Slice>(int_list(member(j, "start")), int_list(member(j, "step")));
     },
     nullptr},
    {"slice_update", is<SliceUpdate>,
     [](const Primitive& p) {
       return json_obj({{"start", ints(as<SliceUpdate>(p).start())}, {"step", ints(as<SliceUpdate>(p).step())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<SliceUpdate>(int_list(member(j, "start")), int_list(member(j, "step")));
     },
     nullptr},
    {"dynamic_slice_update", is<DynamicSliceUpdate>,
     [](const Primitive& p) { return json_obj({{"axes", ints(as<DynamicSliceUpdate>(p).axes())}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<DynamicSliceUpdate>(int32_list(member(j, "axes")));
     },
     nullptr},
    {"transpose", is<Transpose>, [](const Primitive& p) { return json_obj({{"perm", ints(as<Transpose>(p).perm())}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Transpose>(int32_list(member(j, "perm")));
     },
     [](const Primitive& p, const std::vector<Array>& in, const Shape&) {
       Shape s;
       for (int a : as<Transpose>(p).perm()) s.push_back(in[0].shape(a));
       return s;
     }},
    NUVEC_PLAIN(Broadcast, "broadcast_to", nullptr),
    NUVEC_PLAIN(Reshape, "reshape", nullptr),
    NUVEC_PLAIN(ViewDtype, "view", nullptr),
    NUVEC_PLAIN(Contiguous, "contiguous", same),
    {"as_strided", is<AsStrided>,
     [](const Primitive& p) {
       return json_obj(
           {{"strides", ints(as<AsStrided>(p).strides())}, {"offset", json_int(as<AsStrided>(p).offset())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<AsStrided>(int_list(member(j, "strides")), integer(member(j, "offset")));
     },
     nullptr},
    {"diagonal", is<Diagonal>,
     [](const Primitive& p) {
       const auto& d = as<Diagonal>(p);
       return json_obj(
           {{"offset", json_int(d.offset())}, {"axis1", json_int(d.axis1())}, {"axis2", json_int(d.axis2())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Diagonal>(integer(member(j, "offset")), int(integer(member(j, "axis1"))),
                                         int(integer(member(j, "axis2"))));
     },
     nullptr},
    {"sort", is<Sort>,
     [](const Primitive& p) {
       return json_obj({{"axis", json_int(as<Sort>(p).axis())}, {"indices", json_int(as<Sort>(p).indices())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Sort>(int(integer(member(j, "axis"))), integer(member(j, "indices")) != 0);
     },
     same},
    {"partition", is<Partition>,
     [](const Primitive& p) {
       const auto& q = as<Partition>(p);
       return json_obj({{"axis", json_int(q.axis())}, {"kth", json_int(q.kth())}, {"indices", json_int(q.indices())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Partition>(int(integer(member(j, "axis"))), integer(member(j, "kth")),
                                          integer(member(j, "indices")) != 0);
     },
     partition_shape},
    {"scan", is<Scan>,
     [](const Primitive& p) {
       const auto& s = as<Scan>(p);
       return json_obj({{"op", json_str(s.name())},
                        {"axis", json_int(s.axis())},
                        {"reverse", json_int(s.reverse())},
                        {"inclusive", json_int(s.inclusive())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Scan>(by_name<ScanOp>(member(j, "op"), 5, scan_name), int(integer(member(j, "axis"))),
                                     integer(member(j, "reverse")) != 0, integer(member(j, "inclusive")) != 0);
     },
     same},
    NUVEC_PLAIN(Matmul, "matmul", matmul_shape),
    {"random", is<RandomBits>,
     [](const Primitive& p) {
       return json_obj({{"kind", json_str(p.name())}, {"width", json_int(as<RandomBits>(p).width())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<RandomBits>(by_name<RandomKind>(member(j, "kind"), 4, random_name),
                                           int(integer(member(j, "width"))));
     },
     nullptr},
    {"arange", is<Arange>,
     [](const Primitive& p) {
       return json_obj({{"start", real(as<Arange>(p).start())}, {"step", real(as<Arange>(p).step())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Arange>(real_of(member(j, "start")), real_of(member(j, "step")));
     },
     nullptr},
    {"gather", is<Gather>, [](const Primitive& p) { return json_obj({{"axes", ints(as<Gather>(p).axes())}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Gather>(int32_list(member(j, "axes")));
     },
     gather_shape},
    {"scatter", is<Scatter>,
     [](const Primitive& p) { return json_obj({{"op", json_str(p.name())}, {"axes", ints(as<Scatter>(p).axes())}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Scatter>(by_name<ScatterOp>(member(j, "op"), 5, scatter_name),
                                        int32_list(member(j, "axes")));
     },
     nullptr},
    {"concatenate", is<Concatenate>,
     [](const Primitive& p) { return json_obj({{"axis", json_int(as<Concatenate>(p).axis())}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Concatenate>(int(integer(member(j, "axis"))));
     },
     concatenate_shape},
    NUVEC_PLAIN(BroadcastLike, "broadcast_like", broadcast_all),
    {"count", is<Count>,
     [](const Primitive& p) {
       const auto& c = as<Count>(p);
       return json_obj(
           {{"axes", ints(c.axes())}, {"ddof", json_int(c.ddof())}, {"dtype", json_str(name_of(c.dtype()))}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Count>(int32_list(member(j, "axes")), int_at(j, "ddof"), dtype_at(j, "dtype"));
     },
     [](const Primitive&, const std::vector<Array>&, const Shape& recorded) { return recorded; }},
    {"depends", is<Depends>,
     [](const Primitive& p) { return json_obj({{"inputs", json_int(as<Depends>(p).num_inputs())}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       int64_t n = int_at(j, "inputs");
       if (n < 1) bad("depends without inputs");
       return std::make_shared<Depends>(int(n));
     },
     same, [](const Primitive& p) { return size_t(as<Depends>(p).num_inputs()); },
     [](const Primitive& p, const std::vector<Array>& in) {
       std::vector<Shape> s;
       for (int i = 0; i < as<Depends>(p).num_inputs(); ++i) s.push_back(in[size_t(i)].shape());
       return s;
     }},
};

}  // namespace

std::span<const Codec> core_codecs() { return kCodecs; }

}  // namespace codec

namespace {
constexpr std::span<const Codec> (*kFamilies[])() = {codec::core_codecs, codec::linalg_codecs, codec::fast_codecs,
                                                     codec::product_codecs};
}  // namespace

const Codec* codec_for(const Primitive& p) {
  for (auto family : kFamilies)
    for (const Codec& c : family())
      if (c.matches(p)) return &c;
  return nullptr;
}

const Codec& codec_named(const std::string& tag) {
  for (auto family : kFamilies)
    for (const Codec& c : family())
      if (tag == c.tag) return c;
  codec::bad("unknown primitive '" + tag + "'");
}

}  // namespace nuvec::io
