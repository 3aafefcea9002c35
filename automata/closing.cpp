// automata/closing.cpp — see closing.h.
#include "automata/closing.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "automata/token_bitmask.h"

namespace lockstep {

CompletionTracker::CompletionTracker(const GrammarAutomaton& grammar, const ClosingData& data)
    : g_(grammar), data_(data), slot_(grammar.num_rules(), {0, 0}) {}

const CompletionTracker::Entry* CompletionTracker::entry(uint32_t set, uint32_t rule) const {
  const auto& e = tables_[set].entries;
  const auto it = std::lower_bound(e.begin(), e.end(), rule, [](const Entry& x, uint32_t r) { return x.rule < r; });
  return it != e.end() && it->rule == rule ? &*it : nullptr;
}

uint64_t CompletionTracker::cost(const EarleyParser& p, uint32_t set, uint32_t rule) {
  ensure(p, set);
  const Entry* e = entry(set, rule);
  return e ? e->cost : kNoCompletion;
}

void CompletionTracker::ensure(const EarleyParser& p, uint32_t set) {
  if (tables_.size() <= set) tables_.resize(set + 1);
  if (tables_[set].built) return;
  // A set's table needs the tables of its items' origins: build the oldest first, with an
  // explicit stack (right-recursive grammars chain one origin per element).
  std::vector<uint32_t> todo{set};
  while (!todo.empty()) {
    const uint32_t x = todo.back();
    if (tables_[x].built) {
      todo.pop_back();
      continue;
    }
    origins_.clear();
    for (const auto& it : p.items_at(x)) {
      if (it.origin < x && !g_.rule_edges(it.state).empty() && !tables_[it.origin].built) origins_.push_back(it.origin);
    }
    std::sort(origins_.begin(), origins_.end());
    origins_.erase(std::unique(origins_.begin(), origins_.end()), origins_.end());
    todo.insert(todo.end(), origins_.begin(), origins_.end());
    if (origins_.empty()) {
      build(p, x);
      todo.pop_back();
    }
  }
}

void CompletionTracker::build(const EarleyParser& p, uint32_t set) {
  const ShortestCompletions& sc = data_.completions;
  if (++stamp_ == 0) {
    std::fill(slot_.begin(), slot_.end(), std::pair<uint32_t, uint32_t>{0, 0});
    stamp_ = 1;
  }
  std::vector<Entry> entries;
  using Queued = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Queued, std::vector<Queued>, std::greater<>> queue;
  auto relax = [&](uint32_t rule, uint64_t c, uint32_t target, uint32_t via_rule, uint32_t via_origin) {
    auto& [stamp, index] = slot_[rule];
    if (stamp != stamp_) {
      stamp = stamp_;
      index = static_cast<uint32_t>(entries.size());
      entries.push_back({rule, kNoCompletion, 0, 0, 0});
    }
    Entry& e = entries[index];
    if (c >= e.cost) return;
    e = {rule, c, target, via_rule, via_origin};
    queue.push({c, rule});
  };
  // Edges between rules predicted in this very set: (waiting rule, called rule, bytes, target).
  struct Link {
    uint32_t from, to;
    uint64_t bytes;
    uint32_t target;
  };
  std::vector<Link> links;
  for (const auto& it : p.items_at(set)) {
    const auto edges = g_.rule_edges(it.state);
    if (edges.empty() || it.origin == EarleyParser::kBoundary) continue;
    const uint32_t waiting = g_.rule_of(it.state);
    const uint64_t above = it.origin < set ? entry(it.origin, waiting) ? entry(it.origin, waiting)->cost : kNoCompletion : 0;
    for (const auto& e : edges) {
      const uint64_t rest = sc.bytes(e.target);
      if (rest == kNoCompletion) continue;
      if (it.origin < set) {
        if (above != kNoCompletion) relax(e.rule, rest + above, e.target, waiting, it.origin);
      } else {
        links.push_back({waiting, e.rule, rest, e.target});
      }
    }
  }
  if (set == 0) relax(g_.root_rule(), 0, kAccept, 0, 0);
  std::sort(links.begin(), links.end(), [](const Link& a, const Link& b) { return a.from < b.from; });
  while (!queue.empty()) {
    const auto [c, rule] = queue.top();
    queue.pop();
    if (c != entries[slot_[rule].second].cost) continue;
    auto lo = std::lower_bound(links.begin(), links.end(), rule, [](const Link& l, uint32_t r) { return l.from < r; });
    for (; lo != links.end() && lo->from == rule; ++lo) relax(lo->to, c + lo->bytes, lo->target, rule, set);
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.rule < b.rule; });
  tables_[set].entries = std::move(entries);
  tables_[set].built = true;
}

