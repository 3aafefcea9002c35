// grammar/char_dfa.cpp — see char_dfa.h.
#include "grammar/char_dfa.h"

#include "grammar/partition_refinement.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <span>
#include <unordered_map>

#include <fmt/format.h>

#include "grammar/char_dfa_detail.h"
#include "grammar/hash.h"
#include "grammar/intern_table.h"
#include "grammar/utf8.h"

namespace lockstep {

namespace {

using char_dfa_detail::append_edge;
using char_dfa_detail::check_limit;
using VecHash = U32SeqHash</*SeedWithLength=*/true>;

// States to minimize, by index: their edges (sorted, disjoint) and finality. A CharDfa's own
// states, or a product's in flat arrays (one allocation for all edges, where a state of
// more than CharDfa::kInlineEdges edges has one of its own: the product of two number
// automata reads ten digits a state, to as many targets).
struct StateList {
  const std::vector<CharDfa::State>& states;
  size_t size() const { return states.size(); }
  std::span<const CharDfa::Edge> edges_of(uint32_t s) const { return {states[s].edges.data(), states[s].edges.size()}; }
  bool is_final(uint32_t s) const { return states[s].final; }
};

struct FlatStates {
  std::vector<CharDfa::Edge> edges;
  std::vector<uint32_t> begin{0};  // the edges of state s: [begin[s], begin[s + 1])
  std::vector<char> final;
  size_t size() const { return final.size(); }
  std::span<const CharDfa::Edge> edges_of(uint32_t s) const { return {edges.data() + begin[s], edges.data() + begin[s + 1]}; }
  bool is_final(uint32_t s) const { return final[s]; }
};

// Each state's predecessors, one entry per edge: those of state t are
// from[begin[t], begin[t + 1]) (flat arrays: an automaton product has tens of thousands of
// states, and a vector per state cost more than the walk over them).
struct Predecessors {
  std::vector<uint32_t> begin, from;
  std::span<const uint32_t> of(uint32_t t) const { return {from.data() + begin[t], from.data() + begin[t + 1]}; }
};

// Which states reach a final state (following edges backwards from the final ones);
// `preds` gets each state's predecessors.
template <class View>
std::vector<char> live_states(const View& states, Predecessors& preds) {
  const size_t n = states.size();
  preds.begin.assign(n + 1, 0);
  for (uint32_t s = 0; s < n; ++s) {
    for (const auto& e : states.edges_of(s)) ++preds.begin[e.target + 1];
  }
  for (size_t t = 0; t < n; ++t) preds.begin[t + 1] += preds.begin[t];
  preds.from.resize(preds.begin[n]);
  {
    std::vector<uint32_t> fill(preds.begin.begin(), preds.begin.end() - 1);
    for (uint32_t s = 0; s < n; ++s) {
      for (const auto& e : states.edges_of(s)) preds.from[fill[e.target]++] = s;
    }
  }
  std::vector<char> live(n, 0);
  std::vector<uint32_t> stack;
  for (uint32_t s = 0; s < n; ++s) {
    if (states.is_final(s)) live[s] = 1, stack.push_back(s);
  }
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    for (const uint32_t p : preds.of(s)) {
      if (!live[p]) live[p] = 1, stack.push_back(p);
    }
  }
  return live;
}

// The live states reachable from a cycle of live states (a loop included): those a
// topological order of the live part (Kahn's algorithm) never takes. Closed under live
// successors.
template <class View>
std::vector<char> after_cycles(const View& states, const std::vector<char>& live) {
  const auto n = static_cast<uint32_t>(states.size());
  std::vector<uint32_t> indegree(n, 0), ready;
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s]) continue;
    for (const auto& e : states.edges_of(s)) indegree[e.target] += live[e.target] ? 1 : 0;
  }
  for (uint32_t s = 0; s < n; ++s) {
    if (live[s] && indegree[s] == 0) ready.push_back(s);
  }
  while (!ready.empty()) {
    const uint32_t s = ready.back();
    ready.pop_back();
    for (const auto& e : states.edges_of(s)) {
      if (live[e.target] && --indegree[e.target] == 0) ready.push_back(e.target);
    }
  }
  std::vector<char> core(n, 0);
  for (uint32_t s = 0; s < n; ++s) core[s] = live[s] && indegree[s] > 0;
  return core;
}

template <class View>
std::vector<uint32_t> refined_classes(const View& states, const std::vector<char>& live, size_t live_count);

