// automata/grammar_compiler.cpp — grammar IR → per-rule byte DFAs (GrammarAutomaton).
//
// Non-recursive rules are inlined (inline.h); each reachable rule becomes a DFA over bytes
// and rule symbols (rule_automaton.h); dead states are trimmed; all states are numbered
// globally; then FOLLOW sets, call-graph components and mask classes (grammar_analysis.h).
#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "automata/grammar_analysis.h"
#include "automata/grammar_automaton.h"
#include "automata/inline.h"
#include "automata/json_escapes.h"
#include "automata/rule_automaton.h"
#include "automata/rule_dfa_cache.h"
#include "grammar/char_dfa.h"
#include "grammar/hash.h"

namespace lockstep {

namespace {

// A rule's automaton as the grammar compiler holds it: shared with the rule-automaton cache
// (RuleDfaCache), whose automata number their callees 0, 1, ... (build_dfa); `callees`
// names this grammar's rule behind each number. Copying an automaton out of the cache and
// renaming its callees (and copying it in again when it was built) cost five allocations and
// a pass over its edges, for every rule of a grammar; the names are applied once, when the
// rules are laid out. A rule not built has no entry.
struct BuiltDfa {
  std::shared_ptr<const RuleDfaCache::Entry> entry;
  std::vector<uint32_t> callees;
  const RuleDfa& dfa() const { return entry->dfa; }
  uint32_t size() const { return entry ? entry->dfa.size() : 0; }
};

// Rules that can derive some finite string (mirrors validate(); unreachable rules may fail).
// Whether each rule's start reaches a final state, following byte edges (when `bytes`) and
// the edges of rules known to have the property. One search per rule that never revisits a
// state: an edge calling a rule not known yet waits on that rule and resumes the search of
// its own rule when the callee turns out to have the property. Linear in states and edges
// (a 100,000-rule chain, in any order of definition).
std::vector<char> rules_reaching_final(const std::vector<BuiltDfa>& dfas, bool bytes) {
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
    const RuleDfa& d = dfas[r].dfa();
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
      const uint32_t callee = dfas[r].callees[e.rule];
      if (ok[callee]) {
        visit(r, e.target);
      } else if (!seen[base[r] + e.target]) {
        waiting[callee].emplace_back(r, e.target);
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
    // The escape rules JSON strings call (json_escapes.h), made as automata need them: rules of
    // the compiled grammar numbered after the given ones, not added to the source grammar
    // (grammar() prints what was given; a string automaton is printed as one node anyway).
    EscapeRules escape_rules(grammar, limits.escape_rules ? *limits.escape_rules : escapes_by_rule(grammar));
    const uint32_t num_given = static_cast<uint32_t>(grammar.rules.size());
    std::vector<BuiltDfa> dfas(num_given);
    std::vector<char> compiled(num_given, 0);
    std::vector<std::vector<uint32_t>> keys(num_given);
    std::vector<uint32_t> callee_index(num_given, UINT32_MAX);  // scratch for shape_key
    EscapeRuleFn escapes;
    escapes.bmp = escape_rules.bmp();
    escapes.shapes = make_direct_shape_memo();
    escapes.rule = [&](const std::vector<CodepointRange>& ranges) {
      const uint32_t r = escape_rules.rule(ranges);
      if (r >= callee_index.size()) callee_index.resize(r + 1, UINT32_MAX);
      return r;
    };
    AutomatonDigests digests;
    // Rules whose automaton has no dead state as built (built_trim): trim() is skipped for
    // them while every rule they call is productive.
    std::vector<char> trim_free(num_given, 0);
    uint64_t total = 0;
    // Only rules reachable from the root (after inlining) get automata.
    std::vector<uint32_t> todo{grammar.root};
    while (!todo.empty()) {
      const uint32_t r = todo.back();
      todo.pop_back();
      if (compiled[r]) continue;
      compiled[r] = 1;
      const Rule& rule = r < num_given ? grammar.rules[r] : escape_rules.at(r);
      BuiltDfa dfa;
      const Expr* built = &plan.resolve(rule.body);
      keys[r] = automaton_key(*built, limits, escapes.bmp, digests);
      try {
        dfa = build_dfa(rule, limits, keys[r], &plan, callee_index, escapes, escape_rules, deadline, digests);
      } catch (const LimitError& e) {
        if (!limits.inline_rules || e.limit() == "compile_ms") throw;
        built = &rule.body;
        keys[r] = automaton_key(rule.body, limits, escapes.bmp, digests);
        // Inlining made it too big: keep the calls.
        dfa = build_dfa(rule, limits, keys[r], nullptr, callee_index, escapes, escape_rules, deadline, digests);
      }
      total += dfa.size();
      if (total > limits.max_total_states) {
        throw LimitError(ErrorLocation::at(rule.where), "grammar_automaton_states", limits.max_total_states,
                         fmt::format("the grammar's automata (reached at rule '{}')", rule.name));
      }
      if (escape_rules.end() > dfas.size()) {
        dfas.resize(escape_rules.end());
        compiled.resize(escape_rules.end(), 0);
        keys.resize(escape_rules.end());
        trim_free.resize(escape_rules.end(), 0);
      }
      for (const auto& e : dfa.dfa().rules) {
        if (!compiled[dfa.callees[e.rule]]) todo.push_back(dfa.callees[e.rule]);
      }
      trim_free[r] = built_trim(*built);
      dfas[r] = std::move(dfa);
    }
    // A rule not compiled (unreachable, or inlined wherever it is used: most of a grammar's
    // rules then, 11,398 of the 13,682 of an anyOf of 200 objects) keeps no automaton here and
    // becomes a lone non-final state when the rules are laid out below: nothing for
    // rules_reaching_final() to search or trimmed() to copy.
    const size_t num_rules = escape_rules.end();
    const std::vector<char> productive = rules_reaching_final(dfas, true);
    std::vector<char> productive_callee;
    for (size_t r = 0; r < num_rules; ++r) {
      if (!compiled[r] || (trim_free[r] && calls_productive(dfas[r], productive))) continue;
      // trimmed() reads the callees by their numbers in the automaton: their productivity is
      // handed to it in that numbering, and a trimmed automaton keeps it.
      productive_callee.resize(dfas[r].callees.size());
      for (size_t i = 0; i < productive_callee.size(); ++i) productive_callee[i] = productive[dfas[r].callees[i]];
      if (auto t = trimmed(dfas[r].dfa(), productive_callee)) {
        dfas[r].entry = std::make_shared<const RuleDfaCache::Entry>(RuleDfaCache::Entry{std::move(*t), {}, {0}});
      }
    }
    const std::vector<char> nullable = rules_reaching_final(dfas, false);

    auto out = std::make_shared<GrammarAutomaton>();
    out->rule_automaton_key_ = std::move(keys);
    out->root_ = grammar.root;
    uint32_t base = 0;
    std::vector<uint32_t> bases(num_rules);
    size_t num_bytes = 0, num_calls = 0;
    for (size_t r = 0; r < num_rules; ++r) {
      bases[r] = base;
      base += compiled[r] ? dfas[r].size() : 1;
      if (!compiled[r]) continue;
      num_bytes += dfas[r].dfa().bytes.size();
      num_calls += dfas[r].dfa().rules.size();
    }
    out->rule_start_ = std::move(bases);
    out->rule_nullable_.assign(nullable.begin(), nullable.end());
    out->escape_rule_names_.reserve(num_rules - num_given);
    for (size_t r = num_given; r < num_rules; ++r) {
      out->escape_rule_names_.push_back(escape_rules.at(static_cast<uint32_t>(r)).name);
    }
    // Every array sized once and written in place: a rule's states, and each one's byte and
    // rule edges, are one block (a rule not compiled is one state without edges).
    out->state_rule_.resize(base);
    out->state_final_.resize(base);
    out->byte_begin_.resize(base + 1);
    out->rule_begin_.resize(base + 1);
    out->byte_edges_.resize(num_bytes);
    out->rule_edges_.resize(num_calls);
    uint32_t nb = 0, nc = 0;
    for (size_t r = 0; r < num_rules; ++r) {
      const uint32_t first = out->rule_start_[r];
      if (!compiled[r]) {
        out->state_rule_[first] = static_cast<uint32_t>(r);
        out->byte_begin_[first] = nb;
        out->rule_begin_[first] = nc;
        continue;
      }
      const RuleDfa& d = dfas[r].dfa();
      const std::vector<uint32_t>& callees = dfas[r].callees;
      std::fill_n(out->state_rule_.begin() + first, d.size(), static_cast<uint32_t>(r));
      std::copy(d.final.begin(), d.final.end(), out->state_final_.begin() + first);
      for (uint32_t st = 0; st < d.size(); ++st) {
        out->byte_begin_[first + st] = nb + d.byte_begin[st];
        out->rule_begin_[first + st] = nc + d.rule_begin[st];
      }
      for (const auto& e : d.bytes) out->byte_edges_[nb++] = {e.lo, e.hi, first + e.target};
      for (const auto& e : d.rules) out->rule_edges_[nc++] = {callees[e.rule], first + e.target};
      // Numbers named in increasing order keep each state's calls sorted by rule; others are
      // sorted again.
      if (std::is_sorted(callees.begin(), callees.end())) continue;
      for (uint32_t st = 0; st < d.size(); ++st) {
        const auto calls = out->rule_edges_.begin() + out->rule_begin_[first + st];
        std::sort(calls, calls + (d.rule_begin[st + 1] - d.rule_begin[st]),
                  [](const auto& a, const auto& b) { return a.rule < b.rule; });
      }
    }
    out->byte_begin_[base] = nb;
    out->rule_begin_[base] = nc;
    AutomatonAnalysis::compute_follow(*out, num_given, grammar.follow_classes);
    AutomatonAnalysis::compute_components(*out);
    AutomatonAnalysis::compute_mask_classes(*out);
    out->grammar_ = std::move(grammar);
    return out;
  }

 private:
  // Whether the automaton of a rule with this (resolved) body has no dead state as built: a
  // whole-rule automaton built directly (direct_automaton_dfa) from a code-point automaton
  // known minimal and not empty. Its code-point states are those of the minimal automaton,
  // which reach a final state (CharDfa::known_minimal), and its partial states (UTF-8
  // continuations, escapes) each lead on to one of them, through bytes or an escape rule's
  // call. Such a rule's trimmed() was a pass over every state and edge that removed nothing: a
  // 50,000-string enum's 106,719 states, several milliseconds.
  static bool built_trim(const Expr& body) {
    return body.kind == Expr::Kind::kAutomaton && body.automaton && body.automaton->known_minimal() &&
           !body.automaton->empty();
  }
  static bool calls_productive(const BuiltDfa& dfa, const std::vector<char>& productive) {
    const auto& calls = dfa.dfa().rules;
    return std::all_of(calls.begin(), calls.end(), [&](const auto& e) { return productive[dfa.callees[e.rule]] != 0; });
  }

  // A code-point automaton in a key: its numbers of states and edges and a 128-bit digest of
  // its states (finality, edge count, edges), each automaton digested once per compilation.
  // Keys held every state and edge: hundreds of thousands of words for a large enum or a
  // length-counted string, written, hashed and copied into the rule-automaton cache for each
  // such rule, and a key trie's automaton written again for each place a member machine reads
  // it (448 places in an object of 7 required names in any order); the mask engine hashed
  // them again (automaton_digest()). Equal digests stand for equal automata, as the mask
  // engine's 128-bit keys do. The memo holds each automaton, so no other takes its address.
  struct AutomatonDigests {
    std::unordered_map<const CharDfa*, std::pair<std::shared_ptr<const CharDfa>, std::array<uint32_t, 6>>> words;
    void append(std::vector<uint32_t>& key, const std::shared_ptr<const CharDfa>& automaton) {
      auto [it, fresh] = words.try_emplace(automaton.get());
      if (fresh) it->second = {automaton, digest(*automaton)};
      key.insert(key.end(), it->second.second.begin(), it->second.second.end());
    }
    // Four digests over the states in turn (each digest's steps wait on the one before),
    // then one over theirs.
    static std::array<uint32_t, 6> digest(const CharDfa& automaton) {
      Digest128 l0, l1, l2, l3;
      Digest128* const lanes[4] = {&l0, &l1, &l2, &l3};
      uint64_t edges = 0;
      size_t i = 0;
      for (const auto& st : automaton.states()) {
        Digest128& l = *lanes[i++ & 3];
        l.mix(uint64_t{st.final ? 1u : 0u} << 32 | st.edges.size());
        for (const auto& e : st.edges) {
          l.mix(uint64_t{e.lo} << 32 | e.hi);
          l.mix(e.target);
        }
        edges += st.edges.size();
      }
      Digest128 d;
      d.mix(automaton.size());
      d.mix(edges);
      for (const Digest128* l : lanes) {
        d.mix(l->value().first);
        d.mix(l->value().second);
      }
      const auto [h1, h2] = d.value();
      return {static_cast<uint32_t>(automaton.size()), static_cast<uint32_t>(edges), static_cast<uint32_t>(h1),
              static_cast<uint32_t>(h1 >> 32), static_cast<uint32_t>(h2), static_cast<uint32_t>(h2 >> 32)};
    }
  };

  // The identity of an automaton-only rule (one embedded automaton, e.g. a JSON Schema string
  // or number language): its flags and the automaton's digest. Empty for other rules.
  static std::vector<uint32_t> automaton_key(const Expr& body, const CompileLimits& limits, bool bmp_escapes,
                                             AutomatonDigests& digests) {
    std::vector<uint32_t> key;
    if (body.kind != Expr::Kind::kAutomaton || !body.automaton) return key;
    key.push_back(body.json_string ? (bmp_escapes ? kJsonBmpEscapes : 1) : 0);
    key.push_back(limits.max_states_per_rule);
    key.push_back(limits.max_states_to_minimize);
    digests.append(key, body.automaton);
    return key;
  }

  // The escape rules a JSON-string automaton calls (json_escapes.h), appended to `callees` in
  // order of first appearance as shape_key numbers callees (`index` as there).
  static void add_escape_callees(const CharDfa& automaton, const EscapeRuleFn& escapes,
                                 std::vector<uint32_t>& callees, std::vector<uint32_t>& index) {
    std::vector<EscapeCall> calls;
    for (const auto& st : automaton.states()) {
      escape_calls(st.edges, escapes.bmp, calls);
      for (const EscapeCall& c : calls) {
        const uint32_t rule = escapes.rule(c.ranges);
        if (index[rule] == UINT32_MAX) {
          index[rule] = static_cast<uint32_t>(callees.size());
          callees.push_back(rule);
        }
      }
    }
  }

  // The shape of a rule body as the automaton builder reads it (rule_automaton.cpp, Nfa):
  // every node in order, substituted references followed into the bodies they stand for,
  // each kept reference as the index of its callee in order of first appearance. The
  // callees are appended to `callees`; `index` (one slot per rule, UINT32_MAX when unused)
  // numbers them and is left as it was found.
  // A JSON-string automaton's escape rules count as callees (add_escape_callees).
  static std::vector<uint32_t> shape_key(const Expr& body, const InlinePlan* plan, const CompileLimits& limits,
                                         const EscapeRuleFn& escapes, std::vector<uint32_t>& callees,
                                         std::vector<uint32_t>& index, AutomatonDigests& digests) {
    std::vector<uint32_t> key;
    key.reserve(64);
    key.insert(key.end(), {kShapeTag, limits.max_states_per_rule, limits.max_states_to_minimize});
    ShapeWriter{key, plan, escapes, callees, index, digests, {}, 0}.add(body, true);
    for (uint32_t c : callees) index[c] = UINT32_MAX;
    return key;
  }
  // shape_key's walk over a body (a plain recursive call: this runs once per rule and node).
  struct ShapeWriter {
    std::vector<uint32_t>& key;
    const InlinePlan* plan;
    const EscapeRuleFn& escapes;
    std::vector<uint32_t>& callees;
    std::vector<uint32_t>& index;
    AutomatonDigests& digests;
    std::unordered_map<uint32_t, uint32_t> merged;  // tail-merged rule → its number in order of first appearance
    uint32_t depth = 0;                              // merged bodies being read, one inside the other
    // `tail` as for the automaton builder's: `e` ends the rule's body.
    void add(const Expr& e, bool tail) {
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
            add(plan->body(e.rule), tail);
            return;
          }
          if (plan && plan->merges(e, tail, depth, merged.count(e.rule) > 0)) {
            // The body once, where the builder builds it; later places by its number.
            const auto [it, fresh] = merged.try_emplace(e.rule, static_cast<uint32_t>(merged.size()));
            key.back() = fresh ? kMerged : kMergedAgain;
            key.push_back(it->second);
            if (fresh) {
              ++depth;
              add(plan->body(e.rule), true);
              --depth;
            }
            return;
          }
          if (index[e.rule] == UINT32_MAX) {
            index[e.rule] = static_cast<uint32_t>(callees.size());
            callees.push_back(e.rule);
          }
          key.push_back(index[e.rule]);
          return;
        case Expr::Kind::kAutomaton:
          key.push_back(e.json_string ? (escapes.bmp ? 2 : 1) : 0);
          digests.append(key, e.automaton);
          if (e.json_string) add_escape_callees(*e.automaton, escapes, callees, index);
          return;
        case Expr::Kind::kRepeat:
          key.insert(key.end(), {e.min, e.max});
          add(e.children[0], false);
          return;
        case Expr::Kind::kMachine: {
          // The machine (each state's finality and moves), then each child once: walk_nfa
          // builds every copy of a child alike, none at the rule's end.
          const ElementMachine& m = *e.machine;
          key.push_back(m.num_states());
          key.push_back(static_cast<uint32_t>(m.moves.size()));
          key.push_back(static_cast<uint32_t>(e.children.size()));
          for (uint32_t st = 0; st < m.num_states(); ++st) {
            key.push_back(uint32_t{m.accepting[st]} << 31 | (m.move_begin[st + 1] - m.move_begin[st]));
          }
          for (const auto& mv : m.moves) key.insert(key.end(), {mv.element, mv.target});
          for (const Expr& c : e.children) add(c, false);
          return;
        }
        case Expr::Kind::kSequence:
          key.push_back(static_cast<uint32_t>(e.children.size()));
          for (size_t i = 0; i < e.children.size(); ++i) add(e.children[i], tail && i + 1 == e.children.size());
          return;
        case Expr::Kind::kChoice:
          key.push_back(static_cast<uint32_t>(e.children.size()));
          for (const auto& c : e.children) add(c, tail);
          return;
      }
    }
  };
  // Shape keys start with this tag; automaton keys with 0 (plain), 1 (a JSON string) or
  // kJsonBmpEscapes (one whose \u spellings up to U+FFFF are read by escape rules too).
  static constexpr uint32_t kShapeTag = 2;
  static constexpr uint32_t kJsonBmpEscapes = 3;
  static constexpr uint32_t kSubstituted = 0xFFFFFFFFu;
  static constexpr uint32_t kMerged = 0xFFFFFFFEu, kMergedAgain = 0xFFFFFFFDu;

