// trimmed() removes the states from which no final state is reachable (through bytes, or calls
// of productive rules) and the edges into them; checked against the definition iterated to
// its fixed point, on random automata numbered forwards, backwards and at random (the
// backward sweeps settle the first, the predecessor lists take over on the others).
#include <algorithm>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "automata/rule_automaton.h"

namespace lockstep {
namespace {

struct Edges {
  std::vector<std::vector<GrammarAutomaton::ByteEdge>> bytes;
  std::vector<std::vector<GrammarAutomaton::RuleEdge>> rules;
  std::vector<char> final;
};

RuleDfa dfa_of(const Edges& e) {
  RuleDfa d;
  for (size_t s = 0; s < e.final.size(); ++s) {
    d.add_state(e.final[s] != 0);
    d.bytes.insert(d.bytes.end(), e.bytes[s].begin(), e.bytes[s].end());
    d.rules.insert(d.rules.end(), e.rules[s].begin(), e.rules[s].end());
    d.close_state();
  }
  return d;
}

// The definition: live when final or an edge (a productive call) reaches a live state,
// iterated until nothing changes.
std::vector<char> live_by_definition(const Edges& e, const std::vector<char>& productive) {
  std::vector<char> live(e.final.begin(), e.final.end());
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = 0; s < live.size(); ++s) {
      if (live[s]) continue;
      bool l = false;
      for (const auto& b : e.bytes[s]) l = l || live[b.target];
      for (const auto& r : e.rules[s]) l = l || (productive[r.rule] && live[r.target]);
      if (l) live[s] = 1, changed = true;
    }
  }
  return live;
}

TEST(Trim, KeepsExactlyTheStatesThatReachAFinalState) {
  std::mt19937 rng(11);
  const std::vector<char> productive = {1, 0, 1};  // rule 1 derives nothing
  for (int trial = 0; trial < 300; ++trial) {
    const auto n = static_cast<uint32_t>(2 + rng() % (trial < 100 ? 12 : 400));
    // A chain through every state, plus random edges; then the states renumbered (state 0
    // stays the start).
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    const int numbering = trial % 3;  // forwards, backwards, at random
    if (numbering == 1) std::reverse(order.begin() + 1, order.end());
    if (numbering == 2) std::shuffle(order.begin() + 1, order.end(), rng);
    Edges e;
    e.bytes.resize(n);
    e.rules.resize(n);
    e.final.assign(n, 0);
    for (uint32_t i = 0; i + 1 < n; ++i) {
      if (rng() % 4 == 0) {
        e.rules[order[i]].push_back({static_cast<uint32_t>(rng() % 3), order[i + 1]});
      } else {
        e.bytes[order[i]].push_back({'a', 'a', order[i + 1]});
      }
    }
    for (uint32_t k = 0; k < n / 3; ++k) e.bytes[rng() % n].push_back({'b', 'b', static_cast<uint32_t>(rng() % n)});
    for (auto& b : e.bytes) {  // sorted, disjoint byte ranges per state
      std::sort(b.begin(), b.end(), [](const auto& x, const auto& y) { return x.lo < y.lo; });
      b.erase(std::unique(b.begin(), b.end(), [](const auto& x, const auto& y) { return x.lo == y.lo; }), b.end());
    }
    e.final[order[n - 1 - rng() % std::min<uint32_t>(n, 3)]] = 1;
    if (rng() % 2) e.final[rng() % n] = 1;

    const std::vector<char> live = live_by_definition(e, productive);
    const RuleDfa built = dfa_of(e);
    const std::optional<RuleDfa> t = trimmed(built, productive);
    const RuleDfa& d = t ? *t : built;
    // The kept states in their order (the start always), each with the edges into kept
    // states and no call of the unproductive rule.
    std::vector<uint32_t> id(n, UINT32_MAX);
    uint32_t next = 0;
    for (uint32_t s = 0; s < n; ++s) {
      if (s == 0 || live[s]) id[s] = next++;
    }
    ASSERT_EQ(d.size(), next) << "trial " << trial;
    // A copy exactly when something goes: a state, or a call of the unproductive rule.
    bool unproductive_call = false;
    for (uint32_t s = 0; s < n; ++s) {
      for (const auto& r : e.rules[s]) unproductive_call |= !productive[r.rule];
    }
    EXPECT_EQ(t.has_value(), next < n || unproductive_call) << "trial " << trial;
    for (uint32_t s = 0; s < n; ++s) {
      if (id[s] == UINT32_MAX) continue;
      const uint32_t t = id[s];
      EXPECT_EQ(d.final[t], e.final[s]);
      std::vector<uint32_t> want, got;
      for (const auto& b : e.bytes[s]) {
        if (live[b.target]) want.push_back(b.lo << 24 | id[b.target]);
      }
      for (const auto& r : e.rules[s]) {
        if (productive[r.rule] && live[r.target]) want.push_back((0x80u + r.rule) << 24 | id[r.target]);
      }
      for (uint32_t k = d.byte_begin[t]; k < d.byte_begin[t + 1]; ++k) got.push_back(uint32_t{d.bytes[k].lo} << 24 | d.bytes[k].target);
      for (uint32_t k = d.rule_begin[t]; k < d.rule_begin[t + 1]; ++k) {
        got.push_back((0x80u + d.rules[k].rule) << 24 | d.rules[k].target);
      }
      EXPECT_EQ(got, want) << "trial " << trial << " state " << s;
    }
  }
}

}  // namespace
}  // namespace lockstep