// The language classes of the states (dead states share one class of their own).
//
// The live states reachable from a cycle (the core: a number's exponent digits, a trailing
// run of zeros) are classed by partition refinement among themselves; they reach no other
// state. The rest has no cycle and is settled from the ends backwards, each state once all
// its live targets are: Revuz's minimization of acyclic automata (Revuz 1992,
// "Minimisation of acyclic deterministic automata in linear time"). A state's class is that
// of any settled state, or of any core class, with the same finality and the same edges to
// classes (adjacent ranges to one class merged), so equal languages meet in one hash table,
// in time linear in the edges. A length-bounded string (a pattern or a format under
// maxLength) has no core; the numbers of an enum have a small one behind tens of thousands
// of states; on either, the refinement's labels (the code-point intervals no edge boundary
// separates) would multiply the edges several times over.
template <class View>
std::vector<uint32_t> language_classes(const View& states, const std::vector<char>& live,
                                       const Predecessors& preds) {
  const auto n = static_cast<uint32_t>(states.size());
  const std::vector<char> core = after_cycles(states, live);
  uint32_t core_count = 0, rest_count = 0;
  for (uint32_t s = 0; s < n; ++s) {
    core_count += core[s] ? 1 : 0;
    rest_count += live[s] && !core[s] ? 1 : 0;
  }
  if (rest_count == 0) return refined_classes(states, live, core_count);  // every live state is in the core
  constexpr uint32_t kUnsettled = UINT32_MAX;
  std::vector<uint32_t> cls(n, kUnsettled);
  uint32_t next_class = 0;
  if (core_count > 0) {
    const std::vector<uint32_t> core_classes = refined_classes(states, core, core_count);
    for (uint32_t s = 0; s < n; ++s) {
      if (!core[s]) continue;
      cls[s] = core_classes[s];
      next_class = std::max(next_class, cls[s] + 1);
    }
  }
  // The classes' keys (finality, then lo, hi, class per merged edge), one after another in
  // `keys`; an open-addressing table of entries by key hash.
  std::vector<uint32_t> keys, key_begin{0}, key_class;
  std::vector<uint64_t> key_hash;
  size_t table_size = 16;
  while (table_size < 2 * size_t{rest_count + core_count}) table_size *= 2;
  std::vector<uint32_t> table(table_size, kUnsettled);
  const size_t mask = table_size - 1;
  std::vector<uint32_t> key;
  // The class of the key of state s: an existing one, else `fresh` (kUnsettled: a new one).
  auto class_of_key = [&](uint32_t s, uint32_t fresh) {
    key.assign(1, states.is_final(s) ? 1u : 0u);
    for (const auto& e : states.edges_of(s)) {
      if (!live[e.target]) continue;
      char_dfa_detail::append_class_edge(key, e.lo, e.hi, cls[e.target]);
    }
    const uint64_t h = fnv1a_u32(key, kFnvOffsetBasis ^ key.size());
    for (size_t i = static_cast<size_t>(mix64(h) >> 32) & mask;; i = (i + 1) & mask) {
      const uint32_t entry = table[i];
      if (entry == kUnsettled) {
        table[i] = static_cast<uint32_t>(key_hash.size());
        key_hash.push_back(h);
        keys.insert(keys.end(), key.begin(), key.end());
        key_begin.push_back(static_cast<uint32_t>(keys.size()));
        key_class.push_back(fresh == kUnsettled ? next_class++ : fresh);
        return key_class.back();
      }
      if (key_hash[entry] == h && std::equal(key.begin(), key.end(), keys.begin() + key_begin[entry],
                                             keys.begin() + key_begin[entry + 1])) {
        return key_class[entry];
      }
    }
  };
  // Each core class's key, from one of its states (all have the same: the classes are exact).
  if (core_count > 0) {
    std::vector<char> keyed(next_class, 0);
    for (uint32_t s = 0; s < n; ++s) {
      if (core[s] && !keyed[cls[s]]) keyed[cls[s]] = 1, class_of_key(s, cls[s]);
    }
  }
  std::vector<uint32_t> pending(n, 0), ready;
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s] || core[s]) continue;
    for (const auto& e : states.edges_of(s)) pending[s] += live[e.target] && !core[e.target] ? 1 : 0;
    if (pending[s] == 0) ready.push_back(s);
  }
  while (!ready.empty()) {
    const uint32_t s = ready.back();
    ready.pop_back();
    cls[s] = class_of_key(s, kUnsettled);
    for (const uint32_t p : preds.of(s)) {
      if (live[p] && !core[p] && --pending[p] == 0) ready.push_back(p);
    }
  }
  const uint32_t dead = next_class;
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s]) cls[s] = dead;
  }
  return cls;
}

