// compile's fusion: element-wise steps, and last-axis reductions of them, grouped into Compiled
// steps. Groups grow from a root backwards (users before producers): a producer joins when every
// step that reads it is in the group or comes after the group's root, where the group is
// computed (so no cycle: nothing a member reads can depend on a step after the root). Only the
// root, values read outside and the trace's outputs are stored.
#include <algorithm>
#include <unordered_map>

#include "core/primitives/compiled.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/reduce.h"
#include "transforms/compile.h"

namespace nuvec {
namespace {

constexpr size_t kMaxInstructions = 64;
constexpr size_t kMaxInputs = 16;
// Reductions fuse over rows the backends reduce in one piece (so the bits are the same).
constexpr int64_t kMaxReducedRow = int64_t(1) << 16;

struct Group {
  Shape domain;
  std::vector<size_t> members;  // step indices
  bool reduces = false;
};

// The forms an element-wise step's operands may mix: col_flat values only with scalars, the rest
// freely (a row and a col together broadcast to full).
bool mixable(const std::vector<int>& forms) {
  bool flat = false, other = false;
  for (int f : forms) {
    flat |= f == int(Form::col_flat);
    other |= f == int(Form::full) || f == int(Form::col) || f == int(Form::row);
  }
  return !(flat && other);
}

class Grouper {
 public:
  explicit Grouper(const Tape& t) : t_(t), users_(size_t(t.num_values)), group_of_(t.steps.size(), -1) {
    for (size_t i = 0; i < t.steps.size(); ++i)
      for (int v : t.steps[i].inputs) users_[size_t(v)].push_back(i);
  }

  std::vector<TapeStep> run() {
    for (size_t i = t_.steps.size(); i-- > 0;) place(i);
    std::vector<TapeStep> out;
    for (size_t i = 0; i < t_.steps.size(); ++i) {
      int g = group_of_[i];
      if (g < 0 || groups_[size_t(g)].members.size() < 2) {
        out.push_back(t_.steps[i]);
      } else if (groups_[size_t(g)].members.front() == i) {  // the root: its group's place
        out.push_back(emit(groups_[size_t(g)]));
      }
    }
    return out;
  }

 private:
  const Tape& t_;
  std::vector<std::vector<size_t>> users_;
  std::vector<int> group_of_;
  std::vector<Group> groups_;

  int form(int value, const Shape& domain) const { return form_of(t_.value_shapes[size_t(value)], domain); }

  // Whether step i can run inside a group over `domain`.
  bool fits(size_t i, const Shape& domain) const {
    const TapeStep& st = t_.steps[i];
    if (st.outputs.size() != 1 || form(st.outputs[0], domain) < 0) return false;
    const Primitive& p = *st.primitive;
    if (auto* e = dynamic_cast<const Elementwise*>(&p)) {
      auto* u = dynamic_cast<const Unary*>(e);
      // A conversion (astype) runs as a convert kernel; a same-dtype copy or stop_gradient is
      // no work to fuse.
      bool convert = u && u->op() == UnaryOp::copy && e->compute()[0] != e->out_compute();
      if (u && !convert && (u->op() == UnaryOp::copy || u->op() == UnaryOp::stop_gradient)) return false;
      if (st.dtypes[0] != e->out_compute() || (is_half(st.dtypes[0]) && !convert)) return false;
      std::vector<int> forms;
      for (size_t k = 0; k < st.inputs.size(); ++k) {
        int v = st.inputs[k];
        if (t_.value_dtypes[size_t(v)] != e->compute()[k]) return false;
        forms.push_back(form(v, domain));
        if (forms.back() < 0) return false;
      }
      return mixable(forms);
    }
    if (auto* r = dynamic_cast<const Reduce*>(&p)) {
      int v = st.inputs[0];
      int out_form = form(st.outputs[0], domain);
      return (r->op() == ReduceOp::sum || r->op() == ReduceOp::prod || r->op() == ReduceOp::max ||
              r->op() == ReduceOp::min) &&
             domain.size() >= 2 && r->axes() == std::vector<int>{int(domain.size()) - 1} &&
             t_.value_shapes[size_t(v)] == domain && domain.back() <= kMaxReducedRow &&
             t_.value_dtypes[size_t(v)] == st.dtypes[0] && !is_half(st.dtypes[0]) &&
             (out_form == int(Form::col) || out_form == int(Form::col_flat));
    }
    return false;
  }

