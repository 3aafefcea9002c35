// automata/mask/continued_walk.cpp — continued masks: the mask of a state near the forced end
// of an automaton-only rule R, walked on through the start of the automaton-only rule N that
// R's caller calls next (TokenMaskCache::continued, docs/masks.md "Continued masks").
//
// Near such an end most tokens complete R mid-token. With a broad FOLLOW (a length block of a
// long string, followed by more string) every one of them is uncertain: a state one code
// point before a block's end has ~110,000 of Llama 3's tokens uncertain, under ~44,000
// distinct suffixes, each sorted, grouped and probed against the parse. Where the caller goes
// on into N, reading on from N's start is one of the ways the context can read a suffix, so
// a token whose rest N reads is allowed in that context, and only the tokens N cannot read
// stay uncertain (their suffixes probed as usual, which also covers every other way on).
#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "automata/call_walk.h"
#include "automata/mask/byte_classes.h"
#include "automata/mask/impl.h"
#include "automata/mask/shared_caches.h"
#include "automata/mask/suffix_groups.h"
#include "automata/token_bitmask.h"

namespace lockstep {

using mask::ClassTables;

bool TokenMaskCache::Impl::continuable(uint32_t state) const {
  const GrammarAutomaton& g = *grammar_;
  const uint32_t rule = g.rule_of(state);
  if (g.rule_automaton_key(rule).empty() || !g.rule_edges(state).empty() || g.is_final(state)) return false;
  {
    std::lock_guard lock(continued_mutex_);
    if (const auto it = continuable_.find(state); it != continuable_.end()) return it->second;
  }
  bool yes = false;
  if (GrammarAutomaton::byte_count(g.rule_follow(rule)) >= kBroadBytes && byte_classes(rule).calls_walkable) {
    // A final state within kContinueDepth bytes (byte edges only), looked for among at most
    // kMaxSeen states (a large pattern's automaton fans out: such a state is not continued).
    constexpr size_t kMaxSeen = 4096;
    std::vector<uint32_t> frontier{state}, next;
    std::unordered_set<uint32_t> seen{state};
    for (size_t d = 0; d < kContinueDepth && !yes && !frontier.empty() && seen.size() <= kMaxSeen; ++d) {
      next.clear();
      for (const uint32_t q : frontier) {
        for (const auto& e : g.byte_edges(q)) {
          if (g.is_final(e.target)) yes = true;
          if (seen.insert(e.target).second) next.push_back(e.target);
        }
      }
      frontier.swap(next);
    }
  }
  std::lock_guard lock(continued_mutex_);
  continuable_.emplace(state, yes);
  return yes;
}

const StateMask& TokenMaskCache::Impl::continued(uint32_t state, uint32_t next_rule) {
  const uint64_t key = uint64_t{grammar_->mask_class(state)} << 32 | next_rule;
  {
    std::lock_guard lock(continued_mutex_);
    if (const auto it = continued_.find(key); it != continued_.end()) return *it->second;
  }
  // Process-wide by the state's automaton key (its automaton from the state, FOLLOW of R, the
  // vocabulary) and N's automaton: the blocks and tails of long strings are the same in every
  // grammar. Outside the lock: two threads may both walk.
  std::string shared_key = "K" + automaton_mask_key(state);
  const auto [h1, h2] = automaton_digest(next_rule);
  shared_key.append(reinterpret_cast<const char*>(&h1), sizeof h1);
  shared_key.append(reinterpret_cast<const char*>(&h2), sizeof h2);
  auto made = mask::SharedStateMasks::instance().find(shared_key);
  if (!made) {
    made = walk_continued(state, next_rule);
    mask::SharedStateMasks::instance().insert(std::move(shared_key), made);
  }
  std::lock_guard lock(continued_mutex_);
  return *continued_.emplace(key, std::move(made)).first->second;
}

// The walk of the sorted vocabulary from `state` of R, and past a completion of R that the
// next byte forces, from N's start: one table walk of each token's bytes, resuming from the
// common prefix with the token before it.
std::shared_ptr<const StateMask> TokenMaskCache::Impl::walk_continued(uint32_t state, uint32_t next_rule) const {
  const auto t0 = std::chrono::steady_clock::now();
  const GrammarAutomaton& g = *grammar_;
  const Vocabulary& vocab = *vocabulary_;
  const uint32_t rule = g.rule_of(state);
  ClassTables in_rule(g, rule, byte_classes(rule));
  ClassTables in_next(g, next_rule, byte_classes(next_rule));
  const uint32_t next_start = g.rule_start(next_rule);
  const auto sorted = vocab.sorted_text_tokens();
  const auto common = vocab.sorted_common_prefix();
  const size_t max_depth = vocab.max_token_bytes() + 2;
  // Per depth of the token being read: the entry (state | final bit) reached, whether it is
  // in N, and the completions of R so far (boundaries[d] - boundaries[d - 1] = 1: R can
  // complete after d bytes; none once in N).
  std::vector<uint32_t> entries(max_depth), boundaries(max_depth, 0);
  std::vector<uint8_t> crossed(max_depth, 0);
  entries[0] = state;
  std::vector<uint32_t> accepted(vocab.bitmask_words(), 0);
  size_t n_accepted = 0;
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
  size_t depth = 0;  // how far the previous token was read (entries[0..depth] hold)

  // A token failing after `failed_at` bytes: uncertain at each completion of R before it
  // whose next byte can follow R.
  auto classify_failed = [&](int32_t id, std::string_view bytes, size_t failed_at) {
    bool any = false;
    if (boundaries[failed_at] == 0) return false;
    for (size_t j = 1; j <= failed_at; ++j) {
      if (boundaries[j] == boundaries[j - 1] || !g.can_follow(rule, static_cast<uint8_t>(bytes[j]))) continue;
      uncertain.emplace_back(id, static_cast<uint32_t>(j));
      any = true;
    }
    return any;
  };

  size_t dead = 0;  // a failed prefix plus one (0: none), whose tokens all fail alike
  bool dead_uncertain = false;
  for (size_t i = 0; i < sorted.size(); ++i) {
    const int32_t id = sorted[i];
    const std::string_view bytes = vocab.sorted_bytes(i);
    if (dead != 0 && common[i] >= dead) {
      if (!dead_uncertain) {
        i = vocab.sorted_prefix_end(i, dead) - 1;
        continue;
      }
      classify_failed(id, bytes, dead - 1);
      continue;
    }
    dead = 0;
    size_t d = std::min<size_t>(depth, common[i]);
    size_t end = std::string_view::npos;  // set when a call's walk read the rest
    while (d < bytes.size()) {
      const uint32_t at = entries[d] & ~ClassTables::kFinalBit;
      ClassTables& tables = crossed[d] ? in_next : in_rule;
      uint32_t entry = tables.row(at)[tables.class_of(static_cast<uint8_t>(bytes[d]))];
      bool cross = false;
      if (entry == ClassTables::kNone && !crossed[d] && (entries[d] & ClassTables::kFinalBit)) {
        // R must complete here to read the byte: on from N's start.
        entry = in_next.row(next_start)[in_next.class_of(static_cast<uint8_t>(bytes[d]))];
        cross = true;
      }
      if (entry >= ClassTables::kCall) {
        // Within R, a call (an escape) is read by walk_with_calls, which fills the
        // boundaries of R it passes; within N, or none: the token stops here.
        if (entry == ClassTables::kCall && !crossed[d] && !cross) end = walk_with_calls(g, at, bytes, d, boundaries.data());
        break;
      }
      entries[d + 1] = entry;
      crossed[d + 1] = crossed[d] || cross;
      boundaries[d + 1] = boundaries[d] + (!crossed[d + 1] && (entry & ClassTables::kFinalBit) ? 1u : 0u);
      ++d;
    }
    depth = d;
    if (end == std::string_view::npos) end = d;
    if (end == bytes.size()) {
      set_bit(accepted, static_cast<size_t>(id));
      ++n_accepted;
    } else {
      dead = end + 1;
      dead_uncertain = classify_failed(id, bytes, end);
    }
  }
  auto out = std::make_shared<StateMask>();
  const size_t uncertain_ids = mask::group_by_suffix(vocab, uncertain, *out);
  out->uncertain_tokens = out->suffix_token_ids.size();
  out->accepted = TokenSet::from_bits(std::move(accepted), n_accepted, vocab.size());
  out->rejected = sorted.size() - n_accepted - uncertain_ids;
  out->compute_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace lockstep
