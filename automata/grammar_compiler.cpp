// automata/grammar_compiler.cpp — grammar IR → per-rule byte DFAs (GrammarAutomaton).
//
// Non-recursive rules are inlined (inline.h); each reachable rule becomes a DFA over bytes
// and rule symbols (rule_automaton.h); dead states are trimmed; nullable rules and FOLLOW
// sets are computed; all states are numbered globally.
#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "automata/grammar_automaton.h"
#include "automata/inline.h"
#include "automata/json_escapes.h"
#include "automata/rule_automaton.h"
#include "automata/rule_dfa_cache.h"
#include "grammar/char_dfa.h"
#include "grammar/partition_refinement.h"

namespace lockstep {

namespace {

// Rules that can derive some finite string (mirrors validate(); unreachable rules may fail).
// Whether each rule's start reaches a final state, following byte edges (when `bytes`) and
// the edges of rules known to have the property. One search per rule that never revisits a
// state: an edge calling a rule not known yet waits on that rule and resumes the search of
// its own rule when the callee turns out to have the property. Linear in states and edges
// (a 100,000-rule chain, in any order of definition).
std::vector<char> rules_reaching_final(const std::vector<RuleDfa>& dfas, bool bytes) {
  const size_t n = dfas.size();
  std::vector<size_t> base(n + 1, 0);
  for (size_t r = 0; r < n; ++r) base[r + 1] = base[r] + dfas[r].size();
  std::vector<char> ok(n, 0), seen(base[n], 0);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> waiting(n);  // callee → (rule, state)
  std::vector<std::pair<uint32_t, uint32_t>> stack;
  std::vector<uint32_t> settled;
  auto visit = [&](uint32_t r, uint32_t s) {
    if (!seen[base[r] + s]) seen[base[r] + s] = 1, stack.emplace_back(r, s);
  };
  for (uint32_t r = 0; r < n; ++r) {
    if (dfas[r].size() > 0) visit(r, 0);
  }
  while (!stack.empty() || !settled.empty()) {
    if (stack.empty()) {
      const uint32_t callee = settled.back();
      settled.pop_back();
      for (const auto& [r, s] : waiting[callee]) {
        if (!ok[r]) visit(r, s);
      }
      std::vector<std::pair<uint32_t, uint32_t>>().swap(waiting[callee]);
      continue;
    }
    const auto [r, s] = stack.back();
    stack.pop_back();
    if (ok[r]) continue;
    const RuleDfa& d = dfas[r];
    if (d.final[s]) {
      ok[r] = 1;
      settled.push_back(r);
      continue;
    }
    if (bytes) {
      for (uint32_t k = d.byte_begin[s]; k < d.byte_begin[s + 1]; ++k) visit(r, d.bytes[k].target);
    }
    for (uint32_t k = d.rule_begin[s]; k < d.rule_begin[s + 1]; ++k) {
      const auto& e = d.rules[k];
      if (ok[e.rule]) {
        visit(r, e.target);
      } else if (!seen[base[r] + e.target]) {
        waiting[e.rule].emplace_back(r, e.target);
      }
    }
  }
  return ok;
}

}  // namespace

class AutomatonBuilder {
 public:
  static std::shared_ptr<const GrammarAutomaton> run(Grammar&& grammar, const CompileLimits& limits) {
    CompileDeadline deadline;
    validate(grammar);
    const InlinePlan plan = limits.inline_rules ? plan_inlining(grammar) : InlinePlan();
    // The pair rules JSON strings call (json_escapes.h), made as automata need them: rules of
    // the compiled grammar numbered after the given ones, not added to the source grammar
    // (grammar() prints what was given; a string automaton is printed as one node anyway).
    SurrogatePairRules pair_rules(grammar);
    const uint32_t num_given = static_cast<uint32_t>(grammar.rules.size());
    std::vector<RuleDfa> dfas(num_given);
    std::vector<char> compiled(num_given, 0);
    std::vector<std::vector<uint32_t>> keys(num_given);
    std::vector<uint32_t> callee_index(num_given, UINT32_MAX);  // scratch for shape_key
    const PairRuleFn pairs = [&](const std::vector<CodepointRange>& ranges) {
      const uint32_t r = pair_rules.rule(ranges);
      if (r >= callee_index.size()) callee_index.resize(r + 1, UINT32_MAX);
      return r;
    };
    uint64_t total = 0;
    // Only rules reachable from the root (after inlining) get automata.
    std::vector<uint32_t> todo{grammar.root};
    while (!todo.empty()) {
      const uint32_t r = todo.back();
      todo.pop_back();
      if (compiled[r]) continue;
      compiled[r] = 1;
      const Rule& rule = r < num_given ? grammar.rules[r] : pair_rules.at(r);
      RuleDfa dfa;
      keys[r] = automaton_key(plan.resolve(rule.body), limits);
      try {
        dfa = build_dfa(rule, limits, keys[r], &plan, callee_index, pairs, pair_rules, deadline);
      } catch (const LimitError& e) {
        if (!limits.inline_rules || e.limit() == "compile_ms") throw;
        keys[r] = automaton_key(rule.body, limits);
        // Inlining made it too big: keep the calls.
        dfa = build_dfa(rule, limits, keys[r], nullptr, callee_index, pairs, pair_rules, deadline);
      }
      total += dfa.size();
      if (total > limits.max_total_states) {
        throw LimitError(ErrorLocation::at(rule.where), "grammar_automaton_states", limits.max_total_states,
                         fmt::format("the grammar's automata (reached at rule '{}')", rule.name));
      }
      if (pair_rules.end() > dfas.size()) {
        dfas.resize(pair_rules.end());
        compiled.resize(pair_rules.end(), 0);
        keys.resize(pair_rules.end());
      }
      for (const auto& e : dfa.rules) {
        if (!compiled[e.rule]) todo.push_back(e.rule);
      }
      dfas[r] = std::move(dfa);
    }
    const size_t num_rules = pair_rules.end();
    for (size_t r = 0; r < num_rules; ++r) {
      if (!compiled[r]) {  // unreachable: a lone non-final state
        dfas[r].add_state(false);
        dfas[r].close_state();
      }
    }
    const std::vector<char> productive = rules_reaching_final(dfas, true);
    for (auto& d : dfas) trim(d, productive);
    const std::vector<char> nullable = rules_reaching_final(dfas, false);

    auto out = std::make_shared<GrammarAutomaton>();
    out->rule_automaton_key_ = std::move(keys);
    out->root_ = grammar.root;
    out->byte_begin_.push_back(0);
    out->rule_begin_.push_back(0);
    uint32_t base = 0;
    std::vector<uint32_t> bases(num_rules);
    size_t num_bytes = 0, num_calls = 0;
    for (size_t r = 0; r < num_rules; ++r) {
      bases[r] = base;
      base += dfas[r].size();
      num_bytes += dfas[r].bytes.size();
      num_calls += dfas[r].rules.size();
    }
    out->rule_start_.reserve(num_rules);
    out->rule_nullable_.reserve(num_rules);
    out->rule_names_.reserve(num_rules);
    out->state_rule_.reserve(base);
    out->state_final_.reserve(base);
    out->byte_begin_.reserve(base + 1);
    out->rule_begin_.reserve(base + 1);
    out->byte_edges_.reserve(num_bytes);
    out->rule_edges_.reserve(num_calls);
    for (size_t r = 0; r < num_rules; ++r) {
      out->rule_start_.push_back(bases[r]);
      out->rule_nullable_.push_back(nullable[r]);
      const auto rule = static_cast<uint32_t>(r);
      out->rule_names_.push_back(rule < num_given ? grammar.rules[rule].name : pair_rules.at(rule).name);
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
    compute_follow(*out, num_given);
    compute_components(*out);
    compute_mask_classes(*out);
    out->grammar_ = std::move(grammar);
    return out;
  }

 private:
  // The identity of an automaton-only rule (one embedded automaton, e.g. a JSON Schema string
  // or number language): its flags and the automaton's states. Empty for other rules.
  static std::vector<uint32_t> automaton_key(const Expr& body, const CompileLimits& limits) {
    std::vector<uint32_t> key;
    if (body.kind != Expr::Kind::kAutomaton || !body.automaton) return key;
    key.push_back(body.json_string ? 1 : 0);
    key.push_back(limits.max_states_per_rule);
    key.push_back(limits.max_states_to_minimize);
    append_states(key, *body.automaton);
    return key;
  }

  // The pair rules a JSON-string automaton calls (json_escapes.h), appended to `callees` in
  // order of first appearance as shape_key numbers callees (`index` as there).
  static void add_pair_callees(const CharDfa& automaton, const PairRuleFn& pairs, std::vector<uint32_t>& callees,
                               std::vector<uint32_t>& index) {
    std::vector<PairCall> calls;
    for (const auto& st : automaton.states()) {
      if (st.edges.empty() || st.edges.back().hi < 0x10000) continue;
      pair_calls(st.edges, calls);
      for (const PairCall& c : calls) {
        const uint32_t rule = pairs(c.ranges);
        if (index[rule] == UINT32_MAX) {
          index[rule] = static_cast<uint32_t>(callees.size());
          callees.push_back(rule);
        }
      }
    }
  }

  // A code-point automaton's states (finality, edge count, edges) appended to a key.
  static void append_states(std::vector<uint32_t>& key, const CharDfa& automaton) {
    for (const auto& st : automaton.states()) {
      key.push_back(st.final ? 1 : 0);
      key.push_back(static_cast<uint32_t>(st.edges.size()));
      for (const auto& e : st.edges) key.insert(key.end(), {e.lo, e.hi, e.target});
    }
  }

  // The shape of a rule body as the automaton builder reads it (rule_automaton.cpp, Nfa):
  // every node in order, substituted references followed into the bodies they stand for,
  // each kept reference as the index of its callee in order of first appearance. The
  // callees are appended to `callees`; `index` (one slot per rule, UINT32_MAX when unused)
  // numbers them and is left as it was found.
  // A JSON-string automaton's pair rules count as callees (add_pair_callees).
  static std::vector<uint32_t> shape_key(const Expr& body, const InlinePlan* plan, const CompileLimits& limits,
                                         const PairRuleFn& pairs, std::vector<uint32_t>& callees,
                                         std::vector<uint32_t>& index) {
    std::vector<uint32_t> key{kShapeTag, limits.max_states_per_rule, limits.max_states_to_minimize};
    std::function<void(const Expr&)> add = [&](const Expr& e) {
      key.push_back(static_cast<uint32_t>(e.kind));
      switch (e.kind) {
        case Expr::Kind::kEmpty: return;
        case Expr::Kind::kLiteral:
          key.push_back(static_cast<uint32_t>(e.bytes.size()));
          for (const char c : e.bytes) key.push_back(static_cast<uint8_t>(c));
          return;
        case Expr::Kind::kCharClass:
          key.push_back(static_cast<uint32_t>(e.ranges.size()));
          for (const auto& r : e.ranges) key.insert(key.end(), {r.lo, r.hi});
          return;
        case Expr::Kind::kRuleRef:
          if (plan && plan->substitutes(e)) {
            key.back() = kSubstituted;
            add(plan->body(e.rule));
            return;
          }
          if (index[e.rule] == UINT32_MAX) {
            index[e.rule] = static_cast<uint32_t>(callees.size());
            callees.push_back(e.rule);
          }
          key.push_back(index[e.rule]);
          return;
        case Expr::Kind::kAutomaton:
          key.push_back(e.json_string ? 1 : 0);
          key.push_back(static_cast<uint32_t>(e.automaton->size()));
          append_states(key, *e.automaton);
          if (e.json_string) add_pair_callees(*e.automaton, pairs, callees, index);
          return;
        case Expr::Kind::kRepeat:
          key.insert(key.end(), {e.min, e.max});
          add(e.children[0]);
          return;
        case Expr::Kind::kSequence:
        case Expr::Kind::kChoice:
          key.push_back(static_cast<uint32_t>(e.children.size()));
          for (const auto& c : e.children) add(c);
          return;
      }
    };
    add(body);
    for (uint32_t c : callees) index[c] = UINT32_MAX;
    return key;
  }
  // Shape keys start with this tag; automaton keys start with 0 or 1 (the JSON-string flag).
  static constexpr uint32_t kShapeTag = 2;
  static constexpr uint32_t kSubstituted = 0xFFFFFFFFu;

  // Rule automata are cached process-wide (RuleDfaCache): formats, string languages and
  // object layouts recur within and across schemas. A rule other than a whole-rule automaton
  // is cached with its callees as indices in order of first appearance, and a hit is
  // renamed to this grammar's rules (the automaton is the same: states and edges do not
  // depend on which rules are called, only on where).
  // With `plan`, the references it substitutes are built as the bodies they stand for.
  // A whole-rule JSON-string automaton's callees are its pair rules, renamed alike: the cache
  // keeps their code points (Entry::pair_calls).
  static RuleDfa build_dfa(const Rule& rule, const CompileLimits& limits, const std::vector<uint32_t>& key,
                           const InlinePlan* plan, std::vector<uint32_t>& callee_index, const PairRuleFn& pairs,
                           const SurrogatePairRules& pair_rules, CompileDeadline& deadline) {
    std::vector<uint32_t> callees;
    std::vector<uint32_t> shape;
    if (key.empty()) shape = shape_key(rule.body, plan, limits, pairs, callees, callee_index);
    const std::vector<uint32_t>& cache_key = key.empty() ? shape : key;
    if (auto hit = RuleDfaCache::instance().find(cache_key)) {
      for (const auto& ranges : hit->pair_calls) callees.push_back(pairs(ranges));
      if (callees.empty()) return std::move(hit->dfa);
      RuleDfa& dfa = hit->dfa;
      for (auto& e : dfa.rules) e.rule = callees[e.rule];
      for (uint32_t st = 0; callees.size() > 1 && st < dfa.size(); ++st) {  // a state's rule edges stay sorted by rule
        if (dfa.rule_begin[st + 1] - dfa.rule_begin[st] < 2) continue;
        std::sort(dfa.rules.begin() + dfa.rule_begin[st], dfa.rules.begin() + dfa.rule_begin[st + 1],
                  [](const auto& a, const auto& b) { return a.rule < b.rule; });
      }
      return std::move(dfa);
    }
    RuleDfa dfa = determinize_rule(rule, limits.max_states_per_rule, plan, &pairs, &deadline);
    // A whole-rule automaton is built minimal already (DirectAutomatonDfa, from a minimal
    // code-point DFA: every CharDfa operation returns one).
    const Expr& body = plan ? plan->resolve(rule.body) : rule.body;
    if (body.kind != Expr::Kind::kAutomaton && dfa.size() <= limits.max_states_to_minimize) dfa = minimize(dfa);
    RuleDfaCache::Entry stored{dfa, {}};
    if (!key.empty()) {  // a whole-rule automaton calls pair rules only: numbered by first appearance
      for (const auto& e : dfa.rules) {
        if (std::find(callees.begin(), callees.end(), e.rule) != callees.end()) continue;
        callees.push_back(e.rule);
        stored.pair_calls.push_back(pair_rules.ranges(e.rule));
      }
    }
    for (uint32_t i = 0; i < callees.size(); ++i) callee_index[callees[i]] = i;
    for (auto& e : stored.dfa.rules) e.rule = callee_index[e.rule];
    for (uint32_t c : callees) callee_index[c] = UINT32_MAX;
    RuleDfaCache::instance().insert(key.empty() ? std::move(shape) : key, std::move(stored));
    return dfa;
  }

  // FIRST sets per state and FOLLOW sets per rule (bytes), by fixed-point iteration.
  // Rules from `first_pair` on are surrogate-pair rules (json_escapes.h).
  static void compute_follow(GrammarAutomaton& g, uint32_t first_pair) {
    using Bits = GrammarAutomaton::ByteSet;
    const uint32_t ns = g.num_states(), nr = g.num_rules();
    auto set_range = [](Bits& b, unsigned lo, unsigned hi) {
      for (unsigned w = lo >> 6; w <= hi >> 6; ++w) {
        const unsigned a = std::max(lo, w * 64) & 63, z = std::min(hi, w * 64 + 63) & 63;
        b[w] |= (z == 63 ? ~0ull : (1ull << (z + 1)) - 1) & ~((1ull << a) - 1);
      }
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
    // Only states with rule edges take part in the fixed points below (a byte edge adds
    // nothing to nullability and its FIRST bytes are known at once): iterating just those
    // keeps a grammar of many automaton states cheap. Nor do the calls of automaton-only
    // rules, a JSON string's pair calls at every position: a pair rule is never nullable,
    // and such a call neither leaves a rule's start nor lands where another call reads FIRST
    // (it leaves the state after "\uD"). A pair rule's FOLLOW is taken as every byte and the
    // end: a superset, which only lets more tokens count as uncertain inside a pair (the
    // matcher checks those against the real context) and spares computing FIRST at each
    // position's call target.
    std::vector<uint32_t> callers;
    for (uint32_t q = 0; q < ns; ++q) {
      if (!g.rule_edges(q).empty() && g.rule_automaton_key_[g.rule_of(q)].empty()) callers.push_back(q);
    }
    // nullable_state: the state can reach a final state of its rule without reading bytes.
    std::vector<char> nullable_state(ns, 0);
    for (uint32_t q = 0; q < ns; ++q) nullable_state[q] = g.is_final(q) ? 1 : 0;
    for (bool changed = true; changed;) {
      changed = false;
      for (const uint32_t q : callers) {
        if (nullable_state[q]) continue;
        bool n = false;
        for (const auto& e : g.rule_edges(q)) n = n || (g.rule_nullable(e.rule) && nullable_state[e.target]);
        if (n) nullable_state[q] = 1, changed = true;
      }
    }
    // A state that can complete its rule by skipping nullable callees is final: walks and
    // parsers that ask whether a frame may complete here need not look through rule edges
    // (`x ::= "a" ws` may complete right after "a" when ws is nullable).
    for (uint32_t q = 0; q < ns; ++q) g.state_final_[q] = static_cast<uint8_t>(nullable_state[q]);
    // FIRST bytes are needed only where rule edges leave, start or land (most states of a
    // large grammar are inside automata and have none); they get a slot each.
    std::vector<uint32_t> slot(ns, UINT32_MAX);
    uint32_t num_slots = 0;
    auto need = [&](uint32_t q) {
      if (slot[q] == UINT32_MAX) slot[q] = num_slots++;
    };
    for (uint32_t r = 0; r < nr; ++r) need(g.rule_start(r));
    for (const uint32_t q : callers) {
      need(q);
      for (const auto& e : g.rule_edges(q)) need(e.target);
    }
    std::vector<Bits> first_slots(num_slots, Bits{});
    for (uint32_t q = 0; q < ns; ++q) {
      if (slot[q] == UINT32_MAX) continue;
      for (const auto& e : g.byte_edges(q)) set_range(first_slots[slot[q]], e.lo, e.hi);
    }
    auto first = [&](uint32_t q) -> Bits& { return first_slots[slot[q]]; };
    // FIRST through rule edges, by a worklist: a caller is looked at again only when a
    // state it reads from (a callee's start, or past a nullable callee the edge's target)
    // gained bytes.
    {
      std::vector<uint32_t> dep_begin(ns + 1, 0), deps;
      for (const uint32_t q : callers) {
        for (const auto& e : g.rule_edges(q)) {
          ++dep_begin[g.rule_start(e.rule) + 1];
          if (g.rule_nullable(e.rule)) ++dep_begin[e.target + 1];
        }
      }
      for (uint32_t q = 0; q < ns; ++q) dep_begin[q + 1] += dep_begin[q];
      deps.resize(dep_begin[ns]);
      std::vector<uint32_t> fill(dep_begin.begin(), dep_begin.end() - 1);
      for (const uint32_t q : callers) {
        for (const auto& e : g.rule_edges(q)) {
          deps[fill[g.rule_start(e.rule)]++] = q;
          if (g.rule_nullable(e.rule)) deps[fill[e.target]++] = q;
        }
      }
      std::vector<uint32_t> work(callers.rbegin(), callers.rend());
      std::vector<char> queued(ns, 0);
      for (const uint32_t q : callers) queued[q] = 1;
      while (!work.empty()) {
        const uint32_t q = work.back();
        work.pop_back();
        queued[q] = 0;
        bool changed = false;
        for (const auto& e : g.rule_edges(q)) {
          changed |= merge(first(q), first(g.rule_start(e.rule)));
          if (g.rule_nullable(e.rule)) changed |= merge(first(q), first(e.target));
        }
        if (!changed) continue;
        for (uint32_t k = dep_begin[q]; k < dep_begin[q + 1]; ++k) {
          if (!queued[deps[k]]) queued[deps[k]] = 1, work.push_back(deps[k]);
        }
      }
    }
    g.rule_first_.resize(nr);
    for (uint32_t r = 0; r < nr; ++r) g.rule_first_[r] = first(g.rule_start(r));
    // FOLLOW: what comes after each call, then, along calls that may end their caller,
    // the caller's FOLLOW (and end of output), propagated by a worklist over rules.
    g.follow_.assign(nr, Bits{});
    g.follow_end_.assign(nr, 0);
    g.follow_end_[g.root_rule()] = 1;
    std::vector<std::vector<uint32_t>> tail_calls(nr);  // parent → callees that may end it
    for (const uint32_t p : callers) {
      for (const auto& e : g.rule_edges(p)) {
        merge(g.follow_[e.rule], first(e.target));
        if (nullable_state[e.target]) tail_calls[g.rule_of(p)].push_back(e.rule);
      }
    }
    {
      std::vector<uint32_t> work;
      std::vector<char> queued(nr, 1);
      for (uint32_t r = 0; r < nr; ++r) work.push_back(nr - 1 - r);
      while (!work.empty()) {
        const uint32_t parent = work.back();
        work.pop_back();
        queued[parent] = 0;
        for (const uint32_t callee : tail_calls[parent]) {
          bool changed = merge(g.follow_[callee], g.follow_[parent]);
          if (g.follow_end_[parent] && !g.follow_end_[callee]) {
            g.follow_end_[callee] = 1;
            changed = true;
          }
          if (changed && !queued[callee]) queued[callee] = 1, work.push_back(callee);
        }
      }
    }
    for (uint32_t r = first_pair; r < nr; ++r) {
      g.follow_[r].fill(~uint64_t{0});
      g.follow_end_[r] = 1;
    }
    g.state_simple_.resize(ns);
    for (uint32_t q = 0; q < ns; ++q) g.state_simple_[q] = !g.is_final(q) && g.rule_edges(q).empty();
  }

  // Strongly connected components of the rule call graph (Tarjan's algorithm, iterative).
  static void compute_components(GrammarAutomaton& g) {
    const uint32_t nr = g.num_rules();
    std::vector<std::vector<uint32_t>> calls(nr);
    for (uint32_t q = 0; q < g.num_states(); ++q) {
      auto& out = calls[g.rule_of(q)];
      for (const auto& e : g.rule_edges(q)) {  // once per run: a string calls its pair rule at each position
        if (out.empty() || out.back() != e.rule) out.push_back(e.rule);
      }
    }
    constexpr uint32_t kUnset = UINT32_MAX;
    std::vector<uint32_t> index(nr, kUnset), low(nr, 0), stack;
    std::vector<char> on_stack(nr, 0);
    g.rule_component_.assign(nr, kUnset);
    uint32_t next_index = 0, components = 0;
    for (uint32_t root = 0; root < nr; ++root) {
      if (index[root] != kUnset) continue;
      std::vector<std::pair<uint32_t, size_t>> frames{{root, 0}};
      index[root] = low[root] = next_index++;
      stack.push_back(root);
      on_stack[root] = 1;
      while (!frames.empty()) {
        auto& [v, k] = frames.back();
        if (k < calls[v].size()) {
          const uint32_t w = calls[v][k++];
          if (index[w] == kUnset) {
            index[w] = low[w] = next_index++;
            stack.push_back(w);
            on_stack[w] = 1;
            frames.push_back({w, 0});
          } else if (on_stack[w]) {
            low[v] = std::min(low[v], index[w]);
          }
          continue;
        }
        if (low[v] == index[v]) {
          uint32_t w;
          do {
            w = stack.back();
            stack.pop_back();
            on_stack[w] = 0;
            g.rule_component_[w] = components;
          } while (w != v);
          ++components;
        }
        const uint32_t done = v;
        frames.pop_back();
        if (!frames.empty()) low[frames.back().first] = std::min(low[frames.back().first], low[done]);
      }
    }
  }

  // Mask classes: states whose token classification is provably the same. Two states
  // share a class when they read the same language of bytes and rule symbols up to their
  // rules' completions (the coarsest partition over every rule's states at once) and their
  // rules have the same FOLLOW set — hundreds of member rules of one JSON Schema then share
  // the mask of "inside a string value".
  //
  // States of automaton-only rules stay out of the refinement, one class each: their byte
  // DFAs are minimal already, and equal states of equal or isomorphic automata share their
  // masks through TokenMaskCache's process-wide cache, keyed by the reachable automaton. A
  // long string (maxLength 65535: several hundred thousand states) then costs nothing here.
  static void compute_mask_classes(GrammarAutomaton& g) {
    const uint32_t ns = g.num_states();
    constexpr uint32_t kOwn = UINT32_MAX;
    // Dense numbering of the refined states (those of rules with rule edges or bytes only
    // from grammar syntax), kOwn for automaton-rule states.
    std::vector<uint32_t> local(ns, kOwn);
    std::vector<uint32_t> refined;
    for (uint32_t q = 0; q < ns; ++q) {
      if (!g.rule_automaton_key_[g.rule_of(q)].empty()) continue;
      local[q] = static_cast<uint32_t>(refined.size());
      refined.push_back(q);
    }
    const uint32_t nr = static_cast<uint32_t>(refined.size());
    std::map<std::tuple<bool, GrammarAutomaton::ByteSet, bool>, uint32_t> keys;
    std::vector<uint32_t> initial(nr);
    for (uint32_t i = 0; i < nr; ++i) {
      const uint32_t q = refined[i];
      const uint32_t r = g.rule_of(q);
      initial[i] = keys.try_emplace({g.is_final(q), g.follow_[r], g.follow_end_[r] != 0}, keys.size())
                       .first->second;
    }
    // Labels: each distinct byte range is one label (edges are kept merged per target, so
    // equivalent states normally list the same ranges; where they do not, the classes only
    // come out finer, never wrong), then one label per rule.
    std::vector<uint32_t> range_label(256 * 256, UINT32_MAX);
    uint32_t labels = 0;
    std::vector<LabeledTransition> transitions;
    for (uint32_t i = 0; i < nr; ++i) {
      for (const auto& e : g.byte_edges(refined[i])) {
        uint32_t& l = range_label[e.lo * 256u + e.hi];
        if (l == UINT32_MAX) l = labels++;
      }
    }
    for (uint32_t i = 0; i < nr; ++i) {
      const uint32_t q = refined[i];
      for (const auto& e : g.byte_edges(q)) transitions.push_back({i, range_label[e.lo * 256u + e.hi], local[e.target]});
      for (const auto& e : g.rule_edges(q)) transitions.push_back({i, labels + e.rule, local[e.target]});
    }
    const std::vector<uint32_t> block = coarsest_partition(nr, initial, std::move(transitions));
    // Classes numbered in order of their first state: refined blocks keep theirs, every
    // other state opens a class of its own.
    g.state_class_.assign(ns, 0);
    g.class_state_.clear();
    std::vector<uint32_t> block_class;
    for (uint32_t q = 0; q < ns; ++q) {
      uint32_t c;
      if (local[q] == kOwn) {
        c = static_cast<uint32_t>(g.class_state_.size());
      } else {
        const uint32_t b = block[local[q]];
        if (b == block_class.size()) block_class.push_back(static_cast<uint32_t>(g.class_state_.size()));
        c = block_class[b];
      }
      if (c == g.class_state_.size()) g.class_state_.push_back(q);
      g.state_class_[q] = c;
    }
  }
};

std::shared_ptr<const GrammarAutomaton> GrammarAutomaton::compile(const Grammar& grammar,
                                                                const CompileLimits& limits) {
  return AutomatonBuilder::run(Grammar(grammar), limits);
}

std::shared_ptr<const GrammarAutomaton> GrammarAutomaton::compile(Grammar&& grammar, const CompileLimits& limits) {
  return AutomatonBuilder::run(std::move(grammar), limits);
}

}  // namespace lockstep
