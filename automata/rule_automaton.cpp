// automata/rule_automaton.cpp — see rule_automaton.h.
#include "automata/rule_automaton.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "automata/inline.h"
#include "automata/json_escapes.h"
#include "automata/utf8_ranges.h"
#include "grammar/char_dfa.h"
#include "grammar/hash.h"
#include "grammar/limits.h"
#include "grammar/partition_refinement.h"

namespace lockstep {

namespace {

using ByteEdge = GrammarAutomaton::ByteEdge;
using RuleEdge = GrammarAutomaton::RuleEdge;

uint64_t hash_span(const uint32_t* p, size_t n) { return fnv1a_u32({p, n}, kFnvOffsetBasis ^ n); }

// Interns uint32 sequences: id ↔ sequence, stored in one arena, found through an
// open-addressing table keyed by the sequence's hash.
class SeqTable {
 public:
  SeqTable() { slots_.assign(64, UINT32_MAX); }

  // Returns (id, inserted).
  std::pair<uint32_t, bool> intern(const uint32_t* p, size_t n) {
    const uint64_t h = hash_span(p, n);
    size_t mask = slots_.size() - 1;
    size_t i = static_cast<size_t>(fold29(h)) & mask;
    for (; slots_[i] != UINT32_MAX; i = (i + 1) & mask) {
      const uint32_t id = slots_[i];
      if (hashes_[id] == h && begin_[id + 1] - begin_[id] == n &&
          std::equal(p, p + n, arena_.begin() + begin_[id])) {
        return {id, false};
      }
    }
    const uint32_t id = size();
    arena_.insert(arena_.end(), p, p + n);
    begin_.push_back(static_cast<uint32_t>(arena_.size()));
    hashes_.push_back(h);
    slots_[i] = id;
    if (hashes_.size() * 2 > slots_.size()) grow();
    return {id, true};
  }
  uint32_t size() const { return static_cast<uint32_t>(begin_.size() - 1); }
  const uint32_t* data(uint32_t id) const { return arena_.data() + begin_[id]; }
  size_t length(uint32_t id) const { return begin_[id + 1] - begin_[id]; }
  /// The lengths of all sequences, summed.
  uint64_t total_length() const { return arena_.size(); }
  void clear() {
    arena_.clear();
    begin_.assign(1, 0);
    hashes_.clear();
    std::fill(slots_.begin(), slots_.end(), UINT32_MAX);
  }

 private:
  void grow() {
    slots_.assign(slots_.size() * 2, UINT32_MAX);
    const size_t mask = slots_.size() - 1;
    for (uint32_t id = 0; id < hashes_.size(); ++id) {
      size_t i = static_cast<size_t>(fold29(hashes_[id])) & mask;
      while (slots_[i] != UINT32_MAX) i = (i + 1) & mask;
      slots_[i] = id;
    }
  }
  std::vector<uint32_t> arena_;
  std::vector<uint32_t> begin_{0};
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> slots_;
};

// Thompson NFA with flat edge lists; adjacency (CSR) is built by finish().
class Nfa {
 public:
  struct BEdge {
    uint32_t from;
    uint8_t lo, hi;
    uint32_t to;
  };
  struct REdge {
    uint32_t from, rule, to;
  };
  struct EEdge {
    uint32_t from, to;
  };

  Nfa(const Rule& rule, uint32_t limit, const InlinePlan* plan, const EscapeRuleFn* escapes)
      : rule_(rule), limit_(limit), plan_(plan), escapes_(escapes) {
    start = add_state();
    accept = add_state();
    build(rule.body, start, accept, true);
    finish();
  }

  uint32_t start, accept;
  uint32_t num_states = 0;
  std::vector<BEdge> bytes;
  std::vector<REdge> rules;
  std::vector<EEdge> eps;
  std::vector<uint32_t> b_begin, r_begin, e_begin;

 private:
  uint32_t add_state() {
    if (num_states >= limit_) {
      throw LimitError(ErrorLocation::at(rule_.where), "rule_automaton_states", limit_,
                       fmt::format("the automaton of rule '{}' (reduce its repetition bounds)", rule_.name));
    }
    return num_states++;
  }

