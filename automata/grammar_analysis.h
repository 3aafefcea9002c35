// automata/grammar_analysis.h — what the compiler works out about a finished grammar
// automaton: FIRST/FOLLOW bytes and nullability, call-graph components, mask classes
// (internal to the automata layer; the compiler calls these once, in this order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "automata/grammar_automaton.h"

namespace lockstep {

struct AutomatonAnalysis {
  /// FIRST sets per state and FOLLOW sets per rule (bytes), by fixed-point iteration, each
  /// FOLLOW widened to the smallest of `follow_classes` that holds it (Grammar::follow_classes).
  /// Rules from `first_escape` on are escape rules (json_escapes.h).
  static void compute_follow(GrammarAutomaton& g, uint32_t first_escape, const std::vector<std::string>& follow_classes);
  /// Strongly connected components of the rule call graph (GrammarAutomaton::rule_component).
  static void compute_components(GrammarAutomaton& g);
  /// States with the same token classification share a mask class
  /// (GrammarAutomaton::mask_class).
  static void compute_mask_classes(GrammarAutomaton& g);
};

}  // namespace lockstep
