#include "io/json.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace nuvec::io {
namespace {

constexpr int kMaxDepth = 64;  // headers are shallow; deep nesting is an attack on the stack

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}

  Json document() {
    Json v = value(0);
    space();
    if (p_ != t_.size()) bad("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void bad(const std::string& why) {
    throw std::runtime_error("invalid JSON at byte " + std::to_string(p_) + ": " + why);
  }
  void space() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\n' || t_[p_] == '\r')) ++p_;
  }
  bool eat(char c) {
    space();
    if (p_ < t_.size() && t_[p_] == c) return ++p_, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) bad(std::string("expected '") + c + "'");
  }
  bool literal(const char* w) {
    size_t n = std::char_traits<char>::length(w);
    if (t_.compare(p_, n, w) == 0) return p_ += n, true;
    return false;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) bad("nested too deeply");
    space();
    if (p_ >= t_.size()) bad("unexpected end");
    Json v;
    char c = t_[p_];
    if (c == '{') {
      ++p_;
      v.type = Json::object;
      if (eat('}')) return v;
      do {
        space();
        std::string k = str();
        expect(':');
        v.members.emplace_back(std::move(k), value(depth + 1));
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      ++p_;
      v.type = Json::array;
      if (eat(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.type = Json::string;
      v.s = str();
    } else if (literal("true")) {
      v.type = Json::boolean, v.b = true;
    } else if (literal("false")) {
      v.type = Json::boolean;
    } else if (literal("null")) {
    } else {
      number(v);
    }
    return v;
  }

  void number(Json& v) {
    size_t start = p_;
    if (p_ < t_.size() && t_[p_] == '-') ++p_;
    bool digits = false, integral = true;
    while (p_ < t_.size() && isdigit((unsigned char)t_[p_])) ++p_, digits = true;
    if (p_ < t_.size() && (t_[p_] == '.' || t_[p_] == 'e' || t_[p_] == 'E')) {
      integral = false;
      ++p_;
      while (p_ < t_.size() && (isdigit((unsigned char)t_[p_]) || t_[p_] == '+' || t_[p_] == '-' || t_[p_] == 'e' ||
                                t_[p_] == 'E' || t_[p_] == '.'))
        ++p_;
    }
    if (!digits) bad("unexpected character");
    std::string text = t_.substr(start, p_ - start);
    v.type = Json::number;
    v.d = std::strtod(text.c_str(), nullptr);
    if (integral && text.size() <= 18) v.type = Json::integer, v.i = std::strtoll(text.c_str(), nullptr, 10);
  }

  std::string str() {
    if (p_ >= t_.size() || t_[p_] != '"') bad("expected a string");
    ++p_;
    std::string out;
    for (;;) {
      if (p_ >= t_.size()) bad("unterminated string");
      char c = t_[p_++];
      if (c == '"') return out;
      if ((unsigned char)c < 0x20) bad("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ >= t_.size()) bad("unterminated escape");
      char e = t_[p_++];
      switch (e) {
        case '"':
        case '\\':
        case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': utf8(out); break;
        default: bad("bad escape");
      }
    }
  }

  unsigned hex4() {
    if (t_.size() - p_ < 4) bad("short \\u escape");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      char h = t_[p_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= unsigned(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= unsigned(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= unsigned(h - 'A' + 10);
      else
        bad("bad \\u escape");
    }
    return v;
  }

  void utf8(std::string& out) {
    unsigned cp = hex4();
    if (cp >= 0xD800 && cp < 0xDC00 && t_.compare(p_, 2, "\\u") == 0) {  // surrogate pair
      p_ += 2;
      unsigned lo = hex4();
      if (lo < 0xDC00 || lo >= 0xE000) bad("bad surrogate pair");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6)), out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18)), out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
    }
  }

  const std::string& t_;
  size_t p_ = 0;
};

}  // namespace

const Json* Json::find(const std::string& key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

Json parse_json(const std::string& text) { return Parser(text).document(); }

std::string json_quote(const std::string& utf8) {
  std::string out = "\"";
  auto hex4 = [&](uint32_t v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(v));
    out += buf;
  };
  for (size_t i = 0; i < utf8.size();) {
    auto c = static_cast<unsigned char>(utf8[i]);
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (n < 0 || i + n >= utf8.size()) throw std::runtime_error("a string is not valid UTF-8");
    uint32_t cp = n == 0 ? c : c & (0x3F >> n);
    for (int k = 1; k <= n; ++k) {
      auto t = static_cast<unsigned char>(utf8[i + k]);
      if ((t >> 6) != 2) throw std::runtime_error("a string is not valid UTF-8");
      cp = cp << 6 | (t & 0x3F);
    }
    i += n + 1;
    const char* named = cp == '"'    ? "\\\""
                        : cp == '\\' ? "\\\\"
                        : cp == '\n' ? "\\n"
                        : cp == '\r' ? "\\r"
                        : cp == '\t' ? "\\t"
                        : cp == '\b' ? "\\b"
                        : cp == '\f' ? "\\f"
                                     : nullptr;
    if (named) {
      out += named;
    } else if (cp >= 0x20 && cp < 0x7F) {
      out += char(cp);
    } else if (cp < 0x10000) {
      hex4(cp);
    } else {
      hex4(0xD800 | ((cp - 0x10000) >> 10)), hex4(0xDC00 | ((cp - 0x10000) & 0x3FF));
    }
  }
  return out + "\"";
}

}  // namespace nuvec::io
