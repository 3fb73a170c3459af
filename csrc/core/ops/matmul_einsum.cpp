// einsum and einsum_path as MLX's: the same parsing, errors, size-1 broadcasting, contraction
// order (a greedy path for three operands or more) and cost report; each step is a matmul when
// it contracts a label (so integers raise there, as in MLX) and a broadcast product otherwise.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <string>

#include "core/ops.h"
#include "core/ops/matmul.h"

namespace nuvec {
namespace {

using Labels = std::set<char>;
using Sizes = std::map<char, int64_t>;

struct Spec {
  std::vector<std::string> inputs;  // ellipses replaced by unused letters
  std::string output;
  Sizes size;  // each label's size, size-1 axes broadcast
};

// One step of the path: the operands at `positions` (of the list that each step shrinks and
// appends its result to) become one term with labels `output`.
struct Step {
  std::vector<int> positions;
  std::vector<std::string> inputs;
  std::string output;
};

struct Path {
  std::vector<Step> steps;
  size_t naive_cost = 0, optimized_cost = 0;
  int naive_scaling = 0, optimized_scaling = 0;
};

template <class Chars> size_t term_size(const Chars& cs, const Sizes& size) {
  size_t n = 1;
  for (char c : cs) {  // an output label no input has counts 0, as MLX's
    auto it = size.find(c);
    n *= it == size.end() ? 0 : size_t(it->second);
  }
  return n;
}

Labels labels_of(const std::string& s) { return Labels(s.begin(), s.end()); }

size_t flop_count(const Labels& term, bool inner, size_t terms, const Sizes& size) {
  return term_size(term, size) * (std::max<size_t>(terms, 2) - 1 + (inner ? 1 : 0));
}

// The cost and scaling of contracting all `inputs` at once.
std::pair<size_t, int> naive_cost(const std::vector<Labels>& inputs, const Labels& output, const Sizes& size) {
  Labels all;
  for (const Labels& l : inputs) all.insert(l.begin(), l.end());
  bool inner = std::any_of(all.begin(), all.end(), [&](char c) { return !output.count(c); });
  return {flop_count(all, inner, inputs.size(), size), int(all.size())};
}

Spec parse(const std::string& subscripts, const std::vector<Array>& xs, const char* op) {
  if (xs.empty()) throw OpError(op, "at least one operand is required");
  std::string spec;
  for (char c : subscripts)
    if (c != ' ') spec += c;
  size_t arrow = spec.find("->");
  std::string lhs = spec.substr(0, arrow), rhs;
  if (arrow != std::string::npos) {
    rhs = spec.substr(arrow + 2);
  } else {  // implicit: the ellipsis, then the labels seen once, sorted
    std::map<char, int> seen;
    for (char c : lhs)
      if (c != ',' && c != '.') ++seen[c];
    if (lhs.find('.') != std::string::npos) rhs = "...";
    for (auto [c, n] : seen)
      if (n == 1) rhs += c;
  }
  Spec p;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    p.inputs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (p.inputs.size() != xs.size())
    throw OpError(op, "the number of operands, " + std::to_string(xs.size()) +
                          ", does not match the number of input subscripts, " + std::to_string(p.inputs.size()));
  // Ellipses take the last unused letters, so shorter ones align to the right as broadcasting does.
  std::string unused;
  for (char c : std::string("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if (spec.find(c) == std::string::npos) unused += c;
  int longest = 0;
  auto expand = [&](std::string& t, const Array* x, size_t i) {
    size_t at = std::string::npos;
    for (size_t j = 0; j < t.size(); ++j) {
      if (std::isalpha(static_cast<unsigned char>(t[j]))) continue;
      if (t.compare(j, 3, "...") != 0) throw OpError(op, std::string("subscripts must be letters, not '") + t[j] + "'");
      if (at != std::string::npos) throw OpError(op, "only one ellipsis per subscript is allowed, in '" + t + "'");
      at = j;
      j += 2;
    }
    if (at == std::string::npos) return;
    int n = longest;
    if (x) {
      n = x->ndim() - int(t.size() - 3);
      if (n < 0)
        throw OpError(op, "operand " + std::to_string(i) + " with shape " + shape_str(x->shape()) +
                              " has too few dimensions for subscript '" + t + "'");
      if (size_t(n) > unused.size()) throw OpError(op, "too many dimensions under the ellipsis");
      longest = std::max(longest, n);
    }
    t.replace(at, 3, unused.substr(unused.size() - n));
  };
  for (size_t i = 0; i < xs.size(); ++i) expand(p.inputs[i], &xs[i], i);
  expand(rhs, nullptr, 0);
  p.output = rhs;
  if (labels_of(rhs).size() != rhs.size()) throw OpError(op, "repeated subscripts are not allowed in the output");
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::string& t = p.inputs[i];
    if (int(t.size()) != xs[i].ndim())
      throw OpError(op, "invalid number of subscripts " + std::to_string(t.size()) + " for input " + std::to_string(i) +
                            " with " + std::to_string(xs[i].ndim()) + " dimensions");
    Sizes own;
    for (size_t j = 0; j < t.size(); ++j) {
      int64_t n = xs[i].shape(int(j));
      auto [mine, fresh] = own.emplace(t[j], n);
      if (!fresh && mine->second != n)
        throw OpError(op, "dimensions of repeated subscripts do not have the same size (" +
                              std::to_string(mine->second) + " != " + std::to_string(n) + ")");
      auto [it, first] = p.size.emplace(t[j], n);
      if (!first && n != 1 && it->second != 1 && it->second != n)
        throw OpError(op, "cannot broadcast dimension " + std::to_string(j) + " of input " + std::to_string(i) +
                              " with shape " + shape_str(xs[i].shape()) + " to size " + std::to_string(it->second));
      it->second = std::max(it->second, n);
    }
  }
  return p;
}

// MLX's greedy order (after NumPy's and opt_einsum's): at each step, the pair whose contraction
// removes the most elements (then costs least), outer products only when nothing else is left.
void greedy(Path& path, std::vector<Labels> in, std::vector<std::string> strs, const Labels& out, const Sizes& size,
            size_t cost_limit, size_t memory_limit) {
  struct Candidate {
    int64_t removed;
    size_t cost;
    Labels result;
    int dims, x, y;
  };
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < int(in.size()); ++i)
    for (int j = i + 1; j < int(in.size()); ++j) pairs.emplace_back(i, j);
  std::vector<Candidate> cands;
  size_t cost_sum = 0;
  size_t rounds = in.size() - 1;
  for (size_t round = 0; round < rounds; ++round) {
    auto consider = [&](int x, int y) {
      Labels both = in[x], result;
      both.insert(in[y].begin(), in[y].end());
      for (char c : both) {
        bool later = out.count(c) > 0;
        for (int k = 0; k < int(in.size()) && !later; ++k) later = k != x && k != y && in[k].count(c);
        if (later) result.insert(c);
      }
      size_t result_size = term_size(result, size);
      if (result_size > memory_limit) return;
      int64_t removed = int64_t(term_size(in[x], size) + term_size(in[y], size)) - int64_t(result_size);
      size_t cost = flop_count(both, both.size() > result.size(), 2, size);
      if (cost_sum + cost > cost_limit) return;
      cands.push_back({removed, cost, result, int(both.size()), x, y});
    };
    auto overlaps = [&](int x, int y) {
      return std::any_of(in[x].begin(), in[x].end(), [&](char c) { return in[y].count(c) > 0; });
    };
    for (auto [x, y] : pairs)
      if (overlaps(x, y)) consider(x, y);
    if (cands.empty())
      for (auto [x, y] : pairs) consider(x, y);
    if (cands.empty()) {  // the rest at once
      std::vector<int> all(in.size());
      std::iota(all.begin(), all.end(), 0);
      auto [cost, scaling] = naive_cost(in, out, size);
      path.steps.push_back({all, strs, ""});
      cost_sum += cost;
      path.optimized_scaling = std::max(path.optimized_scaling, scaling);
      break;
    }
    Candidate best = cands.front();
    for (const Candidate& c : cands)
      if (c.removed > best.removed || (c.removed == best.removed && c.cost < best.cost)) best = c;
    path.optimized_scaling = std::max(path.optimized_scaling, best.dims);
    std::string result(best.result.begin(), best.result.end());
    path.steps.push_back({{best.x, best.y}, {strs[best.x], strs[best.y]}, result});
    for (int k : {best.y, best.x}) in.erase(in.begin() + k), strs.erase(strs.begin() + k);
    in.push_back(best.result);
    strs.push_back(result);
    // Candidates of untouched pairs stay (with their old costs, as MLX's); the others go.
    std::vector<Candidate> kept;
    for (Candidate& c : cands) {
      if (c.x == best.x || c.x == best.y || c.y == best.x || c.y == best.y) continue;
      c.x -= (c.x > best.x) + (c.x > best.y);
      c.y -= (c.y > best.x) + (c.y > best.y);
      kept.push_back(std::move(c));
    }
    cands = std::move(kept);
    pairs.clear();
    for (int i = 0; i + 1 < int(in.size()); ++i) pairs.emplace_back(i, int(in.size()) - 1);
    cost_sum += best.cost;
  }
  path.optimized_cost = cost_sum;
}

Path plan(const Spec& p) {
  Path path;
  std::vector<Labels> in;
  for (const std::string& t : p.inputs) in.push_back(labels_of(t));
  Labels out = labels_of(p.output);
  std::tie(path.naive_cost, path.naive_scaling) = naive_cost(in, out, p.size);
  if (in.size() <= 2) {
    std::vector<int> all(in.size());
    std::iota(all.begin(), all.end(), 0);
    path.steps.push_back({all, p.inputs, p.output});
    path.optimized_cost = path.naive_cost;
    path.optimized_scaling = path.naive_scaling;
    return path;
  }
  size_t memory_limit = term_size(p.output, p.size);
  for (const std::string& t : p.inputs) memory_limit = std::max(memory_limit, term_size(t, p.size));
  greedy(path, in, p.inputs, out, p.size, path.naive_cost, memory_limit);
  path.steps.back().output = p.output;
  return path;
}

struct Term {
  Array x;
  std::string labels;  // one letter per axis
};

// A label repeated within one term becomes its diagonal ("ii" -> "i").
Term collapse_repeats(Term t, Stream s) {
  for (size_t i = 0; i < t.labels.size(); ++i) {
    size_t j = t.labels.find(t.labels[i], i + 1);
    if (j == std::string::npos) continue;
    char c = t.labels[i];
    t.x = diagonal(t.x, 0, int(i), int(j), s);  // the diagonal becomes the last axis
    t.labels.erase(j, 1);
    t.labels.erase(i, 1);
    t.labels += c;
    i = size_t(-1);  // start over: positions moved
  }
  return t;
}

// Sums away the labels of `t` that `keep` lacks.
Term sum_except(Term t, const std::string& keep, Stream s) {
  std::vector<int> axes;
  std::string kept;
  for (size_t i = 0; i < t.labels.size(); ++i) {
    if (keep.find(t.labels[i]) == std::string::npos)
      axes.push_back(int(i));
    else
      kept += t.labels[i];
  }
  return {axes.empty() ? t.x : sum(t.x, axes, false, s), kept};
}

// t's axes in the order of `order` (a superset of its labels), size 1 for labels it lacks.
Array aligned(const Term& t, const std::string& order, Stream s) {
  std::vector<int> perm;
  Shape shape;
  for (char c : order) {
    size_t at = t.labels.find(c);
    if (at != std::string::npos) perm.push_back(int(at));
    shape.push_back(at == std::string::npos ? 1 : t.x.shape(int(at)));
  }
  return reshape(transpose(t.x, perm, s), shape, s);
}

// One matmul: labels in both and in `out` batch, labels in both and not in `out` are contracted.
Term contract(const Term& a, const Term& b, const std::string& out, const Sizes& size, Stream s) {
  std::string batch, left, right, summed;
  for (char c : a.labels)
    (b.labels.find(c) == std::string::npos ? left : out.find(c) == std::string::npos ? summed : batch) += c;
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos) right += c;
  auto sizes = [&](const std::string& ls) {
    Shape sh;
    for (char c : ls) sh.push_back(size.at(c));
    return sh;
  };
  Shape bs = sizes(batch), ls = sizes(left), rs = sizes(right), cs = sizes(summed);
  auto operand = [&](const Term& t, const std::string& order, const Shape& full, Shape flat) {
    return reshape(broadcast_to(aligned(t, order, s), full, s), flat, s);
  };
  Shape full_a = bs, full_b = bs;
  full_a.insert(full_a.end(), ls.begin(), ls.end());
  full_a.insert(full_a.end(), cs.begin(), cs.end());
  full_b.insert(full_b.end(), cs.begin(), cs.end());
  full_b.insert(full_b.end(), rs.begin(), rs.end());
  int64_t nb = shape_size(bs), nl = shape_size(ls), nr = shape_size(rs), nc = shape_size(cs);
  Array r = matmul(operand(a, batch + left + summed, full_a, {nb, nl, nc}),
                   operand(b, batch + summed + right, full_b, {nb, nc, nr}), s);
  Shape shape = bs;
  shape.insert(shape.end(), ls.begin(), ls.end());
  shape.insert(shape.end(), rs.begin(), rs.end());
  return {reshape(r, shape, s), batch + left + right};
}

// The product of the terms, broadcast over the union of their labels, summed down to `out`.
Term multiply_all(const std::vector<Term>& ts, const std::string& out, Stream s) {
  std::string all;
  for (const Term& t : ts)
    for (char c : t.labels)
      if (all.find(c) == std::string::npos) all += c;
  Array r = aligned(ts[0], all, s);
  for (size_t i = 1; i < ts.size(); ++i) r = binary(BinaryOp::multiply, r, aligned(ts[i], all, s), s);
  return sum_except({r, all}, out, s);
}

Term run_step(std::vector<Term> ts, const std::string& out, const Sizes& size, Stream s) {
  std::map<char, int> count;
  for (Term& t : ts) {
    t = collapse_repeats(std::move(t), s);
    for (char c : labels_of(t.labels)) ++count[c];
  }
  for (char c : labels_of(out)) ++count[c];
  for (Term& t : ts) {  // a label no other term nor the output has is summed first
    std::string keep;
    for (char c : t.labels)
      if (count[c] > 1) keep += c;
    t = sum_except(std::move(t), keep, s);
  }
  bool contracts = ts.size() == 2 && std::any_of(ts[0].labels.begin(), ts[0].labels.end(),
                                                 [&](char c) { return out.find(c) == std::string::npos; });
  Term r = contracts ? contract(ts[0], ts[1], out, size, s) : multiply_all(ts, out, s);
  std::vector<int> perm;
  Shape shape;
  for (char c : out) perm.push_back(int(r.labels.find(c))), shape.push_back(size.at(c));
  return {broadcast_to(transpose(r.x, perm, s), shape, s), out};
}

}  // namespace

