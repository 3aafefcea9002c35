// grammar/char_dfa.cpp — see char_dfa.h.
#include "grammar/char_dfa.h"

#include "grammar/partition_refinement.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "grammar/char_dfa_detail.h"
#include "grammar/char_dfa_minimize.h"
#include "grammar/hash.h"
#include "grammar/intern_table.h"
#include "grammar/utf8.h"

namespace lockstep {

namespace {

using char_dfa_detail::append_edge;
using char_dfa_detail::check_limit;
using char_dfa_detail::language_classes;
using char_dfa_detail::live_states;
using char_dfa_detail::PooledView;
using char_dfa_detail::Predecessors;
using char_dfa_detail::StateList;

}  // namespace

class CharDfaBuilder {
 public:
  // The minimal automaton of `states` (state 0 starts): states that reach no final state
  // dropped (but the start), equivalent states merged.
  template <class View>
  static CharDfa minimized_of(const View& states) {
    const size_t n = states.size();
    Predecessors preds;
    const std::vector<char> live = live_states(states, preds);
    const std::vector<uint32_t> cls = language_classes(states, live, preds);
    const size_t count = n ? *std::max_element(cls.begin(), cls.end()) + 1 : 0;
    std::vector<uint32_t> remap(count, UINT32_MAX), rep;
    remap[cls[0]] = 0;
    rep.push_back(0);
    for (uint32_t s = 0; s < n; ++s) {
      if (live[s] && remap[cls[s]] == UINT32_MAX) {
        remap[cls[s]] = static_cast<uint32_t>(rep.size());
        rep.push_back(s);
      }
    }
    CharDfa out;
    out.states_.resize(rep.size());
    for (size_t c = 0; c < rep.size(); ++c) {
      const uint32_t r = rep[c];
      CharDfa::State& o = out.states_[c];
      o.final = states.is_final(r) && live[r];
      if (!live[r]) continue;
      for (const auto& e : states.edges_of(r)) {
        if (!live[e.target]) continue;
        append_edge(o.edges, e.lo, e.hi, remap[cls[e.target]]);
      }
    }
    out.minimal_ = true;
    return out;
  }