  // The domain step i's group would have with i as its root. A shapeless trace on a shape with a
  // length-1 axis cannot tell a broadcast value from a full one along it: no group there.
  std::optional<Shape> root_domain(size_t i) const {
    const TapeStep& st = t_.steps[i];
    std::optional<Shape> d;
    if (dynamic_cast<const Reduce*>(st.primitive.get())) d = t_.value_shapes[size_t(st.inputs[0])];
    if (dynamic_cast<const Elementwise*>(st.primitive.get())) d = st.shapes[0];
    if (d && t_.shapeless && std::find(d->begin(), d->end(), 1) != d->end()) d.reset();
    return d;
  }

  void place(size_t i) {
    const TapeStep& st = t_.steps[i];
    if (st.outputs.size() != 1) return;
    // The group of its first user in one; its other users must come after that group's root
    // (where the group is computed): the value is then stored for them.
    const std::vector<size_t>& users = users_[size_t(st.outputs[0])];
    int g = -1;
    for (size_t u : users)
      if (group_of_[u] >= 0) {
        g = group_of_[u];
        break;
      }
    bool ok = g >= 0;
    for (size_t u : users) ok = ok && (group_of_[u] == g || u > groups_[size_t(g)].members.front());
    if (ok) {
      Group& grp = groups_[size_t(g)];
      if (grp.members.size() < kMaxInstructions && fits(i, grp.domain) && inputs_after_join(grp, i) <= kMaxInputs) {
        join(g, i);
        return;
      }
    }
    if (auto domain = root_domain(i); domain && fits(i, *domain)) {
      groups_.push_back({*domain, {}, false});
      join(int(groups_.size()) - 1, i);
    }
  }

  void join(int g, size_t i) {
    Group& grp = groups_[size_t(g)];
    grp.members.push_back(i);
    grp.reduces |= dynamic_cast<const Reduce*>(t_.steps[i].primitive.get()) != nullptr;
    group_of_[i] = g;
  }

  // The values a group reads from outside, in the order of first use (steps inputs first).
  std::vector<int> external_inputs(const std::vector<size_t>& members) const {
    std::unordered_map<int, bool> inside;
    for (size_t m : members) inside[t_.steps[m].outputs[0]] = true;
    std::vector<size_t> order(members);
    std::sort(order.begin(), order.end());
    std::vector<int> ext;
    for (size_t m : order)
      for (int v : t_.steps[m].inputs)
        if (!inside.count(v) && std::find(ext.begin(), ext.end(), v) == ext.end()) ext.push_back(v);
    return ext;
  }

  size_t inputs_after_join(const Group& grp, size_t i) const {
    std::vector<size_t> members(grp.members);
    members.push_back(i);
    return external_inputs(members).size();
  }

  TapeStep emit(const Group& grp) const {
    std::vector<size_t> order(grp.members);
    std::sort(order.begin(), order.end());
    auto program = std::make_shared<Program>();
    program->reduces = grp.reduces;
    std::vector<int> ext = external_inputs(order);
    std::unordered_map<int, int> slot;
    for (int v : ext) {
      slot[v] = int(program->input_forms.size());
      program->input_forms.push_back(Form(form(v, grp.domain)));
      program->input_ranks.push_back(int(t_.value_shapes[size_t(v)].size()));
    }
    TapeStep out{nullptr, ext, {}, {}, {}, {}, t_.steps[order.back()].stream};
    for (int v : ext) out.in_shapes.push_back(t_.value_shapes[size_t(v)]);
    for (size_t m : order) {
      const TapeStep& st = t_.steps[m];
      int v = st.outputs[0];
      Instruction ins{st.primitive, {}, Form(form(v, grp.domain)), int(st.shapes[0].size()), st.dtypes[0]};
      for (int a : st.inputs) ins.args.push_back(slot.at(a));
      slot[v] = int(ext.size() + program->code.size());
      program->code.push_back(std::move(ins));
      // Stored: read after the group (the root, or a step another step outside reads) or asked
      // for by the caller (a tape output).
      bool stored = m == order.back() || std::find(t_.outputs.begin(), t_.outputs.end(), v) != t_.outputs.end();
      for (size_t u : users_[size_t(v)]) stored = stored || group_of_[u] != group_of_[m];
      if (stored) {
        program->outputs.push_back(slot[v]);
        out.outputs.push_back(v), out.shapes.push_back(st.shapes[0]), out.dtypes.push_back(st.dtypes[0]);
      }
    }
    out.primitive = std::make_shared<Compiled>(std::move(program), grp.domain);
    return out;
  }
};

}  // namespace

std::vector<TapeStep> fuse_steps(const Tape& tape) { return Grouper(tape).run(); }

}  // namespace nuvec
