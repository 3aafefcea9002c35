// automata/mask/automaton_walk.cpp — the table walk of the vocabulary from a state of an
// automaton-only rule, by first-byte segments shared between states and grammars.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "automata/call_walk.h"
#include "automata/mask/byte_classes.h"
#include "automata/mask/impl.h"
#include "automata/mask/shared_caches.h"
#include "automata/token_bitmask.h"
#include "grammar/hash.h"

namespace lockstep {

using mask::ClassTables;
using mask::PartialMask;
using mask::Segment;
using mask::SharedSegments;
using mask::SharedStateMasks;

namespace {

// The walk of the sorted vocabulary from a state of an automaton-only rule (no rule edges
// anywhere in it, or only calls walk_with_calls reads): a plain DFA walk with a dense table
// per visited state (ClassTables). The vocabulary is walked by first-byte segments — the
// sorted tokens [lo, hi) that start with byte b — each a function of the state s1 that b
// leads to (see Segment), found in a segment cache or walked once and stored. The mask is
// then assembled from the segments (the parts).
class AutomatonWalk {
 public:
  AutomatonWalk(const TokenMaskCache::Impl& cache, uint32_t state)
      : cache_(cache),
        g_(*cache.grammar_),
        vocab_(*cache.vocabulary_),
        state_(state),
        rule_(g_.rule_of(state)),
        tables_(g_, rule_, cache.byte_classes(rule_)),
        sorted_(vocab_.sorted_text_tokens()),
        common_(vocab_.sorted_common_prefix()),
        states_(vocab_.max_token_bytes() + 2),
        boundaries_(vocab_.max_token_bytes() + 2, 0) {}

  // Step 1: every first-byte segment of the vocabulary, in sorted order, found in a cache
  // or walked (and stored); their uncertain tokens are appended to `uncertain`.
  void collect_parts(std::vector<std::pair<int32_t, uint32_t>>& uncertain) {
    states_[0] = state_;
    const uint32_t* first = tables_.row(state_);
    for (size_t lo = 0; lo < sorted_.size();) {
      const std::string_view bytes = vocab_.sorted_bytes(lo);
      const size_t hi = bytes.empty() ? lo + 1 : vocab_.sorted_prefix_end(lo, 1);
      const uint32_t e1 = bytes.empty() ? ClassTables::kNone : first[tables_.class_of(static_cast<uint8_t>(bytes[0]))];
      const uint32_t s1 = e1 == ClassTables::kNone ? ClassTables::kNone : e1 & ~ClassTables::kFinalBit;
      if (s1 == ClassTables::kNone) {  // every token of the segment fails at its first byte: rejected
        lo = hi;
        continue;
      }
      const uint8_t b = static_cast<uint8_t>(bytes[0]);
      const uint64_t key = static_cast<uint64_t>(s1) << 8 | b;
      SharedSegments::Row* row = shared_row(s1);
      std::shared_ptr<const Segment> hit = find_segment(row, key, b);
      if (!hit) {
        walk_segment(lo, hi);
        hit = make_segment(hi - lo);
        store_segment(row, key, b, hit);
      }
      uncertain.insert(uncertain.end(), hit->uncertain.begin(), hit->uncertain.end());
      if (hit->complement) complement_tokens_ += hi - lo;
      parts_.push_back({lo, hi, std::move(hit)});
      lo = hi;
    }
  }

  // Step 2: the key of the parts (into `parts_key`), and the mask stored under it, if any.
  // The mask is a function of the parts alone: states whose segments are equal share it
  // even when their automata differ beyond what any token reads (the body of a string
  // whose excluded keys no token spells is the plain string body).
  std::shared_ptr<const StateMask> find_by_parts(std::string& parts_key) const {
    Digest128 d;
    for (const Part& p : parts_) {
      d.mix(p.lo << 32 | p.hi);
      d.mix(p.segment->digest.first);
      d.mix(p.segment->digest.second);
    }
    parts_key.assign(1, 'P');
    d.append_to(parts_key);
    const uint64_t id = vocab_.id();
    parts_key.append(reinterpret_cast<const char*>(&id), sizeof id);
    return SharedStateMasks::instance().find(parts_key);
  }

  // Step 3: the accepted tokens' bitmask, from the parts. Mostly accepted (a string body):
  // start from every text token and take out the segments that are not, then the
  // exceptions; else set the accepted ones.
  void assemble_accepted(std::vector<uint32_t>& accepted) const {
    accepted.assign(vocab_.bitmask_words(), 0);
    if (complement_tokens_ * 2 > sorted_.size()) {
      accepted_from_text(accepted);
    } else {
      accepted_from_segments(accepted);
    }
  }