CompletionTracker::Best CompletionTracker::best(const EarleyParser& p) {
  truncate(p.num_bytes() + 1);
  const ShortestCompletions& sc = data_.completions;
  const uint32_t here = static_cast<uint32_t>(p.num_bytes());
  Best b;
  // Items predicted here never complete sooner than the item that predicted them, so only
  // the kernel counts (at position 0, every item: all were predicted there).
  for (const auto& it : p.current_items()) {
    if (it.origin == EarleyParser::kBoundary || (here > 0 && it.origin >= here)) continue;
    const uint64_t inner = sc.bytes(it.state);
    if (inner == kNoCompletion || inner >= b.bytes) continue;
    const uint64_t above = cost(p, it.origin, g_.rule_of(it.state));
    if (above == kNoCompletion) continue;
    if (inner + above < b.bytes) b = {inner + above, it.state, it.origin};
  }
  return b;
}

bool CompletionTracker::text(const EarleyParser& p, const Best& b, std::string& out) {
  out.clear();
  if (b.bytes == kNoCompletion || b.bytes > ShortestCompletions::max_materialized_bytes()) return false;
  const ShortestCompletions& sc = data_.completions;
  if (!sc.text(b.state, out)) return false;
  uint32_t rule = g_.rule_of(b.state), origin = b.origin;
  for (;;) {
    cost(p, origin, rule);  // builds the table if needed
    const Entry* e = entry(origin, rule);
    if (!e || e->via_target == kAccept) break;
    if (!sc.text(e->via_target, scratch_)) {
      out.clear();
      return false;
    }
    out += scratch_;
    rule = e->via_rule;
    origin = e->via_origin;
  }
  return true;
}

uint64_t CompletionTracker::tokens_of_text(const std::string& text, uint64_t bytes) const {
  if (bytes == kNoCompletion) return kNoCompletion;
  if (text.size() != bytes) return data_.speller.spells_every_byte() ? bytes : kNoCompletion;  // too long to build
  const uint32_t n = data_.speller.min_tokens(text);
  return n == TokenSpeller::kCannot ? kNoCompletion : n;
}

uint64_t CompletionTracker::tokens(const EarleyParser& p, const Best& b, std::string& out) {
  text(p, b, out);
  return tokens_of_text(out, b.bytes);
}

uint64_t CompletionTracker::restrict(EarleyParser& p, const Vocabulary& vocab, std::span<uint32_t> mask,
                                     uint64_t limit, const std::string& plan,
                                     std::vector<std::pair<uint64_t, int32_t>>* needs) {
  const uint32_t base = static_cast<uint32_t>(p.num_bytes());
  truncate(base + 1);
  const auto sorted = vocab.sorted_text_tokens();
  const auto common = vocab.sorted_common_prefix();
  // Tokens of the completion from a kernel item (state, origin) with origin <= base: the
  // same for every token of the walk that ends there.
  std::unordered_map<uint64_t, uint64_t> memo;
  std::string text_buf;
  uint64_t largest = 0;
  size_t depth = 0, dead = 0;
  auto finish = [&] {
    p.rollback(depth);
    truncate(base + 1);
  };
  try {
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (dead != 0 && common[i] >= dead) continue;  // shares a prefix that failed
      dead = 0;
      const std::string_view bytes = vocab.sorted_bytes(i);
      const size_t keep = std::min<size_t>(depth, common[i]);
      if (keep < depth) {
        p.rollback(depth - keep);
        depth = keep;
        truncate(base + depth + 1);
      }
      while (depth < bytes.size() && p.advance(static_cast<uint8_t>(bytes[depth]))) ++depth;
      if (depth < bytes.size()) {
        dead = depth + 1;
        continue;
      }
      const int32_t id = sorted[i];
      if (!test_bit(mask, static_cast<size_t>(id))) continue;
      const Best b = best(p);
      uint64_t u;
      const uint64_t key = (static_cast<uint64_t>(b.state) << 32) | b.origin;
      const bool memoizable = b.bytes != kNoCompletion && b.origin <= base;
      if (auto it = memoizable ? memo.find(key) : memo.end(); it != memo.end()) {
        u = it->second;
      } else {
        text(p, b, text_buf);
        u = tokens_of_text(text_buf, b.bytes);
        if (memoizable) memo.emplace(key, u);
      }
      largest = std::max(largest, u);
      // The plan only matters for a token that would be cleared: with `needs`, every token's
      // count after the plan is wanted (the same decisions for any limit).
      if ((u > limit || (needs && u > 0)) && plan.size() >= bytes.size() && plan.compare(0, bytes.size(), bytes) == 0) {
        const uint32_t rest = data_.speller.min_tokens(std::string_view(plan).substr(bytes.size()));
        if (rest != TokenSpeller::kCannot) u = std::min<uint64_t>(u, rest);
      }
      if (needs && u > 0) needs->emplace_back(u, id);
      if (u > limit) clear_bit(mask, static_cast<size_t>(id));
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
  return largest;
}

}  // namespace lockstep
