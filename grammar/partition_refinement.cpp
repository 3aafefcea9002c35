// grammar/partition_refinement.cpp — see partition_refinement.h.
#include "grammar/partition_refinement.h"

#include <algorithm>
#include <span>
#include <unordered_map>

#include "grammar/intern_table.h"

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

// The average number of transitions per state from which Moore's rounds go first: number
// automata have 10-12, the grammar's state automata 1-2. On a 96,000-state grammar automaton
// of degree 1.5 (the stress corpus's anyof_objects_200) six rounds took 10-19 ms and then
// handed over to a refinement that alone takes 13 ms; on the products of multipleOf
// conditions of Handwritten allany9 (22,000-36,000 states, degree 10-11), rounds and then
// refinement take 17-27 ms where the refinement alone takes 26-43 ms.
constexpr uint32_t kMooreMinDegree = 4;

// Moore's rounds (E. F. Moore, "Gedanken-experiments on sequential machines", 1956): each
// round gives every state the class of its (class, labels and classes of its targets), so a
// round is one pass over the transitions in state order, with a hash table. On automata
// with many transitions per state (number texts read digit by digit: ten or more) a round
// costs a fraction of the refinement's marking, which jumps through memory, and a handful
// of rounds settle them; with few transitions per state the refinement is the faster. Two
// rounds in a row that each add fewer classes than n/32 and than an eighth of those they had
// (a length counter adds one per round) hand their partition over to the refinement. One
// such round alone does not: it is often the last before a round that adds none, and a
// round costs a small part of the refinement (docs/schemas.md). Returns true when the
// partition is stable: `cls` is then the answer, numbered by first appearance.
bool moore_rounds(uint32_t n, std::vector<uint32_t>& cls, const std::vector<LabeledTransition>& transitions) {
  const auto m = static_cast<uint32_t>(transitions.size());
  // The (label, head) pairs by tail, in label order within a state, side by side.
  std::vector<uint32_t> out_begin(n + 1, 0);
  std::vector<std::pair<uint32_t, uint32_t>> out(m);
  for (const auto& t : transitions) ++out_begin[t.tail + 1];
  for (uint32_t s = 0; s < n; ++s) out_begin[s + 1] += out_begin[s];
  {
    std::vector<uint32_t> fill(out_begin.begin(), out_begin.end() - 1);
    for (const auto& t : transitions) out[fill[t.tail]++] = {t.label, t.head};
  }
  for (uint32_t s = 0; s < n; ++s) {
    const auto first = out.begin() + out_begin[s], last = out.begin() + out_begin[s + 1];
    if (!std::is_sorted(first, last)) std::sort(first, last);  // labels are distinct: by label
  }
  size_t table_size = 16;
  while (table_size < 2 * size_t{n}) table_size *= 2;
  const size_t mask = table_size - 1;
  std::vector<uint32_t> table(table_size), next(n), rep;  // rep: a state of each new class
  std::vector<uint64_t> hash(n);
  uint32_t classes = 0;
  for (uint32_t s = 0; s < n; ++s) classes = std::max(classes, cls[s] + 1);
  const uint32_t min_gain = std::max<uint32_t>(1, n / 32);
  // At most about as many rounds as the refinement makes passes over its transitions.
  uint32_t rounds = 4;
  for (uint32_t k = n; k > 1; k /= 2) rounds += 2;
  bool small_before = false;
  while (rounds-- > 0) {
    std::fill(table.begin(), table.end(), UINT32_MAX);
    rep.clear();
    for (uint32_t s = 0; s < n; ++s) {
      // Each word multiplied in before the next, so no two words cancel.
      uint64_t h = (0x9E3779B97F4A7C15ull ^ cls[s]) * 0xFF51AFD7ED558CCDull;
      for (uint32_t k = out_begin[s]; k < out_begin[s + 1]; ++k) {
        h ^= h >> 29;
        h = (h ^ (uint64_t{out[k].first} << 32 | cls[out[k].second])) * 0xFF51AFD7ED558CCDull;
      }
      h ^= h >> 32;
      hash[s] = h;
      for (size_t i = h & mask;; i = (i + 1) & mask) {
        const uint32_t c = table[i];
        if (c == UINT32_MAX) {
          table[i] = static_cast<uint32_t>(rep.size());
          next[s] = static_cast<uint32_t>(rep.size());
          rep.push_back(s);
          break;
        }
        const uint32_t r = rep[c];
        if (hash[r] != h || cls[r] != cls[s] || out_begin[r + 1] - out_begin[r] != out_begin[s + 1] - out_begin[s]) {
          continue;
        }
        bool same = true;
        for (uint32_t a = out_begin[r], b = out_begin[s]; same && a < out_begin[r + 1]; ++a, ++b) {
          same = out[a].first == out[b].first && cls[out[a].second] == cls[out[b].second];
        }
        if (same) {
          next[s] = c;
          break;
        }
      }
    }
    const auto now = static_cast<uint32_t>(rep.size());
    cls.swap(next);
    if (now == classes) return true;
    const bool small = now - classes < min_gain && (now - classes) * 8 < classes;
    if (small && small_before) return false;
    small_before = small;
    classes = now;
  }
  return false;
}

