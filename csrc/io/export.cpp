// Tracing a function into a FunctionTrace, replaying one, and the function file (docs/export.md).
#include "io/export.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/eval.h"
#include "core/ops/common.h"
#include "io/export_codec_util.h"
#include "io/output_file.h"

namespace nuvec::io {

constexpr char kMagic[8] = {'N', 'U', 'V', 'E', 'C', 'F', 'N', '\0'};
constexpr uint32_t kVersion = 1;
constexpr size_t kAlign = 64;

Json json_int(int64_t v) {
  Json j;
  j.type = Json::integer;
  j.i = v;
  return j;
}
Json json_str(std::string s) {
  Json j;
  j.type = Json::string;
  j.s = std::move(s);
  return j;
}
Json json_list(std::vector<Json> items) {
  Json j;
  j.type = Json::array;
  j.items = std::move(items);
  return j;
}
Json json_obj(std::vector<std::pair<std::string, Json>> members) {
  Json j;
  j.type = Json::object;
  j.members = std::move(members);
  return j;
}

std::string json_text(const Json& j) {
  switch (j.type) {
    case Json::null: return "null";
    case Json::boolean: return j.b ? "true" : "false";
    case Json::integer: return std::to_string(j.i);
    case Json::number: return std::to_string(j.d);
    case Json::string: return json_quote(j.s);
    case Json::array: {
      std::string s = "[";
      for (size_t k = 0; k < j.items.size(); ++k) s += (k ? "," : "") + json_text(j.items[k]);
      return s + "]";
    }
    case Json::object: {
      std::string s = "{";
      for (size_t k = 0; k < j.members.size(); ++k)
        s += (k ? "," : "") + json_quote(j.members[k].first) + ":" + json_text(j.members[k].second);
      return s + "}";
    }
  }
  return "null";  // unreachable: the switch names every type
}

namespace {
using codec::bad;
using codec::integer;
const std::vector<Json>& list(const Json& j) {
  if (j.type != Json::array) bad("expected a list");
  return j.items;
}
Json spec_json(const Shape& shape, Dtype dtype) {
  std::vector<Json> dims;
  for (int64_t d : shape) dims.push_back(json_int(d));
  return json_obj({{"shape", json_list(std::move(dims))}, {"dtype", json_str(name_of(dtype))}});
}
std::pair<Shape, Dtype> spec_of(const Json& j) {
  Shape shape;
  for (const Json& d : list(member(j, "shape"))) {
    if (integer(d) < 0) bad("a negative dimension");
    shape.push_back(d.i);
  }
  const Json& dt = member(j, "dtype");
  if (dt.type != Json::string) bad("expected a dtype name");
  return {shape, dtype_named(dt.s)};
}
}  // namespace

const Json& member(const Json& obj, const char* key) {
  const Json* j = obj.type == Json::object ? obj.find(key) : nullptr;
  if (!j) bad(std::string("missing '") + key + "'");
  return *j;
}

Dtype dtype_named(const std::string& name) {
  for (int d = 0; d < kNumDtypes; ++d)
    if (name == name_of(Dtype(d))) return Dtype(d);
  bad("unknown dtype '" + name + "'");
}

namespace {
// The decoded fields of a trace's header entry: its steps are checked to refer only to earlier
// values, so a replay never reads past what it has made.
void decode(FunctionTrace& t) {
  const Json& j = t.json;
  t.positional = int(integer(member(j, "positional")));
  t.keywords.clear();
  for (const Json& k : list(member(j, "keywords"))) {
    if (k.type != Json::string) bad("expected a keyword name");
    t.keywords.push_back(k.s);
  }
  const Json& shapeless = member(j, "shapeless");
  if (shapeless.type != Json::boolean) bad("expected true or false");
  t.shapeless = shapeless.b;
  t.inputs.clear();
  for (const Json& in : list(member(j, "inputs"))) t.inputs.push_back(spec_of(in));
  if (t.positional < 0 || size_t(t.positional) + t.keywords.size() != t.inputs.size())
    bad("the inputs do not match the positional and keyword counts");
  size_t values = t.inputs.size() + t.constants.size();
  t.steps.clear();
  for (const Json& n : list(member(j, "nodes"))) {
    const Json& tag = member(n, "op");
    if (tag.type != Json::string) bad("expected a primitive name");
    Step s;
    s.codec = &codec_named(tag.s);
    s.primitive = s.codec->decode(member(n, "params"));
    for (const Json& i : list(member(n, "inputs"))) {
      if (integer(i) < 0 || size_t(i.i) >= values) bad("a node reads a value not yet made");
      s.inputs.push_back(int(i.i));
    }
    // One output ("output", as every file before multi-output nodes), or several ("outputs").
    if (const Json* several = n.type == Json::object ? n.find("outputs") : nullptr) {
      s.multi = true;
      for (const Json& o : list(*several)) s.outputs.push_back(spec_of(o));
    } else {
      s.outputs.push_back(spec_of(member(n, "output")));
    }
    if (s.outputs.size() != (s.codec->outputs ? s.codec->outputs(*s.primitive) : 1))
      bad(std::string("wrong number of outputs for '") + s.codec->tag + "'");
    if (t.shapeless && (s.multi ? !s.codec->shapes : !s.codec->shape))
      bad(std::string("a shapeless trace holds '") + s.codec->tag + "', which has no shape rule");
    values += s.outputs.size();
    t.steps.push_back(std::move(s));
  }
  t.outputs.clear();
  for (const Json& o : list(member(j, "outputs"))) {
    if (integer(o) < 0 || size_t(o.i) >= values) bad("an output is not a value");
    t.outputs.push_back(int(o.i));
  }
}
}  // namespace

FunctionTrace record_trace(const std::vector<Array>& tracers, const std::vector<Array>& outs,
                           const std::vector<Node*>& order, int positional, std::vector<std::string> keywords,
                           bool shapeless) {
  FunctionTrace t;
  std::vector<Json> nodes, inputs, constants, outputs, names;
  // Values are numbered: inputs, then constants (arrays the graph reads that do not depend on
  // the inputs), then nodes in order.
  std::unordered_map<Node*, int64_t> id;
  int64_t next = 0;
  for (const Array& x : tracers) id.emplace(x.node(), next++);
  std::unordered_set<Node*> in_order(order.begin(), order.end());
  auto note_constant = [&](const Array& a) {
    if (!in_order.count(a.node()) && id.emplace(a.node(), next).second) {
      ++next;
      t.constants.push_back(a);
    }
  };
  for (Node* n : order) {
    const Codec* c = n->primitive ? codec_for(*n->primitive) : nullptr;
    if (!c)
      throw OpError("export_function",
                    std::string("cannot export the primitive '") + (n->primitive ? n->primitive->name() : "?") + "'");
    if (shapeless && (n->siblings.empty() ? !c->shape : !c->shapes))
      throw OpError(
          "export_function",
          std::string("shapeless export of '") + n->primitive->name() + "' is not supported: " +
              (n->siblings.empty() ? "its output shape is fixed by its parameters" : "it has several outputs"));
    for (const Array& in : n->inputs) note_constant(in);
  }
  for (const Array& o : outs) note_constant(o);
  for (Node* n : order) {
    if (id.count(n)) continue;  // an output of a multi-output node already written
    const Codec* c = codec_for(*n->primitive);
    std::vector<Json> ins;
    for (const Array& in : n->inputs) ins.push_back(json_int(id.at(in.node())));
    std::vector<std::pair<std::string, Json>> entry{
        {"op", json_str(c->tag)}, {"params", c->encode(*n->primitive)}, {"inputs", json_list(std::move(ins))}};
    if (n->siblings.empty()) {
      entry.emplace_back("output", spec_json(n->shape, n->dtype));
      id.emplace(n, next++);
    } else {
      // One entry for all the primitive's outputs, each a value (those nobody kept too).
      std::vector<Json> specs;
      for (size_t k = 0; k < n->siblings.size(); ++k) {
        const auto& [shape, dtype] = (*n->sibling_specs)[k];
        specs.push_back(spec_json(shape, dtype));
        if (auto sib = n->siblings[k].lock()) id.emplace(sib.get(), next);
        ++next;
      }
      entry.emplace_back("outputs", json_list(std::move(specs)));
    }
    nodes.push_back(json_obj(std::move(entry)));
  }
  for (const Array& o : outs) outputs.push_back(json_int(id.at(o.node())));
  t.constants = evaluated_row_major(t.constants);
  for (const Array& x : tracers) inputs.push_back(spec_json(x.shape(), x.dtype()));
  for (const Array& c : t.constants) constants.push_back(spec_json(c.shape(), c.dtype()));
  for (auto& k : keywords) names.push_back(json_str(k));
  t.json = json_obj({{"positional", json_int(positional)},
                     {"keywords", json_list(std::move(names))},
                     {"shapeless", Json{Json::boolean, shapeless}},
                     {"inputs", json_list(std::move(inputs))},
                     {"constants", json_list(std::move(constants))},
                     {"nodes", json_list(std::move(nodes))},
                     {"outputs", json_list(std::move(outputs))}});
  decode(t);  // the same decoding an imported trace gets: export checks the round trip
  return t;
}

std::vector<Array> replay(const FunctionTrace& t, const std::vector<Array>& inputs) {
  std::vector<Array> values = inputs;
  values.insert(values.end(), t.constants.begin(), t.constants.end());
  Stream s = default_stream(default_device());
  for (const Step& step : t.steps) {
    std::vector<Array> ins;
    for (int i : step.inputs) ins.push_back(values[i]);
    if (step.multi) {
      std::vector<Shape> shapes;
      std::vector<Dtype> dtypes;
      for (const auto& [shape, dtype] : step.outputs) {
        shapes.push_back(shape);
        dtypes.push_back(dtype);
      }
      if (t.shapeless) shapes = step.codec->shapes(*step.primitive, ins);
      for (Array& o : Array::lazy_multi(std::move(shapes), std::move(dtypes), step.primitive, std::move(ins), s))
        values.push_back(std::move(o));
      continue;
    }
    const auto& [recorded, dtype] = step.outputs[0];
    Shape shape = t.shapeless ? step.codec->shape(*step.primitive, ins, recorded) : recorded;
    values.push_back(Array::lazy(std::move(shape), dtype, step.primitive, std::move(ins), s));
  }
  std::vector<Array> outs;
  for (int o : t.outputs) outs.push_back(values[o]);
  return outs;
}

// The file: magic, version (uint32), header length (uint64), the header (JSON), then each
// constant's row-major bytes at a 64-byte aligned offset from the start of the data.
void save_function(const std::string& path, const std::vector<std::shared_ptr<FunctionTrace>>& traces,
                   const std::string& metadata) {
  std::vector<Json> entries;
  uint64_t offset = 0;
  for (const auto& t : traces) {
    Json e = t->json;
    std::vector<Json> offsets;
    for (const Array& c : t->constants) {
      offsets.push_back(json_int(int64_t(offset)));
      offset = (offset + c.nbytes() + kAlign - 1) / kAlign * kAlign;
    }
    e.members.emplace_back("offsets", json_list(std::move(offsets)));
    entries.push_back(std::move(e));
  }
  std::string header =
      json_text(json_obj({{"metadata", json_str(metadata)}, {"traces", json_list(std::move(entries))}}));
  header.append((kAlign - (sizeof kMagic + 12 + header.size()) % kAlign) % kAlign, ' ');
  OutputFile f(path);
  f.write(kMagic, sizeof kMagic);
  f.write(&kVersion, 4);
  uint64_t n = header.size();
  f.write(&n, 8);
  f.write(header);
  static const char zeros[kAlign] = {};
  for (const auto& t : traces)
    for (const Array& c : t->constants) {
      f.write(c.data_bytes(), c.nbytes());
      f.write(zeros, (kAlign - c.nbytes() % kAlign) % kAlign);
    }
  f.commit();
}

std::pair<std::vector<std::shared_ptr<FunctionTrace>>, std::string> load_function(const Bytes& file) {
  Cursor c(file);
  if (c.read_string(c.left() < sizeof kMagic ? c.left() : sizeof kMagic, "the magic") !=
      std::string(kMagic, sizeof kMagic))
    bad("not a nuvec function file (no NUVECFN magic)");
  uint32_t version = c.read<uint32_t>("the version");
  if (version != kVersion) bad("version " + std::to_string(version) + " (this nuvec reads version 1)");
  uint64_t n = c.read<uint64_t>("the header length");
  if (n > c.left()) bad("the header runs past the end of the file");
  Json header;
  try {
    header = parse_json(c.read_string(n, "the header"));
  } catch (const std::runtime_error& e) { bad(e.what()); }
  size_t start = c.pos();
  std::vector<std::shared_ptr<FunctionTrace>> traces;
  for (const Json& e : list(member(header, "traces"))) {
    auto t = std::make_shared<FunctionTrace>();
    t->json = e;
    const auto& specs = list(member(e, "constants"));
    const auto& offsets = list(member(e, "offsets"));
    if (specs.size() != offsets.size()) bad("constants and offsets differ in number");
    for (size_t i = 0; i < specs.size(); ++i) {
      auto [shape, dtype] = spec_of(specs[i]);
      int64_t count = checked_elements(shape, file.path, "a constant");
      uint64_t off = uint64_t(integer(offsets[i]));
      if (off > file.size - start || uint64_t(count) * size_of(dtype) > file.size - start - off)
        bad("a constant runs past the end of the file");
      t->constants.push_back(array_over(file, start + off, shape, dtype));
    }
    decode(*t);
    traces.push_back(std::move(t));
  }
  const Json& metadata = member(header, "metadata");
  if (metadata.type != Json::string) bad("expected the metadata string");
  return {std::move(traces), metadata.s};
}

}  // namespace nuvec::io
