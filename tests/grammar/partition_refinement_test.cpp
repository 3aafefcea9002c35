// coarsest_partition checked against a naive reference: signatures compared in full, round
// after round until no block splits (Moore's definition of the coarsest stable partition).
// The cases reach each of its paths: the refinement alone (few transitions per state),
// partitions Moore's rounds settle (many), and chains that split one block per round, which
// the rounds hand over to the refinement.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "grammar/partition_refinement.h"

namespace lockstep {
namespace {

// The coarsest stable partition, numbered by first appearance, computed the slow way.
std::vector<uint32_t> reference(uint32_t n, const std::vector<uint32_t>& initial,
                                const std::vector<LabeledTransition>& transitions) {
  std::vector<std::map<uint32_t, uint32_t>> out(n);  // label → head
  for (const auto& t : transitions) out[t.tail][t.label] = t.head;
  std::vector<uint32_t> cls(n);
  {
    std::map<uint32_t, uint32_t> id;
    for (uint32_t s = 0; s < n; ++s) cls[s] = id.try_emplace(initial[s], static_cast<uint32_t>(id.size())).first->second;
  }
  for (;;) {
    using Signature = std::tuple<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>>;
    std::map<Signature, uint32_t> id;
    std::vector<uint32_t> next(n);
    for (uint32_t s = 0; s < n; ++s) {
      Signature sig{cls[s], {}};
      for (const auto& [label, head] : out[s]) std::get<1>(sig).push_back({label, cls[head]});
      next[s] = id.try_emplace(sig, static_cast<uint32_t>(id.size())).first->second;
    }
    const bool stable = id.size() == static_cast<size_t>(*std::max_element(cls.begin(), cls.end()) + 1);
    cls.swap(next);
    if (stable) return cls;
  }
}

TEST(PartitionRefinement, RandomPartialAutomataMatchTheReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t n = 1 + rng() % 300;
    const uint32_t labels = 1 + rng() % 12;  // about 4 and more per state: Moore's rounds first
    const uint32_t blocks = 1 + rng() % 3;
    // Few distinct targets, so that many states are equivalent and the answer is not the
    // discrete partition; some initial values far apart (the numbering is by first appearance).
    const uint32_t targets = 1 + rng() % std::max<uint32_t>(1, n / 4);
    std::vector<uint32_t> initial(n);
    for (auto& b : initial) b = (rng() % blocks) * (trial % 2 ? 1000003u : 1u);
    std::vector<LabeledTransition> transitions;
    for (uint32_t s = 0; s < n; ++s) {
      for (uint32_t l = 0; l < labels; ++l) {
        if (rng() % 3 == 0) continue;  // partial
        transitions.push_back({s, l * 7, static_cast<uint32_t>(rng() % targets)});
      }
    }
    std::shuffle(transitions.begin(), transitions.end(), rng);  // any order of transitions
    const auto want = reference(n, initial, transitions);
    EXPECT_EQ(coarsest_partition(n, initial, transitions, true), want) << "trial " << trial;
    EXPECT_EQ(coarsest_partition(n, initial, transitions, false), want) << "trial " << trial;
  }
}

TEST(PartitionRefinement, AcyclicStatesBeforeCyclesMatchTheReference) {
  // Mostly acyclic automata (each state's targets further on), with cycles among the last
  // states: the acyclic part is settled from the ends backwards, the cyclic part refined,
  // and some acyclic states copy a cyclic state's transitions (equivalent across the two).
  std::mt19937 rng(13);
  for (int trial = 0; trial < 300; ++trial) {
    const uint32_t n = 2 + rng() % 400;
    const uint32_t cyclic = trial % 4 == 0 ? 0 : 1 + rng() % std::max<uint32_t>(1, n / 5);
    const uint32_t labels = 1 + rng() % 4;
    std::vector<uint32_t> initial(n);
    for (auto& b : initial) b = rng() % 2;
    std::vector<LabeledTransition> transitions;
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> out(n);
    for (uint32_t s = n; s-- > 0;) {
      const bool in_cycles = s >= n - cyclic;
      if (!in_cycles && s + 1 < n && rng() % 4 == 0) {
        // A copy of a later state's transitions and block (often one in the cycles).
        const uint32_t c = s + 1 + rng() % (n - s - 1);
        initial[s] = initial[c];
        out[s] = out[c];
      } else {
        for (uint32_t l = 0; l < labels; ++l) {
          if (rng() % 3 == 0) continue;
          const uint32_t lo = in_cycles ? n - cyclic : s + 1;
          if (lo >= n) continue;
          out[s].push_back({l, lo + static_cast<uint32_t>(rng() % std::min<uint32_t>(n - lo, 6))});
        }
      }
      for (const auto& [l, h] : out[s]) transitions.push_back({s, l, h});
    }
    std::shuffle(transitions.begin(), transitions.end(), rng);
    const auto want = reference(n, initial, transitions);
    EXPECT_EQ(coarsest_partition(n, initial, transitions, true), want) << "trial " << trial;
    EXPECT_EQ(coarsest_partition(n, initial, transitions, false), want) << "trial " << trial;
  }
}

TEST(PartitionRefinement, ChainsThatSplitOneBlockPerRoundMatchTheReference) {
  // A length counter: state i reads any of 8 characters into i + 1, the last one final.
  // Every state is distinct, found one per round: the rounds hand over to the refinement.
  constexpr uint32_t kWidth = 8;
  for (uint32_t n : {2u, 9u, 100u, 1000u}) {
    std::vector<uint32_t> initial(n, 0);
    initial[n - 1] = 1;
    std::vector<LabeledTransition> transitions;
    for (uint32_t s = 0; s + 1 < n; ++s) {
      for (uint32_t c = 0; c < kWidth; ++c) transitions.push_back({s, c, s + 1});
    }
    const auto got = coarsest_partition(n, initial, transitions, true);
    EXPECT_EQ(got, reference(n, initial, transitions)) << n;
    EXPECT_EQ(got.back(), n - 1) << n;
  }
  // Two chains of the same length whose ends agree: pairwise equivalent states.
  const uint32_t len = 500;
  std::vector<uint32_t> initial(2 * len, 0);
  initial[len - 1] = initial[2 * len - 1] = 1;
  std::vector<LabeledTransition> transitions;
  for (uint32_t s = 0; s + 1 < len; ++s) {
    for (uint32_t c = 0; c < kWidth; ++c) {
      transitions.push_back({s, c, s + 1});
      transitions.push_back({len + s, c, len + s + 1});
    }
  }
  const auto got = coarsest_partition(2 * len, initial, transitions, true);
  EXPECT_EQ(got, reference(2 * len, initial, transitions));
  for (uint32_t s = 0; s < len; ++s) EXPECT_EQ(got[s], got[len + s]) << s;
}

TEST(PartitionRefinement, ManyBlocksWithoutTransitionsStayApart) {
  // States without transitions in thousands of initial blocks, each the target of a reader
  // with 10 transitions to it: every block stays, and each reader is told apart by its target.
  const uint32_t k = 4000;
  std::vector<uint32_t> initial(2 * k);
  std::vector<LabeledTransition> transitions;
  for (uint32_t i = 0; i < k; ++i) {
    initial[i] = i;          // sinks, one block each
    initial[k + i] = k;      // readers, one block
    for (uint32_t c = 0; c < 10; ++c) transitions.push_back({k + i, c, i});
  }
  const auto got = coarsest_partition(2 * k, initial, transitions, true);
  EXPECT_EQ(got, reference(2 * k, initial, transitions));
  EXPECT_EQ(*std::max_element(got.begin(), got.end()), 2 * k - 1);
}

}  // namespace
}  // namespace lockstep
