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
        rest_kinds_(vocab_.sorted_rest_kinds()),
        states_(vocab_.max_token_bytes() + 2),
        boundaries_(vocab_.max_token_bytes() + 2, 0),
        longs_(mask::long_tokens(vocab_, mask::kShortTokenBytes)),
        mids_(mask::long_tokens(vocab_, mask::kMidTokenBytes)) {}

  // Step 1: every first-byte segment of the vocabulary, in sorted order, found in a cache
  // or walked (and stored); their uncertain tokens are appended to `uncertain`.
  //
  // A segment is looked up by the cut signature of its successor s1 (short_signature()).
  // When the cut left nothing out, that key stands for the whole segment. Otherwise it
  // keys the segment's short tokens (at most kShortTokenBytes bytes), which read nothing
  // past the cut, so states whose automata agree that far share them (the positions of a
  // length-bounded string far from its end): a hit leaves only the long tokens to walk. On a
  // miss the whole segment is looked up by the full signature. A wide segment is then looked
  // up by the signature cut at kMidTokenBytes, which keys its tokens of at most that many
  // bytes: positions of a counted repeat closer than kShortTokenBytes to its bound (each
  // position of `[A-Za-z0-9_]{0,15}`) read alike that far, and a hit leaves ~12% of the
  // segment's tokens to walk. Else the segment is walked and stored under every key, each
  // cut's short tokens under that cut's signature.
  void collect_parts(std::vector<std::pair<int32_t, uint32_t>>& uncertain) {
    states_[0] = state_;
    const uint32_t* first = tables_.row(state_);
    // The segments by first byte, from the vocabulary's tables (a few hundred entries):
    // a segment whose first byte fails is passed over without reading its tokens.
    for (unsigned b = 0; b < 256; ++b) {
      const size_t lo = vocab_.sorted_first_byte_begin(b), hi = vocab_.sorted_first_byte_begin(b + 1);
      if (lo == hi) continue;
      const uint32_t e1 = first[tables_.class_of(static_cast<uint8_t>(b))];
      // Every token of the segment fails at its first byte: rejected.
      if (e1 == ClassTables::kNone) continue;
      const uint32_t s1 = e1 & ~ClassTables::kFinalBit;
      const size_t next_long = longs_.first_byte_begin[b], end_long = longs_.first_byte_begin[b + 1];
      Part part{lo, hi, 0, 0, nullptr, nullptr, nullptr};
      const size_t n_long = end_long - next_long;
      const uint64_t key = static_cast<uint64_t>(s1) << 8 | b;
      const uint64_t cut_key = key | uint64_t{1} << 62;
      const RowRef cut = shared_row(s1, kShort);
      const bool wide = hi - lo >= kWideSegment;
      if (cut.whole || (cut.row && n_long == 0)) {  // the cut signature keys the whole segment
        part.segment = find_segment(cut.row, cut_key, b);
        if (!part.segment && !cut.whole && wide) part.segment = find_bounded(s1, b, cut.row, cut_key);
        if (!part.segment) {
          part.segment = make_segment(seg_, walk_whole(lo, hi, e1));
          store_segment(cut.row, cut_key, b, part.segment);
          // A wide segment, mostly accepted, from a loop (a string body): its short tokens
          // also under the depth-bounded signature, where states that read alike within
          // that depth look (every bounded string's positions far from its bound).
          if (cut.whole && wide && part.segment->complement && is_loop(s1)) {
            if (SharedSegments::Row* bounded = shared_row(s1, kBounded).row) {
              store_segment(bounded, cut_key, b, n_long == 0 ? part.segment : short_of_whole(longs_, hi - lo - n_long));
              Successor& at = successor(s1);
              if (!at.registered) {
                const auto& set = cache_.short_shapes(s1);
                SharedSegments::instance().add_loop(set.hash, set.shapes);
                at.registered = true;
              }
            }
          }
        }
      } else {
        if (cut.row) {
          auto short_part = find_segment(cut.row, cut_key, b);
          if (!short_part && wide) short_part = find_bounded(s1, b, cut.row, cut_key);
          if (short_part) {
            // The long tokens are few (~1% of Llama 3's): walked, not looked up (a full
            // signature would cost more than their walk).
            part.long_lo = next_long;
            part.long_hi = end_long;
            part.tail_of = &longs_;
            part.segment = std::move(short_part);
            part.tail = make_segment(seg_, walk_long(part));
          }
        }
        if (!part.segment) {
          SharedSegments::Row* full = shared_row(s1, kFull).row;
          part.segment = find_segment(full, key, b);
          SharedSegments::Row* mid = !part.segment && wide ? shared_row(s1, kMid).row : nullptr;
          const uint64_t mid_key = key | uint64_t{1} << 61;
          const size_t mid_lo = mids_.first_byte_begin[b], mid_hi = mids_.first_byte_begin[b + 1];
          if (mid) {
            if (auto short_part = find_segment(mid, mid_key, b)) {
              part.long_lo = mid_lo;
              part.long_hi = mid_hi;
              part.tail_of = &mids_;
              part.segment = std::move(short_part);
              part.tail = make_segment(seg_, walk_long(part));
              ++cache_.mid_segments_;
            }
          }
          if (!part.segment) {
            part.segment = make_segment(seg_, walk_whole(lo, hi, e1));
            store_segment(full, key, b, part.segment);
            if (cut.row) store_segment(cut.row, cut_key, b, short_of_whole(longs_, hi - lo - n_long));
            // Only a mostly accepted segment: where most tokens fail within a few bytes
            // (whitespace before a constant), the whole walk skips their runs by prefix, and
            // a hit's walk of the longer tokens one by one would cost more.
            if (mid && part.segment->complement) {
              store_segment(mid, mid_key, b, short_of_whole(mids_, hi - lo - (mid_hi - mid_lo)));
            }
          }
        }
      }
      for (const Segment* seg : {part.segment.get(), part.tail.get()}) {
        if (!seg) continue;
        uncertain.insert(uncertain.end(), seg->uncertain.begin(), seg->uncertain.end());
      }
      if (part.segment->complement) complement_tokens_ += hi - lo - (part.long_hi - part.long_lo);
      if (part.tail && part.tail->complement) complement_tokens_ += part.long_hi - part.long_lo;
      parts_.push_back(std::move(part));
    }
  }

  size_t run_tokens() const { return run_tokens_; }

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
      if (p.tail) {
        d.mix(p.tail_of == &mids_ ? 0x3D : 0x10);  // which cut split the part
        d.mix(p.tail->digest.first);
        d.mix(p.tail->digest.second);
      }
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
  // A segment as walked: its tokens by outcome.
  struct SegmentLists {
    std::vector<int32_t> accepted;
    std::vector<int32_t> others;  // the segment's tokens not accepted
    std::vector<std::pair<int32_t, uint32_t>> uncertain;
  };

  // Segments of at least this many tokens (a few dozen first bytes, 85 % of Llama 3's tokens)
  // are shared between a loop and the bounded positions that read like it; the smaller ones
  // cost less to walk than the depth-bounded signature that would find them.
  static constexpr size_t kWideSegment = 512;

  // Signatures that key segments: the full one (whole segments), the cut one (whole
  // segments when it cut nothing, else their short tokens), the one cut at kMidTokenBytes
  // (the tokens of at most that many bytes of wide segments), the depth-bounded one (the
  // short tokens of a loop's wide segments, found by the chains that read like it).
  enum Kind : uint8_t { kFull, kShort, kMid, kBounded };
  // The tokens of a part a segment holds, when its long tokens were walked apart.
  enum Subset : uint8_t { kShortTokens, kLongTokens };

  struct Part {
    size_t lo, hi;              // the segment's sorted tokens
    size_t long_lo, long_hi;    // with a tail: its long tokens, tail_of->positions[long_lo, long_hi)
    std::shared_ptr<const Segment> segment;  // all the tokens, or with a tail the short ones
    std::shared_ptr<const Segment> tail;     // the long tokens, when walked apart
    const mask::LongTokens* tail_of;         // with a tail: the tokens past which cut (longs_ or mids_)
  };

  // The shared row of s1's signature of `kind` (or none: no signature), looked up once per
  // successor; `whole` when the cut signature cut nothing (it names s1's whole automaton).
  struct RowRef {
    SharedSegments::Row* row;
    bool whole;
  };
  RowRef shared_row(uint32_t s1, Kind kind) {
    auto& rows = rows_[kind];
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.s1 == s1; });
    if (it == rows.end()) {
      const std::string& sig = kind == kShort     ? cache_.short_signature(s1, mask::kShortTokenBytes)
                               : kind == kMid     ? cache_.short_signature(s1, mask::kMidTokenBytes)
                               : kind == kBounded ? cache_.bounded_signature(s1)
                                                  : cache_.signature(s1);
      std::shared_ptr<SharedSegments::Row> row;
      if (!sig.empty()) row = SharedSegments::instance().row(sig);
      rows.push_back({s1, std::move(row), kind == kShort && !sig.empty() && sig[0] == 'C'});
      it = rows.end() - 1;
    }
    return {it->row.get(), it->whole};
  }

  // What a walk asks of a successor about the depth-bounded signature, found once per walk:
  // whether its automaton is a loop (TokenMaskCache::Impl::is_loop), and whether its local
  // shapes are a stored loop's (-1: not asked yet).
  struct Successor {
    uint32_t s1;
    int8_t loop = -1;
    int8_t loop_shaped = -1;
    bool registered = false;  // its shapes added to SharedSegments' loops
  };
  Successor& successor(uint32_t s1) {
    auto it = std::find_if(successors_.begin(), successors_.end(), [&](const Successor& x) { return x.s1 == s1; });
    if (it == successors_.end()) it = successors_.insert(successors_.end(), Successor{s1});
    return *it;
  }
  bool is_loop(uint32_t s1) {
    Successor& at = successor(s1);
    if (at.loop < 0) at.loop = cache_.is_loop(s1);
    return at.loop;
  }

  // The short tokens' segment of byte b stored under s1's depth-bounded signature (by a wide
  // segment of a loop whose cut signature cut nothing), copied into s1's cut row; or none.
  // Looked up only where the cut row missed and s1's own local shape and the set of those it
  // reaches within the cut are a stored loop's, so the signature is computed only then.
  std::shared_ptr<const Segment> find_bounded(uint32_t s1, uint8_t b, SharedSegments::Row* cut_row, uint64_t cut_key) {
    SharedSegments& shared = SharedSegments::instance();
    Successor& at = successor(s1);
    if (at.loop_shaped < 0) {
      at.loop_shaped = shared.has_loop_shape(cache_.local_shape_of(s1)) && shared.has_loop(cache_.short_shapes(s1).hash);
    }
    if (!at.loop_shaped) return nullptr;
    SharedSegments::Row* bounded = shared_row(s1, kBounded).row;
    if (!bounded) return nullptr;
    auto segment = shared.get(*bounded, b);
    if (segment) store_segment(cut_row, cut_key, b, segment);
    return segment;
  }

  // The segment walked before: in the shared row, or (no signature) in this cache's own
  // segments under `key`.
  std::shared_ptr<const Segment> find_segment(SharedSegments::Row* row, uint64_t key, uint8_t b) const {
    if (row) return SharedSegments::instance().get(*row, b);
    std::lock_guard lock(cache_.segments_mutex_);
    if (auto it = cache_.segments_.find(key); it != cache_.segments_.end()) return it->second;
    return nullptr;
  }

  // The uniform run from successor s1 (mask::uniform_run), found once per walk, for segments
  // of at least mask::kRunMinTokens tokens (a smaller one is walked at about the cost of finding
  // it), followed at most kShortTokenBytes states: longer tokens (~1% of Llama 3's) take the
  // steps, and the run's states need no table rows of their own that far along.
  const mask::UniformRun& uniform_run(uint32_t s1) {
    auto it = std::find_if(runs_.begin(), runs_.end(), [&](const auto& r) { return r.first == s1; });
    if (it == runs_.end()) it = runs_.insert(runs_.end(), {s1, mask::uniform_run(tables_, s1, mask::kShortTokenBytes)});
    return it->second;
  }

  // The walk of sorted tokens [lo, hi), which share their first byte (read by entry e1 of
  // the walk's state), into seg_; the number of tokens.
  size_t walk_whole(size_t lo, size_t hi, uint32_t e1) {
    begin_segment();
    // Tokens read whole along a run from s1 (unless the first byte enters a call) leave the
    // walk at depth 1 (states_[1] is s1).
    size_t length = 0;
    uint32_t outside = ~uint32_t{0};
    if (e1 < ClassTables::kCall && hi - lo >= mask::kRunMinTokens) {
      const uint32_t s1 = e1 & ~ClassTables::kFinalBit;
      const mask::UniformRun& run = uniform_run(s1);
      if (run.length != 0) length = run.length, outside = ~run.kinds;
      states_[1] = s1;
      boundaries_[1] = e1 >> 31;
    }
    size_t lcp = 0;  // common prefix of token i with the last token walked
    for (size_t i = lo; i < hi; ++i) {
      if (i != lo) lcp = std::min<size_t>(lcp, common_[i]);
      const int32_t id = sorted_[i];
      const std::string_view bytes = vocab_.sorted_bytes(i);
      if (dead_ != 0 && lcp >= dead_) {
        if (!dead_uncertain_) {  // the run of tokens sharing the failed prefix: rejected at once
          const size_t end = vocab_.sorted_prefix_end(i, dead_);
          seg_.others.insert(seg_.others.end(), sorted_.begin() + static_cast<ptrdiff_t>(i),
                             sorted_.begin() + static_cast<ptrdiff_t>(end));
          i = end - 1;
          continue;
        }
        seg_.others.push_back(id);
        classify_failed(id, bytes, dead_ - 1);
        continue;
      }
      if (length != 0 && (rest_kinds_[i] & outside) == 0 && bytes.size() - 1 <= length) {  // read whole along the run
        seg_.accepted.push_back(id);
        ++run_tokens_;
        dead_ = 0;
        depth_ = std::min<size_t>(depth_, 1);
        lcp = SIZE_MAX;
        continue;
      }
      walk_token(id, bytes, lcp);
      lcp = SIZE_MAX;
    }
    return hi - lo;
  }

  // The segment of the short tokens (`tokens` of them, those not in `cut`) of the whole
  // segment just walked (seg_). Only the list it keeps is filtered.
  std::shared_ptr<const Segment> short_of_whole(const mask::LongTokens& cut, size_t tokens) const {
    auto short_ones = [&](const std::vector<int32_t>& from) {
      std::vector<int32_t> kept;
      for (const int32_t id : from) {
        if (!cut.is_long(id)) kept.push_back(id);
      }
      return kept;
    };
    std::vector<int32_t> others = short_ones(seg_.others);
    const bool complement = (tokens - others.size()) * 2 > tokens;
    std::vector<std::pair<int32_t, uint32_t>> uncertain;
    for (const auto& u : seg_.uncertain) {
      if (!cut.is_long(u.first)) uncertain.push_back(u);
    }
    return finish_segment(complement, complement ? std::move(others) : short_ones(seg_.accepted), std::move(uncertain));
  }

  // The walk of the long tokens of `part` into seg_; the number of tokens walked.
  size_t walk_long(const Part& part) {
    begin_segment();
    const std::vector<uint32_t>& longs = part.tail_of->positions;
    std::string_view last;
    for (size_t k = part.long_lo; k < part.long_hi; ++k) {
      const size_t i = longs[k];
      const int32_t id = sorted_[i];
      const std::string_view bytes = vocab_.sorted_bytes(i);
      size_t lcp = 0;
      if (k != part.long_lo) {
        const size_t n = std::min(last.size(), bytes.size());
        while (lcp < n && last[lcp] == bytes[lcp]) ++lcp;
      }
      last = bytes;
      if (dead_ != 0 && lcp >= dead_) {
        seg_.others.push_back(id);
        if (dead_uncertain_) classify_failed(id, bytes, dead_ - 1);
        continue;
      }
      walk_token(id, bytes, lcp);
    }
    return part.long_hi - part.long_lo;
  }

  void begin_segment() {
    seg_.accepted.clear();
    seg_.others.clear();
    seg_.uncertain.clear();
    depth_ = 0;
    dead_ = 0;
    dead_uncertain_ = false;
  }

  // One token read on from the walk of the last one, with which it shares `lcp` bytes.
  void walk_token(int32_t id, std::string_view bytes, size_t lcp) {
    uint32_t* const states = states_.data();
    uint32_t* const boundaries = boundaries_.data();
    dead_ = 0;
    size_t depth = std::min(depth_, lcp);
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
    depth_ = depth;
    if (end == std::string_view::npos) end = depth;
    if (end == bytes.size()) {
      seg_.accepted.push_back(id);
    } else {
      seg_.others.push_back(id);
      dead_ = end + 1;
      dead_uncertain_ = classify_failed(id, bytes, end);
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

  // A walked segment (`tokens` tokens), in its smaller form, with its digest.
  std::shared_ptr<const Segment> make_segment(const SegmentLists& seg, size_t tokens) const {
    const bool complement = seg.accepted.size() * 2 > tokens;  // mostly accepted: keep the others
    return finish_segment(complement, complement ? seg.others : seg.accepted, seg.uncertain);
  }

  // A segment from its form (with `complement`, `ids` are the tokens not accepted), with its
  // digest.
  static std::shared_ptr<const Segment> finish_segment(bool complement, std::vector<int32_t> ids,
                                                       std::vector<std::pair<int32_t, uint32_t>> uncertain) {
    auto made = std::make_shared<Segment>();
    made->complement = complement;
    made->ids = std::move(ids);
    made->uncertain = std::move(uncertain);
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

  // Calls f(sorted index) for each token of `part` of `subset`.
  template <class F>
  void for_each_of(const Part& part, Subset subset, F&& f) const {
    if (!part.tail_of) {  // no tail: every token
      for (size_t i = part.lo; i < part.hi; ++i) f(i);
      return;
    }
    const std::vector<uint32_t>& longs = part.tail_of->positions;
    if (subset == kLongTokens) {
      for (size_t k = part.long_lo; k < part.long_hi; ++k) f(longs[k]);
      return;
    }
    size_t next_long = part.long_lo;
    for (size_t i = part.lo; i < part.hi; ++i) {
      if (next_long < part.long_hi && longs[next_long] == i) {
        ++next_long;
        continue;
      }
      f(i);
    }
  }

  // Sets the accepted tokens of `seg` (the tokens of `part` of `subset`) in `bits`.
  void set_accepted(std::vector<uint32_t>& bits, const Part& part, Subset subset, const Segment& seg) const {
    if (!seg.complement) {
      for (const int32_t id : seg.ids) set_bit(bits, static_cast<size_t>(id));
      return;
    }
    for_each_of(part, subset, [&](size_t i) { set_bit(bits, static_cast<size_t>(sorted_[i])); });
    for (const int32_t id : seg.ids) clear_bit(bits, static_cast<size_t>(id));
  }

  // Mostly accepted: every text token, less the segments failing at their first byte, the
  // rejected tokens of the other segments and the exceptions of complement segments.
  void accepted_from_text(std::vector<uint32_t>& accepted) const {
    const std::span<const uint32_t> text = vocab_.text_token_bits();
    std::vector<uint32_t> bits(text.begin(), text.end());
    auto clear = [&](int32_t id) { clear_bit(bits, static_cast<size_t>(id)); };
    size_t covered = 0;  // sorted tokens [0, covered) handled
    for (const Part& p : parts_) {
      for (size_t i = covered; i < p.lo; ++i) clear(sorted_[i]);  // segments failing at byte 0
      covered = p.hi;
      if (p.segment->complement && (!p.tail || p.tail->complement)) {
        for (const int32_t id : p.segment->ids) clear(id);
        if (p.tail) {
          for (const int32_t id : p.tail->ids) clear(id);
        }
      } else {
        for (size_t i = p.lo; i < p.hi; ++i) clear(sorted_[i]);
        set_accepted(bits, p, kShortTokens, *p.segment);
        if (p.tail) set_accepted(bits, p, kLongTokens, *p.tail);
      }
    }
    for (size_t i = covered; i < sorted_.size(); ++i) clear(sorted_[i]);
    for (size_t w = 0; w < bits.size(); ++w) accepted[w] |= bits[w];
  }

  // Mostly rejected: the accepted tokens of each segment.
  void accepted_from_segments(std::vector<uint32_t>& accepted) const {
    for (const Part& p : parts_) {
      set_accepted(accepted, p, kShortTokens, *p.segment);
      if (p.tail) set_accepted(accepted, p, kLongTokens, *p.tail);
    }
  }

  const TokenMaskCache::Impl& cache_;
  const GrammarAutomaton& g_;
  const Vocabulary& vocab_;
  const uint32_t state_, rule_;
  ClassTables tables_;
  const std::span<const int32_t> sorted_;
  const std::span<const uint32_t> common_;
  const std::span<const uint32_t> rest_kinds_;
  // Per depth of the token being walked: its state, and the completions of the rule so far.
  std::vector<uint32_t> states_, boundaries_;
  SegmentLists seg_;     // the segment being walked
  const mask::LongTokens& longs_;  // past kShortTokenBytes
  const mask::LongTokens& mids_;   // past kMidTokenBytes
  // The walk of the segment in progress: how deep the last token was read, and where it
  // failed (its failed prefix plus one; 0: it did not), uncertain or not.
  size_t depth_ = 0, dead_ = 0;
  bool dead_uncertain_ = false;
  std::vector<Part> parts_;
  struct Row {
    uint32_t s1;
    std::shared_ptr<SharedSegments::Row> row;
    bool whole;
  };
  std::vector<Row> rows_[4];  // by kind, by successor
  std::vector<Successor> successors_;
  std::vector<std::pair<uint32_t, mask::UniformRun>> runs_;  // by successor
  size_t run_tokens_ = 0;         // read whole along a run (Stats::run_tokens)
  size_t complement_tokens_ = 0;  // tokens of the segments stored as complements
};

}  // namespace

std::shared_ptr<const StateMask> TokenMaskCache::Impl::walk_automaton(uint32_t state, PartialMask& out,
                                                                      std::string& parts_key) const {
  AutomatonWalk walk(*this, state);
  walk.collect_parts(out.uncertain);
  run_tokens_ += walk.run_tokens();
  if (auto hit = walk.find_by_parts(parts_key)) return hit;  // `out` is not filled
  walk.assemble_accepted(out.accepted);
  return nullptr;
}

}  // namespace lockstep
