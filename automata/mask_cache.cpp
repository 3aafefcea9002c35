// automata/mask_cache.cpp — see mask_cache.h.
#include "automata/mask_cache.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace lockstep {

// ---------------------------------------------------------------------------------
// TokenSet

TokenSet TokenSet::from_sorted(std::vector<int32_t> ids, size_t universe) {
  TokenSet s;
  s.universe_ = universe;
  s.count_ = ids.size();
  const size_t words = (universe + 31) / 32;
  // An id costs 4 bytes, a bitset universe / 8: lists win below universe / 32 members.
  if (ids.size() <= universe / 32) {
    s.form_ = Form::kIds;
    s.ids_ = std::move(ids);
  } else if (universe - ids.size() <= universe / 32) {
    s.form_ = Form::kComplement;
    size_t k = 0;
    for (size_t id = 0; id < universe; ++id) {
      if (k < ids.size() && static_cast<size_t>(ids[k]) == id) {
        ++k;
      } else {
        s.ids_.push_back(static_cast<int32_t>(id));
      }
    }
  } else {
    s.form_ = Form::kBitset;
    s.bits_.assign(words, 0);
    for (int32_t id : ids) s.bits_[id >> 5] |= 1u << (id & 31);
  }
  s.ids_.shrink_to_fit();
  return s;
}

TokenSet TokenSet::from_bits(std::vector<uint32_t> bits, size_t count, size_t universe) {
  if (count > universe / 32 && universe - count > universe / 32) {
    TokenSet s;
    s.form_ = Form::kBitset;
    s.universe_ = universe;
    s.count_ = count;
    s.bits_ = std::move(bits);
    return s;
  }
  std::vector<int32_t> ids;
  ids.reserve(count);
  for (size_t w = 0; w < bits.size(); ++w) {
    for (uint32_t b = bits[w]; b != 0; b &= b - 1) {
      ids.push_back(static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(b))));
    }
  }
  return from_sorted(std::move(ids), universe);
}

void TokenSet::or_into(std::span<uint32_t> words) const {
  switch (form_) {
    case Form::kIds:
      for (int32_t id : ids_) words[id >> 5] |= 1u << (id & 31);
      break;
    case Form::kBitset:
      for (size_t i = 0; i < bits_.size(); ++i) words[i] |= bits_[i];
      break;
    case Form::kComplement: {
      // All bits of the universe except the listed ones.
      size_t k = 0;
      const size_t n_words = (universe_ + 31) / 32;
      for (size_t w = 0; w < n_words; ++w) {
        uint32_t bits = w + 1 < n_words || universe_ % 32 == 0 ? 0xFFFFFFFFu
                                                                : (1u << (universe_ % 32)) - 1;
        while (k < ids_.size() && static_cast<size_t>(ids_[k] >> 5) == w) {
          bits &= ~(1u << (ids_[k] & 31));
          ++k;
        }
        words[w] |= bits;
      }
      break;
    }
  }
}

bool TokenSet::contains(int32_t id) const {
  switch (form_) {
    case Form::kIds: return std::binary_search(ids_.begin(), ids_.end(), id);
    case Form::kComplement: return !std::binary_search(ids_.begin(), ids_.end(), id);
    case Form::kBitset: return (bits_[id >> 5] >> (id & 31)) & 1;
  }
  return false;
}

size_t StateMask::memory_bytes() const {
  size_t n = sizeof(StateMask) + accepted.memory_bytes() + suffix_common.capacity() * 4;
  for (const auto& s : suffixes) n += sizeof(std::string) + s.capacity();
  for (const auto& t : suffix_tokens) n += sizeof(t) + t.capacity() * 4;
  return n;
}

// ---------------------------------------------------------------------------------
// TokenMaskCache

TokenMaskCache::TokenMaskCache(std::shared_ptr<const CompiledGrammar> grammar,
                               std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits)
    : grammar_(std::move(grammar)),
      vocabulary_(std::move(vocabulary)),
      limits_(limits),
      masks_(grammar_->num_states()),
      computing_(grammar_->num_states(), 0) {
  for (auto& m : masks_) m.store(nullptr, std::memory_order_relaxed);
}

TokenMaskCache::~TokenMaskCache() {
  stop_ = true;
  if (background_.joinable()) background_.join();
  for (auto& m : masks_) delete m.load();
}