  static CharDfa product(const CharDfa& a, const CharDfa& b, bool both, size_t max_states, size_t* explored) {
    // For union, make both complete first so that a missing edge on one side still lets
    // the other side go on. Intersection reads the operands as they are.
    std::optional<CharDfa> complete_a, complete_b;
    if (!both) complete_a = a.completed(), complete_b = b.completed();
    const CharDfa& ca = both ? a : *complete_a;
    const CharDfa& cb = both ? b : *complete_b;
    // The product's states with their edges in one vector, minimized from there.
    CharDfa::PooledStates out;
    // (x << 32 | y) numbered in the order met: the state of the pair.
    InternTable<uint64_t, Mixed64Hash> pairs(std::max(ca.states_.size(), cb.states_.size()));
    auto intern = [&](uint32_t x, uint32_t y) {
      const auto [id, fresh] = pairs.intern(static_cast<uint64_t>(x) << 32 | y);
      if (fresh) char_dfa_detail::check_product_limit(pairs.size(), max_states);
      return id;
    };
    intern(0, 0);
    for (uint32_t d = 0; d < pairs.size(); ++d) {
      const auto x = static_cast<uint32_t>(pairs.key(d) >> 32), y = static_cast<uint32_t>(pairs.key(d));
      const auto& ex = ca.states_[x].edges;
      const auto& ey = cb.states_[y].edges;
      const auto first = static_cast<uint32_t>(out.edges.size());
      out.first.push_back(first);
      size_t i = 0, j = 0;
      while (i < ex.size() && j < ey.size()) {
        const uint32_t lo = std::max(ex[i].lo, ey[j].lo);
        const uint32_t hi = std::min(ex[i].hi, ey[j].hi);
        if (lo <= hi) {
          const uint32_t t = intern(ex[i].target, ey[j].target);
          if (out.edges.size() > first && out.edges.back().target == t && out.edges.back().hi + 1 == lo) {
            out.edges.back().hi = hi;
          } else {
            out.edges.push_back({lo, hi, t});
          }
        }
        if (ex[i].hi < ey[j].hi) ++i; else ++j;
      }
      out.past.push_back(static_cast<uint32_t>(out.edges.size()));
      out.final.push_back(both ? (ca.states_[x].final && cb.states_[y].final)
                               : (ca.states_[x].final || cb.states_[y].final));
    }
    if (explored) *explored = pairs.size();
    return minimized_of(PooledView{out});
  }
};

CharDfa CharDfa::none() {
  CharDfa d;
  d.states_.emplace_back();
  d.minimal_ = true;
  return d;
}

CharDfa CharDfa::all() {
  CharDfa d;
  d.states_.push_back({{{0, kMaxCodepoint, 0}}, true});
  d.minimal_ = true;
  return d;
}

CharDfa CharDfa::length(uint32_t min, uint32_t max) {
  CharDfa d = length(min, max, Expr::any_codepoint().ranges);
  if (max == kUnbounded || min <= max) d.length_ = {min, max};
  return d;
}

CharDfa CharDfa::length(uint32_t min, uint32_t max, const std::vector<CodepointRange>& any) {
  // Built directly: a chain of states reading any code point, final from `min` on, ending
  // at `max` or looping on its last state. Minimal as it stands (no two states accept the
  // same lengths).
  if (max != kUnbounded && min > max) return none();
  const uint32_t last = max == kUnbounded ? min : max;
  check_limit(static_cast<size_t>(last) + 1);
  std::vector<State> states(static_cast<size_t>(last) + 1);
  for (uint32_t i = 0; i <= last; ++i) {
    states[i].final = i >= min;
    const uint32_t target = i < last ? i + 1 : (max == kUnbounded ? i : kUnbounded);
    if (target == kUnbounded) continue;
    for (const auto& r : any) states[i].edges.push_back({r.lo, r.hi, target});
  }
  CharDfa d;
  d.states_ = std::move(states);
  d.minimal_ = !any.empty();  // without code points, every state past the start is unreachable
  return d;
}

CharDfa CharDfa::length_range(uint32_t min, uint32_t max) {
  if (max != kUnbounded && min > max) return none();
  CharDfa d;
  d.length_ = {min, max};
  d.chainless_ = true;
  d.minimal_ = true;
  return d;
}

CharDfa CharDfa::with_states() const {
  return chainless_ ? length(length_->first, length_->second) : *this;
}

void CharDfa::throw_chainless() {
  throw std::logic_error("a length_range() automaton has no states: take with_states()");
}

size_t CharDfa::size() const {
  if (!chainless_) return states_.size();
  return static_cast<size_t>(length_->second == kUnbounded ? length_->first : length_->second) + 1;
}

namespace {
// Throws unless `edges` (one state's, of an automaton of `n` states) are sorted, disjoint
// code-point ranges to states in range.
void check_edges(std::span<const CharDfa::Edge> edges, size_t n) {
  for (size_t i = 0; i < edges.size(); ++i) {
    const CharDfa::Edge& e = edges[i];
    if (e.lo > e.hi || e.hi > kMaxCodepoint || e.target >= n || (i > 0 && edges[i - 1].hi >= e.lo)) {
      throw std::invalid_argument("automaton edges must be sorted, disjoint and in range");
    }
  }
}
}  // namespace

CharDfa CharDfa::from_states(std::vector<State> states) {
  if (states.empty()) throw std::invalid_argument("an automaton needs a start state");
  for (const auto& st : states) check_edges({st.edges.data(), st.edges.size()}, states.size());
  check_limit(states.size());
  CharDfa d;
  d.states_ = std::move(states);
  return d;
}

CharDfa CharDfa::minimal_from(const PooledStates& states) {
  const size_t n = states.final.size();
  if (n == 0) throw std::invalid_argument("an automaton needs a start state");
  if (states.first.size() != n || states.past.size() != n) {
    throw std::invalid_argument("every state needs its range of edges");
  }
  for (uint32_t s = 0; s < n; ++s) {
    if (states.first[s] > states.past[s] || states.past[s] > states.edges.size()) {
      throw std::invalid_argument("a state's edges must lie within the pool");
    }
    check_edges(PooledView{states}.edges_of(s), n);
  }
  check_limit(n);
  return CharDfaBuilder::minimized_of(PooledView{states});
}

CharDfa CharDfa::intersect(const CharDfa& a, const CharDfa& b, size_t max_states, size_t* explored) {
  if (explored) *explored = 0;
  if (a.length_ && b.length_ && (a.chainless_ || b.chainless_)) {  // the common lengths (kUnbounded: the largest)
    const auto [lo_a, hi_a] = *a.length_;
    const auto [lo_b, hi_b] = *b.length_;
    return length_range(std::max(lo_a, lo_b), std::min(hi_a, hi_b));
  }
  if (auto w = intersect_words(a, b)) return sorted_literals(std::move(*w));  // a subset: fits
  for (const auto& [x, y] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    if (y->length_ && y->length_->second != kUnbounded) return with_length(*x, y->length_->first, y->length_->second, max_states);
  }
  if (a.chainless_ || b.chainless_) {  // a minimum length alone: the product with its chain
    return CharDfaBuilder::product(a.with_states(), b.with_states(), true, max_states, explored);
  }
  return CharDfaBuilder::product(a, b, true, max_states, explored);
}
CharDfa CharDfa::unite(const CharDfa& a, const CharDfa& b, size_t max_states, size_t* explored) {
  if (explored) *explored = 0;
  if (a.length_ && b.length_ && (a.chainless_ || b.chainless_)) {
    // Overlapping or adjacent bounds unite into one range.
    const auto [x, y] = a.length_->first <= b.length_->first ? std::pair{*a.length_, *b.length_}
                                                               : std::pair{*b.length_, *a.length_};
    if (x.second == kUnbounded || y.first <= x.second + 1) {
      return length_range(x.first, std::max(x.second, y.second));
    }
  }
  if (a.chainless_ || b.chainless_) return unite(a.with_states(), b.with_states(), max_states, explored);
  if (auto w = unite_words(a, b)) {
    try {
      return sorted_literals(std::move(*w));
    } catch (const AutomatonLimitError&) {
      // The merged trie is too large; its minimized automaton may still fit.
    }
  }
  return CharDfaBuilder::product(a, b, false, max_states, explored);
}

CharDfa CharDfa::completed() const {
  CharDfa out = *this;
  out.minimal_ = false;  // its sink is a dead state
  out.words_.reset();
  out.length_.reset();  // its callers change the copy (complement() flips it)
  const uint32_t sink = static_cast<uint32_t>(out.states_.size());
  bool used = false;
  for (auto& st : out.states_) {
    Edges full;
    uint32_t next = 0;
    for (const auto& e : st.edges) {
      if (e.lo > next) full.push_back({next, e.lo - 1, sink}), used = true;
      full.push_back(e);
      next = e.hi + 1;
    }
    if (next <= kMaxCodepoint) full.push_back({next, kMaxCodepoint, sink}), used = true;
    st.edges = std::move(full);
  }
  (void)used;
  out.states_.push_back({{{0, kMaxCodepoint, sink}}, false});
  return out;
}

CharDfa CharDfa::complement() const {
  // Not a length language: the complement holds the surrogates, which length() does not read.
  if (chainless_) return with_states().complement();
  CharDfa out = completed();
  for (auto& st : out.states_) st.final = !st.final;
  if (!minimal_) return out.minimized();
  // Minimal and complete, the flipped automaton is minimal (its states accept pairwise
  // different languages, as before). In the partial form, only states that reach no final
  // state go: the one state (if any) that accepted every string. The sink, now accepting
  // every string, is equivalent to no live state, unless the language was empty (the
  // start was the only state and dead): then the complement is all().
  if (states_.size() == 1 && !states_[0].final && states_[0].edges.empty()) return all();
  const size_t n = out.states_.size();
  Predecessors preds;
  std::vector<char> live = live_states(StateList{out.states_}, preds);
  if (!live[0]) return none();  // the language was every string
  // The sink (the last state) stays out when no edge needed it: this automaton was complete.
  live[n - 1] = live[n - 1] && std::ranges::any_of(preds.of(n - 1),
                                           [&](uint32_t p) { return p != n - 1; });
  std::vector<uint32_t> id(n, UINT32_MAX);
  uint32_t count = 0;
  for (uint32_t s = 0; s < n; ++s) {
    if (live[s]) id[s] = count++;
  }
  CharDfa d;
  d.states_.resize(count);
  for (uint32_t s = 0; s < n; ++s) {
    if (id[s] == UINT32_MAX) continue;
    State& o = d.states_[id[s]];
    o.final = out.states_[s].final;
    if (!live[s]) continue;
    for (const auto& e : out.states_[s].edges) {
      if (!live[e.target]) continue;
      const uint32_t t = id[e.target];
      append_edge(o.edges, e.lo, e.hi, t);
    }
  }
  d.minimal_ = true;
  return d;
}

CharDfa CharDfa::minimized() const {
  if (minimal_) return *this;
  return CharDfaBuilder::minimized_of(StateList{states_});
}

bool CharDfa::empty() const {
  if (chainless_) return false;  // min <= max (length_range)
  if (states_.empty()) return true;
  if (states_[0].final) return false;  // most string languages hold the empty string
  // Known minimal: no state but the start is dead, so the start is dead (the language
  // empty) exactly when every edge it has loops back to it. Grammars ask this of every
  // automaton leaf (productive_rules), and a schema's key automata are shared by many.
  if (minimal_) return std::ranges::all_of(states_[0].edges, [](const Edge& e) { return e.target == 0; });
  std::vector<char> seen(states_.size(), 0);
  std::vector<uint32_t> stack{0};
  seen[0] = 1;
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    if (states_[s].final) return false;
    for (const auto& e : states_[s].edges) {
      if (!seen[e.target]) seen[e.target] = 1, stack.push_back(e.target);
    }
  }
  return true;
}

