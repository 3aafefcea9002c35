// automata/mask/automaton_walk.cpp — the table walk of the vocabulary from a state of an
// automaton-only rule, by first-byte segments shared between states and grammars.
#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "automata/call_walk.h"
#include "automata/mask/impl.h"
#include "automata/mask/shared_caches.h"
#include "automata/token_bitmask.h"
#include "grammar/hash.h"

namespace lockstep {

using mask::ByteClasses;
using mask::PartialMask;
using mask::Segment;
using mask::SharedSegments;
using mask::SharedStateMasks;

// The walk of the sorted vocabulary from a state of an automaton-only rule (no rule
// edges anywhere in it): a plain DFA walk with a dense 256-entry table per visited state.
std::shared_ptr<const StateMask> TokenMaskCache::Impl::walk_automaton(uint32_t state, PartialMask& out,
                                                                std::string& parts_key) const {
  const CompiledGrammar& g = *grammar_;
  const Vocabulary& vocab = *vocabulary_;
  const uint32_t rule = g.rule_of(state);
  const uint32_t base = g.rule_start(rule);
  constexpr uint32_t kNone = UINT32_MAX;
  // Dense tables over the rule's byte classes, built on first visit: entry = target |
  // kFinalBit when the target is final, kNone without a transition. Classes keep a state's
  // table a few dozen entries (a JSON string automaton tells apart ~30 kinds of bytes), so
  // the tables of a whole walk stay in cache. Rows are cut from chunks that never move, so
  // each depth of the walk holds its state's row.
  // kCall: a byte a callee may read (an escaped surrogate pair's rule): the token's rest is
  // read by walk_with_calls.
  constexpr uint32_t kFinalBit = 0x80000000u, kCall = kNone - 1;
  const ByteClasses& classes = byte_classes(rule);
  const uint32_t n_classes = classes.count;
  std::vector<const uint32_t*> table_of(g.rule_end(rule) - base, nullptr);
  constexpr size_t kChunk = 16384;  // entries; >= 256, so a row always fits in a fresh chunk
  std::vector<std::unique_ptr<uint32_t[]>> chunks;
  size_t chunk_used = kChunk;
  auto build_table = [&](uint32_t q) -> const uint32_t* {
    if (chunk_used + n_classes > kChunk) {
      chunks.push_back(std::make_unique_for_overwrite<uint32_t[]>(kChunk));
      chunk_used = 0;
    }
    uint32_t* row = chunks.back().get() + chunk_used;
    chunk_used += n_classes;
    std::fill_n(row, n_classes, kNone);
    for (const auto& e : g.byte_edges(q)) {
      const uint32_t entry = e.target | (g.is_final(e.target) ? kFinalBit : 0u);
      for (unsigned c = classes.of[e.lo]; c <= classes.of[e.hi]; ++c) row[c] = entry;
    }
    for (const auto& e : g.rule_edges(q)) {
      const auto& first = g.rule_first(e.rule);
      for (unsigned b = 0; b < 256; ++b) {
        if ((first[b >> 6] >> (b & 63)) & 1) row[classes.of[b]] = kCall;
      }
    }
    return table_of[q - base] = row;
  };
  auto table = [&](uint32_t q) -> const uint32_t* {
    const uint32_t* t = table_of[q - base];
    return t ? t : build_table(q);
  };
  const size_t max_depth = vocab.max_token_bytes() + 1;
  std::vector<uint32_t> states(max_depth + 1), boundaries(max_depth + 1, 0);
  const auto sorted = vocab.sorted_text_tokens();
  const auto common = vocab.sorted_common_prefix();
  struct {
    std::vector<int32_t> accepted;
    std::vector<int32_t> others;  // the segment's tokens not accepted
    std::vector<std::pair<int32_t, uint32_t>> uncertain;
  } seg;  // the segment being walked
  auto classify_failed = [&](int32_t id, std::string_view bytes, size_t failed_at) {
    bool any = false;
    if (boundaries[failed_at] == 0) return false;
    for (size_t j = 1; j <= failed_at; ++j) {
      if (boundaries[j] == boundaries[j - 1] || !g.can_follow(rule, static_cast<uint8_t>(bytes[j]))) continue;
      seg.uncertain.emplace_back(id, static_cast<uint32_t>(j));
      any = true;
    }
    return any;
  };
  // The walk of sorted tokens [lo, hi), which share their first byte, into `seg`.
  auto walk_segment = [&](size_t lo, size_t hi) {
    size_t depth = 0, dead = 0;
    bool dead_uncertain = false;
    for (size_t i = lo; i < hi; ++i) {
      const int32_t id = sorted[i];
      const std::string_view bytes = vocab.sorted_bytes(i);
      if (dead != 0 && common[i] >= dead) {
        if (!dead_uncertain) {
          const size_t end = vocab.sorted_prefix_end(i, dead);
          seg.others.insert(seg.others.end(), sorted.begin() + static_cast<ptrdiff_t>(i),
                            sorted.begin() + static_cast<ptrdiff_t>(end));
          i = end - 1;
        } else {
          seg.others.push_back(id);
          classify_failed(id, bytes, dead - 1);
        }
        continue;
      }
      dead = 0;
      depth = std::min<size_t>(depth, i == lo ? 0 : common[i]);
      size_t end = std::string_view::npos;  // after a call: how far the token was read (states[] stop at depth)
      while (depth < bytes.size()) {
        const uint32_t* t = table_of[states[depth] - base];
        if (!t) [[unlikely]] t = build_table(states[depth]);
        const uint32_t entry = t[classes.of[static_cast<uint8_t>(bytes[depth])]];
        if (entry >= kCall) [[unlikely]] {
          if (entry == kCall) end = walk_with_calls(g, states[depth], bytes, depth, boundaries.data());
          break;
        }
        states[depth + 1] = entry & ~kFinalBit;
        boundaries[depth + 1] = boundaries[depth] + (entry >> 31);
        ++depth;
      }
      if (end == std::string_view::npos) end = depth;
      if (end == bytes.size()) {
        seg.accepted.push_back(id);
      } else {
        seg.others.push_back(id);
        dead = end + 1;
        dead_uncertain = classify_failed(id, bytes, end);
      }
    }
  };
  struct Part {
    size_t lo, hi;
    std::shared_ptr<const Segment> segment;
  };
  std::vector<Part> parts;
  std::vector<std::pair<uint32_t, std::shared_ptr<SharedSegments::Row>>> rows;  // by successor
  size_t complement_tokens = 0;
  states[0] = state;
  const uint32_t* first = table(state);
  for (size_t lo = 0; lo < sorted.size();) {
    const std::string_view bytes = vocab.sorted_bytes(lo);
    const size_t hi = bytes.empty() ? lo + 1 : vocab.sorted_prefix_end(lo, 1);
    const uint32_t e1 = bytes.empty() ? kNone : first[classes.of[static_cast<uint8_t>(bytes[0])]];
    const uint32_t s1 = e1 == kNone ? kNone : e1 & ~kFinalBit;
    if (s1 == kNone) {  // every token of the segment fails at its first byte: rejected
      lo = hi;
      continue;
    }
    const uint8_t b = static_cast<uint8_t>(bytes[0]);
    const uint64_t key = static_cast<uint64_t>(s1) << 8 | b;
    // The shared row of s1's signature (or none: no signature), once per successor.
    SharedSegments::Row* row = nullptr;
    {
      auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.first == s1; });
      if (it == rows.end()) {
        const std::string& sig = signature(s1);
        rows.emplace_back(s1, sig.empty() ? nullptr : SharedSegments::instance().row(sig));
        it = rows.end() - 1;
      }
      row = it->second.get();
    }
    std::shared_ptr<const Segment> hit;
    if (row) {
      hit = SharedSegments::instance().get(*row, b);
    } else {
      std::lock_guard lock(segments_mutex_);
      if (auto it = segments_.find(key); it != segments_.end()) hit = it->second;
    }
    if (!hit) {
      seg.accepted.clear();
      seg.others.clear();
      seg.uncertain.clear();
      walk_segment(lo, hi);
      auto made = std::make_shared<Segment>();
      if (seg.accepted.size() * 2 > hi - lo) {  // mostly accepted: keep the others
        made->complement = true;
        made->ids = seg.others;
      } else {
        made->ids = seg.accepted;
      }
      made->uncertain = seg.uncertain;
      Digest128 d;
      d.mix(made->complement);
      for (const int32_t id : made->ids) d.mix(static_cast<uint32_t>(id));
      d.mix(UINT64_MAX);
      for (const auto& [id, offset] : made->uncertain) d.mix(static_cast<uint64_t>(id) << 32 | offset);
      made->digest = d.value();
      std::shared_ptr<const Segment> stored = std::move(made);
      const size_t size = stored->ids.size() + 2 * stored->uncertain.size() + 1;
      if (row) {
        SharedSegments::instance().put(*row, b, stored, size);
      } else {
        std::lock_guard lock(segments_mutex_);
        if (segment_entries_ + size > kMaxSegmentEntries) {
          segments_.clear();
          segment_entries_ = 0;
        }
        segments_.emplace(key, stored);
        segment_entries_ += size;
      }
      hit = std::move(stored);
    }
    out.uncertain.insert(out.uncertain.end(), hit->uncertain.begin(), hit->uncertain.end());
    if (hit->complement) complement_tokens += hi - lo;
    parts.push_back({lo, hi, std::move(hit)});
    lo = hi;
  }
  // The mask is a function of the parts alone: states whose segments are equal share it
  // even when their automata differ beyond what any token reads (the body of a string
  // whose excluded keys no token spells is the plain string body).
  {
    Digest128 d;
    for (const Part& p : parts) {
      d.mix(p.lo << 32 | p.hi);
      d.mix(p.segment->digest.first);
      d.mix(p.segment->digest.second);
    }
    parts_key.assign(1, 'P');
    d.append_to(parts_key);
    const uint64_t id = vocab.id();
    parts_key.append(reinterpret_cast<const char*>(&id), sizeof id);
    if (auto hit = SharedStateMasks::instance().find(parts_key)) return hit;
  }
  // Mostly accepted (a string body): start from every text token and take out the
  // segments that are not, then the exceptions; else set the accepted ones.
  out.accepted.assign(vocab.bitmask_words(), 0);
  auto set = [&](int32_t id) { set_bit(out.accepted, static_cast<size_t>(id)); };
  if (complement_tokens * 2 > sorted.size()) {
    std::vector<uint32_t> bits = all_text_bits();
    auto clear = [&](int32_t id) { clear_bit(bits, static_cast<size_t>(id)); };
    size_t covered = 0;  // sorted tokens [0, covered) handled
    for (const Part& p : parts) {
      for (size_t i = covered; i < p.lo; ++i) clear(sorted[i]);  // segments failing at byte 0
      covered = p.hi;
      if (p.segment->complement) {
        for (const int32_t id : p.segment->ids) clear(id);
      } else {
        for (size_t i = p.lo; i < p.hi; ++i) clear(sorted[i]);
        for (const int32_t id : p.segment->ids) set_bit(bits, static_cast<size_t>(id));
      }
    }
    for (size_t i = covered; i < sorted.size(); ++i) clear(sorted[i]);
    for (size_t w = 0; w < bits.size(); ++w) out.accepted[w] |= bits[w];
  } else {
    for (const Part& p : parts) {
      if (!p.segment->complement) {
        for (const int32_t id : p.segment->ids) set(id);
        continue;
      }
      // The segment's tokens are its own (first bytes differ): set them all, clear the others.
      for (size_t i = p.lo; i < p.hi; ++i) set(sorted[i]);
      for (const int32_t id : p.segment->ids) clear_bit(out.accepted, static_cast<size_t>(id));
    }
  }
  return nullptr;
}

}  // namespace lockstep
