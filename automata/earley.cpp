// automata/earley.cpp — see earley.h.
#include "automata/earley.h"

#include <algorithm>

#include <fmt/format.h>

#include "grammar/hash.h"

namespace lockstep {

namespace {
inline uint64_t item_key(uint32_t state, uint32_t origin) {
  return (static_cast<uint64_t>(state) << 32) | origin;
}
inline size_t slot_of(uint64_t key, size_t mask) { return static_cast<size_t>(mix64(key) >> 32) & mask; }
}  // namespace

EarleyParser::EarleyParser(const GrammarAutomaton& grammar, ParserLimits limits)
    : grammar_(&grammar), limits_(limits) {
  keys_.resize(64);
  stamps_.resize(64, 0);
  reset();
}

EarleyParser::EarleyParser(const GrammarAutomaton& grammar, ParserLimits limits, uint32_t boundary_state)
    : grammar_(&grammar), limits_(limits) {
  keys_.resize(64);
  stamps_.resize(64, 0);
  reset_to_state(boundary_state);
}

void EarleyParser::reset() {
  waiting_.clear();
  items_.clear();
  set_begin_.assign(1, 0);
  set_accepting_.clear();
  set_boundary_.clear();
  begin_set();
  add(grammar_->rule_start(grammar_->root_rule()), 0);
  close_set();
}

void EarleyParser::reset_to_state(uint32_t state) {
  waiting_.clear();
  items_.clear();
  set_begin_.assign(1, 0);
  set_accepting_.clear();
  set_boundary_.clear();
  begin_set();
  add(state, kBoundary);
  close_set();
}

void EarleyParser::begin_set() {
  if (++stamp_ == 0) {  // wrapped: clear all stamps once
    std::fill(stamps_.begin(), stamps_.end(), 0);
    stamp_ = 1;
  }
}

void EarleyParser::add(uint32_t state, uint32_t origin) {
  const uint64_t key = item_key(state, origin);
  const size_t set_size = items_.size() - set_begin_.back();
  if ((set_size + 1) * 2 > keys_.size()) {
    // Grow the dedupe table and re-insert the items of the set under construction.
    const size_t cap = keys_.size() * 2;
    keys_.assign(cap, 0);
    stamps_.assign(cap, 0);
    for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
      const uint64_t k = item_key(items_[i].state, items_[i].origin);
      size_t h = slot_of(k, cap - 1);
      while (stamps_[h] == stamp_) h = (h + 1) & (cap - 1);
      stamps_[h] = stamp_;
      keys_[h] = k;
    }
  }
  const size_t mask = keys_.size() - 1;
  size_t h = slot_of(key, mask);
  while (stamps_[h] == stamp_) {
    if (keys_[h] == key) return;
    h = (h + 1) & mask;
  }
  if (set_size >= limits_.max_items_per_set) {
    throw ParserLimitError(ErrorLocation::at_offset(set_begin_.size() - 1), "earley_items_per_set",
                           limits_.max_items_per_set,
                           "the parse at this position (the grammar is too ambiguous to follow)");
  }
  if (items_.size() >= limits_.max_total_items) {
    throw ParserLimitError(ErrorLocation::at_offset(set_begin_.size() - 1), "earley_items_total",
                           limits_.max_total_items,
                           "the parse (output too long or nested too deeply)");
  }
  stamps_[h] = stamp_;
  keys_[h] = key;
  items_.push_back({state, origin});
}

void EarleyParser::close_set() {
  const auto& g = *grammar_;
  const uint32_t here = static_cast<uint32_t>(set_begin_.size() - 1);
  bool accepting = false;
  bool boundary = false;
  for (size_t i = set_begin_.back(); i < items_.size(); ++i) {
    const Item it = items_[i];
    if (g.is_final(it.state)) {
      const uint32_t rule = g.rule_of(it.state);
      if (rule == g.root_rule() && it.origin == 0) accepting = true;
      // Completion. Null completions (origin == here) were handled at prediction time.
      if (it.origin == kBoundary) {
        boundary = true;
      } else if (it.origin != here) {
        complete_into(it.origin, rule);
      }
    }
    for (const auto& e : g.rule_edges(it.state)) {
      add(g.rule_start(e.rule), here);
      if (g.rule_nullable(e.rule)) add(e.target, it.origin);
    }
  }
  set_begin_.push_back(static_cast<uint32_t>(items_.size()));
  set_accepting_.push_back(accepting ? 1 : 0);
  set_boundary_.push_back(boundary ? 1 : 0);
}

void EarleyParser::abandon_set() { items_.resize(set_begin_.back()); }

