// grammar/char_dfa.h — deterministic automata over Unicode code points, with the Boolean
// operations grammars lack: intersection, union, complement.
//
// JSON Schema needs them: `pattern` ∧ `maxLength`, `not: {pattern}`, keys that match no
// declared name and no patternProperties, numbers within bounds and multiples. A CharDfa
// is partial (a missing transition rejects); edges of a state are sorted, disjoint
// code-point ranges. It embeds into a grammar as an Expr of kind kAutomaton.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "grammar/grammar.h"
#include "grammar/limits.h"

namespace lockstep {

/// An automaton grew past its state limit (EngineLimits::string_automaton_states, or a smaller
/// budget a caller set and catches).
class AutomatonLimitError : public LimitError {
 public:
  using LimitError::LimitError;
};

class CharDfa {
 public:
  struct Edge {
    uint32_t lo, hi;  ///< inclusive code-point range
    uint32_t target;
  };
  /// A state's edges: sorted, disjoint ranges. The first kInlineEdges live in the state
  /// itself, so most states of a number's or a key's automaton cost no allocation of their own.
  static constexpr size_t kInlineEdges = 4;
  using Edges = boost::container::small_vector<Edge, kInlineEdges>;
  struct State {
    Edges edges;
    bool final = false;
  };

  /// States an operation may create before it throws AutomatonLimitError
  /// (EngineLimits::string_automaton_states).
  static size_t max_states() { return engine_limits().string_automaton_states; }

  /// The empty language.
  static CharDfa none();
  /// Every string (code points 0..U+10FFFF).
  static CharDfa all();
  /// Exactly `utf8`.
  static CharDfa literal(std::string_view utf8);
  /// Exactly the strings of `utf8` (the minimal automaton, built in time linear in their
  /// bytes after sorting them, without their trie; it records them as words()). Throws
  /// std::invalid_argument for text that is not UTF-8, AutomatonLimitError when the minimal
  /// automaton passes max_states().
  static CharDfa literals(const std::vector<std::string>& utf8);
  /// literals() of strings already sorted (byte order) and without duplicates (others are
  /// sorted first).
  static CharDfa sorted_literals(std::vector<std::string> words);
  /// Sorts `words` in byte order (std::string's) and drops repeats: the order
  /// sorted_literals() takes. A radix sort (Boost.Sort's string_sort), about half the time
  /// of std::sort on 50,000 enum values.
  static void sort_words(std::vector<std::string>& words);
  /// The number of states of literals(`words`), or `cap` + 1 once more than `cap` are known:
  /// the construction stops there (its registered states are the result's), so a large
  /// list is read only as far as it takes. 0 for no words. Throws as literals() does.
  static size_t literal_states(std::vector<std::string> words, size_t cap);
  /// Strings of `min`..`max` code points (max = kUnbounded: no upper bound).
  static CharDfa length(uint32_t min, uint32_t max);
  /// Strings of `min`..`max` code points, each in `any` (sorted, disjoint ranges).
  static CharDfa length(uint32_t min, uint32_t max, const std::vector<CodepointRange>& any);
  /// The language of length(min, max) without its chain of states: only the bounds
  /// (lengths()), in constant time and memory whatever they are. A JSON Schema's
  /// `maxLength: 1000000` is written in the grammar as blocks of code points
  /// (schemas/string_lengths.h) and never needs the chain, which would take 80 bytes a
  /// code point. Every operation takes it: intersect() with another length is the common
  /// bounds, with any other automaton with_length(); unite() with another length keeps
  /// bounds when the two ranges meet; elsewhere (complement(), products) the chain is
  /// built first (with_states(), AutomatonLimitError past max_states()). states() throws
  /// std::logic_error for it (chainless()).
  static CharDfa length_range(uint32_t min, uint32_t max);
  /// The language of a rule-free expression (as regex_to_expr produces). Throws
  /// std::invalid_argument if it contains rule references.
  static CharDfa from_expr(const Expr& e);
  /// An automaton given state by state (state 0 starts; edges sorted, disjoint, targets in
  /// range). Throws std::invalid_argument otherwise.
  static CharDfa from_states(std::vector<State> states);
  /// States whose edges share one vector: state s has edges[first[s], past[s]) (sorted,
  /// disjoint, targets in range) and finality final[s]; state 0 starts.
  struct PooledStates {
    std::vector<Edge> edges;
    std::vector<uint32_t> first, past;
    std::vector<char> final;
  };
  /// The minimal automaton of `states`: from_states(...).minimized() without an edge vector
  /// per state, which a state of more than kInlineEdges edges allocates (a number's walk
  /// reads ten digits a state). Throws std::invalid_argument as from_states does.
  static CharDfa minimal_from(const PooledStates& states);

