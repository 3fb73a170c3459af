// GGUF (llama.cpp's model files, versions 2 and 3): a key-value metadata section, tensor
// descriptions (name, dims innermost first, ggml type, offset), then aligned tensor data.
// Plain tensors map without a copy; Q4_0, Q4_1 and Q8_0 become MLX's quantized triple
// (uint32-packed weight, float16 scales and biases per group of 32), as mx.load gives them; the
// K-quants, Q5_0 and Q5_1 load dequantized to float16 (io/gguf_dequant.h).
#include <cstring>

#include "io/gguf_dequant.h"
#include "io/io.h"

namespace nuvec::io {
namespace {

enum GgufType : uint32_t { u8, i8, u16, i16, u32, i32, f32, boolean, string, array, u64, i64, f64 };
constexpr int kMaxNesting = 8;

std::string read_str(Cursor& c, const char* what, const std::string& path) {
  uint64_t n = c.read<uint64_t>(what);
  c.need(n, what);
  return checked_name(path, c.read_string(size_t(n), what), what);
}

GgufValue read_value(Cursor& c, uint32_t type, const std::string& path, int depth) {
  GgufValue v;
  switch (type) {
    case u8: v.v = int64_t(c.read<uint8_t>("a metadata value")), v.dtype = Dtype::uint8; break;
    case i8: v.v = int64_t(c.read<int8_t>("a metadata value")), v.dtype = Dtype::int8; break;
    case u16: v.v = int64_t(c.read<uint16_t>("a metadata value")), v.dtype = Dtype::uint16; break;
    case i16: v.v = int64_t(c.read<int16_t>("a metadata value")), v.dtype = Dtype::int16; break;
    case u32: v.v = int64_t(c.read<uint32_t>("a metadata value")), v.dtype = Dtype::uint32; break;
    case i32: v.v = int64_t(c.read<int32_t>("a metadata value")), v.dtype = Dtype::int32; break;
    case u64: v.v = c.read<uint64_t>("a metadata value"), v.dtype = Dtype::uint64; break;
    case i64: v.v = c.read<int64_t>("a metadata value"), v.dtype = Dtype::int64; break;
    case f32: v.v = double(c.read<float>("a metadata value")), v.dtype = Dtype::float32; break;
    case f64: v.v = c.read<double>("a metadata value"), v.dtype = Dtype::float64; break;
    case boolean: {
      uint8_t b = c.read<uint8_t>("a metadata value");
      if (b > 1) fail(path, "a metadata bool holds " + std::to_string(b));
      v.v = bool(b), v.dtype = Dtype::bool_;
      break;
    }
    case string: v.v = read_str(c, "a metadata string", path); break;
    case array: {
      if (depth >= kMaxNesting) fail(path, "metadata arrays nest too deeply");
      uint32_t item = c.read<uint32_t>("a metadata array type");
      uint64_t n = c.read<uint64_t>("a metadata array length");
      if (item > f64) fail(path, "unknown metadata array type " + std::to_string(item));
      if (n > c.left()) fail(path, "metadata array length " + std::to_string(n) + " runs past the end of the file");
      GgufArray items;
      for (uint64_t k = 0; k < n; ++k) items.push_back(read_value(c, item, path, depth + 1));
      v.dtype = items.empty() ? Dtype::float32 : items.front().dtype;
      v.v = std::move(items);
      break;
    }
    default: fail(path, "unknown metadata value type " + std::to_string(type));
  }
  return v;
}

struct TypeInfo {
  const char* name;
  int block;                 // elements per block
  int bytes;                 // bytes per block
  Dtype dtype;               // for plain types
  bool dequantized = false;  // loads as float16 (io/gguf_dequant.h)
};

TypeInfo dequantized(const char* name, uint32_t t) {
  DequantizedType d = dequantized_type(t);
  return {name, d.block, d.bytes, Dtype::float16, true};
}

// ggml's tensor types by number; block 0 marks the ones nuvec cannot read.
TypeInfo type_info(uint32_t t) {
  switch (t) {
    case 0: return {"F32", 1, 4, Dtype::float32};
    case 1: return {"F16", 1, 2, Dtype::float16};
    case 2: return {"Q4_0", 32, 18, Dtype::uint32};
    case 3: return {"Q4_1", 32, 20, Dtype::uint32};
    case 8: return {"Q8_0", 32, 34, Dtype::uint32};
    case 24: return {"I8", 1, 1, Dtype::int8};
    case 25: return {"I16", 1, 2, Dtype::int16};
    case 26: return {"I32", 1, 4, Dtype::int32};
    case 27: return {"I64", 1, 8, Dtype::int64};
    case 28: return {"F64", 1, 8, Dtype::float64};
    case 30: return {"BF16", 1, 2, Dtype::bfloat16};
    case 6: return dequantized("Q5_0", t);
    case 7: return dequantized("Q5_1", t);
    case 9: return {"Q8_1", 0, 0, Dtype::uint8};
    case 10: return dequantized("Q2_K", t);
    case 11: return dequantized("Q3_K", t);
    case 12: return dequantized("Q4_K", t);
    case 13: return dequantized("Q5_K", t);
    case 14: return dequantized("Q6_K", t);
    case 15: return dequantized("Q8_K", t);
    default: return {nullptr, 0, 0, Dtype::uint8};
  }
}

// One group of 32 to MLX's layout: element e in bits [e*b, (e+1)*b) of the packed words.
void quantized_block(uint32_t type, const uint8_t* blk, uint8_t* w, _Float16& scale, _Float16& bias) {
  std::memcpy(&scale, blk, 2);
  if (type == 8) {  // Q8_0: int8 q, value d*q; unsigned q+128 with bias -128 d
    bias = _Float16(-128.0f * float(scale));
    for (int j = 0; j < 32; ++j) w[j] = blk[2 + j] ^ 0x80;
    return;
  }
  const uint8_t* qs = blk + (type == 3 ? 4 : 2);  // Q4_1 keeps its minimum after the scale
  if (type == 3)
    std::memcpy(&bias, blk + 2, 2);
  else
    bias = _Float16(-8.0f * float(scale));  // Q4_0: value d*(q - 8)
  // ggml stores elements 0-15 in the low nibbles of qs[0..15] and 16-31 in the high nibbles.
  for (int k = 0; k < 8; ++k) {
    w[k] = uint8_t((qs[2 * k] & 0x0F) | ((qs[2 * k + 1] & 0x0F) << 4));
    w[8 + k] = uint8_t((qs[2 * k] >> 4) | (qs[2 * k + 1] & 0xF0));
  }
}

void add_quantized(GgufFile& out, const std::string& name, uint32_t type, const uint8_t* data, Shape shape,
                   const std::string& path) {
  if (shape.empty()) fail(path, "tensor '" + name + "' is quantized but has no dimensions");
  int64_t k = shape.back();
  if (k % 32) fail(path, "tensor '" + name + "' has a last dimension " + std::to_string(k) + " not divisible by 32");
  int bits = type == 8 ? 8 : 4;
  Shape wshape = shape, gshape = shape;
  wshape.back() = k * bits / 32;
  gshape.back() = k / 32;
  Array w = Array::allocate(wshape, Dtype::uint32);
  Array scales = Array::allocate(gshape, Dtype::float16), biases = Array::allocate(gshape, Dtype::float16);
  int bytes = type_info(type).bytes, wbytes = 32 * bits / 8;
  auto* wp = reinterpret_cast<uint8_t*>(w.data_bytes());
  auto* sp = scales.data<_Float16>();
  auto* bp = biases.data<_Float16>();
  for (int64_t g = 0; g < scales.size(); ++g) quantized_block(type, data + g * bytes, wp + g * wbytes, sp[g], bp[g]);
  std::string prefix = name.size() > 7 && name.ends_with(".weight") ? name.substr(0, name.size() - 7) : name;
  out.arrays.emplace_back(name, w);
  out.arrays.emplace_back(prefix + ".scales", scales);
  out.arrays.emplace_back(prefix + ".biases", biases);
}

}  // namespace

GgufFile load_gguf(const std::string& path) {
  Bytes file = map_file(path);
  Cursor c(file);
  if (c.left() < 4 || std::memcmp(file.data, "GGUF", 4) != 0) fail(path, "not a GGUF file (wrong magic number)");
  c.skip(4, "the magic");
  uint32_t version = c.read<uint32_t>("the version");
  if (version != 2 && version != 3) fail(path, "unsupported GGUF version " + std::to_string(version));
  uint64_t n_tensors = c.read<uint64_t>("the tensor count"), n_kv = c.read<uint64_t>("the metadata count");
  if (n_tensors > file.size / 24 || n_kv > file.size / 12)
    fail(path, "tensor or metadata count is absurd for the file size");
  GgufFile out;
  uint64_t alignment = 32;
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key = read_str(c, "a metadata key", path);
    GgufValue v = read_value(c, c.read<uint32_t>("a metadata type"), path, 0);
    if (key == "general.alignment") {
      auto* a = std::get_if<int64_t>(&v.v);
      if (!a || *a <= 0 || (*a & (*a - 1)) || *a > 65536) fail(path, "general.alignment is not a power of two");
      alignment = uint64_t(*a);
    }
    out.metadata.emplace_back(std::move(key), std::move(v));
  }
  struct Info {
    std::string name;
    Shape shape;
    uint32_t type;
    uint64_t offset, bytes;
  };
  std::vector<Info> infos;
  for (uint64_t i = 0; i < n_tensors; ++i) {
    Info t;
    t.name = read_str(c, "a tensor name", path);
    uint32_t nd = c.read<uint32_t>("a tensor's rank");
    if (nd > 8) fail(path, "tensor '" + t.name + "' has rank " + std::to_string(nd));
    for (uint32_t d = 0; d < nd; ++d) {
      uint64_t dim = c.read<uint64_t>("a tensor's dims");
      if (dim > (uint64_t(1) << 48)) fail(path, "tensor '" + t.name + "' has an absurd dimension");
      t.shape.insert(t.shape.begin(), int64_t(dim));  // ggml lists the innermost first
    }
    t.type = c.read<uint32_t>("a tensor's type");
    t.offset = c.read<uint64_t>("a tensor's offset");
    TypeInfo ti = type_info(t.type);
    if (!ti.name) fail(path, "tensor '" + t.name + "' has an unknown ggml type " + std::to_string(t.type));
    if (!ti.block) fail(path, "tensor '" + t.name + "' has type " + ti.name + ", which nuvec cannot read yet");
    int64_t elems = checked_elements(t.shape, path, "tensor '" + t.name + "'");
    if (ti.block > 1 && (t.shape.empty() || t.shape.back() % ti.block))  // ggml's blocks never span rows
      fail(path, "tensor '" + t.name + "' has rows that do not fill whole " + ti.name + " blocks");
    t.bytes = uint64_t(elems / ti.block) * uint64_t(ti.bytes);
    infos.push_back(std::move(t));
  }
  uint64_t data_start = (c.pos() + alignment - 1) / alignment * alignment;
  if (data_start > file.size) fail(path, "truncated: no tensor data");
  uint64_t data_size = file.size - data_start;
  for (const Info& t : infos) {
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      fail(path, "tensor '" + t.name + "' lies past the end of the file (offset " + std::to_string(t.offset) + ", " +
                     std::to_string(t.bytes) + " bytes)");
    TypeInfo ti = type_info(t.type);
    const uint8_t* data = file.data + data_start + t.offset;
    if (ti.block == 1) {
      out.arrays.emplace_back(t.name, array_over(file, data_start + t.offset, t.shape, ti.dtype));
    } else if (ti.dequantized) {
      Array a = Array::allocate(t.shape, Dtype::float16);
      dequantize(t.type, data, a.size() / ti.block, a.data<_Float16>());
      out.arrays.emplace_back(t.name, a);
    } else {
      add_quantized(out, t.name, t.type, data, t.shape, path);
    }
  }
  return out;
}

}  // namespace nuvec::io
