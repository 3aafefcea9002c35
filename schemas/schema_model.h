// schemas/schema_model.h — the schema algebra (internal to the schemas layer).
//
// Term: a lazy schema expression — a schema node, or And / Or / Not of terms. Terms sit
// where a value nests (array items, property values), so recursive schemas stay finite.
// Norm: what a term means for one JSON value, by type: null, booleans, numbers and
// strings as automata, arrays and objects as unions of constraint records whose children
// are terms.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/char_dfa.h"
#include "schemas/json_schema.h"
#include "schemas/number_language.h"

namespace lockstep::schema {

using json = nlohmann::ordered_json;

struct Term;
using TermPtr = std::shared_ptr<const Term>;

struct Term {
  enum class Kind { kTrue, kFalse, kSchema, kAnd, kOr, kNot };
  Kind kind = Kind::kTrue;
  const json* node = nullptr;  ///< kSchema
  std::string pointer;         ///< kSchema: JSON pointer from the document root
  std::string base;            ///< kSchema: base URI for $ref resolution
  std::vector<TermPtr> args;   ///< kAnd, kOr, kNot
  std::string key;             ///< canonical form, equal keys mean equal terms
  size_t hash = 0;             ///< std::hash of `key`, set by the t_* functions (keys run long)
};

/// Terms as keys of hash tables, by `key` with its hash computed once (TermKeyHash), not at
/// every lookup: keys are JSON pointers and their combinations, hundreds of bytes.
struct TermKeyHash {
  size_t operator()(const TermPtr& t) const { return t->hash; }
};
struct TermKeyEqual {
  bool operator()(const TermPtr& a, const TermPtr& b) const { return a == b || a->key == b->key; }
};

TermPtr t_true();
TermPtr t_false();
TermPtr t_schema(const json* node, std::string pointer, std::string base);
TermPtr t_and(std::vector<TermPtr> args);
TermPtr t_or(std::vector<TermPtr> args);
TermPtr t_not(TermPtr arg);

using DfaPtr = std::shared_ptr<const CharDfa>;

/// Numbers: the accepted number texts (number_sets.h): every_number() when no value
/// constraint applies, no_strings() for none. `region` (bit 0: comparisons', bit 1:
/// multiples', bit 2: plain texts only) names where `texts` is exact (region_numbers() of
/// number_language.h); outside it `texts` accepts only texts whose value satisfies the
/// constraints. `formula`, when set, is a conjunction whose automaton `texts` is, so that
/// intersections build one automaton for the merged conjunction instead of a product.
/// A set may be pending (`pending` set, `texts` null): a conjunction whose automaton is
/// made on first use (made() of number_sets.h), so that one an intersection merges into a
/// larger walk, or a complement turns into a walk of the negation, is never built.
struct NumberSetPending;
struct NumberSet {
  DfaPtr texts;
  uint8_t region = 0;
  std::shared_ptr<const NumberConstraints> formula;
  /// Exponent texts were left out where a product of automata grew too large (plain texts
  /// stay exact); the grammar generator warns.
  bool lost_exponents = false;
  std::shared_ptr<NumberSetPending> pending = nullptr;
};

struct Contains {
  TermPtr term;
  uint32_t min = 1, max = kUnbounded;
  uint32_t from = 0;  ///< counts only items at this index or later
};

struct ArrayRec {
  std::vector<TermPtr> prefix;  ///< items by position
  TermPtr rest;                 ///< items after the prefix
  uint32_t min = 0, max = kUnbounded;
  std::vector<Contains> contains;
  bool unique = false;
  std::string unique_pointer;
};

/// Every member whose key is in `keys` has a value satisfying `value`.
struct KeyRule {
  DfaPtr keys;
  std::optional<std::string> literal;  ///< the single key, when `keys` holds exactly one
  TermPtr value;
  /// When set, `keys` is every key except these literal names (additionalProperties beside
  /// properties alone): lets an object tell that `keys` holds all its undeclared keys
  /// without a product of automata.
  std::shared_ptr<const std::vector<std::string>> all_but;
};

/// At least one member has its key in `keys` and a value satisfying `value`.
struct Obligation {
  DfaPtr keys;
  std::optional<std::string> literal;
  TermPtr value;
};

struct ObjectRec {
  std::vector<std::string> order;  ///< declared property names, in schema order
  std::vector<KeyRule> rules;
  std::vector<Obligation> must;
  uint32_t min = 0, max = kUnbounded;
};

struct Norm {
  bool null = false;
  uint8_t booleans = 0;  ///< bit 0: false, bit 1: true
  NumberSet number;
  DfaPtr string;
  std::vector<ArrayRec> arrays;
  std::vector<ObjectRec> objects;

  static Norm any();
  static Norm nothing();
};

/// Boolean algebra on Norms. Throws SchemaError when a complement cannot be expressed
/// (uniqueItems under not), LimitError("schema_alternatives", no place yet: normalize
/// places it) when the number of records exceeds EngineLimits::schema_alternatives.
Norm intersect(const Norm& a, const Norm& b);
/// The same, reusing `a` (a running intersection: its records are kept, not copied, where
/// `b` leaves them unconstrained).
Norm intersect(Norm&& a, const Norm& b);
/// The intersection of all `parts` (non-empty), as a left fold of intersect() but for the
/// numbers (numbers_and_all: their conjunctions walked once, merged).
Norm intersect_all(const std::vector<const Norm*>& parts);
Norm unite(const Norm& a, const Norm& b);
/// The union of all `parts` (as a balanced tree of unite(), records in order).
Norm unite_all(const std::vector<const Norm*>& parts);
Norm complement(const Norm& a);
/// Quick emptiness: no type admits a value (records are assumed satisfiable).
bool obviously_empty(const Norm& n);

/// Shared automata.
DfaPtr all_strings();
DfaPtr no_strings();
DfaPtr literal_key(const std::string& key);

}  // namespace lockstep::schema
