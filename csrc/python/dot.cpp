// export_to_dot's text: the lazy graph behind some arrays in Graphviz's DOT language, laid out as
// MLX's (sources, one rectangle per primitive, its input and output edges, unconsumed outputs as
// sinks). Arrays are named A, B, ... in the order they are reached, unless a name is given.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/primitive.h"

namespace nb = nanobind;

namespace nuvec::python {
namespace {

bool is_source(const Array& x) { return x.evaluated() || !x.primitive(); }

// A primitive's name as MLX writes it: "log_sum_exp" -> "LogSumExp".
std::string label(const Primitive& p) {
  std::string out;
  bool up = true;
  for (const char* c = p.name(); *c; ++c) {
    if (*c == '_') {
      up = true;
      continue;
    }
    out += up ? char(std::toupper(static_cast<unsigned char>(*c))) : *c;
    up = false;
  }
  return out;
}

class DotWriter {
 public:
  // Given names take the first letters' places, as MLX's.
  explicit DotWriter(std::unordered_map<const Node*, std::string> given)
      : given_(std::move(given)), counter_(int64_t(given_.size())) {}

  std::string write(const std::vector<Array>& outputs) {
    for (const Array& o : outputs) order(o);
    std::string out = "digraph {\n";
    for (const Array& x : tape_) {
      if (is_source(x)) {
        out += "{ rank=source; \"" + name(x) + "\"; }\n";
        continue;
      }
      std::string id = std::to_string(reinterpret_cast<uintptr_t>(x.primitive().get()));
      out += "{ " + id + " [label =\"" + label(*x.primitive()) + "\", shape=rectangle]; }\n";
      for (const Array& in : x.inputs()) out += "\"" + name(in) + "\" -> " + id + "\n";
      for (const Array& o : outputs_of(x)) {
        out += std::string("{ ") + (consumed_.count(o.node()) ? "" : "rank=sink; ") + "\"" + name(o) + "\"; }\n";
        out += id + " -> \"" + name(o) + "\"\n";
      }
    }
    return out + "}";
  }

 private:
  // The arrays in dependency order, one per primitive application (iteratively: graphs are deep).
  void order(const Array& root) {
    std::vector<std::pair<Array, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [x, next] = stack.back();
      if (next == 0 && !seen_.insert(x.node()).second) {
        stack.pop_back();
        continue;
      }
      if (!is_source(x) && next < x.inputs().size()) {
        const Array& in = x.inputs()[next++];
        consumed_.insert(in.node());
        stack.push_back({in, 0});
        continue;
      }
      if (!is_source(x))
        for (const Array& o : outputs_of(x)) seen_.insert(o.node());
      tape_.push_back(x);
      stack.pop_back();
    }
  }

  // x and its live siblings, in output order.
  static std::vector<Array> outputs_of(const Array& x) {
    std::vector<Array> out;
    for (const auto& w : x.node()->siblings)
      if (auto n = w.lock()) out.push_back(Array(std::move(n)));
    if (out.empty()) out.push_back(x);
    return out;
  }

  const std::string& name(const Array& x) {
    auto [it, made] = names_.try_emplace(x.node());
    if (made) {
      auto g = given_.find(x.node());
      if (g != given_.end()) {
        it->second = g->second;
      } else {
        for (int64_t n = counter_++; n >= 0; n = n / 26 - 1) it->second.insert(it->second.begin(), char('A' + n % 26));
      }
    }
    return it->second;
  }

  std::unordered_map<const Node*, std::string> given_, names_;
  std::set<const Node*> seen_, consumed_;
  std::vector<Array> tape_;
  int64_t counter_;
};

}  // namespace

void init_dot(nb::module_& m) {
  m.def(
      "_graph_to_dot",
      [](nb::list outputs, nb::dict names) {
        std::vector<Array> outs;
        for (nb::handle o : outputs) {
          if (!nb::isinstance<Array>(o)) throw nb::type_error("export_to_dot: the outputs must be arrays");
          outs.push_back(*nb::inst_ptr<Array>(o));
        }
        std::unordered_map<const Node*, std::string> given;
        for (auto [k, v] : names) {
          if (!nb::isinstance<Array>(v)) throw nb::type_error("export_to_dot: named values must be arrays");
          given[nb::inst_ptr<Array>(v)->node()] = nb::cast<std::string>(nb::str(k));
        }
        return DotWriter(std::move(given)).write(outs);
      },
      nb::arg("outputs"), nb::arg("names"), "The DOT text of the graph behind `outputs` (see export_to_dot).");
}

}  // namespace nuvec::python
