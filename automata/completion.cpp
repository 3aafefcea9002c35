// automata/completion.cpp — see completion.h.
#include "automata/completion.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace lockstep {

namespace {

// The byte a completion writes for a byte range: a letter, a digit or a space when the
// range has one (they spell as common tokens), else its first byte.
uint8_t representative(uint8_t lo, uint8_t hi) {
  for (const uint8_t c : {uint8_t{'a'}, uint8_t{'0'}, uint8_t{' '}}) {
    if (lo <= c && c <= hi) return c;
  }
  return lo;
}

}  // namespace

ShortestCompletions::ShortestCompletions(const GrammarAutomaton& g) : g_(g) {
  const uint32_t n = g.num_states();
  dist_.assign(n, kNoCompletion);
  choice_.assign(n, Choice{});
  // Reverse adjacency: byte edges by target; rule edges by target and by rule.
  std::vector<uint32_t> byte_in(n + 1, 0), target_in(n + 1, 0), rule_in(g.num_rules() + 1, 0);
  struct RuleEdge {
    uint32_t from, rule, target;
  };
  std::vector<RuleEdge> rule_edges;
  for (uint32_t s = 0; s < n; ++s) {
    for (const auto& e : g.byte_edges(s)) ++byte_in[e.target + 1];
    for (const auto& e : g.rule_edges(s)) {
      rule_edges.push_back({s, e.rule, e.target});
      ++target_in[e.target + 1];
      ++rule_in[e.rule + 1];
    }
  }
  for (uint32_t s = 0; s < n; ++s) byte_in[s + 1] += byte_in[s], target_in[s + 1] += target_in[s];
  for (uint32_t r = 0; r < g.num_rules(); ++r) rule_in[r + 1] += rule_in[r];
  std::vector<std::pair<uint32_t, uint8_t>> bytes_into(byte_in[n]);
  std::vector<uint32_t> by_target(target_in[n]), by_rule(rule_in[g.num_rules()]);
  {
    std::vector<uint32_t> b = byte_in, t = target_in, r = rule_in;
    for (uint32_t s = 0; s < n; ++s) {
      for (const auto& e : g.byte_edges(s)) bytes_into[b[e.target]++] = {s, representative(e.lo, e.hi)};
    }
    for (uint32_t i = 0; i < rule_edges.size(); ++i) {
      by_target[t[rule_edges[i].target]++] = i;
      by_rule[r[rule_edges[i].rule]++] = i;
    }
  }
  // Knuth's algorithm: settle states in order of their final value; a rule edge s -R→ t
  // offers bytes(start(R)) + bytes(t) once both are settled.
  using Entry = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  std::vector<uint8_t> settled(n, 0);
  auto relax = [&](uint32_t s, uint64_t d, Choice c) {
    if (settled[s] || d >= dist_[s]) return;
    dist_[s] = d;
    choice_[s] = c;
    queue.push({d, s});
  };
  for (uint32_t s = 0; s < n; ++s) {
    if (g.is_final(s)) relax(s, 0, Choice{});
  }
  while (!queue.empty()) {
    const auto [d, u] = queue.top();
    queue.pop();
    if (settled[u] || d != dist_[u]) continue;
    settled[u] = 1;
    for (uint32_t i = byte_in[u]; i < byte_in[u + 1]; ++i) {
      relax(bytes_into[i].first, d + 1, Choice{u, bytes_into[i].second, 1});
    }
    for (uint32_t i = target_in[u]; i < target_in[u + 1]; ++i) {
      const RuleEdge& e = rule_edges[by_target[i]];
      const uint32_t start = g.rule_start(e.rule);
      if (settled[start]) relax(e.from, dist_[start] + d, Choice{u, e.rule, 2});
    }
    const uint32_t r = g.rule_of(u);
    if (u == g.rule_start(r)) {
      for (uint32_t i = rule_in[r]; i < rule_in[r + 1]; ++i) {
        const RuleEdge& e = rule_edges[by_rule[i]];
        if (settled[e.target]) relax(e.from, d + dist_[e.target], Choice{e.target, r, 2});
      }
    }
  }

  // Bound over configurations: A(R), the longest completion of what waits on R, over the
  // call graph from the root (callers first); infinite when a reachable rule is recursive.
  const uint32_t nr = g.num_rules();
  std::vector<uint32_t> order;  // postorder of the call graph from the root
  std::vector<uint8_t> mark(nr, 0);  // 1: on the stack, 2: done
  bool recursive = false;
  struct Frame {
    uint32_t rule, state, edge;
  };
  std::vector<Frame> stack{{g.root_rule(), g.rule_start(g.root_rule()), 0}};
  mark[g.root_rule()] = 1;
  while (!stack.empty() && !recursive) {
    Frame& f = stack.back();
    if (f.state == g.rule_end(f.rule)) {
      mark[f.rule] = 2;
      order.push_back(f.rule);
      stack.pop_back();
      continue;
    }
    const auto edges = g.rule_edges(f.state);
    if (f.edge == edges.size()) {
      ++f.state;
      f.edge = 0;
      continue;
    }
    const uint32_t callee = edges[f.edge++].rule;
    if (mark[callee] == 1) recursive = true;
    if (mark[callee] == 0) {
      mark[callee] = 1;
      stack.push_back({callee, g.rule_start(callee), 0});  // `f` dangles from here on
    }
  }
  if (recursive) return;
  std::reverse(order.begin(), order.end());
  std::vector<uint64_t> above(nr, 0);
  uint64_t best = 0;
  for (const uint32_t r : order) {
    for (uint32_t q = g.rule_start(r); q < g.rule_end(r); ++q) {
      if (dist_[q] == kNoCompletion) continue;
      best = std::max(best, dist_[q] + above[r]);
      for (const auto& e : g.rule_edges(q)) {
        if (dist_[e.target] != kNoCompletion) above[e.rule] = std::max(above[e.rule], dist_[e.target] + above[r]);
      }
    }
  }
  max_configuration_bytes_ = best;
}

