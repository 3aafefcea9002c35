// grammar/partition_refinement.cpp — see partition_refinement.h.
#include "grammar/partition_refinement.h"

#include <algorithm>

namespace lockstep {

namespace {

// A partition of [0, size) into sets, each a contiguous slice of `elems`, with marking:
// the marked elements of a set sit at the front of its slice.
class RefinablePartition {
 public:
  explicit RefinablePartition(uint32_t size) : elems_(size), loc_(size), set_(size, 0) {
    for (uint32_t i = 0; i < size; ++i) elems_[i] = loc_[i] = i;
    if (size) add_set(0, size);
  }

  uint32_t sets() const { return static_cast<uint32_t>(first_.size()); }
  uint32_t set_of(uint32_t e) const { return set_[e]; }
  uint32_t first(uint32_t s) const { return first_[s]; }
  uint32_t past(uint32_t s) const { return past_[s]; }
  uint32_t elem(uint32_t i) const { return elems_[i]; }

  void mark(uint32_t e) {
    const uint32_t s = set_[e], i = loc_[e], j = first_[s] + marked_[s];
    if (i < j) return;  // already marked
    elems_[i] = elems_[j];
    loc_[elems_[i]] = i;
    elems_[j] = e;
    loc_[e] = j;
    if (marked_[s]++ == 0) touched_.push_back(s);
  }

  /// Splits every touched set into its marked and unmarked parts; the smaller part becomes
  /// a new set (so each element changes set O(log n) times).
  void split() {
    for (const uint32_t s : touched_) {
      const uint32_t j = first_[s] + marked_[s];
      if (j == past_[s]) {
        marked_[s] = 0;
        continue;
      }
      uint32_t lo, hi;
      if (marked_[s] <= past_[s] - j) {
        lo = first_[s], hi = j;
        first_[s] = j;
      } else {
        lo = j, hi = past_[s];
        past_[s] = j;
      }
      const uint32_t z = add_set(lo, hi);
      for (uint32_t i = lo; i < hi; ++i) set_[elems_[i]] = z;
      marked_[s] = 0;
    }
    touched_.clear();
  }

  /// Replaces the single set by the runs of `order` (elements in that order) that `cut`
  /// separates: cut[i] is true when order[i] starts a new set.
  void regroup(const std::vector<uint32_t>& order, const std::vector<char>& cut) {
    first_.clear(), past_.clear(), marked_.clear();
    for (uint32_t i = 0; i < order.size(); ++i) {
      elems_[i] = order[i];
      loc_[order[i]] = i;
      if (i == 0 || cut[i]) {
        if (i) past_.back() = i;
        add_set(i, i);
      }
      set_[order[i]] = sets() - 1;
    }
    if (!past_.empty()) past_.back() = static_cast<uint32_t>(order.size());
  }

 private:
  uint32_t add_set(uint32_t lo, uint32_t hi) {
    first_.push_back(lo);
    past_.push_back(hi);
    marked_.push_back(0);
    return sets() - 1;
  }

  std::vector<uint32_t> elems_, loc_, set_;
  std::vector<uint32_t> first_, past_, marked_;
  std::vector<uint32_t> touched_;
};

}  // namespace

std::vector<uint32_t> coarsest_partition(uint32_t n, const std::vector<uint32_t>& initial_block,
                                         std::vector<LabeledTransition> transitions) {
  std::vector<uint32_t> out(n, 0);
  if (n == 0) return out;
  // States: one set per initial block.
  RefinablePartition blocks(n);
  {
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return initial_block[a] < initial_block[b]; });
    std::vector<char> cut(n, 0);
    for (uint32_t i = 1; i < n; ++i) cut[i] = initial_block[order[i]] != initial_block[order[i - 1]];
    blocks.regroup(order, cut);
  }
  const auto m = static_cast<uint32_t>(transitions.size());
  // Transitions: one set ("cord") per label (a counting sort by label).
  uint32_t labels = 0;
  for (const auto& t : transitions) labels = std::max(labels, t.label + 1);
  RefinablePartition cords(m);
  if (m) {
    std::vector<uint32_t> start(labels + 1, 0);
    for (const auto& t : transitions) ++start[t.label + 1];
    for (uint32_t l = 0; l < labels; ++l) start[l + 1] += start[l];
    std::vector<uint32_t> order(m);
    std::vector<char> cut(m, 0);
    for (uint32_t l = 0; l < labels; ++l) {
      if (start[l] < start[l + 1]) cut[start[l]] = 1;
    }
    for (uint32_t i = 0; i < m; ++i) order[start[transitions[i].label]++] = i;
    cords.regroup(order, cut);
  }
  // Incoming transitions of each state.
  std::vector<uint32_t> in_begin(n + 1, 0), in(m);
  for (const auto& t : transitions) ++in_begin[t.head + 1];
  for (uint32_t s = 0; s < n; ++s) in_begin[s + 1] += in_begin[s];
  {
    std::vector<uint32_t> fill(in_begin.begin(), in_begin.end() - 1);
    for (uint32_t i = 0; i < m; ++i) in[fill[transitions[i].head]++] = i;
  }
  // Every block but the first is a splitter; every cord is one. Processing a set's parent
  // and all but one of its parts is enough (Hopcroft's argument), and split() keeps the
  // larger part under the old index.
  uint32_t b = 1, c = 0;
  while (c < cords.sets() || b < blocks.sets()) {
    while (b < blocks.sets()) {
      for (uint32_t i = blocks.first(b); i < blocks.past(b); ++i) {
        const uint32_t s = blocks.elem(i);
        for (uint32_t k = in_begin[s]; k < in_begin[s + 1]; ++k) cords.mark(in[k]);
      }
      cords.split();
      ++b;
    }
    if (c < cords.sets()) {
      for (uint32_t i = cords.first(c); i < cords.past(c); ++i) blocks.mark(transitions[cords.elem(i)].tail);
      blocks.split();
      ++c;
    }
  }
  // Number the blocks by first appearance.
  std::vector<uint32_t> id(blocks.sets(), UINT32_MAX);
  uint32_t next = 0;
  for (uint32_t s = 0; s < n; ++s) {
    uint32_t& x = id[blocks.set_of(s)];
    if (x == UINT32_MAX) x = next++;
    out[s] = x;
  }
  return out;
}

}  // namespace lockstep
