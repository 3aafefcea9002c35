// schemas/json_document.cpp — see json_document.h.
#include "schemas/json_document.h"

#include <algorithm>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "grammar/limits.h"

namespace lockstep {

namespace {

using ojson = nlohmann::ordered_json;

// Objects of up to this many members find a key by a scan; larger ones keep a hash.
constexpr size_t kScanMembers = 16;

// The line:column of a 1-based byte of `text`, in `name`.
ErrorLocation place_in(const std::string& name, const std::string& text, size_t byte) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  ErrorLocation where = ErrorLocation::at(
      SourceLocation{static_cast<uint32_t>(line), static_cast<uint32_t>(column), static_cast<uint32_t>(byte)});
  where.file = name;
  return where;
}

// SAX events → the document, with a stack of open objects and arrays. An object's members
// are gathered in a vector of their own and moved into it when it closes: nlohmann's object
// is a vector of pairs with a const key, so growing it in place copies every member read so
// far, subtrees included (a fifth of compiling a Kubernetes schema went to those copies).
class DocumentBuilder {
 public:
  DocumentBuilder(ojson& root, const std::string& name, uint64_t limit) : root_(root), name_(name), limit_(limit) {}

  size_t failed_at = 0;  // 1-based byte where the token the parser failed on starts

  bool null() { return put(nullptr); }
  bool boolean(bool v) { return put(v); }
  bool number_integer(ojson::number_integer_t v) { return put(v); }
  bool number_unsigned(ojson::number_unsigned_t v) { return put(v); }
  bool number_float(ojson::number_float_t v, const std::string&) { return put(v); }
  bool string(std::string& v) { return put(std::move(v)); }
  bool binary(ojson::binary_t& v) { return put(ojson::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(ojson::object()); }
  bool start_array(std::size_t) { return open(ojson::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string& k) {
    Open& o = stack_.back();
    const size_t at = o.find(k);
    if (at == kNone) {
      o.add(std::move(k));
      slot_ = &o.members.back().second;
    } else {
      slot_ = &o.members[at].second;
    }
    return true;
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    failed_at = (position >= token.size() ? position - token.size() : 0) + 1;
    throw e;
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  struct Open {
    ojson* value;
    std::vector<std::pair<std::string, ojson>> members;  // an object's, in order
    std::unordered_map<std::string, size_t> keys;        // past kScanMembers: key → index
    size_t find(const std::string& k) const {
      if (members.size() <= kScanMembers) {
        for (size_t i = 0; i < members.size(); ++i) {
          if (members[i].first == k) return i;
        }
        return kNone;
      }
      const auto it = keys.find(k);
      return it == keys.end() ? kNone : it->second;
    }
    void add(std::string k) {
      members.emplace_back(std::move(k), nullptr);
      if (members.size() == kScanMembers + 1) {
        for (size_t i = 0; i < members.size(); ++i) keys.emplace(members[i].first, i);
      } else if (members.size() > kScanMembers + 1) {
        keys.emplace(members.back().first, members.size() - 1);
      }
    }
  };

  // Moving an Open (the stack growing) must keep its members' storage, where the values
  // below it are placed.
  static_assert(std::is_nothrow_move_constructible_v<Open>);

  ojson* place(ojson v) {
    // A value inside more than `limit_` objects and arrays.
    if (stack_.size() > limit_) {
      ErrorLocation where;
      where.file = name_;
      throw LimitError(where, "nesting_depth", limit_, "the JSON's nesting");
    }
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    ojson& parent = *stack_.back().value;
    if (parent.is_array()) {
      auto& items = parent.get_ref<ojson::array_t&>();
      items.push_back(std::move(v));
      return &items.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool put(ojson v) {
    place(std::move(v));
    return true;
  }
  bool open(ojson v) {
    // An open value's place stays put: its parent gets no other member or item before it
    // closes, and moving an Open keeps its vectors' storage.
    stack_.push_back({place(std::move(v)), {}, {}});
    return true;
  }
  bool close() {
    Open& o = stack_.back();
    if (o.value->is_object()) {
      auto& object = o.value->get_ref<ojson::object_t&>();
      object.reserve(o.members.size());
      for (auto& [k, v] : o.members) object.emplace_back(std::move(k), std::move(v));
    }
    stack_.pop_back();
    return true;
  }

  ojson& root_;
  const std::string& name_;
  const uint64_t limit_;
  std::vector<Open> stack_;
  ojson* slot_ = nullptr;  // the value of the key just read
};

// The fast reader: simdjson's DOM (Langdale & Lemire, "Parsing Gigabytes of JSON per Second",
// VLDB Journal 2019), turned into the document DocumentBuilder would give. nlohmann's lexer
// reads a byte at a time and keeps each token's text for its messages: a tenth of the time to
// first mask of a 77 KB Kubernetes schema, five times what this reader takes. Whatever
// simdjson refuses (malformed JSON, an integer beyond 64 bits, nesting past 1,024) and what it
// reads differently goes to DocumentBuilder, whose errors name the place: read() then returns
// false, and `out` is left for DocumentBuilder to overwrite.
class FastReader {
 public:
  explicit FastReader(uint64_t limit) : limit_(limit) {}

  bool read(std::string_view text, ojson& out) {
    if (text.size() >= simdjson::SIMDJSON_MAXSIZE_BYTES || has_negative_zero(text)) return false;
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    if (parser.parse(text.data(), text.size(), true).get(root) != simdjson::SUCCESS) return false;
    return build(root, out, 0);
  }

 private:
  // An integer -0, which nlohmann reads as a signed integer and simdjson's DOM as 0: "-0" where
  // a value starts (after '[', ',', ':' or at the start) and not followed by a fraction or an
  // exponent. Inside a string the same bytes only cost the fallback's time.
  static bool has_negative_zero(std::string_view text) {
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    for (size_t at = text.find("-0"); at != std::string_view::npos; at = text.find("-0", at + 2)) {
      if (at + 2 < text.size() && (text[at + 2] == '.' || text[at + 2] == 'e' || text[at + 2] == 'E')) continue;
      size_t before = at;
      while (before > 0 && space(text[before - 1])) --before;
      if (before == 0 || text[before - 1] == '[' || text[before - 1] == ',' || text[before - 1] == ':') return true;
    }
    return false;
  }

  // `e`, inside `depth` objects and arrays, into `out` (null); false past the nesting limit.
  // Recursion is bounded by simdjson's depth limit (DEFAULT_MAX_DEPTH, 1,024).
  bool build(simdjson::dom::element e, ojson& out, uint64_t depth) {
    using Type = simdjson::dom::element_type;
    if (depth > limit_) return false;  // DocumentBuilder::place() names the limit
    switch (e.type()) {
      case Type::OBJECT: {
        const simdjson::dom::object object = e.get_object().value_unsafe();
        out = ojson::object();
        auto& members = out.get_ref<ojson::object_t&>();
        members.reserve(object.size());  // members stay put: `keys` points into them
        std::unordered_map<std::string_view, size_t> keys;  // past kScanMembers: key → index
        for (const simdjson::dom::key_value_pair field : object) {
          // A repeated key keeps its first place and its last value, as DocumentBuilder.
          size_t at = SIZE_MAX;
          if (members.size() <= kScanMembers) {
            for (size_t i = 0; i < members.size() && at == SIZE_MAX; ++i) {
              if ((members.begin() + static_cast<ptrdiff_t>(i))->first == field.key) at = i;
            }
          } else {
            if (keys.empty()) {
              for (size_t i = 0; i < members.size(); ++i) keys.emplace((members.begin() + static_cast<ptrdiff_t>(i))->first, i);
            }
            if (const auto it = keys.find(field.key); it != keys.end()) at = it->second;
          }
          if (at == SIZE_MAX) {
            members.emplace_back(std::string(field.key), nullptr);
            at = members.size() - 1;
            if (!keys.empty()) keys.emplace(members.back().first, at);
          }
          if (!build(field.value, (members.begin() + static_cast<ptrdiff_t>(at))->second, depth + 1)) return false;
        }
        return true;
      }
      case Type::ARRAY: {
        const simdjson::dom::array array = e.get_array().value_unsafe();
        out = ojson::array();
        auto& items = out.get_ref<ojson::array_t&>();
        items.reserve(array.size());
        for (const simdjson::dom::element item : array) {
          if (!build(item, items.emplace_back(), depth + 1)) return false;
        }
        return true;
      }
      case Type::STRING:
        out = std::string(e.get_string().value_unsafe());
        return true;
      case Type::INT64: {  // nlohmann reads an integer without a sign as unsigned
        const int64_t v = e.get_int64().value_unsafe();
        if (v >= 0) {
          out = static_cast<uint64_t>(v);
        } else {
          out = v;
        }
        return true;
      }
      case Type::UINT64:
        out = e.get_uint64().value_unsafe();
        return true;
      case Type::DOUBLE:
        out = e.get_double().value_unsafe();
        return true;
      case Type::BOOL:
        out = e.get_bool().value_unsafe();
        return true;
      case Type::NULL_VALUE:
        out = nullptr;
        return true;
    }
    return false;
  }

  const uint64_t limit_;
};

// The error for a number token beyond a double's range, which starts at 1-based byte `at`.
Error beyond_double(const std::string& name, std::string_view text, size_t at) {
  const size_t start = at - 1, end = text.find_first_of(",]} \t\r\n", start);
  ErrorLocation where = place_in(name, std::string(text.substr(0, start + 1)), at);
  where.byte_offset = at;
  return Error(std::move(where),
               fmt::format("the number {} is beyond the range of a double (about ±1.8e308)",
                           text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)));
}

}  // namespace

ojson read_json(std::string_view text) {
  ojson doc;
  if (FastReader(UINT64_MAX).read(text, doc)) return doc;
  const std::string name;
  DocumentBuilder builder(doc, name, UINT64_MAX);
  try {
    ojson::sax_parse(text, &builder);
  } catch (const nlohmann::json::out_of_range& e) {
    if (e.id != 406 || builder.failed_at == 0) throw;
    throw beyond_double(name, text, builder.failed_at);
  }
  return doc;
}

std::string compact_json_text(std::string_view text) {
  // simdjson's minifier drops whitespace outside strings; it fails only on text that is not
  // JSON (an unclosed string), kept as it is.
  std::string out(text.size() + simdjson::SIMDJSON_PADDING, '\0');
  size_t size = 0;
  if (simdjson::minify(text.data(), text.size(), out.data(), size) != simdjson::SUCCESS) return std::string(text);
  out.resize(size);
  return out;
}

ojson parse_json_document(const std::string& text, const std::string& name) {
  ojson doc;
  if (FastReader(engine_limits().nesting_depth).read(text, doc)) return doc;
  DocumentBuilder builder(doc, name, engine_limits().nesting_depth);
  try {
    ojson::sax_parse(text, &builder);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the byte just read when the error was found.
    const std::string what = e.what();
    const size_t colon = what.find(": ", what.find("parse error"));
    throw Error(place_in(name, text, e.byte),
                "malformed JSON" + (colon != std::string::npos ? what.substr(colon) : std::string()));
  } catch (const nlohmann::json::out_of_range& e) {
    if (e.id != 406 || builder.failed_at == 0) {
      throw Error(place_in(name, text, builder.failed_at), fmt::format("malformed JSON: {}", e.what()));
    }
    throw beyond_double(name, text, builder.failed_at);
  } catch (const nlohmann::json::exception& e) {
    throw Error(place_in(name, text, builder.failed_at), fmt::format("malformed JSON: {}", e.what()));
  }
  return doc;
}

}  // namespace lockstep
