// schemas/keyword_view.h — a schema object read by keyword (internal to the schemas layer).
//
// Compiling a schema object asks it for some sixty keywords (normalize_schema and the
// number, string, array and object keyword readers), most of them absent. An ordered_json
// object finds a key by comparing it with each of its keys in turn, a strlen and a memcmp
// per key for a `const char*` keyword: a tenth of the schema phase on Kubernetes schemas.
// The view keeps a 64-bit signature of the object's keys, one bit per key from its length
// and its first and last bytes, so most absent keywords cost one bit test; the others, and
// present ones, are found by comparing lengths first.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "schemas/schema_model.h"

namespace lockstep::schema {

class KeywordView {
 public:
  /// `object` must be a JSON object and outlive the view.
  explicit KeywordView(const json& object) : object_(object) {
    for (const auto& member : members()) signature_ |= bit(member.first);
  }

  /// Whether the object has `key`.
  bool contains(std::string_view key) const { return (signature_ & bit(key)) != 0 && find(key) != nullptr; }

  /// The value of `key`, which the object must have (std::out_of_range otherwise).
  const json& operator[](std::string_view key) const {
    if (const json* v = find(key)) return *v;
    throw std::out_of_range("the schema object has no key '" + std::string(key) + "'");
  }

  const json& object() const { return object_; }

 private:
  const json::object_t& members() const { return object_.get_ref<const json::object_t&>(); }

  static uint64_t bit(std::string_view key) {
    if (key.empty()) return 1;
    const auto mix = key.size() * 7 + static_cast<unsigned char>(key.front()) * 3 + static_cast<unsigned char>(key.back());
    return uint64_t{1} << (mix & 63);
  }

  const json* find(std::string_view key) const {
    for (const auto& member : members()) {
      if (member.first.size() == key.size() && std::memcmp(member.first.data(), key.data(), key.size()) == 0) {
        return &member.second;
      }
    }
    return nullptr;
  }

  const json& object_;
  uint64_t signature_ = 0;
};

}  // namespace lockstep::schema