 private:
  struct Part {
    size_t lo, hi;  // the segment's sorted tokens
    std::shared_ptr<const Segment> segment;
  };

  // The shared row of s1's signature (or none: no signature), looked up once per successor.
  SharedSegments::Row* shared_row(uint32_t s1) {
    auto it = std::find_if(rows_.begin(), rows_.end(), [&](const auto& r) { return r.first == s1; });
    if (it == rows_.end()) {
      const std::string& sig = cache_.signature(s1);
      rows_.emplace_back(s1, sig.empty() ? nullptr : SharedSegments::instance().row(sig));
      it = rows_.end() - 1;
    }
    return it->second.get();
  }

  // The segment of (s1, b) walked before: in the shared row, or (no signature) in this
  // cache's own segments under `key`.
  std::shared_ptr<const Segment> find_segment(SharedSegments::Row* row, uint64_t key, uint8_t b) const {
    if (row) return SharedSegments::instance().get(*row, b);
    std::lock_guard lock(cache_.segments_mutex_);
    if (auto it = cache_.segments_.find(key); it != cache_.segments_.end()) return it->second;
    return nullptr;
  }

  // The walk of sorted tokens [lo, hi), which share their first byte, into seg_.
  void walk_segment(size_t lo, size_t hi) {
    seg_.accepted.clear();
    seg_.others.clear();
    seg_.uncertain.clear();
    uint32_t* const states = states_.data();
    uint32_t* const boundaries = boundaries_.data();
    size_t depth = 0, dead = 0;
    bool dead_uncertain = false;
    for (size_t i = lo; i < hi; ++i) {
      const int32_t id = sorted_[i];
      const std::string_view bytes = vocab_.sorted_bytes(i);
      if (dead != 0 && common_[i] >= dead) {
        if (!dead_uncertain) {
          const size_t end = vocab_.sorted_prefix_end(i, dead);
          seg_.others.insert(seg_.others.end(), sorted_.begin() + static_cast<ptrdiff_t>(i),
                             sorted_.begin() + static_cast<ptrdiff_t>(end));
          i = end - 1;
        } else {
          seg_.others.push_back(id);
          classify_failed(id, bytes, dead - 1);
        }
        continue;
      }
      dead = 0;
      depth = std::min<size_t>(depth, i == lo ? 0 : common_[i]);
      size_t end = std::string_view::npos;  // after a call: how far the token was read (states[] stop at depth)
      while (depth < bytes.size()) {
        const uint32_t entry = tables_.row(states[depth])[tables_.class_of(static_cast<uint8_t>(bytes[depth]))];
        if (entry >= ClassTables::kCall) [[unlikely]] {
          if (entry == ClassTables::kCall) end = walk_with_calls(g_, states[depth], bytes, depth, boundaries);
          break;
        }
        states[depth + 1] = entry & ~ClassTables::kFinalBit;
        boundaries[depth + 1] = boundaries[depth] + (entry >> 31);
        ++depth;
      }
      if (end == std::string_view::npos) end = depth;
      if (end == bytes.size()) {
        seg_.accepted.push_back(id);
      } else {
        seg_.others.push_back(id);
        dead = end + 1;
        dead_uncertain = classify_failed(id, bytes, end);
      }
    }
  }

  // A token that fails after `failed_at` bytes is uncertain through every earlier depth at
  // which the rule can complete and whose next byte can follow the rule.
  bool classify_failed(int32_t id, std::string_view bytes, size_t failed_at) {
    bool any = false;
    if (boundaries_[failed_at] == 0) return false;
    for (size_t j = 1; j <= failed_at; ++j) {
      if (boundaries_[j] == boundaries_[j - 1] || !g_.can_follow(rule_, static_cast<uint8_t>(bytes[j]))) continue;
      seg_.uncertain.emplace_back(id, static_cast<uint32_t>(j));
      any = true;
    }
    return any;
  }

