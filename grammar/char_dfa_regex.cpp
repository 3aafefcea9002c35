// grammar/char_dfa_regex.cpp — the automaton of a rule-free expression (CharDfa::from_expr):
// a Thompson NFA over code-point ranges, the subset construction, then minimization.
#include <algorithm>
#include <span>
#include <stdexcept>
#include <vector>

#include "grammar/char_dfa.h"
#include "grammar/char_dfa_detail.h"
#include "grammar/grammar.h"
#include "grammar/intern_table.h"
#include "grammar/utf8.h"

namespace lockstep {

namespace {

using char_dfa_detail::check_limit;

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

// The subset construction. A DFA state is the set of the NFA states its ε-closure holds
// that read a code point or accept (the others, ε-only junctions of the Thompson
// construction, decide nothing): fewer, shorter sets than whole closures, so fewer states
// before minimization. A set's code points are cut where any of its edges starts or ends,
// and each piece's targets are the edges covering it, found in one sweep over the edges
// sorted by their first code point.
std::vector<CharDfa::State> subset_states(const CpNfa& nfa, uint32_t start, uint32_t accept) {
  const auto n = static_cast<uint32_t>(nfa.edges.size());
  std::vector<CharDfa::State> out;
  SeqInternTable<> sets;  // the sets (sorted), numbered as the DFA's states
  std::vector<uint32_t> mark(n, 0), stack, closure;
  uint32_t stamp = 0;
  // The state of the closure of `seeds`.
  auto intern = [&](std::span<const uint32_t> seeds) -> uint32_t {
    ++stamp;
    stack.clear();
    closure.clear();
    for (const uint32_t s : seeds) {
      if (mark[s] != stamp) mark[s] = stamp, stack.push_back(s);
    }
    while (!stack.empty()) {
      const uint32_t s = stack.back();
      stack.pop_back();
      if (!nfa.edges[s].empty() || s == accept) closure.push_back(s);
      for (const uint32_t t : nfa.eps[s]) {
        if (mark[t] != stamp) mark[t] = stamp, stack.push_back(t);
      }
    }
    std::sort(closure.begin(), closure.end());
    const auto [id, fresh] = sets.intern(closure);
    if (fresh) {
      out.emplace_back();
      check_limit(sets.size());
    }
    return id;
  };
  const uint32_t first[] = {start};
  intern(first);
  std::vector<uint32_t> set, points, targets;
  std::vector<CpNfa::Edge> edges, active;
  for (uint32_t d = 0; d < sets.size(); ++d) {
    const std::span<const uint32_t> key = sets.key(d);
    set.assign(key.begin(), key.end());  // interning below may move the table's storage
    edges.clear();
    points.clear();
    bool final = false;
    for (const uint32_t s : set) {
      final = final || s == accept;
      for (const auto& e : nfa.edges[s]) {
        edges.push_back(e);
        points.push_back(e.lo);
        points.push_back(e.hi + 1);
      }
    }
    std::sort(edges.begin(), edges.end(), [](const CpNfa::Edge& a, const CpNfa::Edge& b) { return a.lo < b.lo; });
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    CharDfa::Edges dfa_edges;
    active.clear();
    size_t next = 0;
    for (size_t i = 0; i + 1 < points.size(); ++i) {
      const uint32_t lo = points[i], hi = points[i + 1] - 1;
      // Every edge starting at or before lo, and not ending before it, covers lo..hi (no
      // edge starts or ends inside).
      std::erase_if(active, [&](const CpNfa::Edge& e) { return e.hi < lo; });
      for (; next < edges.size() && edges[next].lo <= lo; ++next) {
        if (edges[next].hi >= lo) active.push_back(edges[next]);
      }
      if (active.empty()) continue;
      targets.clear();
      for (const auto& e : active) targets.push_back(e.to);
      const uint32_t t = intern(targets);
      if (!dfa_edges.empty() && dfa_edges.back().target == t && dfa_edges.back().hi + 1 == lo) {
        dfa_edges.back().hi = hi;
      } else {
        dfa_edges.push_back({lo, hi, t});
      }
    }
    out[d].edges = std::move(dfa_edges);
    out[d].final = final;
  }
  return out;
}

}  // namespace

CharDfa CharDfa::from_expr(const Expr& e) {
  CpNfa nfa;
  const uint32_t start = nfa.add(), accept = nfa.add();
  nfa.build(e, start, accept);
  return from_states(subset_states(nfa, start, accept)).minimized();
}

}  // namespace lockstep
