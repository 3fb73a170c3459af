// Matrix products: matmul records one node; the others are views and element-wise ops around it.
#include <algorithm>
#include <cctype>
#include <map>
#include <numeric>
#include <string>

#include "core/ops/matmul.h"

#include "core/ops.h"
#include "core/ops/reduce.h"
#include "core/primitives/matmul.h"

namespace nuvec {
namespace {

// The dtype a product of `a` and `b` computes and returns; integers and bool are refused as MLX does.
Dtype product_dtype(Dtype a, Dtype b, const char* op) {
  Dtype d = promote(a, b);
  if (!is_inexact(d))
    throw OpError(op, std::string("only floating point and complex arrays are supported, not ") + name_of(a) + " and " +
                          name_of(b));
  return d;
}

Array as_dtype(const Array& x, Dtype d, Stream s) { return x.dtype() == d ? x : astype(x, d, s); }

Shape slice_shape(const Shape& s, size_t begin, size_t end) { return Shape(s.begin() + begin, s.begin() + end); }

}  // namespace

Array matmul(const Array& a, const Array& b, Stream s) {
  if (a.ndim() == 0 || b.ndim() == 0)
    throw OpError("matmul", "0-d arrays are not supported (got shapes " + shape_str(a.shape()) + " and " +
                                shape_str(b.shape()) + "); use multiply for scalars");
  Dtype d = product_dtype(a.dtype(), b.dtype(), "matmul");
  Shape sa = a.shape(), sb = b.shape();
  bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  if (sb[sb.size() - 2] != k)
    throw OpError("matmul", "inner dimensions differ: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                                " (" + std::to_string(k) + " != " + std::to_string(sb[sb.size() - 2]) + ")");
  Shape batch = broadcast_shapes(slice_shape(sa, 0, sa.size() - 2), slice_shape(sb, 0, sb.size() - 2), "matmul");
  Shape full_a = batch, full_b = batch, out = batch;
  full_a.insert(full_a.end(), {m, k});
  full_b.insert(full_b.end(), {k, n});
  out.insert(out.end(), {m, n});
  check_shape(out, "matmul");
  Array x = broadcast_to(reshape(as_dtype(a, d, s), sa, s), full_a, s);
  Array y = broadcast_to(reshape(as_dtype(b, d, s), sb, s), full_b, s);
  Array r = Array::lazy(out, d, std::make_shared<Matmul>(), {x, y}, s);
  if (!a_vec && !b_vec) return r;
  Shape final_shape = batch;
  if (!a_vec) final_shape.push_back(m);
  if (!b_vec) final_shape.push_back(n);
  return reshape(r, final_shape, s);
}

Array addmm(const Array& c, const Array& a, const Array& b, double alpha, double beta, Stream s) {
  if (a.ndim() < 2 || b.ndim() < 2)
    throw OpError("addmm", "a and b must have at least 2 dimensions (got shapes " + shape_str(a.shape()) + " and " +
                               shape_str(b.shape()) + ")");
  Dtype d = product_dtype(promote(a.dtype(), b.dtype()), c.dtype(), "addmm");
  Array ab = matmul(as_dtype(a, d, s), as_dtype(b, d, s), s);
  if (broadcast_shapes(c.shape(), ab.shape(), "addmm") != ab.shape())
    throw OpError("addmm", "c of shape " + shape_str(c.shape()) + " does not broadcast to the product's shape " +
                               shape_str(ab.shape()));
  Array cc = as_dtype(c, d, s);
  if (alpha != 1.0) ab = binary(BinaryOp::multiply, ab, weak_scalar(alpha, d, "addmm"), s);
  if (beta == 0.0) return ab;  // as BLAS: beta = 0 ignores c, NaNs included
  if (beta != 1.0) cc = binary(BinaryOp::multiply, cc, weak_scalar(beta, d, "addmm"), s);
  return binary(BinaryOp::add, ab, cc, s);
}

Array inner(const Array& a, const Array& b, Stream s) {
  if (a.ndim() == 0 || b.ndim() == 0) return binary(BinaryOp::multiply, a, b, s);
  if (a.shape(-1) != b.shape(-1))
    throw OpError("inner",
                  "the last dimensions differ: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
  product_dtype(a.dtype(), b.dtype(), "inner");
  return tensordot(a, b, {-1}, {-1}, s);
}

Array outer(const Array& a, const Array& b, Stream s) {
  return binary(BinaryOp::multiply, reshape(a, {-1, 1}, s), reshape(b, {1, -1}, s), s);
}

Array tensordot(const Array& a, const Array& b, std::vector<int> axes_a, std::vector<int> axes_b, Stream s) {
  if (axes_a.size() != axes_b.size()) throw OpError("tensordot", "axes_a and axes_b must have the same length");
  Dtype d = product_dtype(a.dtype(), b.dtype(), "tensordot");
  std::vector<bool> used_a(a.ndim(), false), used_b(b.ndim(), false);
  int64_t csize = 1;
  for (size_t i = 0; i < axes_a.size(); ++i) {
    int x = normalize_axis(axes_a[i], a.ndim(), "tensordot"), y = normalize_axis(axes_b[i], b.ndim(), "tensordot");
    if (used_a[x] || used_b[y]) throw OpError("tensordot", "repeated axis");
    if (a.shape(x) != b.shape(y))
      throw OpError("tensordot",
                    "contracted axes differ in size: shapes " + shape_str(a.shape()) + " and " + shape_str(b.shape()));
    used_a[x] = used_b[y] = true;
    axes_a[i] = x, axes_b[i] = y;
    csize *= a.shape(x);
  }
  std::vector<int> perm_a, perm_b;
  Shape free_a, free_b;
  for (int i = 0; i < a.ndim(); ++i)
    if (!used_a[i]) perm_a.push_back(i), free_a.push_back(a.shape(i));
  perm_a.insert(perm_a.end(), axes_a.begin(), axes_a.end());
  perm_b = axes_b;
  for (int i = 0; i < b.ndim(); ++i)
    if (!used_b[i]) perm_b.push_back(i), free_b.push_back(b.shape(i));
  Array x = reshape(transpose(as_dtype(a, d, s), perm_a, s), {shape_size(free_a), csize}, s);
  Array y = reshape(transpose(as_dtype(b, d, s), perm_b, s), {csize, shape_size(free_b)}, s);
  Shape out = free_a;
  out.insert(out.end(), free_b.begin(), free_b.end());
  return reshape(matmul(x, y, s), out, s);
}

Array tensordot(const Array& a, const Array& b, int axes, Stream s) {
  if (axes < 0 || axes > a.ndim() || axes > b.ndim())
    throw OpError("tensordot", "axes must be between 0 and the operands' dimensions, not " + std::to_string(axes));
  std::vector<int> xa(axes), xb(axes);
  std::iota(xa.begin(), xa.end(), a.ndim() - axes);
  std::iota(xb.begin(), xb.end(), 0);
  return tensordot(a, b, xa, xb, s);
}

namespace {

struct Term {
  Array x;
  std::string labels;  // one letter per axis
};

// Sums away the labels of `t` that `keep` lacks.
Term reduce_term(Term t, const std::string& keep, Stream s) {
  std::vector<int> axes;
  std::string kept;
  for (size_t i = 0; i < t.labels.size(); ++i)
    if (keep.find(t.labels[i]) == std::string::npos)
      axes.push_back(int(i));
    else
      kept += t.labels[i];
  return {axes.empty() ? t.x : sum(t.x, axes, false, s), kept};
}

// One matmul: batch labels (in both, needed later), then a's free, then b's free labels.
Term contract(const Term& a, const Term& b, const std::string& needed, Stream s) {
  std::string batch, left, right, summed;
  for (char c : a.labels) {
    bool in_b = b.labels.find(c) != std::string::npos, later = needed.find(c) != std::string::npos;
    (in_b ? (later ? batch : summed) : left) += c;
  }
  for (char c : b.labels)
    if (a.labels.find(c) == std::string::npos) right += c;
  auto axes_of = [](const Term& t, const std::string& ls) {
    std::vector<int> p;
    for (char c : ls) p.push_back(int(t.labels.find(c)));
    return p;
  };
  auto sizes = [](const Term& t, const std::string& ls) {
    Shape sh;
    for (char c : ls) sh.push_back(t.x.shape(int(t.labels.find(c))));
    return sh;
  };
  Shape bs = sizes(a, batch), ls = sizes(a, left), rs = sizes(b, right), cs = sizes(a, summed);
  Array x = transpose(a.x, axes_of(a, batch + left + summed), s);
  Array y = transpose(b.x, axes_of(b, batch + summed + right), s);
  int64_t nb = shape_size(bs), nl = shape_size(ls), nr = shape_size(rs), nc = shape_size(cs);
  Array r = matmul(reshape(x, {nb, nl, nc}, s), reshape(y, {nb, nc, nr}, s), s);
  Shape out = bs;
  out.insert(out.end(), ls.begin(), ls.end());
  out.insert(out.end(), rs.begin(), rs.end());
  return {reshape(r, out, s), batch + left + right};
}

// Replaces each term's "..." with internal labels (below ' '), right-aligned across the terms as
// broadcasting aligns axes, and broadcasts operands whose ellipsis axes have size 1. Returns how
// many ellipsis axes there are.
int expand_ellipses(std::vector<std::string>& terms, std::vector<Array>& xs, Stream s) {
  std::vector<int> count(terms.size(), -1);
  int most = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    size_t at = terms[i].find("...");
    size_t dots = std::count(terms[i].begin(), terms[i].end(), '.');
    if (dots == 0) continue;
    if (dots != 3 || at == std::string::npos) throw OpError("einsum", "'.' is only allowed as one ellipsis ('...')");
    count[i] = xs[i].ndim() - int(terms[i].size() - 3);
    if (count[i] < 0) throw OpError("einsum", "term '" + terms[i] + "' has more labels than its operand has axes");
    most = std::max(most, count[i]);
  }
  if (most > 31) throw OpError("einsum", "too many axes under an ellipsis");
  std::vector<int64_t> size(most, 1);
  for (size_t i = 0; i < terms.size(); ++i)
    for (int j = 0; j < count[i]; ++j) {
      int64_t n = xs[i].shape(int(terms[i].find("...")) + j);
      int64_t& target = size[most - count[i] + j];
      if (n != 1 && target != 1 && n != target)
        throw OpError("einsum", "the axes under the ellipses cannot be broadcast together");
      if (n != 1) target = n;
    }
  for (size_t i = 0; i < terms.size(); ++i) {
    if (count[i] < 0) continue;
    size_t at = terms[i].find("...");
    std::string labels;
    Shape shape = xs[i].shape();
    for (int j = 0; j < count[i]; ++j) {
      labels += char(1 + most - count[i] + j);
      shape[at + j] = size[most - count[i] + j];
    }
    terms[i].replace(at, 3, labels);
    xs[i] = broadcast_to(xs[i], shape, s);
  }
  return most;
}

}  // namespace

Array einsum(const std::string& subscripts, const std::vector<Array>& operands_in, Stream s) {
  std::string spec;
  for (char c : subscripts)
    if (c != ' ') spec += c;
  size_t arrow = spec.find("->");
  std::string lhs = spec.substr(0, arrow);
  std::vector<std::string> terms{""};
  for (char c : lhs) {
    if (c == ',')
      terms.emplace_back();
    else
      terms.back() += c;
  }
  if (terms.size() != operands_in.size())
    throw OpError("einsum", std::to_string(terms.size()) + " subscript terms for " +
                                std::to_string(operands_in.size()) + " operands");
  std::vector<Array> operands = operands_in;
  int ellipsis = expand_ellipses(terms, operands, s);
  std::map<char, int64_t> size;
  std::map<char, int> count;
  Dtype d = operands.front().dtype();
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string& t = terms[i];
    const Array& x = operands[i];
    d = product_dtype(d, x.dtype(), "einsum");
    if (int(t.size()) != x.ndim())
      throw OpError("einsum", "term '" + terms[i] + "' does not match an operand with " + std::to_string(x.ndim()) +
                                  " dimensions");
    for (size_t j = 0; j < t.size(); ++j) {
      char c = t[j];
      if (c >= ' ' && !std::isalpha(static_cast<unsigned char>(c)))
        throw OpError("einsum", std::string("invalid label '") + c + "'");
      if (t.find(c) != j)
        throw OpError("einsum", std::string("repeated label '") + c + "' in one operand (diagonals) is not supported");
      auto [it, fresh] = size.emplace(c, x.shape(int(j)));
      if (!fresh && it->second != x.shape(int(j)))
        throw OpError("einsum", std::string("label '") + c + "' has sizes " + std::to_string(it->second) + " and " +
                                    std::to_string(x.shape(int(j))));
      ++count[c];
    }
  }
  std::string dots;  // the ellipsis axes, in order
  for (int j = 0; j < ellipsis; ++j) dots += char(1 + j);
  std::string output;
  if (arrow == std::string::npos) {
    output = dots;  // implicit mode: the ellipsis axes, then labels seen once, in alphabetical order
    for (auto [c, n] : count)
      if (n == 1 && c >= ' ') output += c;
  } else {
    output = spec.substr(arrow + 2);
    size_t at = output.find("...");
    if (at != std::string::npos) output.replace(at, 3, dots);
    for (size_t j = 0; j < output.size(); ++j) {
      if (!size.count(output[j]))
        throw OpError("einsum", std::string("output label '") + output[j] + "' is not in any operand");
      if (output.find(output[j]) != j)
        throw OpError("einsum", std::string("repeated output label '") + output[j] + "'");
    }
  }
  std::vector<Term> rest;
  for (size_t i = 0; i < operands.size(); ++i) rest.push_back({as_dtype(operands[i], d, s), terms[i]});
  // Labels that later terms or the output still need.
  auto needed_after = [&](size_t first) {
    std::string n = output;
    for (size_t i = first; i < rest.size(); ++i) n += rest[i].labels;
    return n;
  };
  rest[0] = reduce_term(rest[0], needed_after(1), s);
  while (rest.size() > 1) {
    Term b = reduce_term(rest[1], needed_after(2) + rest[0].labels, s);
    Term a = contract(rest[0], b, needed_after(2), s);
    rest.erase(rest.begin(), rest.begin() + 2);
    rest.insert(rest.begin(), a);
  }
  Term t = reduce_term(rest[0], output, s);
  std::vector<int> perm;
  for (char c : output) perm.push_back(int(t.labels.find(c)));
  return transpose(t.x, perm, s);
}

Array vecdot(const Array& a, const Array& b, int axis, Stream s) {
  if (a.ndim() == 0 || b.ndim() == 0) throw OpError("vecdot", "the inputs must be at least 1-D");
  int ax = normalize_axis(axis, a.ndim(), "vecdot");
  if ((axis < 0 ? axis + b.ndim() : axis) != ax)
    throw OpError("vecdot", "axis " + std::to_string(axis) + " is not the same axis of a and b");
  if (a.shape(ax) != b.shape(ax)) throw OpError("vecdot", "a and b must have the same size along axis");
  Array x = is_complex(a.dtype()) ? unary(UnaryOp::conjugate, a, s) : a;
  return sum(binary(BinaryOp::multiply, x, b, s), std::vector<int>{ax}, false, s);
}

}  // namespace nuvec