// refined_classes() of a few live states: Moore's refinement, each round classing every
// live state by its class and its edges to classes (adjacent ranges to one class merged),
// until no class splits. A number's exponent automaton has a dozen states, and a range of
// integers builds hundreds of them; the general refinement's setup (edge labels, sorted
// transitions) cost more than these rounds. The coarsest stable partition is unique, so the
// classes are those of the general refinement (numbered otherwise).
template <class View>
std::vector<uint32_t> moore_classes(const View& states, const std::vector<char>& live) {
  const auto n = static_cast<uint32_t>(states.size());
  std::vector<uint32_t> cls(n, 0), next(n, 0);
  for (uint32_t s = 0; s < n; ++s) cls[s] = live[s] && states.is_final(s) ? 1 : 0;
  std::vector<uint32_t> keys, key_begin, key;
  size_t count = 0;
  for (;;) {
    keys.clear();
    key_begin.assign(1, 0);
    for (uint32_t s = 0; s < n; ++s) {
      if (!live[s]) continue;
      key.assign(1, cls[s]);
      for (const auto& e : states.edges_of(s)) {
        if (live[e.target]) char_dfa_detail::append_class_edge(key, e.lo, e.hi, cls[e.target]);
      }
      uint32_t id = 0;
      const auto classes = static_cast<uint32_t>(key_begin.size() - 1);
      for (; id < classes; ++id) {
        if (std::equal(key.begin(), key.end(), keys.begin() + key_begin[id], keys.begin() + key_begin[id + 1])) break;
      }
      if (id == classes) {
        keys.insert(keys.end(), key.begin(), key.end());
        key_begin.push_back(static_cast<uint32_t>(keys.size()));
      }
      next[s] = id;
    }
    const size_t classes = key_begin.size() - 1;
    cls.swap(next);
    if (classes == count) break;  // a refinement that splits nothing: stable
    count = classes;
  }
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s]) cls[s] = static_cast<uint32_t>(count);  // the dead states' own class
  }
  return cls;
}

// Live states up to which moore_classes() is used.
constexpr size_t kMooreStates = 48;

