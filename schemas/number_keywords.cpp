// schemas/number_keywords.cpp — the numeric keywords of a schema (bounds, multipleOf) as one number set.
#include <algorithm>

#include <fmt/format.h>

#include "schemas/number_sets.h"
#include "schemas/schema_compiler.h"

namespace lockstep::schema {

Decimal decimal_of(const json& number) {
  // A float is the double the document's text denotes, written back exactly (its shortest
  // round-trip digits); integers keep all their digits.
  if (number.is_number_float()) return Decimal::from_double(number.get<double>());
  Decimal d;  // an integer's digits as they are (a 50,000-value enum spent 6 % of its time in text)
  if (number.is_number_unsigned()) {
    d.int_digits = std::to_string(number.get<uint64_t>());
  } else {
    const auto v = number.get<int64_t>();
    d.negative = v < 0;
    d.int_digits = std::to_string(d.negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v));
  }
  return d;
}

Norm SchemaCompiler::number_keywords(const KeywordView& s, const std::string& pointer, int draft) {
  NumberConstraints c;
  auto value = [&](const char* key) {
    const json& v = s[key];
    if (!v.is_number()) throw SchemaError(pointer + "/" + key, "must be a number");
    return decimal_of(v);
  };
  const bool legacy_min = s.contains("exclusiveMinimum") && s["exclusiveMinimum"].is_boolean();
  const bool legacy_max = s.contains("exclusiveMaximum") && s["exclusiveMaximum"].is_boolean();
  if (s.contains("minimum")) c.at_least.push_back({value("minimum"), legacy_min && s["exclusiveMinimum"].get<bool>()});
  if (s.contains("maximum")) c.at_most.push_back({value("maximum"), legacy_max && s["exclusiveMaximum"].get<bool>()});
  if (s.contains("exclusiveMinimum") && !legacy_min) c.at_least.push_back({value("exclusiveMinimum"), true});
  if (s.contains("exclusiveMaximum") && !legacy_max) c.at_most.push_back({value("exclusiveMaximum"), true});
  if (s.contains("multipleOf")) {
    const json& v = s["multipleOf"];
    if (!v.is_number() || v.get<double>() <= 0) throw SchemaError(pointer + "/multipleOf", "must be a number > 0");
    c.multiple_of.push_back(value("multipleOf"));
  }
  Norm n = Norm::any();
  if (c.empty()) return n;
  // The node's integer type joins the same automaton (one walk, not a product); type_norm's
  // integers then intersect with it for free (numbers_constrained notes the inclusion).
  if (draft >= 6 && s.contains("type")) {
    const json& t = s["type"];
    auto has = [&](const char* name) {
      if (t.is_string()) return t.get<std::string>() == name;
      return t.is_array() && std::any_of(t.begin(), t.end(), [&](const json& x) { return x == name; });
    };
    c.integer = has("integer") && !has("number");
  }
  // Made when first used: an intersection may merge these keywords into one walk with
  // others (an allOf of multipleOf), a complement may walk their negation instead.
  n.number = pending_numbers(c, [this, c, pointer]() mutable {
    bool plain_only = false;
    NumberSet result;
    try {
      result = numbers_constrained(c, plain_only);
    } catch (const std::invalid_argument& e) {
      if (c.multiple_of.empty()) throw SchemaError(pointer, e.what());
      unsupported(pointer, "multipleOf", e.what());
      c.multiple_of.clear();  // lenient: the other constraints still hold
      try {
        result = numbers_constrained(c, plain_only);
      } catch (const std::invalid_argument& e2) {
        throw SchemaError(pointer, e2.what());
      }
    }
    if (plain_only) {
      warn(pointer, fmt::format("numbers are accepted here only without exponent: the automaton deciding {} for "
                                "exponent notation would pass {} states", c.key(), kMaxNumberStates));
    }
    return result;
  });
  return n;
}

}  // namespace lockstep::schema
