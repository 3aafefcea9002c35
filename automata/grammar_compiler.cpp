// automata/grammar_compiler.cpp — grammar IR → per-rule byte DFAs (CompiledGrammar).
//
// Each rule body goes through the textbook pipeline: Thompson NFA over byte ranges and
// rule symbols (code-point classes expanded to UTF-8 byte sequences) → subset
// construction → Moore minimization (small automata only) → removal of dead states.
#include <algorithm>
#include <map>
#include <unordered_map>

#include <fmt/format.h>

#include "automata/compiled_grammar.h"
#include "automata/utf8_ranges.h"

namespace lockstep {

namespace {

struct VecHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    uint64_t h = 1469598103934665603ull;
    for (uint32_t x : v) h = (h ^ x) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

using ByteEdge = CompiledGrammar::ByteEdge;
using RuleEdge = CompiledGrammar::RuleEdge;

struct Nfa {
  struct State {
    std::vector<ByteEdge> bytes;
    std::vector<RuleEdge> rules;
    std::vector<uint32_t> eps;
  };
  std::vector<State> states;
  uint32_t start = 0;
  uint32_t accept = 1;
};

struct Dfa {
  struct State {
    std::vector<ByteEdge> bytes;  // disjoint, sorted by lo
    std::vector<RuleEdge> rules;  // sorted by rule, at most one edge per rule
    bool final = false;
  };
  std::vector<State> states;  // state 0 is the start
};

class NfaBuilder {
 public:
  NfaBuilder(const Rule& rule, uint32_t limit) : rule_(rule), limit_(limit) {
    nfa_.start = add_state();
    nfa_.accept = add_state();
  }

  Nfa build() && {
    build(rule_.body, nfa_.start, nfa_.accept);
    return std::move(nfa_);
  }

 private:
  uint32_t add_state() {
    if (nfa_.states.size() >= limit_) {
      throw GrammarError(rule_.where,
                         fmt::format("rule '{}' expands into more than {} automaton states; "
                                     "reduce its repetition bounds",
                                     rule_.name, limit_));
    }
    nfa_.states.emplace_back();
    return static_cast<uint32_t>(nfa_.states.size() - 1);
  }

  void byte_chain(uint32_t from, uint32_t to, const std::vector<ByteRange>& seq) {
    uint32_t cur = from;
    for (size_t i = 0; i < seq.size(); ++i) {
      const uint32_t next = i + 1 == seq.size() ? to : add_state();
      nfa_.states[cur].bytes.push_back({seq[i].lo, seq[i].hi, next});
      cur = next;
    }
  }

  void build(const Expr& e, uint32_t from, uint32_t to) {
    switch (e.kind) {
      case Expr::Kind::kEmpty:
        nfa_.states[from].eps.push_back(to);
        return;
      case Expr::Kind::kLiteral: {
        std::vector<ByteRange> seq;
        for (char c : e.bytes) seq.push_back({static_cast<uint8_t>(c), static_cast<uint8_t>(c)});
        byte_chain(from, to, seq);
        return;
      }
      case Expr::Kind::kCharClass: {
        auto [it, inserted] = class_cache_.try_emplace(&e);
        if (inserted) it->second = utf8_sequences(e.ranges);
        for (const auto& seq : it->second) byte_chain(from, to, seq);
        return;
      }
      case Expr::Kind::kRuleRef:
        nfa_.states[from].rules.push_back({e.rule, to});
        return;
      case Expr::Kind::kSequence: {
        uint32_t cur = from;
        for (size_t i = 0; i < e.children.size(); ++i) {
          const uint32_t next = i + 1 == e.children.size() ? to : add_state();
          build(e.children[i], cur, next);
          cur = next;
        }
        return;
      }
      case Expr::Kind::kChoice:
        for (const auto& c : e.children) build(c, from, to);
        return;
      case Expr::Kind::kRepeat: {
        const Expr& child = e.children[0];
        uint32_t cur = from;
        for (uint32_t i = 0; i < e.min; ++i) {
          const uint32_t next = (i + 1 == e.min && e.max == e.min) ? to : add_state();
          build(child, cur, next);
          cur = next;
        }
        if (e.max == e.min) return;
        if (e.max == kUnbounded) {
          // Fresh loop states, so no edge ever enters `from` or leaves `to`.
          const uint32_t loop = add_state();
          const uint32_t back = add_state();
          nfa_.states[cur].eps.push_back(loop);
          build(child, loop, back);
          nfa_.states[back].eps.push_back(loop);
          nfa_.states[loop].eps.push_back(to);
          return;
        }
        const uint32_t optional = e.max - e.min;
        for (uint32_t i = 0; i < optional; ++i) {
          nfa_.states[cur].eps.push_back(to);
          const uint32_t next = i + 1 == optional ? to : add_state();
          build(child, cur, next);
          cur = next;
        }
        return;
      }
    }
  }