  // Edges for code points lo..hi from `from` to `to`: their UTF-8 encodings or, inside a
  // JSON string, also their escapes (RFC 8259 §7): the \u spellings up to U+FFFF spelled
  // out here unless escape rules read them (`bmp`, escape_edges).
  void codepoint_edges(uint32_t from, uint32_t to, uint32_t lo, uint32_t hi, bool json, bool bmp) {
    std::vector<CodepointRange> raw{{lo, hi}};
    if (json) raw = Expr::char_class({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}, true).ranges;
    for (const auto& r : Expr::char_class(raw).ranges) {
      const uint32_t a = std::max(r.lo, lo), b = std::min(r.hi, hi);
      if (a > b) continue;
      for (const auto& seq : utf8_sequences(Expr::char_class({{a, b}}).ranges)) byte_chain(from, to, seq);
    }
    if (!json) return;
    static constexpr std::pair<uint32_t, char> kShort[] = {{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {8, 'b'},
                                                           {12, 'f'}, {10, 'n'}, {13, 'r'}, {9, 't'}};
    for (const auto& [cp, letter] : kShort) {
      if (cp < lo || cp > hi) continue;
      const uint32_t mid = add_state();
      bytes.push_back({from, '\\', '\\', mid});
      bytes.push_back({mid, static_cast<uint8_t>(letter), static_cast<uint8_t>(letter), to});
    }
    if (bmp) return;
    // \uXXXX for the Basic Multilingual Plane (surrogates excluded).
    for (const auto& r : Expr::char_class({{lo, std::min<uint32_t>(hi, 0xFFFF)}}).ranges) {
      if (r.lo > r.hi || r.lo > 0xFFFF) continue;
      for (const auto& digits : hex_sequences(r.lo, r.hi)) {
        uint32_t cur = add_state();
        bytes.push_back({from, '\\', '\\', cur});
        uint32_t next = add_state();
        bytes.push_back({cur, 'u', 'u', next});
        cur = next;
        for (size_t i = 0; i < 4; ++i) {
          next = i == 3 ? to : add_state();
          for (const ByteRange& r : hex_digit_bytes(digits[i].first, digits[i].second)) {
            bytes.push_back({cur, r.lo, r.hi, next});
          }
          cur = next;
        }
      }
    }
  }

  // \u spellings (json_escapes.h): the backslash, then a call of the escape rule of each
  // target's code points; with `bmp` false, "\u" and D or d, then a call of the rule of the
  // surrogate pairs of each target's code points above U+FFFF.
  void escape_edges(uint32_t from, const CharDfa::Edges& edges, const std::vector<uint32_t>& ids,
                    bool bmp) {
    escape_calls(edges, bmp, calls_);
    for (const EscapeCall& c : calls_) {
      const uint32_t backslash = add_state();
      bytes.push_back({from, '\\', '\\', backslash});
      uint32_t caller = backslash;
      if (!bmp) {
        const uint32_t u = add_state(), d = add_state();
        bytes.push_back({backslash, 'u', 'u', u});
        bytes.push_back({u, 'D', 'D', d});
        bytes.push_back({u, 'd', 'd', d});
        caller = d;
      }
      rules.push_back({caller, escapes_->rule(c.ranges), ids[c.target]});
    }
  }

  void byte_chain(uint32_t from, uint32_t to, const std::vector<ByteRange>& seq) {
    uint32_t cur = from;
    for (size_t i = 0; i < seq.size(); ++i) {
      const uint32_t next = i + 1 == seq.size() ? to : add_state();
      bytes.push_back({cur, seq[i].lo, seq[i].hi, next});
      cur = next;
    }
  }

  // `tail`: `e` ends the rule (its last step, through sequences and choices; `to` is then
  // `accept`), where a reference to a tail-merged rule continues into that rule's body.
  void build(const Expr& e, uint32_t from, uint32_t to, bool tail) {
    switch (e.kind) {
      case Expr::Kind::kEmpty:
        eps.push_back({from, to});
        return;
      case Expr::Kind::kLiteral: {
        uint32_t cur = from;
        for (size_t i = 0; i < e.bytes.size(); ++i) {
          const uint32_t next = i + 1 == e.bytes.size() ? to : add_state();
          const auto b = static_cast<uint8_t>(e.bytes[i]);
          bytes.push_back({cur, b, b, next});
          cur = next;
        }
        return;
      }
      case Expr::Kind::kCharClass: {
        auto [it, inserted] = class_cache_.try_emplace(&e);
        if (inserted) it->second = utf8_sequences(e.ranges);
        for (const auto& seq : it->second) byte_chain(from, to, seq);
        return;
      }
      case Expr::Kind::kRuleRef:
        if (plan_ && plan_->substitutes(e)) {
          build(plan_->body(e.rule), from, to, tail);
        } else if (plan_ && plan_->merges(e, tail, merge_depth_, merged_.count(e.rule) > 0)) {
          // One copy of the body per automaton, entered from every place that ends with
          // it (ShapeWriter in grammar_compiler.cpp reads the body the same way).
          auto [it, fresh] = merged_.try_emplace(e.rule, 0);
          if (fresh) {
            const uint32_t entry = add_state();
            it->second = entry;  // set first: the body may lead back to this rule
            ++merge_depth_;
            build(plan_->body(e.rule), entry, to, true);
            --merge_depth_;
            eps.push_back({from, entry});
          } else {
            eps.push_back({from, it->second});
          }
        } else {
          rules.push_back({from, e.rule, to});
        }
        return;
      case Expr::Kind::kAutomaton: {
        const auto& st = e.automaton->states();
        const bool bmp = e.json_string && escapes_ && escapes_->bmp;  // \uXXXX by rules too
        std::vector<uint32_t> ids(st.size());
        for (size_t i = 0; i < st.size(); ++i) ids[i] = add_state();  // nothing may enter `from`
        eps.push_back({from, ids[0]});
        for (size_t i = 0; i < st.size(); ++i) {
          if (st[i].final) eps.push_back({ids[i], to});
          for (const auto& ed : st[i].edges) codepoint_edges(ids[i], ids[ed.target], ed.lo, ed.hi, e.json_string, bmp);
          if (e.json_string && escapes_) escape_edges(ids[i], st[i].edges, ids, bmp);
        }
        return;
      }
      case Expr::Kind::kSequence: {
        uint32_t cur = from;
        for (size_t i = 0; i < e.children.size(); ++i) {
          const bool last = i + 1 == e.children.size();
          const uint32_t next = last ? to : add_state();
          build(e.children[i], cur, next, tail && last);
          cur = next;
        }
        return;
      }
      case Expr::Kind::kChoice:
        for (const auto& c : e.children) build(c, from, to, tail);
        return;
      case Expr::Kind::kMachine:
        // Its elements and separator are never the rule's last step: no reference in them is
        // tail-merged (ShapeWriter in grammar_compiler.cpp reads them alike).
        walk_nfa(
            *e.machine, e.children, from, to, [&] { return add_state(); },
            [&](uint32_t a, uint32_t b) { eps.push_back({a, b}); },
            [&](const Expr& x, uint32_t a, uint32_t b) { build(x, a, b, false); });
        return;
      case Expr::Kind::kRepeat: {
        const Expr& child = e.children[0];
        uint32_t cur = from;
        for (uint32_t i = 0; i < e.min; ++i) {
          const uint32_t next = (i + 1 == e.min && e.max == e.min) ? to : add_state();
          build(child, cur, next, false);
          cur = next;
        }
        if (e.max == e.min) return;
        if (e.max == kUnbounded) {
          // Fresh loop states, so no edge ever enters `from` or leaves `to`.
          const uint32_t loop = add_state();
          const uint32_t back = add_state();
          eps.push_back({cur, loop});
          build(child, loop, back, false);
          eps.push_back({back, loop});
          eps.push_back({loop, to});
          return;
        }
        const uint32_t optional = e.max - e.min;
        for (uint32_t i = 0; i < optional; ++i) {
          eps.push_back({cur, to});
          const uint32_t next = i + 1 == optional ? to : add_state();
          build(child, cur, next, false);
          cur = next;
        }
        return;
      }
    }
  }

  template <typename Edge>
  static std::vector<uint32_t> csr(std::vector<Edge>& edges, uint32_t n) {
    std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.from < b.from; });
    std::vector<uint32_t> begin(n + 1, 0);
    for (const auto& e : edges) ++begin[e.from + 1];
    for (uint32_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
    return begin;
  }