  // The segment just walked (seg_, `tokens` tokens), in its smaller form, with its digest.
  std::shared_ptr<const Segment> make_segment(size_t tokens) const {
    auto made = std::make_shared<Segment>();
    if (seg_.accepted.size() * 2 > tokens) {  // mostly accepted: keep the others
      made->complement = true;
      made->ids = seg_.others;
    } else {
      made->ids = seg_.accepted;
    }
    made->uncertain = seg_.uncertain;
    Digest128 d;
    d.mix(made->complement);
    for (const int32_t id : made->ids) d.mix(static_cast<uint32_t>(id));
    d.mix(UINT64_MAX);
    for (const auto& [id, offset] : made->uncertain) d.mix(static_cast<uint64_t>(id) << 32 | offset);
    made->digest = d.value();
    return made;
  }

  // Stores a walked segment where find_segment() looks: the shared row, or this cache's own
  // segments (bounded: past kMaxSegmentEntries entries they start over).
  void store_segment(SharedSegments::Row* row, uint64_t key, uint8_t b,
                     const std::shared_ptr<const Segment>& segment) const {
    const size_t size = segment->ids.size() + 2 * segment->uncertain.size() + 1;
    if (row) {
      SharedSegments::instance().put(*row, b, segment, size);
      return;
    }
    std::lock_guard lock(cache_.segments_mutex_);
    if (cache_.segment_entries_ + size > TokenMaskCache::Impl::kMaxSegmentEntries) {
      cache_.segments_.clear();
      cache_.segment_entries_ = 0;
    }
    cache_.segments_.emplace(key, segment);
    cache_.segment_entries_ += size;
  }

  // Mostly accepted: every text token, less the segments failing at their first byte, the
  // rejected tokens of the other segments and the exceptions of complement segments.
  void accepted_from_text(std::vector<uint32_t>& accepted) const {
    std::vector<uint32_t> bits = cache_.all_text_bits();
    auto clear = [&](int32_t id) { clear_bit(bits, static_cast<size_t>(id)); };
    size_t covered = 0;  // sorted tokens [0, covered) handled
    for (const Part& p : parts_) {
      for (size_t i = covered; i < p.lo; ++i) clear(sorted_[i]);  // segments failing at byte 0
      covered = p.hi;
      if (p.segment->complement) {
        for (const int32_t id : p.segment->ids) clear(id);
      } else {
        for (size_t i = p.lo; i < p.hi; ++i) clear(sorted_[i]);
        for (const int32_t id : p.segment->ids) set_bit(bits, static_cast<size_t>(id));
      }
    }
    for (size_t i = covered; i < sorted_.size(); ++i) clear(sorted_[i]);
    for (size_t w = 0; w < bits.size(); ++w) accepted[w] |= bits[w];
  }

  // Mostly rejected: the accepted tokens of each segment.
  void accepted_from_segments(std::vector<uint32_t>& accepted) const {
    auto set = [&](int32_t id) { set_bit(accepted, static_cast<size_t>(id)); };
    for (const Part& p : parts_) {
      if (!p.segment->complement) {
        for (const int32_t id : p.segment->ids) set(id);
        continue;
      }
      // The segment's tokens are its own (first bytes differ): set them all, clear the others.
      for (size_t i = p.lo; i < p.hi; ++i) set(sorted_[i]);
      for (const int32_t id : p.segment->ids) clear_bit(accepted, static_cast<size_t>(id));
    }
  }

  const TokenMaskCache::Impl& cache_;
  const GrammarAutomaton& g_;
  const Vocabulary& vocab_;
  const uint32_t state_, rule_;
  ClassTables tables_;
  const std::span<const int32_t> sorted_;
  const std::span<const uint32_t> common_;
  // Per depth of the token being walked: its state, and the completions of the rule so far.
  std::vector<uint32_t> states_, boundaries_;
  struct {
    std::vector<int32_t> accepted;
    std::vector<int32_t> others;  // the segment's tokens not accepted
    std::vector<std::pair<int32_t, uint32_t>> uncertain;
  } seg_;  // the segment being walked
  std::vector<Part> parts_;
  std::vector<std::pair<uint32_t, std::shared_ptr<SharedSegments::Row>>> rows_;  // by successor
  size_t complement_tokens_ = 0;  // tokens of the segments stored as complements
};

}  // namespace

std::shared_ptr<const StateMask> TokenMaskCache::Impl::walk_automaton(uint32_t state, PartialMask& out,
                                                                      std::string& parts_key) const {
  AutomatonWalk walk(*this, state);
  walk.collect_parts(out.uncertain);
  if (auto hit = walk.find_by_parts(parts_key)) return hit;  // `out` is not filled
  walk.assemble_accepted(out.accepted);
  return nullptr;
}

}  // namespace lockstep