bool CharDfa::accepts(std::string_view text) const {
  if (chainless_) {
    // Every code point UTF-8 spells is one length() reads (all but the surrogates).
    uint64_t n = 0;
    for (size_t i = 0; i < text.size(); ++n) {
      if (utf8::decode(text, i) == utf8::kInvalid) return false;
    }
    return n >= length_->first && n <= length_->second;
  }
  uint32_t s = 0;
  for (size_t i = 0; i < text.size();) {
    const uint32_t cp = utf8::decode(text, i);
    if (cp == utf8::kInvalid) return false;
    bool moved = false;
    for (const auto& e : states_[s].edges) {
      if (cp >= e.lo && cp <= e.hi) {
        s = e.target;
        moved = true;
        break;
      }
    }
    if (!moved) return false;
  }
  return states_[s].final;
}

bool CharDfa::only_empty_string() const {
  if (chainless_) return length_->second == 0;
  const CharDfa m = minimized();
  return m.states_.size() == 1 && m.states_[0].final && m.states_[0].edges.empty();
}

bool CharDfa::single_string(std::string& out) const {
  out.clear();
  if (chainless_) return length_->second == 0;  // "" alone; any longer length has many strings
  const CharDfa m = minimized();
  uint32_t s = 0;
  std::vector<char> seen(m.states_.size(), 0);
  for (;;) {
    if (seen[s]) return false;  // a loop: infinitely many strings
    seen[s] = 1;
    const auto& st = m.states_[s];
    if (st.final) return st.edges.empty();
    if (st.edges.size() != 1 || st.edges[0].lo != st.edges[0].hi) return false;
    utf8::append(out, st.edges[0].lo);
    s = st.edges[0].target;
  }
}

Expr automaton_expr(std::shared_ptr<const CharDfa> dfa, bool json_string) {
  if (dfa && dfa->chainless()) dfa = std::make_shared<const CharDfa>(dfa->with_states());
  Expr e;
  e.kind = Expr::Kind::kAutomaton;
  e.automaton = std::move(dfa);
  e.json_string = json_string;
  return e;
}

}  // namespace lockstep
