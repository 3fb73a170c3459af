// The fused group's shapes, its rules (each expands the program into ordinary nodes and applies
// its steps' own rules in order, so a fused node differentiates and vectorises exactly as the
// graph it replaced), and its program run op by op on a device.
#include "core/primitives/compiled.h"

#include <algorithm>

#include "core/backend.h"
#include "core/ops.h"
#include "core/ops/common.h"
#include "core/primitives/grad_util.h"
#include "core/primitives/reduce.h"

namespace nuvec {

int form_of(const Shape& shape, const Shape& domain) {
  size_t k = domain.size();
  if (shape == domain) return int(Form::full);
  if (k == 0) return -1;
  Shape lead(domain.begin(), domain.end() - 1);
  Shape col = lead;
  col.push_back(1);
  if (shape == col) return int(Form::col);
  if (shape.size() <= k && !shape.empty() && shape.back() == domain.back()) {
    bool ones = true;
    for (size_t i = 0; i + 1 < shape.size(); ++i) ones &= shape[i] == 1;
    if (ones) return int(Form::row);
  }
  if (k >= 2 && shape == lead) return int(Form::col_flat);
  if (shape.size() <= k && shape_size(shape) == 1) return int(Form::scalar);
  return -1;
}

Shape shape_of(Form f, int rank, const Shape& domain) {
  Shape s(domain.begin(), domain.end() - (domain.empty() ? 0 : 1));
  switch (f) {
    case Form::full: return domain;
    case Form::col: s.push_back(1); return s;
    case Form::col_flat: return s;
    case Form::row:
      s.assign(size_t(rank), 1);
      s.back() = domain.back();
      return s;
    case Form::scalar: return Shape(size_t(rank), 1);
  }
  return domain;
}

std::vector<Array> Compiled::expand(const std::vector<Array>& inputs) const {
  std::vector<Array> slots(inputs);
  Stream s = inputs.front().stream();
  for (const Instruction& ins : program_->code) {
    std::vector<Array> args;
    for (int a : ins.args) args.push_back(slots[size_t(a)]);
    slots.push_back(Array::lazy(shape_of(ins.form, ins.rank, domain_), ins.dtype, ins.primitive, std::move(args), s));
  }
  return slots;
}

std::vector<Array> Compiled::vjp(const std::vector<Array>& primals, const std::vector<Array>& cotangents,
                                 const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  std::vector<Array> slots = expand(primals);
  std::vector<Array> cots(slots.size());
  auto accumulate = [&](size_t slot, const Array& g) {
    cots[slot] = cots[slot].node() ? binary(BinaryOp::add, cots[slot], g, g.stream()) : g;
  };
  for (size_t k = 0; k < program_->outputs.size(); ++k) accumulate(size_t(program_->outputs[k]), cotangents[k]);
  size_t n = primals.size();
  for (size_t i = slots.size(); i-- > n;) {
    if (!cots[i].node()) continue;
    const Instruction& ins = program_->code[i - n];
    std::vector<Array> args;
    std::vector<int> nums;
    for (size_t j = 0; j < ins.args.size(); ++j) args.push_back(slots[size_t(ins.args[j])]), nums.push_back(int(j));
    std::vector<Array> g = ins.primitive->vjp(args, {cots[i]}, nums, {slots[i]});
    for (size_t j = 0; j < ins.args.size(); ++j) accumulate(size_t(ins.args[j]), g[j]);
  }
  std::vector<Array> out;
  for (int k : argnums) {
    const Array& p = primals[size_t(k)];
    out.push_back(cots[size_t(k)].node()
                      ? cots[size_t(k)]
                      : full(p.shape(), scalar_array(int64_t(0), p.dtype()), std::nullopt, p.stream()));
  }
  return out;
}

std::vector<Array> Compiled::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                 const std::vector<int>& argnums, const std::vector<Array>& outputs) {
  std::vector<Array> slots = expand(primals);
  std::vector<Array> tans(slots.size());
  for (size_t k = 0; k < argnums.size(); ++k) tans[size_t(argnums[k])] = tangents[k];
  size_t n = primals.size();
  for (size_t i = n; i < slots.size(); ++i) {
    const Instruction& ins = program_->code[i - n];
    std::vector<Array> args, ts;
    std::vector<int> nums;
    for (size_t j = 0; j < ins.args.size(); ++j) {
      args.push_back(slots[size_t(ins.args[j])]);
      if (const Array& t = tans[size_t(ins.args[j])]; t.node()) ts.push_back(t), nums.push_back(int(j));
    }
    if (nums.empty()) continue;
    tans[i] = ins.primitive->jvp(args, ts, nums, {slots[i]})[0];
  }
  std::vector<Array> out;
  for (size_t k = 0; k < program_->outputs.size(); ++k) {
    const Array& t = tans[size_t(program_->outputs[k])];
    const Array& o = outputs[k];
    out.push_back(t.node() ? t : full(o.shape(), scalar_array(int64_t(0), o.dtype()), std::nullopt, o.stream()));
  }
  return out;
}

