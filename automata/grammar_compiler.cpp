// automata/grammar_compiler.cpp — grammar IR → per-rule byte DFAs (CompiledGrammar).
//
// Non-recursive rules are inlined (inline.h); each reachable rule becomes a DFA over bytes
// and rule symbols (rule_automaton.h); dead states are trimmed; nullable rules and FOLLOW
// sets are computed; all states are numbered globally.
#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "automata/compiled_grammar.h"
#include "automata/inline.h"
#include "automata/rule_automaton.h"
#include "grammar/partition_refinement.h"

namespace lockstep {

namespace {

// Rules that can derive some finite string (mirrors validate(); unreachable rules may fail).
// Whether each rule's start reaches a final state, following byte edges (when `bytes`) and
// the edges of rules already known to have the property; iterated to a fixed point.
std::vector<char> rules_reaching_final(const std::vector<RuleDfa>& dfas, bool bytes) {
  std::vector<char> ok(dfas.size(), 0);
  std::vector<char> seen;
  std::vector<uint32_t> stack;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < dfas.size(); ++r) {
      if (ok[r]) continue;
      const RuleDfa& d = dfas[r];
      seen.assign(d.size(), 0);
      stack.assign(1, 0);
      seen[0] = 1;
      bool found = false;
      while (!stack.empty() && !found) {
        const uint32_t s = stack.back();
        stack.pop_back();
        if (d.final[s]) found = true;
        if (bytes) {
          for (uint32_t k = d.byte_begin[s]; k < d.byte_begin[s + 1]; ++k) {
            const uint32_t t = d.bytes[k].target;
            if (!seen[t]) seen[t] = 1, stack.push_back(t);
          }
        }
        for (uint32_t k = d.rule_begin[s]; k < d.rule_begin[s + 1]; ++k) {
          const uint32_t t = d.rules[k].target;
          if (ok[d.rules[k].rule] && !seen[t]) seen[t] = 1, stack.push_back(t);
        }
      }
      if (found) ok[r] = 1, changed = true;
    }
  }
  return ok;
}

}  // namespace

class GrammarCompiler {
 public:
  static std::shared_ptr<const CompiledGrammar> run(const Grammar& grammar,
                                                    const CompileLimits& limits) {
    validate(grammar);
    const size_t num_rules = grammar.rules.size();
    const Grammar inlined = limits.inline_rules ? inline_rules(grammar) : grammar;
    std::vector<RuleDfa> dfas(num_rules);
    std::vector<char> compiled(num_rules, 0);
    uint64_t total = 0;
    // Only rules reachable from the root (after inlining) get automata.
    std::vector<uint32_t> todo{grammar.root};
    while (!todo.empty()) {
      const uint32_t r = todo.back();
      todo.pop_back();
      if (compiled[r]) continue;
      compiled[r] = 1;
      RuleDfa dfa;
      try {
        dfa = build_dfa(inlined.rules[r], limits);
      } catch (const GrammarError&) {
        if (!limits.inline_rules) throw;
        dfa = build_dfa(grammar.rules[r], limits);  // inlining made it too big: keep the calls
      }
      total += dfa.size();
      if (total > limits.max_total_states) {
        throw GrammarError(grammar.rules[r].where,
                           fmt::format("the grammar needs more than {} automaton states (limit "
                                       "reached at rule '{}')",
                                       limits.max_total_states, grammar.rules[r].name));
      }
      for (const auto& e : dfa.rules) {
        if (!compiled[e.rule]) todo.push_back(e.rule);
      }
      dfas[r] = std::move(dfa);
    }
    for (size_t r = 0; r < num_rules; ++r) {
      if (!compiled[r]) {  // unreachable: a lone non-final state
        dfas[r].add_state(false);
        dfas[r].close_state();
      }
    }
    const std::vector<char> productive = rules_reaching_final(dfas, true);
    for (auto& d : dfas) d = trim(d, productive);
    const std::vector<char> nullable = rules_reaching_final(dfas, false);

    auto out = std::make_shared<CompiledGrammar>();
    out->grammar_ = grammar;
    out->root_ = grammar.root;
    out->byte_begin_.push_back(0);
    out->rule_begin_.push_back(0);
    uint32_t base = 0;
    std::vector<uint32_t> bases(num_rules);
    for (size_t r = 0; r < num_rules; ++r) {
      bases[r] = base;
      base += dfas[r].size();
    }
    for (size_t r = 0; r < num_rules; ++r) {
      out->rule_start_.push_back(bases[r]);
      out->rule_nullable_.push_back(nullable[r]);
      out->rule_names_.push_back(grammar.rules[r].name);
      const RuleDfa& d = dfas[r];
      for (uint32_t st = 0; st < d.size(); ++st) {
        out->state_rule_.push_back(static_cast<uint32_t>(r));
        out->state_final_.push_back(d.final[st]);
        for (uint32_t k = d.byte_begin[st]; k < d.byte_begin[st + 1]; ++k) {
          const auto& e = d.bytes[k];
          out->byte_edges_.push_back({e.lo, e.hi, bases[r] + e.target});
        }
        for (uint32_t k = d.rule_begin[st]; k < d.rule_begin[st + 1]; ++k) {
          out->rule_edges_.push_back({d.rules[k].rule, bases[r] + d.rules[k].target});
        }
        out->byte_begin_.push_back(static_cast<uint32_t>(out->byte_edges_.size()));
        out->rule_begin_.push_back(static_cast<uint32_t>(out->rule_edges_.size()));
      }
    }
    compute_follow(*out);
    compute_mask_classes(*out);
    return out;
  }

