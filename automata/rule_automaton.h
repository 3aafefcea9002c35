// automata/rule_automaton.h — one rule body → a deterministic automaton over bytes and
// rule symbols (internal to the compiler).
//
// The textbook pipeline (Hopcroft, Motwani & Ullman, ch. 2–4): Thompson NFA over byte
// ranges and rule symbols (code-point classes expanded to UTF-8 byte sequences) → subset
// construction → Moore partition refinement → removal of dead states. All stored flat (CSR)
// so large repetitions stay cheap to build.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "automata/grammar_automaton.h"
#include "automata/json_escapes.h"

namespace lockstep {

class InlinePlan;

/// A DFA with states 0..n-1, state 0 the start. Edges of state s:
/// bytes[byte_begin[s] .. byte_begin[s+1]) (disjoint, sorted) and rules[rule_begin[s] ..
/// rule_begin[s+1]) (one per rule, sorted by rule as built; an automaton in the rule-automaton
/// cache numbers its callees by first appearance, and the grammar compiler sorts a state's
/// calls again when it names them).
struct RuleDfa {
  /// No states, and without the leading offsets of a built automaton (byte_begin and
  /// rule_begin empty): nothing allocated; with_capacity() starts from it.
  struct Unbuilt {};
  static constexpr Unbuilt kUnbuilt{};
  RuleDfa() = default;
  explicit RuleDfa(Unbuilt) : byte_begin(), rule_begin() {}
  /// An automaton with no states yet and room for `states` states, `bytes` byte edges and
  /// `rules` rule edges (capacity only: add_state grows past it).
  static RuleDfa with_capacity(size_t states, size_t bytes, size_t rules) {
    RuleDfa d(kUnbuilt);
    d.final.reserve(states);
    d.byte_begin.reserve(states + 1);
    d.rule_begin.reserve(states + 1);
    d.byte_begin.push_back(0);
    d.rule_begin.push_back(0);
    d.bytes.reserve(bytes);
    d.rules.reserve(rules);
    return d;
  }

  std::vector<uint8_t> final;
  std::vector<uint32_t> byte_begin{0};
  std::vector<GrammarAutomaton::ByteEdge> bytes;
  std::vector<uint32_t> rule_begin{0};
  std::vector<GrammarAutomaton::RuleEdge> rules;

  uint32_t size() const { return static_cast<uint32_t>(final.size()); }
  /// Appends a state whose edges are the given ones (targets must be valid indices
  /// eventually).
  void add_state(bool is_final) {
    final.push_back(is_final ? 1 : 0);
    byte_begin.push_back(static_cast<uint32_t>(bytes.size()));
    rule_begin.push_back(static_cast<uint32_t>(rules.size()));
  }
  void close_state() {
    byte_begin.back() = static_cast<uint32_t>(bytes.size());
    rule_begin.back() = static_cast<uint32_t>(rules.size());
  }
};

/// The byte DFA of `automaton` embedded as a whole rule (Expr::Kind::kAutomaton), built
/// directly instead of through determinize_rule's NFA (direct_automaton.cpp): the same
/// language, minimal. Throws LimitError (rule_automaton_states) naming `rule` past
/// `max_states` states. With
/// `escapes`, a JSON string's \u spellings are read by calls of the escape rules `escapes`
/// names, from the state after the backslash (json_escapes.h); without, they are spelled
/// out, and code points above U+FFFF are read as UTF-8 only.
RuleDfa direct_automaton_dfa(const CharDfa& automaton, bool json_string, const Rule& rule, uint32_t max_states,
                             const EscapeRuleFn* escapes = nullptr);

/// A memo for the direct construction of one grammar's automata (EscapeRuleFn::shapes):
/// its rules' string automata repeat state shapes (a key trie's letters, a length
/// counter's positions), each found once. Not thread-safe: one grammar compiled at a time.
std::shared_ptr<DirectShapeMemo> make_direct_shape_memo();

/// Thompson NFA + subset construction for `rule` (a whole-rule automaton is built by
/// direct_automaton_dfa). With `plan`, the references it substitutes are built as the
/// bodies they stand for (inline.h); `escapes` as for direct_automaton_dfa. Throws
/// LimitError at the rule's line:column when its NFA or DFA needs more than `max_states`
/// states (rule_automaton_states), when the NFA-state sets of the subset construction add
/// up to more than EngineLimits::automaton_state_set, or past `deadline` (compile_ms; a
/// deadline of its own when none is given).
RuleDfa determinize_rule(const Rule& rule, uint32_t max_states, const InlinePlan* plan = nullptr,
                         const EscapeRuleFn* escapes = nullptr, CompileDeadline* deadline = nullptr);

/// The minimal equivalent DFA (partition refinement, grammar/partition_refinement.h); the
/// start stays state 0.
RuleDfa minimize(const RuleDfa& dfa);

/// `dfa` without the states from which no final state is reachable (through bytes, or
/// through rules with productive[rule]) and the edges into them; the start state always
/// stays. std::nullopt when there is nothing to remove (most automata: no copy is made).
std::optional<RuleDfa> trimmed(const RuleDfa& dfa, const std::vector<char>& productive);

}  // namespace lockstep
