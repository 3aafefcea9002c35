// schemas/json_document.cpp — see json_document.h.
#include "schemas/json_document.h"

#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "grammar/limits.h"

namespace lockstep {

namespace {

using ojson = nlohmann::ordered_json;

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

// SAX events → the document, with a stack of open objects and arrays.
class DocumentBuilder {
 public:
  DocumentBuilder(ojson& root, const std::string& name)
      : root_(root), name_(name), limit_(engine_limits().nesting_depth) {}

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
    auto& members = o.value->get_ref<ojson::object_t&>();
    const auto [at, fresh] = o.keys.try_emplace(k, members.size());
    if (fresh) {
      members.emplace_back(std::move(k), nullptr);  // the vector's own: no search
      slot_ = &members.back().second;
    } else {
      slot_ = &(members.begin() + static_cast<std::ptrdiff_t>(at->second))->second;
    }
    return true;
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    failed_at = (position >= token.size() ? position - token.size() : 0) + 1;
    throw e;
  }

 private:
  struct Open {
    ojson* value;
    std::unordered_map<std::string, size_t> keys;  // objects: key → index among the members
  };

  ojson* place(ojson v) {
    // A value inside more than nesting_depth objects and arrays.
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
    stack_.push_back({place(std::move(v)), {}});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  ojson& root_;
  const std::string& name_;
  const uint64_t limit_;
  std::vector<Open> stack_;
  ojson* slot_ = nullptr;  // the value of the key just read
};

}  // namespace

ojson parse_json_document(const std::string& text, const std::string& name) {
  ojson doc;
  DocumentBuilder builder(doc, name);
  try {
    ojson::sax_parse(text, &builder);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based: the byte just read when the error was found.
    const std::string what = e.what();
    const size_t colon = what.find(": ", what.find("parse error"));
    throw Error(place_in(name, text, e.byte),
                "malformed JSON" + (colon != std::string::npos ? what.substr(colon) : std::string()));
  } catch (const nlohmann::json::out_of_range& e) {
    const size_t start = builder.failed_at - 1, end = text.find_first_of(",]} \t\r\n", start);
    if (e.id != 406 || builder.failed_at == 0) {
      throw Error(place_in(name, text, builder.failed_at), fmt::format("malformed JSON: {}", e.what()));
    }
    throw Error(place_in(name, text, builder.failed_at),
                fmt::format("the number {} is beyond the range of a double (about ±1.8e308)",
                            text.substr(start, end == std::string::npos ? std::string::npos : end - start)));
  } catch (const nlohmann::json::exception& e) {
    throw Error(place_in(name, text, builder.failed_at), fmt::format("malformed JSON: {}", e.what()));
  }
  return doc;
}

}  // namespace lockstep