void TokenMaskCache::start_background_precompute() {
  if (background_.joinable()) return;
  background_ = std::thread([this] {
    for (uint32_t s = 0; s < masks_.size() && !stop_; ++s) {
      try {
        get(s);
      } catch (...) {
        // get() on the decode path will raise it again where it matters.
      }
    }
  });
}

const StateMask& TokenMaskCache::get(uint32_t state) {
  if (const StateMask* m = masks_[state].load(std::memory_order_acquire)) return *m;
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return !computing_[state]; });
    if (const StateMask* m = masks_[state].load(std::memory_order_acquire)) return *m;
    computing_[state] = 1;
  }
  StateMask* computed = nullptr;
  try {
    ++computations_;
    computed = new StateMask(compute(state));
  } catch (...) {
    std::lock_guard lock(mutex_);
    computing_[state] = 0;
    done_.notify_all();
    throw;
  }
  {
    std::lock_guard lock(mutex_);
    masks_[state].store(computed, std::memory_order_release);
    computing_[state] = 0;
  }
  done_.notify_all();
  return *computed;
}

void TokenMaskCache::precompute(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<uint32_t> next{0};
  const uint32_t n = grammar_->num_states();
  auto work = [&] {
    for (uint32_t s; (s = next.fetch_add(1)) < n;) get(s);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
}

TokenMaskCache::Stats TokenMaskCache::stats() const {
  Stats s;
  s.states = masks_.size();
  s.computations = computations_.load();
  for (const auto& m : masks_) {
    const StateMask* p = m.load(std::memory_order_acquire);
    if (!p) continue;
    ++s.computed;
    s.memory_bytes += p->memory_bytes();
    s.compute_seconds += p->compute_us * 1e-6;
    s.uncertain_tokens += p->uncertain_tokens;
  }
  return s;
}

namespace {

// The trie walk for one state. Paths are followed in two modes: while the parse is a
// single item in a plain DFA state (no rule edges, not final), a path's state is just that
// DFA state, one per depth; from the first other state on, an Earley parser in boundary mode
// (seeded with that state) carries the path and is discarded when the walk backs out.
class StateWalker {
 public:
  StateWalker(const CompiledGrammar& g, ParserLimits limits, uint32_t seed)
      : g_(g), parser_(g, limits) {
    dfa_.push_back(seed);
    boundaries_.push_back(0);
    if (!g.is_simple(seed)) start_earley(seed);
  }

  size_t depth() const { return depth_; }
  /// Boundaries (completions of the seed's rule) at depths 1..d of the current path.
  uint32_t boundaries_upto(size_t d) const { return boundaries_[d]; }
  bool boundary_at(size_t d) const { return boundaries_[d] != boundaries_[d - 1]; }

  void back_to(size_t d) {
    if (d >= depth_) return;
    if (earley_base_ != kNone) {
      if (d < earley_base_ || (d == earley_base_ && earley_base_ != 0)) {
        earley_base_ = d < earley_base_ ? kNone : earley_base_;
        if (earley_base_ == kNone) {
          depth_ = d;
          boundaries_.resize(d + 1);
          return;
        }
      }
      parser_.rollback(depth_ - d);
    }
    depth_ = d;
    boundaries_.resize(d + 1);
  }

  bool advance(uint8_t byte) {
    if (earley_base_ == kNone) {
      const uint32_t q = dfa_[depth_];
      uint32_t target = UINT32_MAX;
      for (const auto& e : g_.byte_edges(q)) {
        if (byte < e.lo) break;
        if (byte <= e.hi) {
          target = e.target;
          break;
        }
      }
      if (target == UINT32_MAX) return false;
      ++depth_;
      if (dfa_.size() <= depth_) dfa_.resize(depth_ + 1);
      dfa_[depth_] = target;
      if (g_.is_simple(target)) {
        boundaries_.push_back(boundaries_.back());
      } else {
        start_earley(target);
      }
      return true;
    }
    if (!parser_.advance(byte)) return false;
    ++depth_;
    boundaries_.push_back(boundaries_.back() + (parser_.boundary_at(depth_ - earley_base_) ? 1 : 0));
    return true;
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  void start_earley(uint32_t state) {
    parser_.reset_to_state(state);
    earley_base_ = depth_;
    if (depth_ == 0) {
      boundaries_[0] = 0;  // a completion before any byte is the context's business
    } else {
      boundaries_.push_back(boundaries_.back() + (parser_.boundary_at(0) ? 1 : 0));
    }
  }

  const CompiledGrammar& g_;
  EarleyParser parser_;
  std::vector<uint32_t> dfa_;         // fast mode: DFA state per depth
  std::vector<uint32_t> boundaries_;  // prefix counts of boundary depths
  size_t depth_ = 0;
  size_t earley_base_ = kNone;        // depth the parser's set 0 stands for
};

}  // namespace

StateMask TokenMaskCache::compute(uint32_t state) const {
  const auto t0 = std::chrono::steady_clock::now();
  const CompiledGrammar& g = *grammar_;
  const Vocabulary& vocab = *vocabulary_;
  const uint32_t rule = g.rule_of(state);
  StateMask out;
  std::vector<uint32_t> accepted_bits(vocab.bitmask_words(), 0);
  size_t accepted = 0;
  std::vector<std::pair<std::string, int32_t>> uncertain;  // (suffix, token)

  StateWalker w(g, limits_, state);
  const auto sorted = vocab.sorted_text_tokens();
  const auto common = vocab.sorted_common_prefix();

  // A token that fails after `failed_at` bytes is uncertain through every earlier depth at
  // which the rule can complete and whose next byte can follow the rule.
  auto classify_failed = [&](int32_t id, std::string_view bytes, size_t failed_at) {
    bool any = false;
    for (size_t j = 1; j <= failed_at && w.boundaries_upto(failed_at) != 0; ++j) {
      if (!w.boundary_at(j) || !g.can_follow(rule, static_cast<uint8_t>(bytes[j]))) continue;
      uncertain.emplace_back(std::string(bytes.substr(j)), id);
      any = true;
    }
    if (!any) ++out.rejected;
  };

  size_t dead = 0;  // length of a rejected prefix of the current path, or 0
  for (size_t i = 0; i < sorted.size(); ++i) {
    const int32_t id = sorted[i];
    const std::string_view bytes = vocab.token_bytes(id);
    if (dead != 0 && common[i] >= dead) {
      if (w.boundaries_upto(dead - 1) == 0) {
        // No completion on the way: every token with this prefix is rejected. Skip the run.
        const std::string_view prefix = bytes.substr(0, dead);
        size_t lo = i, hi = sorted.size();
        while (lo < hi) {
          const size_t mid = (lo + hi) / 2;
          if (vocab.token_bytes(sorted[mid]).substr(0, dead) == prefix) lo = mid + 1; else hi = mid;
        }
        out.rejected += lo - i;
        i = lo - 1;
      } else {
        classify_failed(id, bytes, dead - 1);
      }
      continue;
    }
    dead = 0;
    w.back_to(std::min<size_t>(w.depth(), common[i]));
    while (w.depth() < bytes.size() && w.advance(static_cast<uint8_t>(bytes[w.depth()]))) {
    }
    if (w.depth() == bytes.size()) {
      accepted_bits[id >> 5] |= 1u << (id & 31);
      ++accepted;
    } else {
      dead = w.depth() + 1;
      classify_failed(id, bytes, w.depth());
    }
  }
  out.accepted = TokenSet::from_bits(std::move(accepted_bits), accepted, vocab.size());
  std::sort(uncertain.begin(), uncertain.end());
  out.uncertain_tokens = uncertain.size();
  for (size_t i = 0; i < uncertain.size(); ++i) {
    if (out.suffixes.empty() || out.suffixes.back() != uncertain[i].first) {
      uint32_t lcp = 0;
      if (!out.suffixes.empty()) {
        const std::string& a = out.suffixes.back();
        const std::string& b = uncertain[i].first;
        while (lcp < a.size() && lcp < b.size() && a[lcp] == b[lcp]) ++lcp;
      }
      out.suffixes.push_back(uncertain[i].first);
      out.suffix_common.push_back(lcp);
      out.suffix_tokens.emplace_back();
    }
    out.suffix_tokens.back().push_back(uncertain[i].second);
  }
  out.compute_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace lockstep
