// schemas/number_sets.h — number texts in the schema algebra: shared automata, memoized Boolean operations.
//
// A Norm's numbers (NumberSet) are one automaton over number texts: every_number() when no
// value constraint applies, otherwise a set exact on its region (NumberSet::region, within
// which a complement is taken) and sound outside it (number_language.h). A set made from a
// conjunction keeps it (NumberSet::formula): intersecting two such sets walks the merged
// conjunction, and the complement of one bound is the opposite bound. The automata of
// keywords (bounds, integer types, multipleOf, const and enum values) and the results of
// operations on them are kept process-wide, keyed by value and by operand identity, so the
// automata common to many schemas ("integer", "minimum: 0", their intersection) are built
// once per process; at most kMaxSharedStates states, no automaton over
// kMaxSharedAutomaton (the last few such are kept apart, for the schema that made them).
// Thread-safe. Internal to the schemas layer.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>

#include "schemas/number_language.h"
#include "schemas/schema_model.h"

namespace lockstep::schema {

/// Automaton states the process-wide cache may hold, and the largest automaton it keeps (the
/// common ones are far smaller; a schema that combines many multipleOf into a huge automaton
/// must not crowd them out).
inline constexpr size_t kMaxSharedStates = 400000;
inline constexpr size_t kMaxSharedAutomaton = 5000;
/// States a product of two number automata may reach before it is taken on their plain
/// texts alone (NumberSet::lost_exponents).
inline constexpr size_t kMaxProductStates = 50000;
/// States the products of one schema's set operations (numbers_and past its conjunction walk,
/// numbers_or, numbers_not) may reach in all while they keep exponent texts; from there on,
/// its set operations are on plain texts (NumberSet::lost_exponents). A product costs about
/// 0.3–1 µs a state, and Boolean combinations of multipleOf multiply exponent machinery
/// (oneOf of multipleOf 33, 12 and 77: 21,830 states, 150 ms, before a later product
/// dropped exponent texts anyway); 25,000 states keep the work of a schema's number algebra
/// with exponent texts near 10 ms. A memoized result counts its first cost again, so a
/// schema gets the same sets in a fresh process as after others.
inline constexpr size_t kMaxSchemaProductStates = 25000;

/// While alive, the set operations on this thread draw on one budget of `states` (the
/// schema compiler holds one per schema); scopes nest, the innermost counting. Without one,
/// only kMaxProductStates applies. Not copyable.
class ProductBudget {
 public:
  explicit ProductBudget(size_t states = kMaxSchemaProductStates);
  ~ProductBudget();
  ProductBudget(const ProductBudget&) = delete;
  ProductBudget& operator=(const ProductBudget&) = delete;
  /// States left: SIZE_MAX without a scope.
  static size_t left();
  /// Takes `states` from the innermost budget (at most what is left).
  static void take(size_t states);

 private:
  size_t left_;
  ProductBudget* outer_;
};

/// How a pending NumberSet is made: `make` runs once, on first use, from whichever
/// operation needs the automaton (a conjunction's walk, with the fallbacks and warnings of
/// the place that deferred it); its result may differ from the pending set's fields
/// (plain texts only, another region, no formula) and replaces them. Not thread-safe: a
/// pending set belongs to one schema compilation.
struct NumberSetPending {
  std::function<NumberSet()> make;
  std::optional<NumberSet> made;
};
/// `s` with its automaton: `s` itself unless pending, else the result of its `make` (run
/// at most once; an exception from it propagates and the set stays pending).
const NumberSet& made(const NumberSet& s);
/// The conjunction `c` as a pending set (fields as numbers_constrained() gives when the
/// walk keeps exponent texts), made by `make`; the result of `make` at once when `c` is
/// empty, when one of its multiples has no walk (so that the error or fallback is the
/// place's own), or when its automaton is in the process-wide registry already.
NumberSet pending_numbers(const NumberConstraints& c, std::function<NumberSet()> make);

/// Every number text: neutral for numbers_and, absorbing for numbers_or.
DfaPtr every_number();
NumberSet all_number_set();
NumberSet no_number_set();
/// Intersection and union. The intersection of a pending set with every number is that
/// pending set, and with another conjunction the pending walk of their merged conjunction
/// (numbers_and_all): a pending operand is made only where its own automaton is needed.
NumberSet numbers_and(const NumberSet& a, const NumberSet& b);
/// The intersection of all `sets`: the conjunctions among them (sets with a formula and all
/// their exponent texts) merged into one walk first, then numbers_and with each other set in
/// turn. An allOf of bounds and multipleOf builds one automaton, where a left fold of
/// numbers_and walks each prefix's conjunction (Handwritten num1: four bounded products of
/// growing multiples before the one it keeps). Falls back to the left fold when the merged
/// walk is refused or over its budget. None: every number.
NumberSet numbers_and_all(const std::vector<const NumberSet*>& sets);
NumberSet numbers_or(const NumberSet& a, const NumberSet& b);
/// The numbers outside `a`: every number when `a` is empty, none when it is every number,
/// otherwise a's region minus `a` (so a text outside it is rejected by both a set and its
/// complement).
NumberSet numbers_not(const NumberSet& a);
/// True when no number text is in both.
bool numbers_disjoint(const NumberSet& a, const NumberSet& b);
/// The numbers satisfying all of `c` (one automaton, number_language.h). When the automaton
/// with exponent texts would pass its state budget: the plain texts alone, with
/// `plain_only` set. Throws std::invalid_argument when even those are over budget or a
/// multipleOf is not > 0. With `c.integer`, the result is known to be within
/// numbers_integer(6), so numbers_and of the two costs nothing.
NumberSet numbers_constrained(const NumberConstraints& c, bool& plain_only);
/// Values in `values` (const, enum); past 5·kMaxNumberStates walk states, their plain texts
/// (lost_exponents set).
NumberSet numbers_among(const std::vector<Decimal>& values);
/// The integers of `draft` (4: no fraction and no exponent; later: a zero fractional part).
NumberSet numbers_integer(int draft);
/// a.texts ∩ canonical_numbers(), or a.texts itself when that is empty (the constraint
/// needs texts no serializer writes).
DfaPtr numbers_canonical(const DfaPtr& a);

}  // namespace lockstep::schema