// The language classes of the states by partition refinement (Valmari–Lehtinen,
// partition_refinement.h), dead states in a class of their own; dead edges vanish. Labels
// are the classes of code points no edge boundary separates.
// `live_count` live states: at most kMooreStates take moore_classes().
template <class View>
std::vector<uint32_t> refined_classes(const View& states, const std::vector<char>& live,
                                      size_t live_count) {
  if (live_count <= kMooreStates) return moore_classes(states, live);
  const size_t n = states.size();
  // The edge boundaries, most repeats dropped on the way by a small direct-mapped table of
  // recent ones (an automaton of tens of thousands of states over ten digits has a dozen
  // distinct boundaries): what is left to sort is near the distinct count.
  std::vector<uint32_t> cuts;
  std::array<uint32_t, 256> recent;
  recent.fill(UINT32_MAX);  // no boundary: at most kMaxCodepoint + 1
  auto add_cut = [&](uint32_t c) {
    uint32_t& slot = recent[(c * 0x9E3779B1u) >> 24];
    if (slot == c) return;
    slot = c;
    cuts.push_back(c);
  };
  size_t edge_count = 0;
  for (uint32_t s = 0; s < n; ++s) {
    if (!live[s]) continue;
    for (const auto& e : states.edges_of(s)) {
      if (!live[e.target]) continue;
      add_cut(e.lo);
      add_cut(e.hi + 1);
      ++edge_count;
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  std::vector<LabeledTransition> transitions;
  transitions.reserve(edge_count);
  std::vector<uint32_t> initial(n);
  for (uint32_t s = 0; s < n; ++s) {
    initial[s] = !live[s] ? 2 : states.is_final(s) ? 1 : 0;
    if (!live[s]) continue;
    for (const auto& e : states.edges_of(s)) {
      if (!live[e.target]) continue;
      for (auto k = static_cast<uint32_t>(std::lower_bound(cuts.begin(), cuts.end(), e.lo) - cuts.begin());
           k < cuts.size() && cuts[k] <= e.hi; ++k) {
        transitions.push_back({s, k, e.target});
      }
    }
  }
  return coarsest_partition(static_cast<uint32_t>(n), initial, std::move(transitions), /*rounds_first=*/true);
}

// Thompson NFA over code-point ranges.
struct CpNfa {
  struct Edge {
    uint32_t lo, hi, to;
  };
  std::vector<std::vector<Edge>> edges;
  std::vector<std::vector<uint32_t>> eps;
  uint32_t add() {
    edges.emplace_back();
    eps.emplace_back();
    check_limit(edges.size());
    return static_cast<uint32_t>(edges.size() - 1);
  }
  void build(const Expr& e, uint32_t from, uint32_t to) {
    switch (e.kind) {
      case Expr::Kind::kEmpty:
        eps[from].push_back(to);
        return;
      case Expr::Kind::kLiteral: {
        std::vector<uint32_t> cps;
        for (size_t i = 0; i < e.bytes.size();) {
          const uint32_t cp = utf8::decode(e.bytes, i);
          if (cp == utf8::kInvalid) throw std::invalid_argument("literal is not valid UTF-8");
          cps.push_back(cp);
        }
        uint32_t cur = from;
        for (size_t i = 0; i < cps.size(); ++i) {
          const uint32_t next = i + 1 == cps.size() ? to : add();
          edges[cur].push_back({cps[i], cps[i], next});
          cur = next;
        }
        if (cps.empty()) eps[from].push_back(to);
        return;
      }
      case Expr::Kind::kCharClass:
        for (const auto& r : e.ranges) edges[from].push_back({r.lo, r.hi, to});
        return;
      case Expr::Kind::kAutomaton: {
        if (e.json_string) throw std::invalid_argument("a JSON-string automaton is not a plain language");
        const auto& st = e.automaton->states();
        std::vector<uint32_t> ids(st.size());
        for (size_t i = 0; i < st.size(); ++i) ids[i] = add();  // fresh: nothing may enter `from`
        eps[from].push_back(ids[0]);
        for (size_t i = 0; i < st.size(); ++i) {
          if (st[i].final) eps[ids[i]].push_back(to);
          for (const auto& ed : st[i].edges) edges[ids[i]].push_back({ed.lo, ed.hi, ids[ed.target]});
        }
        return;
      }
      case Expr::Kind::kRuleRef:
        throw std::invalid_argument("a rule reference has no automaton of its own");
      case Expr::Kind::kSequence: {
        uint32_t cur = from;
        for (size_t i = 0; i < e.children.size(); ++i) {
          const uint32_t next = i + 1 == e.children.size() ? to : add();
          build(e.children[i], cur, next);
          cur = next;
        }
        return;
      }
      case Expr::Kind::kChoice:
        for (const auto& c : e.children) build(c, from, to);
        return;
      case Expr::Kind::kMachine:
        walk_nfa(
            *e.machine, e.children, from, to, [&] { return add(); }, [&](uint32_t a, uint32_t b) { eps[a].push_back(b); },
            [&](const Expr& x, uint32_t a, uint32_t b) { build(x, a, b); });
        return;
      case Expr::Kind::kRepeat: {
        const Expr& child = e.children[0];
        uint32_t cur = from;
        for (uint32_t i = 0; i < e.min; ++i) {
          const uint32_t next = (i + 1 == e.min && e.max == e.min) ? to : add();
          build(child, cur, next);
          cur = next;
        }
        if (e.max == e.min) return;
        if (e.max == kUnbounded) {
          const uint32_t loop = add(), back = add();
          eps[cur].push_back(loop);
          build(child, loop, back);
          eps[back].push_back(loop);
          eps[loop].push_back(to);
          return;
        }
        for (uint32_t i = 0; i < e.max - e.min; ++i) {
          eps[cur].push_back(to);
          const uint32_t next = i + 1 == e.max - e.min ? to : add();
          build(child, cur, next);
          cur = next;
        }
        return;
      }
    }
  }
};

}  // namespace

class CharDfaBuilder {
 public:
  static CharDfa from_nfa(const CpNfa& nfa, uint32_t start, uint32_t accept) {
    CharDfa out;
    std::unordered_map<std::vector<uint32_t>, uint32_t, VecHash> ids;
    std::vector<std::vector<uint32_t>> sets;
    std::vector<uint32_t> mark(nfa.edges.size(), 0);
    uint32_t stamp = 0;
    auto intern = [&](std::vector<uint32_t> set) -> uint32_t {
      ++stamp;
      std::vector<uint32_t> stack(set.begin(), set.end());
      for (uint32_t s : set) mark[s] = stamp;
      while (!stack.empty()) {
        const uint32_t s = stack.back();
        stack.pop_back();
        for (uint32_t t : nfa.eps[s]) {
          if (mark[t] != stamp) mark[t] = stamp, set.push_back(t), stack.push_back(t);
        }
      }
      std::sort(set.begin(), set.end());
      auto [it, fresh] = ids.try_emplace(set, static_cast<uint32_t>(sets.size()));
      if (fresh) {
        sets.push_back(std::move(set));
        out.states_.emplace_back();
        check_limit(sets.size());
      }
      return it->second;
    };
    intern({start});
    std::vector<uint32_t> points, targets;
    for (uint32_t d = 0; d < sets.size(); ++d) {
      const std::vector<uint32_t> set = sets[d];
      points.clear();
      bool final = false;
      for (uint32_t s : set) {
        if (s == accept) final = true;
        for (const auto& e : nfa.edges[s]) {
          points.push_back(e.lo);
          points.push_back(e.hi + 1);
        }
      }
      std::sort(points.begin(), points.end());
      points.erase(std::unique(points.begin(), points.end()), points.end());
      CharDfa::Edges edges;
      for (size_t i = 0; i + 1 < points.size(); ++i) {
        const uint32_t lo = points[i], hi = points[i + 1] - 1;
        targets.clear();
        for (uint32_t s : set) {
          for (const auto& e : nfa.edges[s]) {
            if (e.lo <= lo && e.hi >= hi) targets.push_back(e.to);
          }
        }
        if (targets.empty()) continue;
        std::sort(targets.begin(), targets.end());
        targets.erase(std::unique(targets.begin(), targets.end()), targets.end());
        const uint32_t t = intern(targets);
        if (!edges.empty() && edges.back().target == t && edges.back().hi + 1 == lo) {
          edges.back().hi = hi;
        } else {
          edges.push_back({lo, hi, t});
        }
      }
      out.states_[d].edges = std::move(edges);
      out.states_[d].final = final;
    }
    return out;
  }

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
    // The product's states in flat arrays, minimized from there (FlatStates).
    FlatStates out;
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
      const size_t first = out.edges.size();
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
      out.begin.push_back(static_cast<uint32_t>(out.edges.size()));
      out.final.push_back(both ? (ca.states_[x].final && cb.states_[y].final)
                               : (ca.states_[x].final || cb.states_[y].final));
    }
    if (explored) *explored = pairs.size();
    return minimized_of(out);
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

CharDfa CharDfa::from_expr(const Expr& e) {
  CpNfa nfa;
  const uint32_t start = nfa.add(), accept = nfa.add();
  nfa.build(e, start, accept);
  return CharDfaBuilder::from_nfa(nfa, start, accept).minimized();
}

CharDfa CharDfa::from_states(std::vector<State> states) {
  if (states.empty()) throw std::invalid_argument("an automaton needs a start state");
  for (const auto& st : states) {
    for (size_t i = 0; i < st.edges.size(); ++i) {
      const Edge& e = st.edges[i];
      if (e.lo > e.hi || e.hi > kMaxCodepoint || e.target >= states.size() ||
          (i > 0 && st.edges[i - 1].hi >= e.lo)) {
        throw std::invalid_argument("automaton edges must be sorted, disjoint and in range");
      }
    }
  }
  check_limit(states.size());
  CharDfa d;
  d.states_ = std::move(states);
  return d;
}

CharDfa CharDfa::intersect(const CharDfa& a, const CharDfa& b, size_t max_states, size_t* explored) {
  if (explored) *explored = 0;
  if (auto w = intersect_words(a, b)) return sorted_literals(std::move(*w));  // a subset: fits
  for (const auto& [x, y] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    if (y->length_ && y->length_->second != kUnbounded) return with_length(*x, y->length_->first, y->length_->second, max_states);
  }
  return CharDfaBuilder::product(a, b, true, max_states, explored);
}
CharDfa CharDfa::unite(const CharDfa& a, const CharDfa& b, size_t max_states, size_t* explored) {
  if (explored) *explored = 0;
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
  const CharDfa m = minimized();
  return m.states_.size() == 1 && m.states_[0].final && m.states_[0].edges.empty();
}

bool CharDfa::single_string(std::string& out) const {
  const CharDfa m = minimized();
  out.clear();
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
  Expr e;
  e.kind = Expr::Kind::kAutomaton;
  e.automaton = std::move(dfa);
  e.json_string = json_string;
  return e;
}

}  // namespace lockstep
