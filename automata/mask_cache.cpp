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
      masks_(grammar_->num_mask_classes()),
      computing_(grammar_->num_mask_classes(), 0) {
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
    for (uint32_t c = 0; c < masks_.size() && !stop_; ++c) {
      try {
        get(grammar_->mask_class_state(c));
      } catch (...) {
        // get() on the decode path will raise it again where it matters.
      }
    }
  });
}

const StateMask& TokenMaskCache::get(uint32_t state) {
  const uint32_t c = grammar_->mask_class(state);
  if (const StateMask* m = masks_[c].load(std::memory_order_acquire)) return *m;
  {
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return !computing_[c]; });
    if (const StateMask* m = masks_[c].load(std::memory_order_acquire)) return *m;
    computing_[c] = 1;
  }
  StateMask* computed = nullptr;
  try {
    ++computations_;
    computed = new StateMask(compute(grammar_->mask_class_state(c)));
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
  return *computed;
}

void TokenMaskCache::precompute(unsigned threads) {
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

// The trie walk for one state. A path (the bytes of a token prefix) is followed in one of
// two modes. Stack mode: while the grammar is deterministic along the path (at each byte at
// most one way to go, as JSON and most grammars are), the parse is one stack of automaton
// states — the seed's rule at the bottom, a sub-rule entered through a rule edge above the
// state it returns to — kept as nodes of a parent-linked arena, one top node per depth.
// Earley mode: from the first byte with several ways to go, an Earley parser in boundary
// mode (seeded with the seed state and replaying the path) carries the path; it is left
// when the walk backs out above that depth. Both record the depths at which the seed's rule
// can complete (boundaries).
class StateWalker {
 public:
  StateWalker(const CompiledGrammar& g, ParserLimits limits, uint32_t seed)
      : g_(g), parser_(g, limits), seed_(seed) {
    nodes_.push_back({seed, kNone});
    top_.push_back(0);
    arena_.push_back(1);
    boundaries_.push_back(0);  // a completion before any byte is the context's business
    bytes_.push_back(0);
  }

  size_t depth() const { return depth_; }
  /// Boundaries (completions of the seed's rule) at depths 1..d of the current path.
  uint32_t boundaries_upto(size_t d) const { return boundaries_[d]; }
  bool boundary_at(size_t d) const { return boundaries_[d] != boundaries_[d - 1]; }

  void back_to(size_t d) {
    if (d >= depth_) return;
    if (earley_from_ != kNone) {
      if (d >= earley_from_) {
        parser_.rollback(depth_ - d);
      } else {
        earley_from_ = kNone;
      }
    }
    depth_ = d;
    boundaries_.resize(d + 1);
    bytes_.resize(d + 1);
    if (earley_from_ == kNone) {
      top_.resize(d + 1);
      arena_.resize(d + 1);
      nodes_.resize(arena_.back());
    }
  }

  bool advance(uint8_t byte) {
    if (earley_from_ == kNone) {
      moves_.clear();
      ambiguous_ = false;
      step(top_[depth_], byte, 0);
      if (moves_.empty() && !ambiguous_) return false;
      if (moves_.size() == 1 && !ambiguous_) {
        ++depth_;
        top_.push_back(moves_[0]);
        arena_.push_back(static_cast<uint32_t>(nodes_.size()));
        bytes_.push_back(byte);
        boundaries_.push_back(boundaries_.back() + (completes(moves_[0]) ? 1 : 0));
        return true;
      }
      // Several ways to go: the Earley parser takes over from here, replaying the path.
      nodes_.resize(arena_.back());
      parser_.reset_to_state(seed_);
      for (size_t i = 1; i <= depth_; ++i) {
        if (!parser_.advance(bytes_[i])) throw std::logic_error("mask walk: replay failed");
      }
      earley_from_ = depth_;
    }
    if (!parser_.advance(byte)) return false;
    ++depth_;
    bytes_.push_back(byte);
    boundaries_.push_back(boundaries_.back() + (parser_.boundary_at(depth_) ? 1 : 0));
    return true;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr int kMaxEnter = 32;  // nested rule entries within one byte step
  struct Node {
    uint32_t state;
    uint32_t parent;  // the node to return to when this frame's rule completes
  };

  uint32_t push(uint32_t state, uint32_t parent) {
    nodes_.push_back({state, parent});
    return static_cast<uint32_t>(nodes_.size() - 1);
  }

  // Every way to read `byte` from the stack topped by node n: a byte edge, entering a
  // sub-rule through a rule edge, or (the frame's rule being final) returning to the parent.
  void step(uint32_t n, uint8_t byte, int entered) {
    if (ambiguous_) return;
    const Node node = nodes_[n];
    for (const auto& e : g_.byte_edges(node.state)) {
      if (byte < e.lo) break;
      if (byte <= e.hi) {
        add_move(push(e.target, node.parent));
        break;
      }
    }
    const auto rules = g_.rule_edges(node.state);
    if (!rules.empty()) {
      if (entered >= kMaxEnter) {
        ambiguous_ = true;
        return;
      }
      for (const auto& r : rules) {
        const uint32_t back = push(r.target, node.parent);
        step(push(g_.rule_start(r.rule), back), byte, entered + 1);
      }
    }
    if (node.parent != kNone && g_.is_final(node.state)) step(node.parent, byte, entered);
  }

  void add_move(uint32_t n) {
    for (uint32_t m : moves_) {
      if (same_stack(m, n)) return;
    }
    moves_.push_back(n);
    if (moves_.size() > 1) ambiguous_ = true;
  }

  bool same_stack(uint32_t a, uint32_t b) const {
    while (a != kNone && b != kNone) {
      if (nodes_[a].state != nodes_[b].state) return false;
      a = nodes_[a].parent, b = nodes_[b].parent;
    }
    return a == b;
  }

  // The seed's rule completes at this stack: every frame up to the bottom can complete.
  bool completes(uint32_t n) const {
    for (; n != kNone; n = nodes_[n].parent) {
      if (!g_.is_final(nodes_[n].state)) return false;
    }
    return true;
  }

  const CompiledGrammar& g_;
  EarleyParser parser_;
  uint32_t seed_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> top_;    // stack mode: top node per depth
  std::vector<uint32_t> arena_;  // stack mode: nodes_.size() after each depth
  std::vector<uint8_t> bytes_;   // the path: bytes_[d] was read to reach depth d
  std::vector<uint32_t> boundaries_;  // prefix counts of boundary depths
  std::vector<uint32_t> moves_;
  bool ambiguous_ = false;
  size_t depth_ = 0;
  size_t earley_from_ = kNone;  // depth from which the Earley parser carries the path
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
    const std::string_view bytes = vocab.sorted_bytes(i);
    if (dead != 0 && common[i] >= dead) {
      if (w.boundaries_upto(dead - 1) == 0) {
        // No completion on the way: every token with this prefix is rejected. Skip the run.
        const std::string_view prefix = bytes.substr(0, dead);
        size_t lo = i, hi = sorted.size();
        while (lo < hi) {
          const size_t mid = (lo + hi) / 2;
          if (vocab.sorted_bytes(mid).substr(0, dead) == prefix) lo = mid + 1; else hi = mid;
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
