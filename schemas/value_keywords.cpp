// schemas/value_keywords.cpp — const and enum: JSON values as normal forms. Values of one
// type are gathered into one automaton (strings: their minimized trie; numbers: one walk
// over their digits), so that the cost is linear in the values' bytes, not a product per value.
#include <algorithm>
#include <cstring>
#include <deque>

#include <fmt/format.h>

#include "grammar/hash.h"
#include "schemas/number_sets.h"
#include "schemas/schema_compiler.h"

namespace lockstep::schema {

TermPtr SchemaCompiler::const_term(const json& value, const std::string& pointer) {
  synthetic_.push_back(json{{"const", value}});
  return t_schema(&synthetic_.back(), pointer, kRootBase);
}

Norm SchemaCompiler::value_norm(const json& v, const std::string& pointer) {
  Norm n = Norm::nothing();
  switch (v.type()) {
    case json::value_t::null: n.null = true; break;
    case json::value_t::boolean: n.booleans = v.get<bool>() ? 2 : 1; break;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: {
      n.number = numbers_among({decimal_of(v)});
      break;
    }
    case json::value_t::string: n.string = literal_set({v.get<std::string>()}, pointer); break;
    case json::value_t::array: {
      ArrayRec r;
      for (size_t i = 0; i < v.size(); ++i) r.prefix.push_back(const_term(v[i], pointer + "/" + std::to_string(i)));
      r.rest = t_false();
      r.min = r.max = static_cast<uint32_t>(v.size());
      n.arrays.push_back(std::move(r));
      break;
    }
    case json::value_t::object: {
      ObjectRec r;
      for (const auto& [k, x] : v.items()) {
        r.order.push_back(k);
        r.rules.push_back({literal_key(k), k, const_term(x, pointer + "/" + escape_pointer_token(k)), nullptr});
        r.must.push_back({literal_key(k), k, t_true()});
      }
      // Other names: the complement of the names' minimal automaton (linear), not a
      // product per name.
      DfaPtr others = all_strings();
      if (!r.order.empty()) others = std::make_shared<CharDfa>(CharDfa::literals(r.order).complement());
      r.rules.push_back({others, std::nullopt, t_false(), std::make_shared<const std::vector<std::string>>(r.order)});
      n.objects.push_back(std::move(r));
      break;
    }
    default: throw SchemaError(pointer, "a binary value cannot appear in a schema");
  }
  return n;
}

namespace {
// Eight bytes a step (the last ones zero-padded), then the word's length: a byte a step was
// a twentieth of compiling a 50,000-string enum, whose list is hashed as given and sorted.
uint64_t hash_words(const std::vector<std::string>& words) {
  uint64_t h = kFnvOffsetBasis ^ words.size();
  for (const std::string& w : words) {
    size_t i = 0;
    for (; i + 8 <= w.size(); i += 8) {
      uint64_t x;
      std::memcpy(&x, w.data() + i, 8);
      h = fnv1a_step(h, x);
    }
    if (i < w.size()) {
      uint64_t x = 0;
      std::memcpy(&x, w.data() + i, w.size() - i);
      h = fnv1a_step(h, x);
    }
    h = fmix64(h ^ w.size());  // the end of a word
  }
  return h;
}
}  // namespace

DfaPtr SchemaCompiler::literal_set(std::vector<std::string> strings, const std::string& pointer) {
  // A large list seen before as given (the same enum under several allOf branches or
  // properties) is found without sorting it again: sorting 50,000 strings costs about as
  // much as building their automaton.
  std::vector<ListedSet>* same_list = nullptr;
  if (strings.size() >= kListedWords) {
    same_list = &listed_sets_[hash_words(strings)];
    for (const ListedSet& e : *same_list) {
      if (e.list == strings) return e.set;
    }
  }
  std::vector<std::string> given;
  if (same_list) given = strings;
  const DfaPtr d = sorted_literal_set(std::move(strings), pointer);
  if (same_list) same_list->push_back({std::move(given), d});
  return d;
}

DfaPtr SchemaCompiler::sorted_literal_set(std::vector<std::string> strings, const std::string& pointer) {
  CharDfa::sort_words(strings);
  std::vector<DfaPtr>& same_hash = literal_sets_[hash_words(strings)];
  for (const DfaPtr& d : same_hash) {
    if (*d->words() == strings) return d;
  }
  DfaPtr d;
  try {
    d = std::make_shared<CharDfa>(CharDfa::sorted_literals(std::move(strings)));
  } catch (AutomatonLimitError& e) {
    e.locate(ErrorLocation::at_pointer(pointer));
    throw;
  } catch (const std::invalid_argument& e) {
    throw SchemaError(pointer, e.what());
  }
  same_hash.push_back(d);
  return d;
}

Norm SchemaCompiler::enum_norm(const json& list, const std::string& p) {
  if (!list.is_array()) throw SchemaError(p, "must be an array");
  if (list.empty()) never_matches(p, "the enum is empty: this schema matches no value");
  // Numbers together and strings together: one automaton for each whole list, not a union
  // of one per value. The deadline is read every 1,024 values: an enum is one keyword, but
  // may be most of a 64 MB document.
  Norm e = Norm::nothing();
  std::vector<Decimal> numbers;
  std::vector<std::string> strings;
  std::vector<const Norm*> others;
  std::deque<Norm> records;
  for (size_t i = 0; i < list.size(); ++i) {
    if ((i & 1023) == 1023) deadline_.check_now(ErrorLocation::at_pointer(p));
    const json& v = list[i];
    if (v.is_number()) {
      numbers.push_back(decimal_of(v));
    } else if (v.is_string()) {
      strings.push_back(v.get<std::string>());
    } else if (v.is_null()) {
      e.null = true;
    } else if (v.is_boolean()) {
      e.booleans |= v.get<bool>() ? 2 : 1;
    } else {
      records.push_back(value_norm(v, p + "/" + std::to_string(i)));
      others.push_back(&records.back());
      if (others.size() > engine_limits().schema_alternatives) {
        throw LimitError(ErrorLocation::at_pointer(p), "schema_alternatives", engine_limits().schema_alternatives,
                         fmt::format("an enum of {} or more arrays and objects", others.size()));
      }
    }
  }
  if (!others.empty()) {
    others.push_back(&e);
    e = unite_all(others);
  }
  if (!strings.empty()) {
    e.string = literal_set(std::move(strings), p);
    deadline_.check_now(ErrorLocation::at_pointer(p));
  }
  if (!numbers.empty()) {
    try {
      e.number = numbers_among(numbers);
    } catch (const std::exception& x) {
      throw SchemaError(p, x.what());
    }
    deadline_.check_now(ErrorLocation::at_pointer(p));
  }
  return e;
}

}  // namespace lockstep::schema