bool ShortestCompletions::text(uint32_t state, std::string& out) const {
  out.clear();
  if (dist_[state] == kNoCompletion || dist_[state] > max_materialized_bytes()) return false;
  out.reserve(dist_[state]);
  // Each chosen edge leads to a state settled earlier, so the expansion ends; a rule
  // edge is expanded callee first, then its target.
  std::vector<uint32_t> pending{state};
  while (!pending.empty()) {
    uint32_t q = pending.back();
    pending.pop_back();
    while (dist_[q] > 0) {
      const Choice& c = choice_[q];
      if (c.kind == 1) {
        out.push_back(static_cast<char>(c.label));
        q = c.target;
      } else {
        pending.push_back(c.target);
        q = g_.rule_start(c.label);
      }
    }
  }
  return true;
}

namespace {

// First sorted position in [lo, hi) whose token is >= `s`.
size_t lower_bound_bytes(const Vocabulary& v, size_t lo, size_t hi, std::string_view s) {
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (v.sorted_bytes(mid) < s) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

TokenSpeller::TokenSpeller(const Vocabulary& v) : v_(v) {
  const size_t n = v.sorted_text_tokens().size();
  every_byte_ = true;
  for (int b = 0; b < 256 && every_byte_; ++b) {
    const char c = static_cast<char>(b);
    const size_t i = lower_bound_bytes(v, 0, n, std::string_view(&c, 1));
    every_byte_ = i < n && v.sorted_bytes(i) == std::string_view(&c, 1);
  }
}

uint32_t TokenSpeller::min_tokens(std::string_view w) const {
  const size_t n = w.size();
  if (n == 0) return 0;
  if (n > 4096 && every_byte_) return static_cast<uint32_t>(n);  // a bound without the O(n) table
  const size_t tokens = v_.sorted_text_tokens().size();
  std::vector<uint32_t> best(n + 1, kCannot);
  best[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    if (best[i] == kCannot) continue;
    // [lo, hi): the sorted tokens that start with w[i, i + len).
    size_t lo = 0, hi = tokens;
    for (size_t len = 1; len <= std::min<size_t>(64, n - i) && lo < hi; ++len) {
      const std::string_view prefix = w.substr(i, len);
      const std::string_view at = v_.sorted_bytes(lo);
      if (at.size() < len || at.compare(0, len, prefix) != 0) {
        lo = lower_bound_bytes(v_, lo, hi, prefix);
        if (lo == hi) break;
        const std::string_view first = v_.sorted_bytes(lo);
        if (first.size() < len || first.compare(0, len, prefix) != 0) break;
      }
      hi = v_.sorted_prefix_end(lo, len);
      // The run's first token is the shortest: the prefix itself when it is a token.
      if (v_.sorted_bytes(lo).size() == len && best[i] + 1 < best[i + len]) best[i + len] = best[i] + 1;
    }
  }
  return best[n];
}

std::shared_ptr<const ClosingData::Restriction> ClosingData::find_restriction(const std::vector<uint32_t>& key,
                                                                              uint64_t generation) const {
  std::lock_guard lock(mutex_);
  if (generation != generation_) return nullptr;
  const auto it = restrictions_.find(key);
  return it == restrictions_.end() ? nullptr : it->second;
}

void ClosingData::insert_restriction(const std::vector<uint32_t>& key, uint64_t generation,
                                     std::shared_ptr<const Restriction> value) const {
  std::lock_guard lock(mutex_);
  if (generation != generation_ || restrictions_.size() >= kMaxEntries) {
    restrictions_.clear();
    generation_ = generation;
  }
  restrictions_.emplace(key, std::move(value));
}

}  // namespace lockstep