  // Rule automata are cached process-wide (RuleDfaCache): formats, string languages and
  // object layouts recur within and across schemas. A rule other than a whole-rule automaton
  // is cached with its callees as numbers in order of first appearance, and a hit names them
  // this grammar's rules (the automaton is the same: states and edges do not depend on which
  // rules are called, only on where); the automaton is shared, not copied (BuiltDfa).
  // With `plan`, the references it substitutes are built as the bodies they stand for.
  // A whole-rule JSON-string automaton's callees are its escape rules, numbered in the order
  // of their rules (so the grammar that built it lays it out without sorting a state's calls)
  // and named alike on a hit: the cache keeps their code points (Entry::escape_ranges).
  static BuiltDfa build_dfa(const Rule& rule, const CompileLimits& limits, const std::vector<uint32_t>& key,
                            const InlinePlan* plan, std::vector<uint32_t>& callee_index, const EscapeRuleFn& escapes,
                            const EscapeRules& escape_rules, CompileDeadline& deadline, AutomatonDigests& digests) {
    BuiltDfa built;
    std::vector<uint32_t>& callees = built.callees;
    callees.reserve(8);  // most rules call a few: one allocation, not one per doubling
    std::vector<uint32_t> shape;
    if (key.empty()) shape = shape_key(rule.body, plan, limits, escapes, callees, callee_index, digests);
    const std::vector<uint32_t>& cache_key = key.empty() ? shape : key;
    if (auto hit = RuleDfaCache::instance().find(cache_key)) {
      std::vector<CodepointRange> ranges;
      for (size_t i = 0; i < hit->escape_callees(); ++i) {
        ranges.assign(hit->escape_ranges.begin() + hit->escape_begin[i], hit->escape_ranges.begin() + hit->escape_begin[i + 1]);
        callees.push_back(escapes.rule(ranges));
      }
      built.entry = std::move(hit);
      return built;
    }
    RuleDfaCache::Entry stored{determinize_rule(rule, limits.max_states_per_rule, plan, &escapes, &deadline), {}, {0}};
    RuleDfa& dfa = stored.dfa;
    // A whole-rule automaton is built minimal already (DirectAutomatonDfa, from a minimal
    // code-point DFA: every CharDfa operation returns one).
    const Expr& body = plan ? plan->resolve(rule.body) : rule.body;
    if (body.kind != Expr::Kind::kAutomaton && dfa.size() <= limits.max_states_to_minimize) dfa = minimize(dfa);
    if (!key.empty()) {  // a whole-rule automaton calls escape rules only: numbered in rule order
      for (const auto& e : dfa.rules) {
        if (std::find(callees.begin(), callees.end(), e.rule) == callees.end()) callees.push_back(e.rule);
      }
      std::sort(callees.begin(), callees.end());  // so the numbers keep each state's calls sorted
      size_t num_ranges = 0;
      for (uint32_t c : callees) num_ranges += escape_rules.ranges(c).size();
      stored.escape_ranges.reserve(num_ranges);
      stored.escape_begin.reserve(callees.size() + 1);
      for (uint32_t c : callees) {
        const auto& ranges = escape_rules.ranges(c);
        stored.escape_ranges.insert(stored.escape_ranges.end(), ranges.begin(), ranges.end());
        stored.escape_begin.push_back(static_cast<uint32_t>(stored.escape_ranges.size()));
      }
    }
    for (uint32_t i = 0; i < callees.size(); ++i) callee_index[callees[i]] = i;
    for (auto& e : dfa.rules) e.rule = callee_index[e.rule];
    for (uint32_t c : callees) callee_index[c] = UINT32_MAX;
    built.entry = std::make_shared<const RuleDfaCache::Entry>(std::move(stored));
    RuleDfaCache::instance().insert(key.empty() ? std::move(shape) : key, built.entry);
    return built;
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