  const Rule& rule_;
  uint32_t limit_;
  Nfa nfa_;
  std::unordered_map<const Expr*, std::vector<std::vector<ByteRange>>> class_cache_;
};

void eps_closure(const Nfa& nfa, std::vector<uint32_t>& set, std::vector<uint32_t>& mark,
                 uint32_t stamp) {
  std::vector<uint32_t> stack(set.begin(), set.end());
  for (uint32_t s : set) mark[s] = stamp;
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    for (uint32_t t : nfa.states[s].eps) {
      if (mark[t] != stamp) {
        mark[t] = stamp;
        set.push_back(t);
        stack.push_back(t);
      }
    }
  }
  std::sort(set.begin(), set.end());
}

Dfa determinize(const Nfa& nfa, const Rule& rule, uint32_t limit) {
  Dfa dfa;
  std::unordered_map<std::vector<uint32_t>, uint32_t, VecHash> ids;
  std::vector<std::vector<uint32_t>> sets;
  std::vector<uint32_t> mark(nfa.states.size(), 0);
  uint32_t stamp = 0;

  auto intern = [&](std::vector<uint32_t> set) -> uint32_t {
    eps_closure(nfa, set, mark, ++stamp);
    auto [it, inserted] = ids.try_emplace(set, static_cast<uint32_t>(sets.size()));
    if (inserted) {
      if (sets.size() >= limit) {
        throw GrammarError(rule.where,
                           fmt::format("rule '{}' needs more than {} automaton states", rule.name,
                                       limit));
      }
      sets.push_back(std::move(set));
      dfa.states.emplace_back();
    }
    return it->second;
  };

  intern({nfa.start});
  std::vector<uint16_t> points;
  std::vector<uint32_t> targets;
  std::map<uint32_t, std::vector<uint32_t>> by_rule;
  for (uint32_t d = 0; d < sets.size(); ++d) {
    const std::vector<uint32_t> set = sets[d];  // copy: `sets` may grow below
    bool final = false;
    points.clear();
    by_rule.clear();
    for (uint32_t s : set) {
      if (s == nfa.accept) final = true;
      for (const auto& e : nfa.states[s].bytes) {
        points.push_back(e.lo);
        points.push_back(static_cast<uint16_t>(e.hi + 1));
      }
      for (const auto& e : nfa.states[s].rules) by_rule[e.rule].push_back(e.target);
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    std::vector<ByteEdge> out_bytes;
    for (size_t i = 0; i + 1 < points.size(); ++i) {
      const uint32_t lo = points[i], hi = points[i + 1] - 1u;
      targets.clear();
      for (uint32_t s : set) {
        for (const auto& e : nfa.states[s].bytes) {
          if (e.lo <= lo && e.hi >= hi) targets.push_back(e.target);
        }
      }
      if (targets.empty()) continue;
      std::sort(targets.begin(), targets.end());
      targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
      const uint32_t t = intern(targets);
      if (!out_bytes.empty() && out_bytes.back().target == t && out_bytes.back().hi + 1u == lo) {
        out_bytes.back().hi = static_cast<uint8_t>(hi);
      } else {
        out_bytes.push_back({static_cast<uint8_t>(lo), static_cast<uint8_t>(hi), t});
      }
    }
    std::vector<RuleEdge> out_rules;
    for (auto& [r, ts] : by_rule) {
      std::sort(ts.begin(), ts.end());
      ts.erase(std::unique(ts.begin(), ts.end()), ts.end());
      out_rules.push_back({r, intern(ts)});
    }
    dfa.states[d].bytes = std::move(out_bytes);
    dfa.states[d].rules = std::move(out_rules);
    dfa.states[d].final = final;
  }
  return dfa;
}

// Moore's partition refinement; keeps the start state at index 0.
Dfa minimize(const Dfa& dfa) {
  const size_t n = dfa.states.size();
  std::vector<uint32_t> cls(n);
  for (size_t s = 0; s < n; ++s) cls[s] = dfa.states[s].final ? 1 : 0;
  size_t num_classes = 0;
  std::vector<uint32_t> sig;
  for (;;) {
    std::unordered_map<std::vector<uint32_t>, uint32_t, VecHash> ids;
    std::vector<uint32_t> next(n);
    for (size_t s = 0; s < n; ++s) {
      sig.clear();
      sig.push_back(cls[s]);
      for (const auto& e : dfa.states[s].bytes) {
        const uint32_t c = cls[e.target];
        if (sig.size() >= 4 && sig[sig.size() - 1] == c && sig[sig.size() - 2] + 1 == e.lo) {
          sig[sig.size() - 2] = e.hi;  // extend the previous range: same class, adjacent
          continue;
        }
        sig.push_back(0x100 | e.lo);
        sig.push_back(e.hi);
        sig.push_back(c);
      }
      sig.push_back(0xFFFFFFFF);
      for (const auto& e : dfa.states[s].rules) {
        sig.push_back(e.rule);
        sig.push_back(cls[e.target]);
      }
      next[s] = ids.try_emplace(sig, static_cast<uint32_t>(ids.size())).first->second;
    }
    const size_t count = ids.size();
    cls = std::move(next);
    if (count == num_classes) break;
    num_classes = count;
  }
  // Renumber classes so the start state's class is 0.
  std::vector<uint32_t> remap(num_classes, UINT32_MAX);
  uint32_t next_id = 0;
  remap[cls[0]] = next_id++;
  for (size_t s = 0; s < n; ++s) {
    if (remap[cls[s]] == UINT32_MAX) remap[cls[s]] = next_id++;
  }
  Dfa out;
  out.states.resize(num_classes);
  std::vector<char> done(num_classes, 0);
  for (size_t s = 0; s < n; ++s) {
    const uint32_t c = remap[cls[s]];
    if (done[c]) continue;
    done[c] = 1;
    auto& st = out.states[c];
    st.final = dfa.states[s].final;
    for (const auto& e : dfa.states[s].bytes) {
      const uint32_t t = remap[cls[e.target]];
      if (!st.bytes.empty() && st.bytes.back().target == t && st.bytes.back().hi + 1 == e.lo) {
        st.bytes.back().hi = e.hi;
      } else {
        st.bytes.push_back({e.lo, e.hi, t});
      }
    }
    for (const auto& e : dfa.states[s].rules) st.rules.push_back({e.rule, remap[cls[e.target]]});
  }
  return out;
}

// Drops states from which no final state can be reached (through bytes or through rules
// that can complete), and every edge into them. The start state always stays.
Dfa trim(const Dfa& dfa, const std::vector<char>& productive) {
  const size_t n = dfa.states.size();
  std::vector<char> live(n, 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = 0; s < n; ++s) {
      if (live[s]) continue;
      const auto& st = dfa.states[s];
      bool l = st.final;
      for (const auto& e : st.bytes) l = l || live[e.target];
      for (const auto& e : st.rules) l = l || (productive[e.rule] && live[e.target]);
      if (l) {
        live[s] = 1;
        changed = true;
      }
    }
  }
  std::vector<uint32_t> id(n, UINT32_MAX);
  uint32_t next = 0;
  id[0] = next++;
  for (size_t s = 1; s < n; ++s) {
    if (live[s]) id[s] = next++;
  }
  Dfa out;
  out.states.resize(next);
  for (size_t s = 0; s < n; ++s) {
    if (id[s] == UINT32_MAX) continue;
    auto& st = out.states[id[s]];
    st.final = dfa.states[s].final;
    for (const auto& e : dfa.states[s].bytes) {
      if (live[e.target]) st.bytes.push_back({e.lo, e.hi, id[e.target]});
    }
    for (const auto& e : dfa.states[s].rules) {
      if (productive[e.rule] && live[e.target]) st.rules.push_back({e.rule, id[e.target]});
    }
  }
  return out;
}

// Rules that can derive some finite string (mirrors validate(); unreachable rules may fail).
std::vector<char> productive_rules(const std::vector<Dfa>& dfas) {
  std::vector<char> productive(dfas.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < dfas.size(); ++r) {
      if (productive[r]) continue;
      // Reachability from the start over bytes and productive rules.
      const auto& d = dfas[r];
      std::vector<char> seen(d.states.size(), 0);
      std::vector<uint32_t> stack{0};
      seen[0] = 1;
      bool ok = false;
      while (!stack.empty() && !ok) {
        const uint32_t s = stack.back();
        stack.pop_back();
        if (d.states[s].final) ok = true;
        for (const auto& e : d.states[s].bytes) {
          if (!seen[e.target]) seen[e.target] = 1, stack.push_back(e.target);
        }
        for (const auto& e : d.states[s].rules) {
          if (productive[e.rule] && !seen[e.target]) seen[e.target] = 1, stack.push_back(e.target);
        }
      }
      if (ok) productive[r] = 1, changed = true;
    }
  }
  return productive;
}