// The refinement (with Moore's rounds first when asked and worth it) of all n states.
std::vector<uint32_t> refine(uint32_t n, const std::vector<uint32_t>& initial_block,
                             std::vector<LabeledTransition> transitions, bool rounds_first) {
  std::vector<uint32_t> out(n, 0);
  if (n == 0) return out;
  // Rounds pay where states have many transitions (see moore_rounds). They need the initial
  // blocks numbered densely; the refinement alone takes them as given.
  const bool rounds = rounds_first && transitions.size() >= size_t{kMooreMinDegree} * n;
  std::vector<uint32_t> start;
  if (rounds) {
    start.resize(n);
    const uint32_t top = *std::max_element(initial_block.begin(), initial_block.end());
    if (top < 4 * n) {
      std::vector<uint32_t> dense(size_t{top} + 1, UINT32_MAX);
      uint32_t next = 0;
      for (uint32_t s = 0; s < n; ++s) {
        uint32_t& d = dense[initial_block[s]];
        if (d == UINT32_MAX) d = next++;
        start[s] = d;
      }
    } else {
      std::unordered_map<uint32_t, uint32_t> dense;
      for (uint32_t s = 0; s < n; ++s) {
        start[s] = dense.try_emplace(initial_block[s], static_cast<uint32_t>(dense.size())).first->second;
      }
    }
    if (moore_rounds(n, start, transitions)) return start;
  }
  const std::vector<uint32_t>& first_blocks = rounds ? start : initial_block;
  // States: one set per initial block.
  RefinablePartition blocks(n);
  {
    std::vector<uint32_t> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return first_blocks[a] < first_blocks[b]; });
    std::vector<char> cut(n, 0);
    for (uint32_t i = 1; i < n; ++i) cut[i] = first_blocks[order[i]] != first_blocks[order[i - 1]];
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

}  // namespace

std::vector<uint32_t> coarsest_partition(uint32_t n, const std::vector<uint32_t>& initial_block,
                                         std::vector<LabeledTransition> transitions, bool rounds_first) {
  if (n == 0) return {};
  // The transitions (label, head) by tail, in label order within a state.
  const auto m = static_cast<uint32_t>(transitions.size());
  std::vector<uint32_t> out_begin(n + 1, 0), indegree(n, 0);
  std::vector<std::pair<uint32_t, uint32_t>> out(m);
  for (const auto& t : transitions) ++out_begin[t.tail + 1], ++indegree[t.head];
  for (uint32_t s = 0; s < n; ++s) out_begin[s + 1] += out_begin[s];
  {
    std::vector<uint32_t> fill(out_begin.begin(), out_begin.end() - 1);
    for (const auto& t : transitions) out[fill[t.tail]++] = {t.label, t.head};
  }
  // A topological order of the states no cycle reaches (Kahn's algorithm); the others, the
  // core, are those on or after a cycle (a loop included), closed under transitions.
  std::vector<uint32_t> order;
  order.reserve(n);
  for (uint32_t s = 0; s < n; ++s) {
    if (indegree[s] == 0) order.push_back(s);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t s = order[i];
    for (uint32_t k = out_begin[s]; k < out_begin[s + 1]; ++k) {
      if (--indegree[out[k].second] == 0) order.push_back(out[k].second);
    }
  }
  // Mostly cyclic: the refinement of everything costs less than a core apart, keyed.
  if (order.size() * 2 < n) return refine(n, initial_block, std::move(transitions), rounds_first);
  // The core is refined on its own; the rest is settled from the ends backwards, each state
  // once its targets are, by its initial block and its (label, class of the target) pairs:
  // equal keys, equal classes, in time linear in the transitions (as Revuz minimizes acyclic
  // automata: language_classes() in char_dfa.cpp). Grammar automata are mostly acyclic (an
  // object's members, one rule per set of properties read), where the refinement's marking
  // jumps through memory for every transition.
  constexpr uint32_t kUnset = UINT32_MAX;
  std::vector<uint32_t> cls(n, kUnset);
  SeqInternTable<> keys(n);
  std::vector<uint32_t> key;
  auto key_of = [&](uint32_t s) {
    key.assign(1, initial_block[s]);
    const auto first = out.begin() + out_begin[s], last = out.begin() + out_begin[s + 1];
    if (!std::is_sorted(first, last)) std::sort(first, last);  // labels are distinct: by label
    for (auto it = first; it != last; ++it) key.insert(key.end(), {it->first, cls[it->second]});
    return std::span<const uint32_t>(key);
  };
  if (order.size() < n) {
    std::vector<uint32_t> local(n, kUnset), core;
    for (uint32_t s = 0; s < n; ++s) {
      if (indegree[s] > 0) local[s] = static_cast<uint32_t>(core.size()), core.push_back(s);
    }
    std::vector<uint32_t> core_initial(core.size());
    std::vector<LabeledTransition> core_transitions;
    for (uint32_t i = 0; i < core.size(); ++i) {
      core_initial[i] = initial_block[core[i]];
      for (uint32_t k = out_begin[core[i]]; k < out_begin[core[i] + 1]; ++k) {
        core_transitions.push_back({i, out[k].first, local[out[k].second]});
      }
    }
    const std::vector<uint32_t> block =
        refine(static_cast<uint32_t>(core.size()), core_initial, std::move(core_transitions), rounds_first);
    for (uint32_t i = 0; i < core.size(); ++i) cls[core[i]] = block[i];
    // Each core block's key, from its first state: blocks are numbered by first appearance,
    // and distinct blocks have distinct keys (else the partition would not be the coarsest),
    // so a block's key number is the block's.
    uint32_t keyed = 0;
    for (uint32_t i = 0; i < core.size(); ++i) {
      if (block[i] == keyed) keys.intern(key_of(core[i])), ++keyed;
    }
  }
  for (size_t i = order.size(); i-- > 0;) cls[order[i]] = keys.intern(key_of(order[i])).first;
  // Numbered by first appearance.
  std::vector<uint32_t> id(keys.size(), kUnset), result(n);
  uint32_t next = 0;
  for (uint32_t s = 0; s < n; ++s) {
    uint32_t& x = id[cls[s]];
    if (x == kUnset) x = next++;
    result[s] = x;
  }
  return result;
}

}  // namespace lockstep
