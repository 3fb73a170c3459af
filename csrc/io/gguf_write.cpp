// Writing GGUF (version 3) as MLX's save_gguf: the metadata key-values, then each tensor's name,
// dims (innermost first), ggml type and offset, then the data, every tensor 32-byte aligned.
// MLX writes float32, float16, int8, int16 and int32 tensors; so does nuvec.
#include "io/io.h"
#include "io/output_file.h"

namespace nuvec::io {
namespace {

constexpr uint64_t kAlignment = 32;  // GGUF's default (no general.alignment key)

// GGUF's metadata value types.
enum : uint32_t { u8, i8, u16, i16, u32, i32, f32, boolean, string, array, u64, i64, f64 };

uint32_t value_type(Dtype d) {
  switch (d) {
    case Dtype::bool_: return boolean;
    case Dtype::uint8: return u8;
    case Dtype::uint16: return u16;
    case Dtype::uint32: return u32;
    case Dtype::uint64: return u64;
    case Dtype::int8: return i8;
    case Dtype::int16: return i16;
    case Dtype::int32: return i32;
    case Dtype::int64: return i64;
    case Dtype::float32: return f32;
    case Dtype::float16:
    case Dtype::bfloat16:
    case Dtype::float64:
    case Dtype::complex64: break;
  }
  throw OpError("save_gguf", std::string("metadata cannot hold ") + name_of(d) + " values (MLX's rule)");
}

// ggml's tensor type of the dtypes MLX saves.
uint32_t tensor_type(Dtype d) {
  switch (d) {
    case Dtype::float32: return 0;
    case Dtype::float16: return 1;
    case Dtype::int8: return 24;
    case Dtype::int16: return 25;
    case Dtype::int32: return 26;
    default:
      throw OpError("save_gguf", std::string("tensors of dtype ") + name_of(d) + " cannot be saved (MLX's rule)");
  }
}

void put_string(std::string& out, const std::string& s) {
  put_le<uint64_t>(out, s.size());
  out += s;
}

template <class T> T as(const GgufValue& v) {
  if (auto* b = std::get_if<bool>(&v.v)) return T(*b);
  if (auto* i = std::get_if<int64_t>(&v.v)) return T(*i);
  if (auto* u = std::get_if<uint64_t>(&v.v)) return T(*u);
  return T(std::get<double>(v.v));
}

// The payload of one value of GGUF type `type` (its type tag is written by the caller).
void put_payload(std::string& out, uint32_t type, const GgufValue& v) {
  if (auto* s = std::get_if<std::string>(&v.v)) return put_string(out, *s);
  if (auto* items = std::get_if<GgufArray>(&v.v)) {
    uint32_t item =
        items->empty() || std::holds_alternative<std::string>(items->front().v) ? string : value_type(v.dtype);
    put_le<uint32_t>(out, item);
    put_le<uint64_t>(out, items->size());
    for (const GgufValue& x : *items) put_payload(out, item, x);
    return;
  }
  switch (type) {
    case u8: return put_le(out, as<uint8_t>(v));
    case i8: return put_le(out, as<int8_t>(v));
    case u16: return put_le(out, as<uint16_t>(v));
    case i16: return put_le(out, as<int16_t>(v));
    case u32: return put_le(out, as<uint32_t>(v));
    case i32: return put_le(out, as<int32_t>(v));
    case u64: return put_le(out, as<uint64_t>(v));
    case i64: return put_le(out, as<int64_t>(v));
    case f32: return put_le(out, as<float>(v));
    case boolean: return put_le(out, as<uint8_t>(v));
  }
}

uint32_t type_of(const GgufValue& v) {
  if (std::holds_alternative<std::string>(v.v)) return string;
  if (std::holds_alternative<GgufArray>(v.v)) return array;
  return value_type(v.dtype);
}

}  // namespace

void save_gguf(const std::string& path, const NamedArrays& arrays,
               const std::vector<std::pair<std::string, GgufValue>>& metadata) {
  std::string h("GGUF", 4);
  put_le<uint32_t>(h, 3);
  put_le<uint64_t>(h, arrays.size());
  put_le<uint64_t>(h, metadata.size());
  for (const auto& [k, v] : metadata) {
    put_string(h, k);
    uint32_t type = type_of(v);
    put_le<uint32_t>(h, type);
    put_payload(h, type, v);
  }
  uint64_t offset = 0;
  std::vector<Array> values;
  for (const auto& [name, a] : arrays) {
    put_string(h, name);
    put_le<uint32_t>(h, uint32_t(a.ndim()));
    for (int i = a.ndim() - 1; i >= 0; --i) put_le<uint64_t>(h, uint64_t(a.shape()[i]));
    put_le<uint32_t>(h, tensor_type(a.dtype()));
    put_le<uint64_t>(h, offset);
    offset += (a.nbytes() + kAlignment - 1) / kAlignment * kAlignment;
    values.push_back(a);
  }
  h.append((kAlignment - h.size() % kAlignment) % kAlignment, '\0');
  values = evaluated_row_major(values);
  OutputFile f(with_suffix(path, "gguf"));
  f.write(h);
  for (const Array& a : values) {
    if (a.nbytes()) f.write(a.data_bytes(), a.nbytes());
    f.write(std::string((kAlignment - a.nbytes() % kAlignment) % kAlignment, '\0'));
  }
  f.commit();
}

}  // namespace nuvec::io
