// Function export (export_function / import_function): the graph of primitives that calling a
// function on example inputs records, saved with its constants (docs/export.md gives the file
// format) and replayed on new inputs by rebuilding each primitive.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/primitive.h"
#include "io/json.h"
#include "io/mapped_file.h"

namespace nuvec::io {

// How one primitive class is saved and rebuilt: one row per class (export_codecs*.cpp).
struct Codec {
  const char* tag;
  bool (*matches)(const Primitive&);
  Json (*encode)(const Primitive&);
  std::shared_ptr<Primitive> (*decode)(const Json& params);
  // The output shape for new input shapes (shapeless replay); null where the primitive's
  // parameters fix its output shape.
  Shape (*shape)(const Primitive&, const std::vector<Array>& inputs, const Shape& recorded);
  // How many outputs the primitive makes (null: one); an imported node must list that many.
  size_t (*outputs)(const Primitive&) = nullptr;
  // The output shapes of a primitive with several outputs for new input shapes (shapeless
  // replay); null where it has none.
  std::vector<Shape> (*shapes)(const Primitive&, const std::vector<Array>& inputs) = nullptr;
};
const Codec* codec_for(const Primitive& p);        // null when the class cannot be exported
const Codec& codec_named(const std::string& tag);  // OpError for an unknown tag

// One step of a replay: a primitive applied to earlier values (inputs, constants, steps).
struct Step {
  const Codec* codec;
  std::shared_ptr<Primitive> primitive;
  std::vector<int> inputs;
  // The outputs (each a value): one, or several for a multi-output node ("outputs" in the file).
  std::vector<std::pair<Shape, Dtype>> outputs;
  bool multi = false;
};

// One trace: the graph recorded by one call of the function.
struct FunctionTrace {
  Json json;  // the trace's entry in the file header (docs/export.md)
  std::vector<Array> constants;
  // Decoded from `json`:
  int positional = 0;  // the first `positional` inputs are positional, the rest keywords
  std::vector<std::string> keywords;
  bool shapeless = false;
  std::vector<std::pair<Shape, Dtype>> inputs;
  std::vector<Step> steps;
  std::vector<int> outputs;
};

// The trace of a function called on `tracers` (the leaves of a transform's walk) that gave
// `outs`, where `order` holds the nodes between them, inputs first (transforms/trace.h).
FunctionTrace record_trace(const std::vector<Array>& tracers, const std::vector<Array>& outs,
                           const std::vector<Node*>& order, int positional, std::vector<std::string> keywords,
                           bool shapeless);
// The trace's outputs for `inputs` (matching its inputs' dtypes, and shapes unless shapeless).
std::vector<Array> replay(const FunctionTrace& t, const std::vector<Array>& inputs);

void save_function(const std::string& path, const std::vector<std::shared_ptr<FunctionTrace>>& traces,
                   const std::string& metadata);
std::pair<std::vector<std::shared_ptr<FunctionTrace>>, std::string> load_function(const Bytes& file);

// JSON values for the header, and its text.
Json json_int(int64_t v);
Json json_str(std::string s);
Json json_list(std::vector<Json> items);
Json json_obj(std::vector<std::pair<std::string, Json>> members);
std::string json_text(const Json& j);
const Json& member(const Json& obj, const char* key);  // OpError when missing
Dtype dtype_named(const std::string& name);            // OpError for an unknown name

}  // namespace nuvec::io