  /// Products. Throw AutomatonLimitError past max_states() states, or past `max_states`
  /// (before minimization). When an operand has words() (both, for unite), they are set
  /// operations on the word lists instead (intersect_words / unite_words), linear in the
  /// words' bytes; unite falls back to the product when the merged trie is past the limit.
  /// Intersecting with length(min, max) for a finite max is with_length(). With `explored`
  /// given, it is set to the states the product walked (its cost; 0 when word lists or a
  /// length answered).
  static CharDfa intersect(const CharDfa& a, const CharDfa& b, size_t max_states = CharDfa::max_states(),
                           size_t* explored = nullptr);
  static CharDfa unite(const CharDfa& a, const CharDfa& b, size_t max_states = CharDfa::max_states(),
                       size_t* explored = nullptr);
  /// The words of a ∩ b (sorted, unique) when a or b has words(); of a ∪ b when both have.
  /// Otherwise nullopt. Callers that keep an operand whose list is unchanged compare sizes.
  static std::optional<std::vector<std::string>> intersect_words(const CharDfa& a, const CharDfa& b);
  static std::optional<std::vector<std::string>> unite_words(const CharDfa& a, const CharDfa& b);
  /// The strings of `a` of `min`..`max` code points (max finite, else std::logic_error):
  /// the product with a length counter, built and minimized layer by layer, as an acyclic
  /// automaton is (char_dfa_length.cpp), in time linear in the product's states and edges.
  /// The same automaton as the generic product's, state for state. Throws
  /// AutomatonLimitError past max_states() or `max_states` states before minimization.
  static CharDfa with_length(const CharDfa& a, uint32_t min, uint32_t max, size_t max_states = CharDfa::max_states());
  /// Strings not in the language (within all strings). O(states + edges) when this
  /// automaton is known minimal (as every operation here except from_states returns it):
  /// the complement of a minimal complete DFA is minimal, so only the one state accepting
  /// every string (now dead) is dropped and nothing is refined.
  CharDfa complement() const;
  /// The smallest equivalent DFA (partition refinement, partition_refinement.h) without
  /// dead states; a copy when this automaton is known minimal already.
  CharDfa minimized() const;

  bool empty() const;
  /// True when this automaton is known to have no dead state but the start and no two
  /// equivalent states (minimized()'s output, or a construction minimal as it stands: every
  /// operation here but from_states). False says nothing.
  bool known_minimal() const { return minimal_; }
  bool accepts(std::string_view utf8) const;
  /// True when the language is exactly {""}.
  bool only_empty_string() const;
  /// The single string of the language when it has exactly one (else false).
  bool single_string(std::string& out) const;
  /// States; for a length_range(), those of its chain.
  size_t size() const;
  /// The language as a finite list of strings, sorted (byte order, which is code-point
  /// order) and without duplicates, when it was built from one (literal(), literals(), and
  /// set operations on lists); copies keep it. Null otherwise, even for a finite language.
  const std::vector<std::string>* words() const { return words_.get(); }
  /// The states (state 0 starts). Throws std::logic_error for a chainless() automaton.
  const std::vector<State>& states() const {
    if (chainless_) throw_chainless();
    return states_;
  }
  uint32_t start() const { return 0; }
  /// (min, max) of an automaton made by length(min, max) or length_range() (copies keep
  /// them): its language is every string of min..max code points. Nullopt otherwise.
  const std::optional<std::pair<uint32_t, uint32_t>>& lengths() const { return length_; }
  /// True for a length_range() automaton, which has bounds but no states.
  bool chainless() const { return chainless_; }
  /// This automaton with states: a chainless() one's chain (length(), AutomatonLimitError
  /// past max_states()), else a copy.
  CharDfa with_states() const;

 private:
  CharDfa completed() const;  // every code point has an edge (to a dead sink if need be)
  std::vector<State> states_;  // state 0 is the start
  // Known to have no dead states (but the start) and no two equivalent states: the output
  // of minimized() or of a construction that is minimal as it stands.
  bool minimal_ = false;
  std::shared_ptr<const std::vector<std::string>> words_;  // see words()
  // The language is every string of length_->first..length_->second code points (set by
  // length(min, max); copies keep it, as they keep the language).
  std::optional<std::pair<uint32_t, uint32_t>> length_;
  // length_range(): length_ is the language and states_ is empty (see chainless()).
  bool chainless_ = false;
  [[noreturn]] static void throw_chainless();
  friend class CharDfaBuilder;
};

/// Embeds a CharDfa into a grammar. With `json_string`, the expression matches the body of
/// a JSON string literal (RFC 8259 §7, without the quotes) whose decoded value is in the
/// language: each code point written raw when JSON allows it, or escaped (\" \\ \/ \b \f
/// \n \r \t, \uXXXX for code points of the Basic Multilingual Plane, the escaped surrogate
/// pair \uD83D\uDE00 above it: automata/json_escapes.h). Otherwise it matches the UTF-8
/// text of the language itself. A chainless() automaton is embedded as its chain
/// (with_states(): AutomatonLimitError past the limit).
Expr automaton_expr(std::shared_ptr<const CharDfa> dfa, bool json_string);

}  // namespace lockstep
