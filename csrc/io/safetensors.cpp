// safetensors: an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
// shape and [begin, end) byte offsets into the data that follows, then the data.
#include <stdexcept>

#include "io/io.h"
#include "io/json.h"
#include "io/output_file.h"

namespace nuvec::io {
namespace {

constexpr uint64_t kMaxHeader = uint64_t(100) << 20;  // the safetensors format's own limit

}  // namespace

Tensors load_safetensors(const Bytes& file) {
  const std::string& path = file.path;
  Cursor c(file);
  uint64_t n = c.read<uint64_t>("the header length");
  if (n > kMaxHeader) fail(path, "header length " + std::to_string(n) + " is absurd (over 100 MiB)");
  if (n > c.left()) fail(path, "header length " + std::to_string(n) + " runs past the end of the file");
  std::string text = c.read_string(size_t(n), "the header");
  Json h;
  try {
    h = parse_json(text);
  } catch (const std::runtime_error& e) { fail(path, std::string("header: ") + e.what()); }
  if (h.type != Json::object) fail(path, "header is not a JSON object");
  size_t data_start = c.pos(), data_size = file.size - data_start;
  Tensors out;
  for (const auto& [name, t] : h.members) {
    checked_name(path, name, "tensor name");
    std::string what = "tensor '" + name + "'";
    if (name == "__metadata__") {
      if (t.type == Json::null) continue;  // MLX writes null when there is none
      if (t.type != Json::object) fail(path, "__metadata__ is not an object");
      for (const auto& [k, v] : t.members) {
        if (v.type != Json::string) fail(path, "__metadata__ value of '" + k + "' is not a string");
        out.metadata[checked_name(path, k, "metadata key")] = checked_name(path, v.s, "metadata value");
      }
      continue;
    }
    if (t.type != Json::object) fail(path, what + " is not an object");
    const Json *dt = t.find("dtype"), *sh = t.find("shape"), *off = t.find("data_offsets");
    if (!dt || dt->type != Json::string) fail(path, what + " has no dtype");
    // MLX reads float8 e4m3 tensors as their uint8 codes (from_fp8 decodes them).
    std::optional<Dtype> found = dt->s == "F8_E4M3" ? Dtype::uint8 : from_safetensors_name(dt->s);
    if (!found) fail(path, what + " has an unknown dtype '" + dt->s + "'");
    Dtype dtype = *found;
    if (!sh || sh->type != Json::array) fail(path, what + " has no shape");
    Shape shape;
    for (const Json& d : sh->items) {
      if (d.type != Json::integer) fail(path, what + " has a shape entry that is not an integer");
      shape.push_back(d.i);
    }
    int64_t elems = checked_elements(shape, path, what);
    if (!off || off->type != Json::array || off->items.size() != 2 || off->items[0].type != Json::integer ||
        off->items[1].type != Json::integer)
      fail(path, what + " has no [begin, end] data_offsets");
    int64_t b = off->items[0].i, e = off->items[1].i;
    if (b < 0 || e < b || uint64_t(e) > data_size)
      fail(path, what + " has data_offsets [" + std::to_string(b) + ", " + std::to_string(e) + "] outside the " +
                     std::to_string(data_size) + " bytes of data");
    if (uint64_t(e - b) != uint64_t(elems) * size_of(dtype))
      fail(path, what + " has " + std::to_string(e - b) + " bytes of data but its shape and dtype need " +
                     std::to_string(uint64_t(elems) * size_of(dtype)));
    out.arrays.emplace_back(name, array_over(file, data_start + size_t(b), shape, dtype));
  }
  return out;
}

// The header as the safetensors package writes it: compact JSON, padded with spaces so the data
// starts 8-byte aligned.
void save_safetensors(const std::string& path, const NamedArrays& arrays,
                      const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::string h = "{";
  auto quote = [](const std::string& s) {
    try {
      return json_quote(s);
    } catch (const std::runtime_error& e) { throw OpError("save_safetensors", e.what()); }
  };
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    for (const auto& [k, v] : metadata) h += (h.back() == '{' ? "" : ",") + quote(k) + ":" + quote(v);
    h += "}";
  }
  uint64_t offset = 0;
  std::vector<Array> values;
  for (const auto& [name, a] : arrays) {
    std::string shape;
    for (int64_t d : a.shape()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    h += (h.size() == 1 ? "" : ",") + quote(name) + ":{\"dtype\":\"" + safetensors_name(a.dtype()) + "\",\"shape\":[" +
         shape + "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + a.nbytes()) + "]}";
    offset += a.nbytes();
    values.push_back(a);
  }
  h += "}";
  h.append((8 - h.size() % 8) % 8, ' ');
  values = evaluated_row_major(values);
  OutputFile f(with_suffix(path, "safetensors"));
  std::string len;
  put_le<uint64_t>(len, h.size());
  f.write(len + h);
  for (const Array& a : values)
    if (a.nbytes()) f.write(a.data_bytes(), a.nbytes());
  f.commit();
}

}  // namespace nuvec::io
