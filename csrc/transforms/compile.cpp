// compile's trace, simplification and replay. The trace runs the function on placeholders (at a
// transform level of its own, whose arrays have no value to read); the nodes that depend on a
// placeholder are the steps, and whatever else the function reached is a constant, evaluated once.
#include "transforms/compile.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <typeindex>
#include <unordered_map>
#include <unordered_set>

#include "core/backend.h"
#include "core/eval.h"
#include "core/graph_walk.h"
#include "core/ops.h"
#include "core/primitives/compiled.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/fast_loss.h"
#include "core/primitives/fast_norms.h"
#include "core/primitives/indexing.h"
#include "core/primitives/matmul.h"
#include "core/primitives/reduce.h"
#include "core/primitives/rope.h"
#include "core/primitives/scan.h"
#include "core/primitives/shape.h"
#include "core/primitives/sort.h"
#include "transforms/trace.h"

namespace nuvec {
namespace {

// Stands for an input while the function is traced: it has no value to read.
class CompilePlaceholder : public Primitive {
 public:
  const char* name() const override { return "compile"; }
  NUVEC_KERNEL_SLOT
};

void refuse_to_read(const CompilePlaceholder&, const std::vector<Array>&, std::vector<Array>&) {
  throw KernelError(EvalErrorKind::other, "the value of an input cannot be read while compile traces the function");
}
const bool registered = add_device_free_kernel<CompilePlaceholder, refuse_to_read>();

// Steps that return their input unchanged: a same-dtype copy, an identity transpose and (their
// shapes fixed) a reshape or broadcast to the input's own shape.
bool is_identity(const TapeStep& st, const Shape& in_shape, bool shapeless) {
  const Primitive& p = *st.primitive;
  if (auto* u = dynamic_cast<const Unary*>(&p))
    return u->op() == UnaryOp::copy && u->compute()[0] == u->out_compute() && st.dtypes[0] == u->out_compute();
  if (auto* t = dynamic_cast<const Transpose*>(&p)) {
    for (size_t i = 0; i < t->perm().size(); ++i)
      if (t->perm()[i] != int(i)) return false;
    return true;
  }
  if (shapeless) return false;
  return (dynamic_cast<const Reshape*>(&p) || dynamic_cast<const Broadcast*>(&p) ||
          dynamic_cast<const BroadcastLike*>(&p)) &&
         st.shapes[0] == in_shape;
}

// Whether a transpose of an array of shape `in` moves only axes of length 1 (the others keep their
// order): it is then a reshape.
bool moves_unit_axes(const Transpose& t, const Shape& in) {
  int last = -1;
  for (int a : t.perm()) {
    if (in[size_t(a)] == 1) continue;
    if (a < last) return false;
    last = a;
  }
  return true;
}

// With shapes fixed, a broadcast read only by element-wise steps that broadcast to its shape anyway
// (another operand has it) is left to them: a fused group then reads the small array as a row or
// column vector instead of a copy of the broadcast view.
void drop_broadcasts(const Tape& t, std::vector<TapeStep>& steps) {
  if (t.shapeless) return;
  std::vector<int> replace(static_cast<size_t>(t.num_values));
  for (int v = 0; v < t.num_values; ++v) replace[size_t(v)] = v;
  std::unordered_map<int, std::vector<const TapeStep*>> users;
  for (const TapeStep& st : steps)
    for (int in : st.inputs) users[in].push_back(&st);
  for (const TapeStep& st : steps) {
    if (!dynamic_cast<const Broadcast*>(st.primitive.get()) && !dynamic_cast<const BroadcastLike*>(st.primitive.get()))
      continue;
    int v = st.outputs[0];
    bool implicit = std::find(t.outputs.begin(), t.outputs.end(), v) == t.outputs.end() && !users[v].empty();
    for (const TapeStep* u : users[v]) {
      bool covered = false;
      for (int other : u->inputs) covered |= other != v && t.value_shapes[size_t(other)] == st.shapes[0];
      implicit = implicit && dynamic_cast<const Elementwise*>(u->primitive.get()) && covered;
    }
    if (implicit) replace[size_t(v)] = st.inputs[0];
  }
  for (TapeStep& st : steps)
    for (int& in : st.inputs) in = replace[size_t(in)];
}

// Merges steps that repeat an earlier one (same primitive class and parameters, same inputs),
// drops identities, then the steps no output needs.
void simplify(Tape& t) {
  const std::vector<Shape>& value_shapes = t.value_shapes;
  std::vector<int> replace(static_cast<size_t>(t.num_values));
  for (int v = 0; v < t.num_values; ++v) replace[size_t(v)] = v;
  // Equal one-element constants are one value (ops make a scalar constant per use).
  std::map<std::tuple<int, Shape, std::string>, int> scalars;
  auto merge_scalar = [&](int v, const Array& c) {
    if (c.size() != 1 || !c.evaluated()) return;
    std::tuple key{int(c.dtype()), c.shape(), std::string(c.data_bytes(), c.itemsize())};
    auto [it, fresh] = scalars.emplace(std::move(key), v);
    if (!fresh) replace[size_t(v)] = it->second;
  };
  for (const auto& [v, c] : t.constants) merge_scalar(v, c);
  std::unordered_map<int, Array> constant_of(t.constants.begin(), t.constants.end());
  std::unordered_map<size_t, std::vector<size_t>> seen;  // hash of (class, inputs) -> kept steps
  std::vector<TapeStep> kept;
  std::unordered_map<int, size_t> producer;  // value -> the kept step that makes it
  for (TapeStep& st : t.steps) {
    for (int& in : st.inputs) in = replace[size_t(in)];
    // A transpose of a transpose is one transpose of the first one's input (often none at all:
    // the backward pass transposes a product's transposed operand back).
    if (auto* outer = dynamic_cast<const Transpose*>(st.primitive.get()); outer && producer.count(st.inputs[0])) {
      const TapeStep& in = kept[producer[st.inputs[0]]];
      if (auto* inner = dynamic_cast<const Transpose*>(in.primitive.get())) {
        std::vector<int> perm;
        for (int a : outer->perm()) perm.push_back(inner->perm()[size_t(a)]);
        st.primitive = std::make_shared<Transpose>(perm);
        st.inputs = in.inputs;
        st.in_shapes = in.in_shapes;
      }
    }
    // With shapes fixed, a transpose that moves only axes of length 1 is a reshape, and a reshape
    // of a reshape is one reshape (a decode step's heads, (1, 1, H, D) -> (1, H, 1, D) and back).
    if (!t.shapeless) {
      if (auto* tr = dynamic_cast<const Transpose*>(st.primitive.get()); tr && moves_unit_axes(*tr, st.in_shapes[0]))
        st.primitive = std::make_shared<Reshape>();
      if (dynamic_cast<const Reshape*>(st.primitive.get()) && producer.count(st.inputs[0])) {
        const TapeStep& in = kept[producer[st.inputs[0]]];
        if (dynamic_cast<const Reshape*>(in.primitive.get())) {
          st.inputs = in.inputs;
          st.in_shapes = in.in_shapes;
        }
      }
    }
    // A step of constants only (what simplifying left of an input's influence, such as a
    // gradient's seed) is computed now.
    bool constant_inputs = !st.inputs.empty();
    for (int in : st.inputs) constant_inputs = constant_inputs && constant_of.count(in);
    if (constant_inputs) {
      std::vector<Array> ins;
      for (int in : st.inputs) ins.push_back(constant_of.at(in));
      std::vector<Array> outs =
          st.outputs.size() == 1
              ? std::vector<Array>{Array::lazy(st.shapes[0], st.dtypes[0], st.primitive, ins, st.stream)}
              : Array::lazy_multi(st.shapes, st.dtypes, st.primitive, ins, st.stream);
      eval(outs);
      for (size_t k = 0; k < outs.size(); ++k) {
        t.constants.emplace_back(st.outputs[k], outs[k]);
        constant_of.emplace(st.outputs[k], outs[k]);
        merge_scalar(st.outputs[k], outs[k]);
      }
      continue;
    }
    // With shapes fixed, a count (mean's divisor) is a number.
    if (auto* c = dynamic_cast<const Count*>(st.primitive.get()); c && !t.shapeless) {
      t.constants.emplace_back(st.outputs[0], scalar_array(c->value(st.in_shapes[0]), st.dtypes[0]));
      constant_of.emplace(st.outputs[0], t.constants.back().second);
      merge_scalar(st.outputs[0], t.constants.back().second);
      continue;
    }
    if (!st.inputs.empty() && st.shapes.size() == 1 &&
        is_identity(st, value_shapes[size_t(st.inputs[0])], t.shapeless)) {
      replace[size_t(st.outputs[0])] = st.inputs[0];
      continue;
    }
    size_t h = std::hash<std::type_index>()(typeid(*st.primitive));
    for (int in : st.inputs) h = h * 1000003u ^ size_t(in);
    bool merged = false;
    for (size_t k : seen[h]) {
      const TapeStep& o = kept[k];
      if (typeid(*o.primitive) == typeid(*st.primitive) && o.inputs == st.inputs && o.shapes == st.shapes &&
          o.dtypes == st.dtypes && st.primitive->is_equivalent(*o.primitive)) {
        for (size_t j = 0; j < st.outputs.size(); ++j) replace[size_t(st.outputs[j])] = o.outputs[j];
        merged = true;
        break;
      }
    }
    if (merged) continue;
    seen[h].push_back(kept.size());
    for (int o : st.outputs) producer[o] = kept.size();
    kept.push_back(std::move(st));
  }
  for (int& o : t.outputs) o = replace[size_t(o)];
  drop_broadcasts(t, kept);
  std::vector<bool> needed(static_cast<size_t>(t.num_values), false);
  for (int o : t.outputs) needed[size_t(o)] = true;
  std::vector<TapeStep> live;
  for (size_t i = kept.size(); i-- > 0;) {
    const TapeStep& st = kept[i];
    bool any = false;
    for (int o : st.outputs) any |= needed[size_t(o)];
    if (!any) continue;
    for (int in : st.inputs) needed[size_t(in)] = true;
    live.push_back(st);
  }
  t.steps.assign(live.rbegin(), live.rend());
  std::erase_if(t.constants, [&](const auto& c) { return !needed[size_t(c.first)]; });
}

// A reshape from `from` to `to` that only merges runs of axes and adds or drops axes of length 1
// (flatten, reshape(-1), expand_dims, squeeze, None indices), applied to `now`; none for a
// reshape that splits an axis (its new lengths are not the input's to work out), or where the
// trace's length-1 axes leave it ambiguous which axes are which (rather than guess a wrong shape).
std::optional<Shape> regroup(const Shape& from, const Shape& to, const Shape& now) {
  Shape out;
  size_t i = 0, j = 0;
  while (j < to.size()) {
    size_t ones_to = 0, ones_from = 0;
    while (j + ones_to < to.size() && to[j + ones_to] == 1) ++ones_to;
    while (i + ones_from < from.size() && from[i + ones_from] == 1) ++ones_from;
    if (ones_to > 0) {
      // A run of length-1 axes in the result, facing one in the input: matched one to one, all
      // added, or (input axes that are 1 again now) kept as 1s; any other mix is ambiguous.
      std::vector<int64_t> longer;  // the input's axes of that run that are no longer 1
      for (size_t k = 0; k < ones_from; ++k)
        if (now[i + k] != 1) longer.push_back(now[i + k]);
      if (ones_from == ones_to || longer.empty() || (ones_from > ones_to && longer.size() == ones_to)) {
        for (size_t k = 0; k < ones_to; ++k)
          out.push_back(ones_from == ones_to ? now[i + k] : longer.empty() ? 1 : longer[k]);
      } else {
        return std::nullopt;
      }
      i += ones_from;
      j += ones_to;
      continue;
    }
    int64_t target = to[j], traced = 1, length = 1;
    while (i < from.size() && traced < target) traced *= from[i], length *= now[i], ++i;
    if (traced != target) return std::nullopt;
    // Length-1 input axes after a group merge into it, unless length-1 result axes follow.
    if (j + 1 == to.size() || to[j + 1] != 1)
      while (i < from.size() && from[i] == 1) length *= now[i], ++i;
    out.push_back(length);
    ++j;
  }
  while (i < from.size() && from[i] == 1 && now[i] == 1) ++i;  // dropped
  if (i != from.size() || shape_size(out) != shape_size(now)) return std::nullopt;
  return out;
}

}  // namespace

// A fused group's domain for new input shapes: their broadcast, when some input spans the
// domain's last axis or its rows (a full, row or col input); else only the traced shapes serve.
Shape group_domain(const Compiled& c, const std::vector<Shape>& inputs, const TapeStep& st) {
  bool spans = false;
  for (Form f : c.program().input_forms) spans |= f == Form::full || f == Form::row || f == Form::col;
  if (!spans) {
    if (inputs != st.in_shapes)
      throw OpError("compile",
                    "a fused group of a shapeless compiled function cannot work out its shape from these inputs "
                    "(compile it with shapeless=False, which traces again for each shape)");
    return c.domain();
  }
  Shape domain = inputs[0];
  for (const Shape& in : inputs) domain = broadcast_shapes(domain, in, "compile");
  if (domain.size() < c.domain().size()) domain.insert(domain.begin(), c.domain().size() - domain.size(), 1);
  return domain;
}

std::shared_ptr<const Tape> trace_tape(const ArrayFn& fun, const std::vector<Array>& inputs, bool shapeless) {
  auto t = std::make_shared<Tape>();
  t->shapeless = shapeless;
  t->num_inputs = int(inputs.size());
  std::vector<Array> outputs;
  std::vector<Shape>& value_shapes = t->value_shapes;
  std::vector<Dtype>& value_dtypes = t->value_dtypes;
  {
    TraceLevel level("compile");
    ValuelessLevel valueless(level,
                             "the value of an array cannot be read while compile traces the function: pass "
                             "it in as an argument or compute it outside the compiled function");
    ReplayOnlyLevel replay_only(level);  // the level only records: Adam's step may be used
    Stream s = default_stream(default_device());
    std::vector<Array> placeholders;
    std::unordered_map<Node*, int> value_of;
    std::unordered_set<Node*> leaves;
    for (const Array& in : inputs) {
      Array p = Array::lazy(in.shape(), in.dtype(), std::make_shared<CompilePlaceholder>(), {}, s);
      p.node()->traced |= level.bit();
      note_traced(p.node_ptr());
      value_of.emplace(p.node(), int(placeholders.size()));
      value_shapes.push_back(in.shape()), value_dtypes.push_back(in.dtype());
      leaves.insert(p.node());
      placeholders.push_back(p);
    }
    outputs = fun(placeholders);
    // The steps: the unevaluated nodes that depend on an input. The level's bit marks most of
    // them, but not those behind an untraced alias (custom_function, checkpoint): walk them all.
    std::vector<Node*> all;
    std::unordered_set<Node*> seen;
    post_order(
        outputs,
        [&](Node* n) { return seen.insert(n).second && !leaves.count(n) && n->primitive && !n->evaluated.load(); },
        all);
    std::unordered_set<Node*> dependent(leaves);
    std::vector<Node*> order;
    for (Node* n : all)
      for (const Array& in : n->inputs)
        if (dependent.count(in.node())) {
          dependent.insert(n);
          order.push_back(n);
          break;
        }
    Handles handles;
    for (const Array& o : outputs) handles.add(o);
    for (Node* n : order) handles.add_inputs(n);
    // Constants: what the steps and outputs read that does not depend on an input.
    auto constant = [&](const Array& a) {
      if (value_of.count(a.node()) || dependent.count(a.node())) return;
      int v = t->num_inputs + int(t->constants.size());
      value_of.emplace(a.node(), v);
      value_shapes.push_back(a.shape()), value_dtypes.push_back(a.dtype());
      t->constants.emplace_back(v, a);
    };
    for (Node* n : order)
      for (const Array& in : n->inputs) constant(in);
    for (const Array& o : outputs) constant(o);
    int next = t->num_inputs + int(t->constants.size());
    for (Node* n : order) {
      if (value_of.count(n)) continue;  // a sibling already recorded with its step
      std::vector<Array> outs = outputs_of(n, handles.map.at(n).node_ptr());
      TapeStep st{n->primitive, {}, {}, {}, {}, {}, n->stream};
      for (const Array& in : n->inputs) st.inputs.push_back(value_of.at(in.node())), st.in_shapes.push_back(in.shape());
      for (const Array& o : outs) {
        st.shapes.push_back(o.shape()), st.dtypes.push_back(o.dtype()), st.outputs.push_back(next);
        value_of.emplace(o.node(), next++);
        value_shapes.push_back(o.shape()), value_dtypes.push_back(o.dtype());
      }
      t->steps.push_back(std::move(st));
    }
    for (const Array& o : outputs) t->outputs.push_back(value_of.at(o.node()));
    t->num_values = next;
  }
  // Constant folding: the function's input-free work is done once, now (arrays another
  // transform traces stay as they are: they belong to its graph).
  std::vector<Array> fold;
  for (const auto& [v, c] : t->constants)
    if (c.traced())
      t->traced_constants = true;
    else
      fold.push_back(c);
  eval(fold);
  simplify(*t);
  t->fused = fuse_steps(*t);
  t->plan = plan_tape(*t);
  return t;
}

std::vector<Array> Tape::replay(const std::vector<Array>& inputs) const {
  bool traced = false;
  for (const Array& in : inputs) traced |= in.traced() != 0;
  if (traced_constants)  // (a node never gains a traced bit later: the others need no look)
    for (const auto& c : constants) traced |= c.second.traced() != 0;
  if (!traced && plan && plans_enabled().load(std::memory_order_relaxed)) return replay_plan(plan, inputs);
  ThreadValues held{size_t(num_values)};
  std::vector<Array>& values = held.values;
  for (size_t i = 0; i < inputs.size(); ++i) values[i] = inputs[i];
  for (const auto& [v, c] : constants) values[size_t(v)] = c;
  PinnedCallSite site;  // every node at the caller's line, captured once
  for (const TapeStep& st : traced ? steps : fused) {
    std::vector<Array> ins;
    ins.reserve(st.inputs.size());
    for (int v : st.inputs) ins.push_back(values[size_t(v)]);
    std::shared_ptr<Primitive> prim = st.primitive;
    const std::vector<Shape>* shapes = &st.shapes;
    std::vector<Shape> replayed;  // shapeless: the output shapes for these inputs
    if (shapeless) {
      std::vector<Shape> in_shapes;
      for (const Array& a : ins) in_shapes.push_back(a.shape());
      replayed = output_shapes(st, in_shapes), shapes = &replayed;
      if (auto* c = dynamic_cast<const Compiled*>(prim.get())) {
        // The group's domain from these inputs (its outputs' shapes may not show it: a row sum).
        Shape domain = group_domain(*c, in_shapes, st);
        if (domain != c->domain()) prim = std::make_shared<Compiled>(c->shared_program(), domain, false);
      }
    }
    if (shapes->size() == 1) {
      values[size_t(st.outputs[0])] =
          Array::lazy((*shapes)[0], st.dtypes[0], std::move(prim), std::move(ins), st.stream);
    } else {
      std::vector<Array> outs = Array::lazy_multi(*shapes, st.dtypes, std::move(prim), std::move(ins), st.stream);
      for (size_t k = 0; k < outs.size(); ++k) values[size_t(st.outputs[k])] = outs[k];
    }
  }
  std::vector<Array> outs;
  outs.reserve(outputs.size());
  for (int o : outputs) outs.push_back(values[size_t(o)]);
  return outs;
}

namespace {
thread_local std::vector<Array> spare_values;
}

ThreadValues::ThreadValues(size_t n) {
  values.swap(spare_values);
  values.resize(n);
}

ThreadValues::~ThreadValues() {
  values.clear();
  if (values.capacity() > spare_values.capacity()) spare_values.swap(values);
}

std::vector<Shape> output_shapes(const TapeStep& st, const std::vector<Shape>& inputs) {
  const Primitive& p = *st.primitive;
  auto broadcast_all = [&] {
    Shape s = inputs[0];
    for (const Shape& in : inputs) s = broadcast_shapes(s, in, p.name());
    return s;
  };
  if (dynamic_cast<const Elementwise*>(&p) || dynamic_cast<const BroadcastLike*>(&p)) return {broadcast_all()};
  if (auto* c = dynamic_cast<const Compiled*>(&p)) {
    Shape domain = group_domain(*c, inputs, st);
    std::vector<Shape> out;
    for (size_t k = 0; k < st.shapes.size(); ++k) {
      const Instruction& ins = c->program().code[size_t(c->program().outputs[k]) - c->program().input_forms.size()];
      out.push_back(shape_of(ins.form, ins.rank, domain));
    }
    return out;
  }
  const Shape& in = inputs[0];
  // Reductions keep or drop their axes as they did at the trace.
  auto reduced = [&](const std::vector<int>& axes) {
    bool keep = st.shapes[0].size() == in.size();
    Shape s;
    for (int i = 0; i < int(in.size()); ++i) {
      bool r = std::find(axes.begin(), axes.end(), i) != axes.end();
      if (!r)
        s.push_back(in[size_t(i)]);
      else if (keep)
        s.push_back(1);
    }
    return s;
  };
  if (auto* r = dynamic_cast<const Reduce*>(&p)) return {reduced(r->axes())};
  if (auto* r = dynamic_cast<const ArgReduce*>(&p)) return {reduced({r->axis()})};
  if (dynamic_cast<const LogSumExp*>(&p) || dynamic_cast<const CrossEntropy*>(&p))  // the last axis
    return {reduced({int(in.size()) - 1})};
  if (dynamic_cast<const Count*>(&p)) return st.shapes;  // a scalar whatever the input
  if (dynamic_cast<const Softmax*>(&p) || dynamic_cast<const Scan*>(&p) || dynamic_cast<const Contiguous*>(&p) ||
      dynamic_cast<const Sort*>(&p) || dynamic_cast<const Partition*>(&p) || dynamic_cast<const RowNorm*>(&p) ||
      dynamic_cast<const Rope*>(&p))  // every output has the first input's shape
    return std::vector<Shape>(st.shapes.size(), in);
  if (auto* t = dynamic_cast<const Transpose*>(&p)) {
    Shape s;
    for (int a : t->perm()) s.push_back(in[size_t(a)]);
    return {s};
  }
  if (dynamic_cast<const Matmul*>(&p) && in.size() >= 2 && inputs[1].size() >= 2) {
    Shape s(in.begin(), in.end() - 1);
    s.push_back(inputs[1].back());
    return {s};
  }
  if (auto* c = dynamic_cast<const Concatenate*>(&p)) {
    Shape s = in;
    bool agree = true;
    s[size_t(c->axis())] = 0;
    for (const Shape& x : inputs) {
      Shape other = x;
      other[size_t(c->axis())] = in[size_t(c->axis())];
      agree &= other == in;
      s[size_t(c->axis())] += x[size_t(c->axis())];
    }
    if (agree) return {s};
  }
  if (dynamic_cast<const Reshape*>(&p))
    if (auto s = regroup(st.in_shapes[0], st.shapes[0], in)) return {*s};
  bool same = true;
  for (size_t i = 0; i < inputs.size(); ++i) same &= inputs[i] == st.in_shapes[i];
  if (same) return st.shapes;
  throw OpError(p.name(),
                "cannot work out its output shape for new input shapes in a shapeless compiled function (compile it "
                "with shapeless=False, which traces again for each shape)");
}

}  // namespace nuvec