std::vector<char> nullable_rules(const std::vector<Dfa>& dfas) {
  std::vector<char> nullable(dfas.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < dfas.size(); ++r) {
      if (nullable[r]) continue;
      const auto& d = dfas[r];
      std::vector<char> seen(d.states.size(), 0);
      std::vector<uint32_t> stack{0};
      seen[0] = 1;
      bool ok = false;
      while (!stack.empty() && !ok) {
        const uint32_t s = stack.back();
        stack.pop_back();
        if (d.states[s].final) ok = true;
        for (const auto& e : d.states[s].rules) {
          if (nullable[e.rule] && !seen[e.target]) seen[e.target] = 1, stack.push_back(e.target);
        }
      }
      if (ok) nullable[r] = 1, changed = true;
    }
  }
  return nullable;
}

}  // namespace

class GrammarCompiler {
 public:
  static std::shared_ptr<const CompiledGrammar> run(const Grammar& grammar,
                                                    const CompileLimits& limits) {
    validate(grammar);
    const size_t num_rules = grammar.rules.size();
    std::vector<Dfa> dfas(num_rules);
    uint64_t total = 0;
    for (size_t r = 0; r < num_rules; ++r) {
      const Rule& rule = grammar.rules[r];
      Nfa nfa = NfaBuilder(rule, limits.max_states_per_rule).build();
      Dfa dfa = determinize(nfa, rule, limits.max_states_per_rule);
      if (dfa.states.size() <= limits.max_states_to_minimize) dfa = minimize(dfa);
      total += dfa.states.size();
      if (total > limits.max_total_states) {
        throw GrammarError(rule.where, fmt::format("the grammar needs more than {} automaton "
                                                   "states (limit reached at rule '{}')",
                                                   limits.max_total_states, rule.name));
      }
      dfas[r] = std::move(dfa);
    }
    const std::vector<char> productive = productive_rules(dfas);
    for (auto& d : dfas) d = trim(d, productive);
    const std::vector<char> nullable = nullable_rules(dfas);

    auto out = std::make_shared<CompiledGrammar>();
    out->grammar_ = grammar;
    out->root_ = grammar.root;
    out->byte_begin_.push_back(0);
    out->rule_begin_.push_back(0);
    uint32_t base = 0;
    std::vector<uint32_t> bases(num_rules);
    for (size_t r = 0; r < num_rules; ++r) {
      bases[r] = base;
      base += static_cast<uint32_t>(dfas[r].states.size());
    }
    for (size_t r = 0; r < num_rules; ++r) {
      out->rule_start_.push_back(bases[r]);
      out->rule_nullable_.push_back(nullable[r]);
      out->rule_names_.push_back(grammar.rules[r].name);
      for (const auto& st : dfas[r].states) {
        out->state_rule_.push_back(static_cast<uint32_t>(r));
        out->state_final_.push_back(st.final ? 1 : 0);
        for (const auto& e : st.bytes) out->byte_edges_.push_back({e.lo, e.hi, bases[r] + e.target});
        for (const auto& e : st.rules) out->rule_edges_.push_back({e.rule, bases[r] + e.target});
        out->byte_begin_.push_back(static_cast<uint32_t>(out->byte_edges_.size()));
        out->rule_begin_.push_back(static_cast<uint32_t>(out->rule_edges_.size()));
      }
    }
    return out;
  }
};

std::shared_ptr<const CompiledGrammar> CompiledGrammar::compile(const Grammar& grammar,
                                                                const CompileLimits& limits) {
  return GrammarCompiler::run(grammar, limits);
}

}  // namespace lockstep