Array einsum(const std::string& subscripts, const std::vector<Array>& operands, Stream s) {
  Spec p = parse(subscripts, operands, "einsum");
  for (char c : p.output)  // einsum_path reports such a spec; einsum cannot run it
    if (!p.size.count(c)) throw OpError("einsum", std::string("output subscript '") + c + "' is in no input");
  Path path = plan(p);
  std::vector<Term> terms;
  for (size_t i = 0; i < operands.size(); ++i) terms.push_back({operands[i], p.inputs[i]});
  for (const Step& step : path.steps) {
    std::vector<Term> ts;
    for (int k : step.positions) ts.push_back(terms[k]);
    for (auto k = step.positions.rbegin(); k != step.positions.rend(); ++k) terms.erase(terms.begin() + *k);
    terms.push_back(run_step(std::move(ts), step.output, p.size, s));
  }
  return terms.front().x;
}

EinsumPath einsum_path(const std::string& subscripts, const std::vector<Array>& operands) {
  Path path = plan(parse(subscripts, operands, "einsum_path"));
  EinsumPath r;
  for (const Step& step : path.steps) r.path.push_back(step.positions);
  std::ostringstream info;
  info << "  Complete contraction:  " << subscripts << "\n"
       << "         Naive scaling:  " << path.naive_scaling << "\n"
       << "     Optimized scaling:  " << path.optimized_scaling << "\n"
       << "      Naive FLOP count:  " << path.naive_cost << "\n"
       << "  Optimized FLOP count:  " << path.optimized_cost << "\n";
  r.info = info.str();
  return r;
}

}  // namespace nuvec
