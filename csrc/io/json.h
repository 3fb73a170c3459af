// A small JSON reader for untrusted headers (safetensors): bounded depth, exact integers; and
// the string quoting the safetensors writer needs.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nuvec::io {

struct Json {
  enum Type { null, boolean, integer, number, string, array, object } type = null;
  bool b = false;
  int64_t i = 0;  // for `integer` (no fraction or exponent, fits in int64)
  double d = 0;
  std::string s;
  std::vector<Json> items;                            // array
  std::vector<std::pair<std::string, Json>> members;  // object, in file order
  const Json* find(const std::string& key) const;
};

// Parses `text` as one JSON value; throws std::runtime_error with the reason on bad input.
Json parse_json(const std::string& text);

// `utf8` as a JSON string literal in ASCII, as Python's json.dumps writes it (\uXXXX escapes,
// surrogate pairs above U+FFFF); throws std::runtime_error unless `utf8` is valid UTF-8.
std::string json_quote(const std::string& utf8);

}  // namespace nuvec::io