 private:
  static RuleDfa build_dfa(const Rule& rule, const CompileLimits& limits) {
    RuleDfa dfa = determinize_rule(rule, limits.max_states_per_rule);
    if (dfa.size() <= limits.max_states_to_minimize) dfa = minimize(dfa);
    return dfa;
  }

  // FIRST sets per state and FOLLOW sets per rule (bytes), by fixed-point iteration.
  static void compute_follow(CompiledGrammar& g) {
    using Bits = CompiledGrammar::ByteSet;
    const uint32_t ns = g.num_states(), nr = g.num_rules();
    auto set_range = [](Bits& b, unsigned lo, unsigned hi) {
      for (unsigned x = lo; x <= hi; ++x) b[x >> 6] |= 1ull << (x & 63);
    };
    auto merge = [](Bits& into, const Bits& from) {
      bool changed = false;
      for (int i = 0; i < 4; ++i) {
        const uint64_t v = into[i] | from[i];
        changed |= v != into[i];
        into[i] = v;
      }
      return changed;
    };
    // nullable_state: the state can reach a final state of its rule without reading bytes.
    std::vector<char> nullable_state(ns, 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t q = 0; q < ns; ++q) {
        if (nullable_state[q]) continue;
        bool n = g.is_final(q);
        for (const auto& e : g.rule_edges(q)) n = n || (g.rule_nullable(e.rule) && nullable_state[e.target]);
        if (n) nullable_state[q] = 1, changed = true;
      }
    }
    std::vector<Bits> first(ns, Bits{});
    for (uint32_t q = 0; q < ns; ++q) {
      for (const auto& e : g.byte_edges(q)) set_range(first[q], e.lo, e.hi);
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t q = 0; q < ns; ++q) {
        for (const auto& e : g.rule_edges(q)) {
          changed |= merge(first[q], first[g.rule_start(e.rule)]);
          if (g.rule_nullable(e.rule)) changed |= merge(first[q], first[e.target]);
        }
      }
    }
    g.follow_.assign(nr, Bits{});
    g.follow_end_.assign(nr, 0);
    g.follow_end_[g.root_rule()] = 1;
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t p = 0; p < ns; ++p) {
        for (const auto& e : g.rule_edges(p)) {
          changed |= merge(g.follow_[e.rule], first[e.target]);
          if (nullable_state[e.target]) {
            const uint32_t parent = g.rule_of(p);
            changed |= merge(g.follow_[e.rule], g.follow_[parent]);
            if (g.follow_end_[parent] && !g.follow_end_[e.rule]) {
              g.follow_end_[e.rule] = 1;
              changed = true;
            }
          }
        }
      }
    }
    g.state_simple_.resize(ns);
    for (uint32_t q = 0; q < ns; ++q) g.state_simple_[q] = !g.is_final(q) && g.rule_edges(q).empty();
  }

  // Mask classes: states whose token classification is provably the same. Two states
  // share a class when they read the same language of bytes and rule symbols up to their
  // rules' completions (the coarsest partition over every rule's states at once) and their
  // rules have the same FOLLOW set — hundreds of member rules of one JSON Schema then share
  // the mask of "inside a string value".
  static void compute_mask_classes(CompiledGrammar& g) {
    const uint32_t ns = g.num_states();
    std::map<std::tuple<bool, CompiledGrammar::ByteSet, bool>, uint32_t> keys;
    std::vector<uint32_t> initial(ns);
    for (uint32_t q = 0; q < ns; ++q) {
      const uint32_t r = g.rule_of(q);
      initial[q] = keys.try_emplace({g.is_final(q), g.follow_[r], g.follow_end_[r] != 0}, keys.size())
                       .first->second;
    }
    std::vector<char> cut(257, 0);
    for (const auto& e : g.byte_edges_) cut[e.lo] = cut[e.hi + 1] = 1;
    std::vector<uint32_t> byte_class(256);
    uint32_t classes = 0;
    for (uint32_t b = 0; b < 256; ++b) {
      if (b > 0 && cut[b]) ++classes;
      byte_class[b] = classes;
    }
    ++classes;
    std::vector<LabeledTransition> transitions;
    transitions.reserve(g.byte_edges_.size() + g.rule_edges_.size());
    for (uint32_t q = 0; q < ns; ++q) {
      for (const auto& e : g.byte_edges(q)) {
        for (uint32_t c = byte_class[e.lo]; c <= byte_class[e.hi]; ++c) transitions.push_back({q, c, e.target});
      }
      for (const auto& e : g.rule_edges(q)) transitions.push_back({q, classes + e.rule, e.target});
    }
    g.state_class_ = coarsest_partition(ns, initial, std::move(transitions));
    g.class_state_.clear();
    for (uint32_t q = 0; q < ns; ++q) {
      if (g.state_class_[q] == g.class_state_.size()) g.class_state_.push_back(q);
    }
  }
};

std::shared_ptr<const CompiledGrammar> CompiledGrammar::compile(const Grammar& grammar,
                                                                const CompileLimits& limits) {
  return GrammarCompiler::run(grammar, limits);
}

}  // namespace lockstep