std::pair<std::vector<Array>, std::vector<int>> Compiled::vmap(const std::vector<Array>& inputs,
                                                               const std::vector<int>& axes,
                                                               const std::vector<Array>& outputs) {
  // One example's slots give each step's unbatched outputs; the batched ones follow the rules.
  std::vector<Array> one;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (axes[i] < 0) {
      one.push_back(inputs[i]);
      continue;
    }
    Shape s = inputs[i].shape();
    s.erase(s.begin() + axes[i]);
    one.push_back(full(s, scalar_array(int64_t(0), inputs[i].dtype()), std::nullopt, inputs[i].stream()));
  }
  std::vector<Array> examples = expand(one);
  std::vector<Array> vals(inputs);
  std::vector<int> vaxes(axes);
  size_t n = inputs.size();
  for (size_t i = n; i < examples.size(); ++i) {
    const Instruction& ins = program_->code[i - n];
    std::vector<Array> args;
    std::vector<int> in_axes;
    for (int a : ins.args) args.push_back(vals[size_t(a)]), in_axes.push_back(vaxes[size_t(a)]);
    auto [outs, oaxes] = ins.primitive->vmap(args, in_axes, {examples[i]});
    vals.push_back(outs[0]);
    vaxes.push_back(oaxes[0]);
  }
  std::vector<Array> out;
  std::vector<int> out_axes;
  for (int o : program_->outputs) out.push_back(vals[size_t(o)]), out_axes.push_back(vaxes[size_t(o)]);
  return {out, out_axes};
}

void run_unfused(const Compiled& c, const std::vector<Array>& in, std::vector<Array>& out, DeviceType device) {
  const Program& prog = c.program();
  std::vector<Array> slots(in);
  for (size_t i = 0; i < prog.code.size(); ++i) {
    const Instruction& ins = prog.code[i];
    std::vector<Array> args;
    for (int a : ins.args) args.push_back(slots[size_t(a)]);
    auto it = std::find(prog.outputs.begin(), prog.outputs.end(), int(prog.input_forms.size() + i));
    std::vector<Array> res;
    if (it != prog.outputs.end()) {
      res.push_back(out[size_t(it - prog.outputs.begin())]);
    } else {
      Shape s = args[0].shape();
      if (dynamic_cast<const Reduce*>(ins.primitive.get())) {
        s.pop_back();
        if (int(s.size()) < ins.rank) s.push_back(1);
      } else {
        for (const Array& a : args) s = broadcast_shapes(s, a.shape(), ins.primitive->name());
      }
      auto node = std::make_shared<Node>(s, ins.dtype);
      node->size = shape_size(s);
      res.emplace_back(node);
    }
    find_kernel(*ins.primitive, device)(*ins.primitive, args, res);
    res[0].node()->evaluated.store(true);
    slots.push_back(res[0]);
  }
}

}  // namespace nuvec
