// automata/mask/token_mask_cache.cpp — the mask cache itself: lookup and computation of a
// state's mask (shared, composed or walked), precomputation, statistics.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "automata/mask/impl.h"
#include "automata/mask/shared_caches.h"
#include "automata/mask/state_walker.h"
#include "automata/mask/suffix_groups.h"
#include "automata/token_bitmask.h"
#include "grammar/hash.h"

namespace lockstep {

using mask::PartialMask;
using mask::SharedStateMasks;
using mask::StateWalker;

// ---------------------------------------------------------------------------------
// TokenMaskCache: the public face, each call handed to Impl.

TokenMaskCache::TokenMaskCache(std::shared_ptr<const GrammarAutomaton> grammar,
                               std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits)
    : impl_(std::make_unique<Impl>(std::move(grammar), std::move(vocabulary), limits)) {}

TokenMaskCache::~TokenMaskCache() = default;  // ~Impl stops and joins the background thread

const StateMask& TokenMaskCache::get(uint32_t state) { return impl_->get(state); }
bool TokenMaskCache::continuable(uint32_t state) { return impl_->continuable(state); }
const StateMask& TokenMaskCache::continued(uint32_t state, uint32_t next_rule) { return impl_->continued(state, next_rule); }
void TokenMaskCache::precompute(unsigned threads) { impl_->precompute(threads); }
void TokenMaskCache::start_background_precompute() { impl_->start_background_precompute(); }
TokenMaskCache::Stats TokenMaskCache::stats() const { return impl_->stats(); }
const GrammarAutomaton& TokenMaskCache::grammar() const { return *impl_->grammar_; }
const Vocabulary& TokenMaskCache::vocabulary() const { return *impl_->vocabulary_; }
std::shared_ptr<const GrammarAutomaton> TokenMaskCache::shared_grammar() const { return impl_->grammar_; }
std::shared_ptr<const Vocabulary> TokenMaskCache::shared_vocabulary() const { return impl_->vocabulary_; }
const ParserLimits& TokenMaskCache::limits() const { return impl_->limits_; }
ConfigurationCache& TokenMaskCache::configurations() const { return impl_->configurations_; }
const ClosingData& TokenMaskCache::closing() const { return impl_->closing(); }

// ---------------------------------------------------------------------------------
// TokenMaskCache::Impl

TokenMaskCache::Impl::Impl(std::shared_ptr<const GrammarAutomaton> grammar,
                           std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits)
    : grammar_(std::move(grammar)),
      vocabulary_(std::move(vocabulary)),
      limits_(limits),
      masks_(grammar_->num_mask_classes()),
      computing_(grammar_->num_mask_classes(), 0) {
  for (auto& m : masks_) m.store(nullptr, std::memory_order_relaxed);
}

TokenMaskCache::Impl::~Impl() {
  stop_ = true;
  if (background_.joinable()) background_.join();
}

// The process-wide key of the mask of a state of an automaton-only rule.
std::string TokenMaskCache::Impl::automaton_mask_key(uint32_t state) {
  const GrammarAutomaton& g = *grammar_;
  const uint32_t r = g.rule_of(state);
  std::string key;
  auto put = [&key](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  if (const std::string& sig = signature(state); !sig.empty()) {
    // The reachable automaton's canonical signature (with FOLLOW and the vocabulary): the
    // mask is shared with every isomorphic state of any automaton, e.g. the body of a string
    // after an excluded key's prefix, the last positions of any length bound.
    key.push_back('S');
    key.append(sig);
  } else {
    key.push_back('A');
    const uint32_t local = state - g.rule_start(r);
    put(&local, sizeof local);
    append_context(key, r);
    // The automaton by its digest: its key lists every state and edge (megabytes for a
    // pattern of counted words under a length bound), and was copied into every key.
    const auto [h1, h2] = automaton_digest(r);
    put(&h1, sizeof h1);
    put(&h2, sizeof h2);
  }
  key.push_back(g.can_end_after(r) ? '1' : '0');
  return key;
}

std::pair<uint64_t, uint64_t> TokenMaskCache::Impl::automaton_digest(uint32_t rule) const {
  // The key is a few words (grammar_compiler.cpp): hashed each time, no memo.
  Digest128 d;
  const auto& automaton = grammar_->rule_automaton_key(rule);
  d.mix(automaton.size());
  for (const uint32_t w : automaton) d.mix(w);
  return d.value();
}

// Whether the mask of `state` costs no computation: in this cache, or (an automaton-only
// rule's state) process-wide.
bool TokenMaskCache::Impl::mask_at_hand(uint32_t state) {
  if (masks_[grammar_->mask_class(state)].load(std::memory_order_acquire)) return true;
  if (grammar_->rule_automaton_key(grammar_->rule_of(state)).empty()) return false;
  return SharedStateMasks::instance().find(automaton_mask_key(state)) != nullptr;
}

std::shared_ptr<const StateMask> TokenMaskCache::Impl::compute_shared(uint32_t state) {
  const GrammarAutomaton& g = *grammar_;
  const uint32_t r = g.rule_of(state);
  const auto& automaton = g.rule_automaton_key(r);
  // A state whose tokens start with one or two bytes (the next letter of a key) is walked
  // directly, by the trie walk: its walk steps into those runs of the vocabulary only, and
  // costs less than the signature that would share its mask (an anyOf of 200 objects has a
  // thousand such grammar states after `{"`). So is such a state of an automaton-only rule
  // when the tokens its walk can read past their first byte are few (inside a constant or a
  // name): the walk skips the rest of its runs, and costs less than the table walk's byte
  // classes, tables and segment signatures (200 states of the constants' automata after
  // `{"kind": "variant` in that anyOf). With more (a key pattern's `_[a-z]{1,6}`, thousands
  // of Llama 3's tokens), the table walk is faster per token, and its segments are shared.
  // Not a rule's start state: those recur across grammars (an escape rule's backslash), and
  // the prepared building blocks hold them (json_warm_start.h).
  GrammarAutomaton::ByteSet first;
  if (first_bytes(state, false, first) && GrammarAutomaton::byte_count(first) <= kNarrowFirstBytes &&
      (automaton.empty() || (state != g.rule_start(r) && second_byte_tokens(state) <= kDirectWalkTokens))) {
    ++computations_;
    if (!automaton.empty()) ++direct_walks_;
    return compute(state, /*direct=*/true);
  }
  if (automaton.empty()) {
    // A small vocabulary's walk costs less than the signature that would share it.
    if (vocabulary_->size() <= kSmallVocabulary) {
      ++computations_;
      return compute(state);
    }
    // A state of a grammar rule: shared by the canonical signature of everything its walk
    // can reach (the member rules of JSON Schemas recur across schemas by the thousand).
    std::string key = network_signature(state);
    if (key.empty()) {
      ++computations_;
      return compute(state);
    }
    if (auto hit = SharedStateMasks::instance().find(key)) {
      ++shared_hits_;
      return hit;
    }
    ++computations_;
    auto mask = compute(state);
    SharedStateMasks::instance().insert(std::move(key), mask);
    return mask;
  }
  std::string key = automaton_mask_key(state);
  if (auto hit = SharedStateMasks::instance().find(key)) {
    ++shared_hits_;
    return hit;
  }
  ++computations_;
  auto mask = compute(state);
  // compute() stored it under the key of its walk's parts already: counted once.
  SharedStateMasks::instance().insert(std::move(key), mask, /*alias=*/true);
  return mask;
}

void TokenMaskCache::Impl::start_background_precompute() {
  if (background_.joinable()) return;
  background_ = std::thread([this] {
    for (uint32_t c = 0; c < masks_.size() && !stop_; ++c) {
      try {
        get(grammar_->mask_class_state(c));
      } catch (...) {
        // get() on the decode path will raise it again where it matters.
      }
    }
  });
}

const StateMask& TokenMaskCache::Impl::get(uint32_t state) { return *lookup(state, true); }

const StateMask* TokenMaskCache::Impl::lookup(uint32_t state, bool wait) {
  const uint32_t c = grammar_->mask_class(state);
  if (const StateMask* m = masks_[c].load(std::memory_order_acquire)) return m;
  {
    std::unique_lock lock(mutex_);
    if (!wait && computing_[c]) return nullptr;
    done_.wait(lock, [&] { return !computing_[c]; });
    if (const StateMask* m = masks_[c].load(std::memory_order_acquire)) return m;
    computing_[c] = 1;
  }
  const StateMask* computed = nullptr;
  try {
    std::shared_ptr<const StateMask> m = compute_shared(grammar_->mask_class_state(c));
    computed = m.get();
    std::lock_guard lock(mutex_);
    owned_.push_back(std::move(m));
  } catch (...) {
    std::lock_guard lock(mutex_);
    computing_[c] = 0;
    done_.notify_all();
    throw;
  }
  {
    std::lock_guard lock(mutex_);
    masks_[c].store(computed, std::memory_order_release);
    computing_[c] = 0;
  }
  done_.notify_all();
  return computed;
}

void TokenMaskCache::Impl::precompute(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<uint32_t> next{0};
  const uint32_t n = grammar_->num_mask_classes();
  auto work = [&] {
    for (uint32_t c; (c = next.fetch_add(1)) < n;) get(grammar_->mask_class_state(c));
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

const ClosingData& TokenMaskCache::Impl::closing() const {
  std::call_once(closing_once_, [this] { closing_ = std::make_unique<ClosingData>(*grammar_, *vocabulary_); });
  return *closing_;
}

TokenMaskCache::Stats TokenMaskCache::Impl::stats() const {
  Stats s;
  s.states = masks_.size();
  s.computations = computations_.load();
  s.direct = direct_walks_.load();
  s.mid_segments = mid_segments_.load();
  s.run_tokens = run_tokens_.load();
  s.trie_run_tokens = trie_run_tokens_.load();
  s.shared = shared_hits_.load();
  for (const auto& m : masks_) {
    const StateMask* p = m.load(std::memory_order_acquire);
    if (!p) continue;
    ++s.computed;
    s.memory_bytes += p->memory_bytes();
    s.compute_seconds += p->compute_us * 1e-6;
    s.uncertain_tokens += p->uncertain_tokens;
  }
  {
    std::lock_guard lock(continued_mutex_);
    s.continued = continued_.size();
    for (const auto& [key, m] : continued_) s.memory_bytes += m->memory_bytes();
  }
  {
    std::lock_guard lock(segments_mutex_);
    s.segment_bytes = segment_entries_ * sizeof(int32_t);
  }
  return s;
}

size_t TokenMaskCache::Impl::second_byte_tokens(uint32_t state) const {
  const GrammarAutomaton& g = *grammar_;
  const Vocabulary& vocab = *vocabulary_;
  if (!g.rule_edges(state).empty()) return SIZE_MAX;
  size_t n = 0;
  for (const auto& e : g.byte_edges(state)) {
    // The bytes read after the first: the target's byte edges and its callees' FIRST sets
    // (a JSON string's escapes); past a final target (FOLLOW) or a nullable callee, any.
    GrammarAutomaton::ByteSet second{};
    bool any = g.is_final(e.target);
    for (const auto& f : g.byte_edges(e.target)) GrammarAutomaton::add_byte_range(second, f.lo, f.hi);
    for (const auto& r : g.rule_edges(e.target)) {
      any = any || g.rule_nullable(r.rule);
      for (size_t k = 0; k < second.size(); ++k) second[k] |= g.rule_first(r.rule)[k];
    }
    for (unsigned b = e.lo; b <= e.hi; ++b) {
      const size_t lo = vocab.sorted_first_byte_begin(b), hi = vocab.sorted_first_byte_begin(b + 1);
      if (any) {
        n += hi - lo;
        continue;
      }
      // The run's tokens whose second byte is c: sorted, so found by binary search.
      auto second_at = [&](unsigned c) {
        size_t l = lo, h = hi;
        while (l < h) {
          const size_t mid = l + (h - l) / 2;
          const std::string_view t = vocab.sorted_bytes(mid);
          if (t.size() < 2 || static_cast<uint8_t>(t[1]) < c) {
            l = mid + 1;
          } else {
            h = mid;
          }
        }
        return l;
      };
      for (unsigned c = 0; c < 256; ++c) {
        if ((second[c >> 6] >> (c & 63)) & 1) n += second_at(c + 1) - second_at(c);
      }
    }
  }
  return n;
}

// A state q with rule edges, from its parts: what its byte edges read (a walk that does not
// enter q's rule edges), and for each rule edge (A → t): the mask of A's start state — its
// accepted tokens stay inside A, its uncertain suffixes are read on from t — and, A being
// nullable, the mask of t. The walk over the whole vocabulary through A (the costly part,
// e.g. every token inside a JSON string) is then done once for A, not once per caller.
// Only for sub-rules that do not call back into q's rule (another component of the call
// graph). Returns false (nothing written) when q does not qualify.
bool TokenMaskCache::Impl::compose(uint32_t state, PartialMask& out) {
  const GrammarAutomaton& g = *grammar_;
  const uint32_t rule = g.rule_of(state);
  const auto edges = g.rule_edges(state);
  if (edges.empty()) return false;
  // Worth it when some sub-rule starts with many bytes (a string body): a narrow one
  // (whitespace, a keyword) is cheaper to walk through directly, unless its mask is made.
  bool broad = false, spaces = false;
  for (const auto& e : edges) {
    broad = broad || GrammarAutomaton::byte_count(g.rule_first(e.rule)) >= kBroadBytes;
    // Or the one call is a nullable automaton rule (whitespace) whose mask is at hand, so
    // none is computed for it: after `{"kind":` in an anyOf of 200 objects, 200 member
    // states walked the vocabulary's ~420 whitespace tokens each. Its t may call rules.
    spaces = spaces || (edges.size() == 1 && g.rule_nullable(e.rule) && !g.rule_automaton_key(e.rule).empty() &&
                        mask_at_hand(g.rule_start(e.rule)));
  }
  if (!broad && !spaces) return false;
  for (const auto& e : edges) {
    if (g.rule_component(e.rule) == g.rule_component(rule)) return false;
    if (g.rule_nullable(e.rule) && (e.target == state || (broad && g.rule_edges(e.target).size() > 0))) return false;
  }
  // The sub-rules' masks first. A mask being computed (by this thread further up, or by
  // another) is not waited for: this state then takes the plain walk, so no two
  // computations ever wait on each other.
  std::vector<const StateMask*> subs;
  for (const auto& e : edges) {
    const StateMask* m = lookup(g.rule_start(e.rule), false);
    if (!m) return false;
    subs.push_back(m);
  }
  walk_vocabulary(state, true, out);
  const Vocabulary& vocab = *vocabulary_;
  for (size_t x = 0; x < edges.size(); ++x) {
    const auto& e = edges[x];
    const StateMask& sub = *subs[x];
    out.accept_all(sub.accepted);
    // Suffixes after A completes, read on from t (a walk over the sorted suffixes).
    StateWalker w(g, limits_, e.target, vocab.max_token_bytes(), false);
    const bool t_final = g.is_final(e.target);
    // A suffix whose first byte t cannot read fails there, and is uncertain only if t can
    // complete the rule: otherwise only the runs of the first bytes t reads are walked, each
    // found by binary search (a whitespace mask has the tens of thousands of words after a
    // space as suffixes, and t after it reads a quote: 200 such states after `{"kind":` in an
    // anyOf of 200 objects).
    const GrammarAutomaton::ByteSet* t_first = t_final ? nullptr : w.next_bytes();
    // The suffixes [lo, hi), which share their first byte or are all of them.
    auto walk_suffixes = [&](size_t lo, size_t hi) {
      for (size_t k = lo; k < hi; ++k) {
        const std::string& sfx = sub.suffixes[k];
        w.back_to(std::min<size_t>(w.depth(), sub.suffix_common[k]));
        while (w.depth() < sfx.size() && w.advance(static_cast<uint8_t>(sfx[w.depth()]))) {
        }
        const auto tokens = sub.suffix_tokens(k);
        if (w.depth() == sfx.size()) {
          for (int32_t id : tokens) out.accept(id);
          continue;
        }
        const size_t failed_at = w.depth();
        if (!t_final && failed_at > 0 && w.boundaries_upto(failed_at) == 0 && w.next_bytes() != nullptr) {
          // Rejected with no completion on the path, as is every suffix sharing its first
          // failed_at bytes whose next byte the path cannot read: on to the next one it can.
          const std::string_view prefix(sfx.data(), failed_at);
          const size_t run_end = static_cast<size_t>(
              std::partition_point(sub.suffixes.begin() + static_cast<ptrdiff_t>(k) + 1,
                                   sub.suffixes.begin() + static_cast<ptrdiff_t>(hi),
                                   [&](const std::string& x) { return x.starts_with(prefix); }) -
              sub.suffixes.begin());
          k = mask::next_readable(k, run_end, *w.next_bytes(),
                                  [&](size_t x) { return static_cast<uint8_t>(sub.suffixes[x][failed_at]); }) - 1;
          continue;
        }
        for (size_t j = 0; j <= failed_at; ++j) {
          const bool boundary = j == 0 ? t_final : w.boundary_at(j);
          if (!boundary || !g.can_follow(rule, static_cast<uint8_t>(sfx[j]))) continue;
          for (int32_t id : tokens) {
            out.uncertain.emplace_back(id, static_cast<uint32_t>(vocab.token_bytes(id).size() - (sfx.size() - j)));
          }
        }
      }
    };
    if (t_first == nullptr) {
      walk_suffixes(0, sub.suffixes.size());
    } else {
      const auto first_below = [](const std::string& x, unsigned b) { return static_cast<uint8_t>(x[0]) < b; };
      auto from = sub.suffixes.begin();
      for (unsigned b = GrammarAutomaton::next_byte(*t_first, 0); b < 256; b = GrammarAutomaton::next_byte(*t_first, b + 1)) {
        const auto lo = std::lower_bound(from, sub.suffixes.end(), b, first_below);
        from = std::lower_bound(lo, sub.suffixes.end(), b + 1, first_below);
        w.back_to(0);
        walk_suffixes(static_cast<size_t>(lo - sub.suffixes.begin()), static_cast<size_t>(from - sub.suffixes.begin()));
      }
    }
    if (g.rule_nullable(e.rule)) walk_vocabulary(e.target, false, out);  // A skipped: read from t
  }
  return true;
}

namespace {
// compute()'s all-zero bitmask between states, per thread (empty while a computation holds it).
thread_local std::vector<uint32_t> zeroed_bitmask;
// compute()'s summary of the bitmask words that listed tokens set, per thread.
thread_local std::vector<uint64_t> word_summary;
}  // namespace

std::shared_ptr<const StateMask> TokenMaskCache::Impl::compute(uint32_t state, bool direct) {
  const auto t0 = std::chrono::steady_clock::now();
  const Vocabulary& vocab = *vocabulary_;
  PartialMask part;
  std::string parts_key;
  const uint32_t rule = grammar_->rule_of(state);
  // An automaton-only rule's state takes the table walk, unless it calls a rule itself (after
  // the backslash in a JSON string: it is walked like any grammar state) or is `direct` (a
  // narrow state, compute_shared()).
  if (!direct && !grammar_->rule_automaton_key(rule).empty() && grammar_->rule_edges(state).empty() &&
      byte_classes(rule).calls_walkable) {
    if (auto hit = walk_automaton(state, part, parts_key)) return hit;  // no bitmask made
  } else {
    // A zeroed bitmask kept per thread: a narrow state lists its few tokens and gives the
    // bitmask back cleared (below), instead of a 16 KB allocation and memset per state (a
    // thousand states after `{"` in an anyOf of 200 objects).
    part.accepted = std::move(zeroed_bitmask);
    if (part.accepted.size() != vocab.bitmask_words()) part.accepted.assign(vocab.bitmask_words(), 0);
    part.ids_max = vocab.size() / 32;  // TokenSet's list form
    if (!compose(state, part)) walk_vocabulary(state, false, part);
  }
  auto out = std::make_shared<StateMask>();
  auto& uncertain = part.uncertain;
  // A token allowed in every context needs no suffix check.
  uncertain.erase(std::remove_if(uncertain.begin(), uncertain.end(),
                                 [&](const auto& u) { return test_bit(part.accepted, static_cast<size_t>(u.first)); }),
                  uncertain.end());
  const size_t uncertain_ids = mask::group_by_suffix(vocab, uncertain, *out);
  out->uncertain_tokens = out->suffix_token_ids.size();
  if (part.ids_max > 0 && part.accepted_ids.size() <= part.ids_max) {
    // Listed as they were set (by the walk, or by compose() from its parts, where a token may
    // be listed twice): the bitmask's words that hold them are marked in a summary of one bit
    // per word, and read back in order, so the ids come out sorted, each once, with neither a
    // sort nor a scan of the whole bitmask, and those words are cleared for the next state.
    // After `{"kind":` in an anyOf of 200 objects, 200 composed states of ~430 tokens each
    // scanned, counted and dropped a 16 KB bitmask.
    std::vector<uint64_t>& summary = word_summary;
    summary.assign((part.accepted.size() + 63) / 64, 0);
    for (const int32_t id : part.accepted_ids) {
      const size_t w = static_cast<size_t>(id) / 32;
      summary[w / 64] |= uint64_t{1} << (w % 64);
    }
    std::vector<int32_t> ids;
    ids.reserve(part.accepted_ids.size());
    for (size_t k = 0; k < summary.size(); ++k) {
      for (uint64_t marks = summary[k]; marks != 0; marks &= marks - 1) {
        const size_t w = k * 64 + static_cast<size_t>(__builtin_ctzll(marks));
        for (uint32_t bits = part.accepted[w]; bits != 0; bits &= bits - 1) {
          ids.push_back(static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(bits))));
        }
        part.accepted[w] = 0;
      }
    }
    zeroed_bitmask = std::move(part.accepted);
    out->accepted = TokenSet::from_sorted(std::move(ids), vocab.size());
  } else {
    const size_t count = count_bits(part.accepted);  // no popcnt instruction on baseline x86-64
    out->accepted = TokenSet::from_bits(std::move(part.accepted), count, vocab.size());
  }
  out->rejected = vocab.sorted_text_tokens().size() - out->accepted.size() - uncertain_ids;
  out->compute_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (!parts_key.empty()) SharedStateMasks::instance().insert(std::move(parts_key), out);
  return out;
}

}  // namespace lockstep
