// .npz: a zip archive of .npy members, laid out byte for byte as Python's zipfile writes it
// (NumPy's savez uses zipfile too): zip64 local headers, a fixed 1980-01-01 date, and for stored
// members an extra field (zipalign's id 0xD935) that puts the npy data on a 64-byte boundary of
// the file, so a load can map it.
#include <array>

#include "io/io.h"
#include "io/output_file.h"

namespace nuvec::io {
namespace {

constexpr uint64_t kZip64Limit = (uint64_t(1) << 31) - 1;  // zipfile's ZIP64_LIMIT
constexpr uint16_t kVersion = 45;                          // zip64
constexpr uint16_t kDosDate = 1 << 5 | 1;                  // 1980-01-01, time 00:00:00
constexpr uint32_t kExternalAttr = 0600u << 16;            // rw------- (zipfile's default)

// CRC-32 (zip's, reflected 0xEDB88320), eight bytes a step.
uint32_t crc32(uint32_t crc, const uint8_t* p, size_t n) {
  static const auto table = [] {
    std::array<std::array<uint32_t, 256>, 8> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[0][i] = c;
    }
    for (int i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
    return t;
  }();
  crc = ~crc;
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t a, b;
    std::memcpy(&a, p, 4);
    std::memcpy(&b, p + 4, 4);
    a ^= crc;
    crc = table[7][a & 0xFF] ^ table[6][(a >> 8) & 0xFF] ^ table[5][(a >> 16) & 0xFF] ^ table[4][a >> 24] ^
          table[3][b & 0xFF] ^ table[2][(b >> 8) & 0xFF] ^ table[1][(b >> 16) & 0xFF] ^ table[0][b >> 24];
  }
  for (; n > 0; ++p, --n) crc = table[0][(crc ^ *p) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

struct Member {
  std::string name, extra;
  uint16_t flags = 0, method = 0;
  uint32_t crc = 0;
  uint64_t size = 0, compressed = 0, offset = 0;
};

std::string local_header(const Member& m) {
  std::string h = "PK\x03\x04";
  put_le<uint8_t>(h, kVersion), put_le<uint8_t>(h, 0), put_le<uint16_t>(h, m.flags), put_le<uint16_t>(h, m.method);
  put_le<uint16_t>(h, 0), put_le<uint16_t>(h, kDosDate), put_le<uint32_t>(h, m.crc);
  put_le<uint32_t>(h, 0xFFFFFFFF), put_le<uint32_t>(h, 0xFFFFFFFF);  // sizes in the zip64 field
  put_le<uint16_t>(h, uint16_t(m.name.size())), put_le<uint16_t>(h, uint16_t(m.extra.size() + 20));
  h += m.name + m.extra;
  put_le<uint16_t>(h, 1), put_le<uint16_t>(h, 16), put_le<uint64_t>(h, m.size), put_le<uint64_t>(h, m.compressed);
  return h;
}

std::string central_header(const Member& m) {
  std::string zip64;  // only the values that do not fit
  bool big = m.size > kZip64Limit || m.compressed > kZip64Limit;
  if (big) put_le<uint64_t>(zip64, m.size), put_le<uint64_t>(zip64, m.compressed);
  if (m.offset > kZip64Limit) put_le<uint64_t>(zip64, m.offset);
  std::string extra;
  if (!zip64.empty()) put_le<uint16_t>(extra, 1), put_le<uint16_t>(extra, uint16_t(zip64.size()));
  extra += zip64 + m.extra;
  std::string h = "PK\x01\x02";
  put_le<uint8_t>(h, kVersion), put_le<uint8_t>(h, 3);  // made by: Unix
  put_le<uint8_t>(h, kVersion), put_le<uint8_t>(h, 0), put_le<uint16_t>(h, m.flags), put_le<uint16_t>(h, m.method);
  put_le<uint16_t>(h, 0), put_le<uint16_t>(h, kDosDate), put_le<uint32_t>(h, m.crc);
  put_le<uint32_t>(h, big ? 0xFFFFFFFF : uint32_t(m.compressed));
  put_le<uint32_t>(h, big ? 0xFFFFFFFF : uint32_t(m.size));
  put_le<uint16_t>(h, uint16_t(m.name.size())), put_le<uint16_t>(h, uint16_t(extra.size()));
  put_le<uint16_t>(h, 0), put_le<uint16_t>(h, 0), put_le<uint16_t>(h, 0), put_le<uint32_t>(h, kExternalAttr);
  put_le<uint32_t>(h, m.offset > kZip64Limit ? 0xFFFFFFFF : uint32_t(m.offset));
  return h + m.name + extra;
}

std::string end_records(uint64_t count, uint64_t dir_offset, uint64_t dir_size) {
  std::string e;
  if (count > 0xFFFF || dir_offset > kZip64Limit || dir_size > kZip64Limit) {
    e += "PK\x06\x06";
    put_le<uint64_t>(e, 44), put_le<uint16_t>(e, kVersion), put_le<uint16_t>(e, kVersion);
    put_le<uint32_t>(e, 0), put_le<uint32_t>(e, 0), put_le<uint64_t>(e, count), put_le<uint64_t>(e, count);
    put_le<uint64_t>(e, dir_size), put_le<uint64_t>(e, dir_offset);
    e += "PK\x06\x07";
    put_le<uint32_t>(e, 0), put_le<uint64_t>(e, dir_offset + dir_size), put_le<uint32_t>(e, 1);
    count = std::min<uint64_t>(count, 0xFFFF);
    dir_size = std::min<uint64_t>(dir_size, 0xFFFFFFFF);
    dir_offset = std::min<uint64_t>(dir_offset, 0xFFFFFFFF);
  }
  e += "PK\x05\x06";
  put_le<uint16_t>(e, 0), put_le<uint16_t>(e, 0);
  put_le<uint16_t>(e, uint16_t(count)), put_le<uint16_t>(e, uint16_t(count));
  put_le<uint32_t>(e, uint32_t(dir_size)), put_le<uint32_t>(e, uint32_t(dir_offset)), put_le<uint16_t>(e, 0);
  return e;
}

}  // namespace

void save_npz(const std::string& path, const NamedArrays& arrays, const DeflaterFactory& deflater) {
  std::vector<std::string> headers;
  std::vector<Array> values;
  for (const auto& [k, a] : arrays) headers.push_back(npy_header(a)), values.push_back(a);  // checks dtypes first
  values = evaluated_row_major(values);
  OutputFile f(with_suffix(path, "npz"));
  std::vector<Member> members;
  for (size_t i = 0; i < values.size(); ++i) {
    Member m;
    m.name = arrays[i].first.substr(0, arrays[i].first.find('\0')) + ".npy";  // zipfile cuts a name at NUL
    for (unsigned char c : m.name)
      if (c >= 0x80) m.flags = 0x800;  // UTF-8 name
    m.method = deflater ? 8 : 0;
    m.offset = f.tell();
    if (!deflater) {  // pad the extra field so the npy data starts 64-byte aligned
      size_t pad = (64 - (m.offset + 30 + m.name.size() + 4 + 20) % 64) % 64;
      put_le<uint16_t>(m.extra, 0xD935), put_le<uint16_t>(m.extra, uint16_t(pad));
      m.extra.append(pad, '\0');
    }
    f.write(local_header(m));  // rewritten below with the CRC and sizes
    const std::string& h = headers[i];
    const auto* data = reinterpret_cast<const uint8_t*>(values[i].nbytes() ? values[i].data_bytes() : nullptr);
    m.size = h.size() + values[i].nbytes();
    m.crc = crc32(crc32(0, reinterpret_cast<const uint8_t*>(h.data()), h.size()), data, values[i].nbytes());
    if (deflater) {  // the header and the data in two pieces, as zipfile feeds its compressor
      auto d = deflater();
      for (const std::string& piece : {d->compress(reinterpret_cast<const uint8_t*>(h.data()), h.size()),
                                       d->compress(data, values[i].nbytes()), d->finish()}) {
        f.write(piece);
        m.compressed += piece.size();
      }
    } else {
      f.write(h);
      f.write(data, values[i].nbytes());
      m.compressed = m.size;
    }
    uint64_t end = f.tell();
    f.seek(m.offset);
    f.write(local_header(m));
    f.seek(end);
    members.push_back(std::move(m));
  }
  uint64_t dir_offset = f.tell();
  for (const Member& m : members) f.write(central_header(m));
  f.write(end_records(members.size(), dir_offset, f.tell() - dir_offset));
  f.commit();
}

}  // namespace nuvec::io