void EarleyParser::complete_into(uint32_t k, uint32_t rule) {
  const auto& g = *grammar_;
  const uint32_t begin = set_begin_[k], end = set_begin_[k + 1];
  if (end - begin < kIndexFrom) {
    for (uint32_t j = begin; j < end; ++j) {
      const Item waiting = items_[j];
      for (const auto& e : g.rule_edges(waiting.state)) {
        if (e.rule == rule) add(e.target, waiting.origin);
      }
    }
    return;
  }
  if (waiting_.size() <= k) waiting_.resize(k + 1);
  if (!waiting_[k]) {
    auto w = std::make_shared<std::vector<Waiting>>();
    for (uint32_t j = begin; j < end; ++j) {
      for (const auto& e : g.rule_edges(items_[j].state)) w->push_back({e.rule, e.target, items_[j].origin});
    }
    // Stable: within a rule, the order a scan of the set would add them in.
    std::stable_sort(w->begin(), w->end(), [](const Waiting& a, const Waiting& b) { return a.rule < b.rule; });
    waiting_[k] = std::move(w);
  }
  const std::vector<Waiting>& w = *waiting_[k];
  auto it = std::lower_bound(w.begin(), w.end(), rule, [](const Waiting& a, uint32_t r) { return a.rule < r; });
  for (; it != w.end() && it->rule == rule; ++it) add(it->target, it->origin);
}

bool EarleyParser::advance(uint8_t byte) {
  const auto& g = *grammar_;
  const uint32_t begin = set_begin_[set_begin_.size() - 2];
  const uint32_t end = set_begin_.back();
  if (end - begin == 1 && g.is_simple(items_[begin].state)) {
    // Fast path: one item in a plain DFA state — a table step, no prediction or completion
    // unless the target needs them.
    const Item it = items_[begin];
    uint32_t target = UINT32_MAX;
    for (const auto& e : g.byte_edges(it.state)) {
      if (byte < e.lo) break;
      if (byte <= e.hi) {
        target = e.target;
        break;
      }
    }
    if (target == UINT32_MAX) return false;
    if (g.is_simple(target)) {
      items_.push_back({target, it.origin});
      set_begin_.push_back(static_cast<uint32_t>(items_.size()));
      set_accepting_.push_back(0);
      set_boundary_.push_back(0);
      return true;
    }
  }
  begin_set();
  try {
    for (uint32_t i = begin; i < end; ++i) {
      const Item it = items_[i];
      for (const auto& e : g.byte_edges(it.state)) {
        if (byte < e.lo) break;  // edges are sorted and disjoint
        if (byte <= e.hi) {
          add(e.target, it.origin);
          break;
        }
      }
    }
    if (items_.size() == end) return false;
    close_set();
  } catch (...) {
    abandon_set();
    throw;
  }
  return true;
}

bool EarleyParser::advance(std::string_view bytes) {
  size_t done = 0;
  try {
    for (; done < bytes.size(); ++done) {
      if (!advance(static_cast<uint8_t>(bytes[done]))) break;
    }
  } catch (...) {
    rollback(done);
    throw;
  }
  if (done == bytes.size()) return true;
  rollback(done);
  return false;
}

void EarleyParser::rollback(size_t n) {
  if (n > num_bytes()) throw std::out_of_range("EarleyParser::rollback past the start");
  set_begin_.resize(set_begin_.size() - n);
  set_accepting_.resize(set_accepting_.size() - n);
  set_boundary_.resize(set_boundary_.size() - n);
  items_.resize(set_begin_.back());
  if (waiting_.size() > set_begin_.size() - 1) waiting_.resize(set_begin_.size() - 1);
}

void EarleyParser::probe_after_completion(uint32_t rule, uint32_t origin,
                                          std::span<const std::string> suffixes,
                                          std::span<const uint32_t> common,
                                          std::vector<char>& accepted) {
  accepted.assign(suffixes.size(), 0);
  // The set right after the completion: items at `origin` waiting on `rule`, advanced.
  begin_set();
  try {
    complete_into(origin, rule);
    if (items_.size() == set_begin_.back()) return;  // nothing waits: every suffix fails
    close_set();
  } catch (...) {
    abandon_set();
    throw;
  }
  // Walk the sorted suffixes as a trie, like the token mask walk.
  size_t consumed = 0, dead = 0;
  try {
    for (size_t i = 0; i < suffixes.size(); ++i) {
      const std::string& s = suffixes[i];
      const size_t lcp = common[i];
      if (dead != 0 && lcp >= dead) continue;
      dead = 0;
      const size_t keep = std::min(consumed, lcp);
      rollback(consumed - keep);
      consumed = keep;
      while (consumed < s.size() && advance(static_cast<uint8_t>(s[consumed]))) ++consumed;
      if (consumed == s.size()) {
        accepted[i] = 1;
      } else {
        dead = consumed + 1;
      }
    }
  } catch (...) {
    rollback(consumed + 1);
    throw;
  }
  rollback(consumed + 1);  // the suffix bytes and the completion set
}

bool EarleyParser::can_advance() const {
  for (const auto& it : current_items()) {
    if (!grammar_->byte_edges(it.state).empty()) return true;
  }
  return false;
}

}  // namespace lockstep