  void finish() {
    b_begin = csr(bytes, num_states);
    r_begin = csr(rules, num_states);
    e_begin = csr(eps, num_states);
  }

  const Rule& rule_;
  uint32_t limit_;
  const InlinePlan* plan_;
  const EscapeRuleFn* escapes_;
  std::vector<EscapeCall> calls_;
  std::unordered_map<const Expr*, std::vector<std::vector<ByteRange>>> class_cache_;
  std::unordered_map<uint32_t, uint32_t> merged_;  // tail-merged rule → the state its body starts from
  uint32_t merge_depth_ = 0;                       // merged bodies being built, one inside the other
};

}  // namespace

RuleDfa determinize_rule(const Rule& rule, uint32_t max_states, const InlinePlan* plan, const EscapeRuleFn* escapes,
                         CompileDeadline* deadline) {
  const Expr& body = plan ? plan->resolve(rule.body) : rule.body;
  if (body.kind == Expr::Kind::kAutomaton && body.automaton) {
    return direct_automaton_dfa(*body.automaton, body.json_string, rule, max_states, escapes);
  }
  CompileDeadline own_deadline;
  CompileDeadline& clock = deadline ? *deadline : own_deadline;
  const ErrorLocation where = ErrorLocation::at(rule.where);
  // The subset construction's cost is the sum of its sets' sizes, not their number:
  // `(a{1,300}b){1,300}` has 90,000 NFA states and sets of thousands of them.
  const uint64_t max_set_total = engine_limits().automaton_state_set;
  const Nfa nfa(rule, max_states, plan, escapes);
  // Sized for as many states and edges as the NFA has (most rules' DFAs have fewer): the
  // vectors otherwise grew edge by edge, a few allocations per rule of a large schema.
  RuleDfa dfa = RuleDfa::with_capacity(nfa.num_states, nfa.bytes.size(), nfa.rules.size());
  SeqTable sets;
  std::vector<uint32_t> mark(nfa.num_states, 0);
  uint32_t stamp = 0;
  std::vector<uint32_t> work, stack;

  // ε-closure of `work` (in place), sorted.
  auto close = [&] {
    ++stamp;
    stack.assign(work.begin(), work.end());
    for (uint32_t s : work) mark[s] = stamp;
    while (!stack.empty()) {
      const uint32_t s = stack.back();
      stack.pop_back();
      for (uint32_t k = nfa.e_begin[s]; k < nfa.e_begin[s + 1]; ++k) {
        const uint32_t t = nfa.eps[k].to;
        if (mark[t] != stamp) {
          mark[t] = stamp;
          work.push_back(t);
          stack.push_back(t);
        }
      }
    }
    std::sort(work.begin(), work.end());
  };
  auto intern = [&]() -> uint32_t {
    clock.check(where);
    close();
    auto [id, fresh] = sets.intern(work.data(), work.size());
    if (fresh && sets.size() > max_states) {
      throw LimitError(where, "rule_automaton_states", max_states,
                       fmt::format("the automaton of rule '{}'", rule.name));
    }
    if (fresh && sets.total_length() > max_set_total) {
      throw LimitError(where, "automaton_state_set", max_set_total,
                       fmt::format("the determinization of rule '{}' ({} automaton states so far, over "
                                   "{} NFA states)",
                                   rule.name, sets.size(), nfa.num_states));
    }
    return id;
  };

  work.assign(1, nfa.start);
  intern();
  std::vector<uint32_t> set, covering, targets;
  std::vector<std::pair<uint32_t, uint32_t>> rule_targets;  // (rule, nfa target)
  for (uint32_t d = 0; d < sets.size(); ++d) {
    clock.check(where);
    set.assign(sets.data(d), sets.data(d) + sets.length(d));
    bool is_final = false;
    bool point[257] = {};
    covering.clear();
    rule_targets.clear();
    for (uint32_t s : set) {
      if (s == nfa.accept) is_final = true;
      for (uint32_t k = nfa.b_begin[s]; k < nfa.b_begin[s + 1]; ++k) {
        point[nfa.bytes[k].lo] = true;
        point[nfa.bytes[k].hi + 1] = true;
        covering.push_back(k);
      }
      for (uint32_t k = nfa.r_begin[s]; k < nfa.r_begin[s + 1]; ++k) {
        rule_targets.emplace_back(nfa.rules[k].rule, nfa.rules[k].to);
      }
    }
    dfa.add_state(is_final);
    // Byte edges: one per maximal interval with the same target set.
    int lo = -1;
    for (int b = 0; b <= 256; ++b) {
      if (!point[b]) continue;
      if (lo >= 0) {
        const int hi = b - 1;
        work.clear();
        for (uint32_t k : covering) {
          const auto& e = nfa.bytes[k];
          if (e.lo <= lo && e.hi >= hi) work.push_back(e.to);
        }
        if (!work.empty()) {
          std::sort(work.begin(), work.end());
          work.erase(std::unique(work.begin(), work.end()), work.end());
          const uint32_t t = intern();
          auto& out = dfa.bytes;
          if (out.size() > dfa.byte_begin[d] && out.back().target == t && out.back().hi + 1 == lo) {
            out.back().hi = static_cast<uint8_t>(hi);
          } else {
            out.push_back({static_cast<uint8_t>(lo), static_cast<uint8_t>(hi), t});
          }
        }
      }
      lo = b;
    }
    std::sort(rule_targets.begin(), rule_targets.end());
    for (size_t i = 0; i < rule_targets.size();) {
      const uint32_t r = rule_targets[i].first;
      work.clear();
      for (; i < rule_targets.size() && rule_targets[i].first == r; ++i) work.push_back(rule_targets[i].second);
      work.erase(std::unique(work.begin(), work.end()), work.end());
      dfa.rules.push_back({r, intern()});
    }
    dfa.close_state();
  }
  return dfa;
}

RuleDfa minimize(const RuleDfa& dfa) {
  const uint32_t n = dfa.size();
  // Labels: byte classes (bytes no edge boundary separates), then one label per rule.
  std::vector<char> cut(257, 0);
  for (const auto& e : dfa.bytes) cut[e.lo] = cut[e.hi + 1] = 1;
  std::vector<uint32_t> byte_class(256);
  uint32_t classes = 0;
  for (uint32_t b = 0; b < 256; ++b) {
    if (b > 0 && cut[b]) ++classes;
    byte_class[b] = classes;
  }
  ++classes;
  std::vector<LabeledTransition> transitions;
  transitions.reserve(dfa.bytes.size() + dfa.rules.size());
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t k = dfa.byte_begin[s]; k < dfa.byte_begin[s + 1]; ++k) {
      const auto& e = dfa.bytes[k];
      for (uint32_t c = byte_class[e.lo]; c <= byte_class[e.hi]; ++c) transitions.push_back({s, c, e.target});
    }
    for (uint32_t k = dfa.rule_begin[s]; k < dfa.rule_begin[s + 1]; ++k) {
      transitions.push_back({s, classes + dfa.rules[k].rule, dfa.rules[k].target});
    }
  }
  std::vector<uint32_t> initial(n);
  for (uint32_t s = 0; s < n; ++s) initial[s] = dfa.final[s];
  const std::vector<uint32_t> cls = coarsest_partition(n, initial, std::move(transitions));
  const uint32_t count = n ? *std::max_element(cls.begin(), cls.end()) + 1 : 0;
  // Renumber so that the start's class is 0, then build the quotient.
  std::vector<uint32_t> remap(count, UINT32_MAX), rep;
  remap[cls[0]] = 0;
  rep.push_back(0);
  for (uint32_t s = 0; s < n; ++s) {
    if (remap[cls[s]] == UINT32_MAX) {
      remap[cls[s]] = static_cast<uint32_t>(rep.size());
      rep.push_back(s);
    }
  }
  RuleDfa out;
  for (uint32_t c = 0; c < count; ++c) {
    const uint32_t s = rep[c];
    out.add_state(dfa.final[s] != 0);
    const size_t first = out.bytes.size();
    for (uint32_t k = dfa.byte_begin[s]; k < dfa.byte_begin[s + 1]; ++k) {
      const auto& e = dfa.bytes[k];
      const uint32_t t = remap[cls[e.target]];
      if (out.bytes.size() > first && out.bytes.back().target == t && out.bytes.back().hi + 1 == e.lo) {
        out.bytes.back().hi = e.hi;
      } else {
        out.bytes.push_back({e.lo, e.hi, t});
      }
    }
    for (uint32_t k = dfa.rule_begin[s]; k < dfa.rule_begin[s + 1]; ++k) {
      out.rules.push_back({dfa.rules[k].rule, remap[cls[dfa.rules[k].target]]});
    }
    out.close_state();
  }
  return out;
}

namespace {
constexpr size_t kKeptEntries = size_t{1} << 18;  // trimmed()'s buffers kept between calls, at most
}  // namespace

std::optional<RuleDfa> trimmed(const RuleDfa& dfa, const std::vector<char>& productive) {
  const uint32_t n = dfa.size();
  // Reverse reachability from final states, over predecessor lists in one array. A grammar
  // trims every rule: the buffers are the thread's, reused from rule to rule.
  thread_local std::vector<uint32_t> pred_begin, preds, fill, stack;
  thread_local std::vector<char> live;
  struct Release {  // a very large rule's buffers are not kept
    ~Release() {
      if (pred_begin.capacity() + preds.capacity() > kKeptEntries) {
        for (auto* v : {&pred_begin, &preds, &fill, &stack}) std::vector<uint32_t>().swap(*v);
        std::vector<char>().swap(live);
      }
    }
  } release;
  pred_begin.assign(n + 1, 0);
  bool unproductive_calls = false;
  for (const auto& e : dfa.bytes) ++pred_begin[e.target + 1];
  for (const auto& e : dfa.rules) {
    if (productive[e.rule]) ++pred_begin[e.target + 1];
    else unproductive_calls = true;
  }
  for (uint32_t s = 0; s < n; ++s) pred_begin[s + 1] += pred_begin[s];
  preds.resize(pred_begin[n]);
  fill.assign(pred_begin.begin(), pred_begin.end() - 1);
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t k = dfa.byte_begin[s]; k < dfa.byte_begin[s + 1]; ++k) preds[fill[dfa.bytes[k].target]++] = s;
    for (uint32_t k = dfa.rule_begin[s]; k < dfa.rule_begin[s + 1]; ++k) {
      if (productive[dfa.rules[k].rule]) preds[fill[dfa.rules[k].target]++] = s;
    }
  }
  live.assign(n, 0);
  stack.clear();
  uint32_t n_live = 0;
  for (uint32_t s = 0; s < n; ++s) {
    if (dfa.final[s]) live[s] = 1, stack.push_back(s), ++n_live;
  }
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    for (uint32_t k = pred_begin[s]; k < pred_begin[s + 1]; ++k) {
      const uint32_t p = preds[k];
      if (!live[p]) live[p] = 1, stack.push_back(p), ++n_live;
    }
  }
  if (n_live == n && !unproductive_calls) return std::nullopt;  // nothing to remove
  std::vector<uint32_t> id(n, UINT32_MAX);
  uint32_t next = 0;
  id[0] = next++;
  for (uint32_t s = 1; s < n; ++s) {
    if (live[s]) id[s] = next++;
  }
  RuleDfa out;
  for (uint32_t s = 0; s < n; ++s) {
    if (id[s] == UINT32_MAX) continue;
    out.add_state(dfa.final[s] != 0);
    for (uint32_t k = dfa.byte_begin[s]; k < dfa.byte_begin[s + 1]; ++k) {
      const auto& e = dfa.bytes[k];
      if (live[e.target]) out.bytes.push_back({e.lo, e.hi, id[e.target]});
    }
    for (uint32_t k = dfa.rule_begin[s]; k < dfa.rule_begin[s + 1]; ++k) {
      const auto& e = dfa.rules[k];
      if (productive[e.rule] && live[e.target]) out.rules.push_back({e.rule, id[e.target]});
    }
    out.close_state();
  }
  return out;
}

}  // namespace lockstep
