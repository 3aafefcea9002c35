// automata/matcher.cpp — see matcher.h.
#include "automata/matcher.h"

#include "automata/token_bitmask.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace lockstep {

namespace {
// Contexts deeper than this are not described (no configuration caching for them).
constexpr int kMaxContextDepth = 64;
}  // namespace

EarleyMatcher::EarleyMatcher(std::shared_ptr<TokenMaskCache> cache)
    : cache_(std::move(cache)), parser_(cache_->grammar(), cache_->limits()) {}

EarleyMatcher::EarleyMatcher(std::shared_ptr<const GrammarAutomaton> grammar,
                               std::shared_ptr<const Vocabulary> vocabulary, ParserLimits limits)
    : EarleyMatcher(std::make_shared<TokenMaskCache>(std::move(grammar), std::move(vocabulary),
                                                      limits)) {}

bool EarleyMatcher::accept_token(int32_t id) {
  const Vocabulary& vocab = vocabulary();
  if (id < 0 || static_cast<size_t>(id) >= vocab.size()) {
    throw std::out_of_range(fmt::format("token id {} is outside the vocabulary (size {})", id,
                                        vocab.size()));
  }
  if (terminated_) return false;
  if (vocab.is_eog(id)) {
    if (!parser_.accepting()) return false;
    terminated_ = true;
    history_.push_back(kEogStep);
    if (!plans_.empty()) plans_.emplace_back();
    step_plan_.reset();
    return true;
  }
  if (vocab.is_control(id)) return false;
  return accept_bytes(vocab.token_bytes(id));
}

bool EarleyMatcher::accept_bytes(std::string_view bytes) {
  if (terminated_) return false;
  if (!parser_.advance(bytes)) return false;
  history_.push_back(static_cast<uint32_t>(bytes.size()));
  push_plan(bytes);
  return true;
}

void EarleyMatcher::rollback(size_t n_steps) {
  if (n_steps > history_.size()) {
    throw std::out_of_range(fmt::format("cannot roll back {} steps: only {} were accepted",
                                        n_steps, history_.size()));
  }
  size_t bytes = 0;
  for (size_t i = 0; i < n_steps; ++i) {
    const uint32_t step = history_.back();
    history_.pop_back();
    if (step == kEogStep) {
      terminated_ = false;
    } else {
      bytes += step;
    }
  }
  parser_.rollback(bytes);
  if (context_memo_.size() > parser_.num_bytes() + 1) context_memo_.resize(parser_.num_bytes() + 1);
  if (!plans_.empty()) plans_.resize(history_.size() + 1);
  if (tracker_) tracker_->truncate(parser_.num_bytes() + 1);
  step_plan_.reset();
}

EarleyMatcher EarleyMatcher::fork() const {
  EarleyMatcher copy(cache_);
  copy.parser_ = parser_;
  copy.history_ = history_;
  copy.terminated_ = terminated_;
  copy.max_tokens_ = max_tokens_;
  copy.plans_ = plans_;
  copy.step_plan_ = step_plan_;
  return copy;
}

void EarleyMatcher::reset() {
  parser_.reset();
  history_.clear();
  terminated_ = false;
  context_memo_.clear();
  if (!plans_.empty()) plans_.assign(1, std::nullopt);
  if (tracker_) tracker_->truncate(0);
  step_plan_.reset();
}

const uint32_t* EarleyMatcher::SetContexts::find(uint32_t rule) const {
  for (const auto& [r, id] : ids) {
    if (r == rule) return &id;
  }
  const auto it = more_ids.find(rule);
  return it == more_ids.end() ? nullptr : &it->second;
}

void EarleyMatcher::SetContexts::set(uint32_t rule, uint32_t id) {
  for (auto& [r, v] : ids) {
    if (r == rule) {
      v = id;
      return;
    }
  }
  if (ids.size() < 8) {
    ids.emplace_back(rule, id);
  } else {
    more_ids[rule] = id;
  }
}

uint32_t EarleyMatcher::context_id(uint32_t rule, uint32_t origin, int depth) {
  if (origin == EarleyParser::kBoundary || depth > kMaxContextDepth) return kNoContext;
  if (context_memo_.size() <= origin) context_memo_.resize(origin + 1);
  if (const uint32_t* id = context_memo_[origin].find(rule)) return *id;
  // Mark in progress: a cycle (left recursion) makes the context not finitely describable.
  context_memo_[origin].set(rule, kNoContext);
  const GrammarAutomaton& g = grammar();
  const std::span<const EarleyParser::Item> items = parser_.items_at(origin);
  // Recursive calls below reach sets at or before `origin` and add ids there, never items
  // or callers: the caller lists stay as they are while iterated.
  SetContexts& here = context_memo_[origin];
  if (!here.indexed && here.ids.size() + here.more_ids.size() > 8) {
    for (uint32_t i = 0; i < items.size(); ++i) {
      for (const auto& e : g.rule_edges(items[i].state)) here.callers[e.rule].push_back(i);
    }
    here.indexed = true;
  }
  // Sized once: a list is in use by every call further up (each deeper call takes the next).
  if (context_pairs_.empty()) context_pairs_.resize(kMaxContextDepth + 1);
  std::vector<std::pair<uint32_t, uint32_t>>& pairs = context_pairs_[static_cast<size_t>(depth)];
  pairs.clear();  // (state, parent context), canonical order
  // One (state, parent) pair per item with an edge to `rule` (several such edges give the
  // same pair).
  auto visit = [&](const EarleyParser::Item& it) {
    const uint32_t parent = context_id(g.rule_of(it.state), it.origin, depth + 1);
    if (parent == kNoContext) return false;  // the in-progress mark stays: also none
    pairs.emplace_back(it.state, parent);
    return true;
  };
  if (here.indexed) {
    if (const auto c = here.callers.find(rule); c != here.callers.end()) {
      const std::vector<uint32_t>& list = c->second;  // an item once per edge to `rule`
      for (size_t k = 0; k < list.size(); ++k) {
        if (k > 0 && list[k] == list[k - 1]) continue;
        if (!visit(items[list[k]])) return kNoContext;
      }
    }
  } else {
    for (const auto& it : items) {
      const auto edges = g.rule_edges(it.state);
      if (std::none_of(edges.begin(), edges.end(), [&](const auto& e) { return e.rule == rule; })) continue;
      if (!visit(it)) return kNoContext;
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<uint32_t>& desc = context_desc_;
  desc.clear();
  for (const auto& [s, p] : pairs) {
    desc.push_back(s);
    desc.push_back(p);
  }
  const uint32_t id = cache_->configurations().intern(desc, memo_generation_);
  if (id == ConfigurationCache::kNone) return kNoContext;
  context_memo_[origin].set(rule, id);
  return id;
}

bool EarleyMatcher::signature(std::span<const EarleyParser::Item> kernel, std::vector<uint32_t>& key) {
  key.clear();
  key.push_back(parser_.accepting() ? 1 : 0);
  std::vector<std::pair<uint32_t, uint32_t>> entries;
  const GrammarAutomaton& g = grammar();
  for (const auto& it : kernel) {
    const uint32_t ctx = context_id(g.rule_of(it.state), it.origin, 0);
    if (ctx == kNoContext) return false;
    entries.emplace_back(it.state, ctx);
  }
  std::sort(entries.begin(), entries.end());
  for (const auto& [s, c] : entries) {
    key.push_back(s);
    key.push_back(c);
  }
  return true;
}

const StateMask& EarleyMatcher::item_mask(const EarleyParser::Item& item) {
  if (item.origin == EarleyParser::kBoundary || !cache_->continuable(item.state)) return cache_->get(item.state);
  // The automaton rules reading many bytes (64 or more first bytes: a string's block or
  // tail, not an escape) that the callers of this instance of R call right after it; the
  // smallest id (any one is exact, the same one shares the most).
  const GrammarAutomaton& g = grammar();
  const uint32_t rule = g.rule_of(item.state);
  uint32_t next = UINT32_MAX;
  for (const auto& caller : parser_.items_at(item.origin)) {
    for (const auto& e : g.rule_edges(caller.state)) {
      if (e.rule != rule) continue;
      for (const auto& after : g.rule_edges(e.target)) {
        if (after.rule < next && !g.rule_automaton_key(after.rule).empty() &&
            GrammarAutomaton::byte_count(g.rule_first(after.rule)) >= TokenMaskCache::kBroadBytes) {
          next = after.rule;
        }
      }
    }
  }
  return next == UINT32_MAX ? cache_->get(item.state) : cache_->continued(item.state, next);
}

void EarleyMatcher::compose(std::span<const EarleyParser::Item> kernel, std::span<uint32_t> words) {
  const GrammarAutomaton& g = grammar();
  item_masks_.clear();
  for (const auto& it : kernel) item_masks_.push_back(&item_mask(it));
  // Accepted sets: once per distinct mask.
  std::vector<const StateMask*> masks(item_masks_);
  std::sort(masks.begin(), masks.end());
  masks.erase(std::unique(masks.begin(), masks.end()), masks.end());
  for (const StateMask* m : masks) m->accepted.or_into(words);
  // Uncertain tokens: probe each item's distinct suffixes against the real context.
  for (size_t k = 0; k < kernel.size(); ++k) {
    const auto& it = kernel[k];
    const StateMask& m = *item_masks_[k];
    if (m.suffixes.empty()) continue;
    ++counters_.probes;
    parser_.probe_after_completion(g.rule_of(it.state), it.origin, m.suffixes, m.suffix_common,
                                   probe_result_);
    for (size_t i = 0; i < m.suffixes.size(); ++i) {
      if (!probe_result_[i]) continue;
      for (int32_t id : m.suffix_tokens(i)) set_bit(words, static_cast<size_t>(id));
    }
  }
}

// An item (s, o) is implied by another (s', o) of the same rule when s' reaches s through
// rule edges of nullable rules only (s' -<ws>-> s: the item after an empty `ws`): a walk
// from s' skips those rules in every way, so it reads every token a walk from s reads, with
// the same completions of the rule, and s's mask adds nothing to the mask of s'.
// Near-linear: each item's walk over nullable rule edges lists the states it reaches (a few:
// the walk keeps at most 8), and those are looked up among the items of the same origin, so
// a kernel of 100,000 items costs a sort, not 10^10 comparisons.
void EarleyMatcher::prune_implied(std::vector<EarleyParser::Item>& kernel) const {
  if (kernel.size() < 2) return;
  const GrammarAutomaton& g = grammar();
  // Items sorted by (origin, state), to find the items a walk reaches.
  std::vector<uint32_t> order(kernel.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto key = [&](uint32_t i) { return std::pair(kernel[i].origin, kernel[i].state); };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  // (implied item, implying item): j's walk reaches i's state, in j's origin (and rule: rule
  // edges stay in their rule).
  std::vector<std::pair<uint32_t, uint32_t>> implies;
  for (uint32_t j = 0; j < kernel.size(); ++j) {
    if (g.rule_edges(kernel[j].state).empty()) continue;
    uint32_t frontier[8];
    size_t n = 0, head = 0;
    frontier[n++] = kernel[j].state;
    while (head < n) {
      const uint32_t s = frontier[head++];
      for (const auto& e : g.rule_edges(s)) {
        if (!g.rule_nullable(e.rule)) continue;
        const std::pair target(kernel[j].origin, e.target);
        auto it = std::lower_bound(order.begin(), order.end(), target,
                                   [&](uint32_t i, const std::pair<uint32_t, uint32_t>& t) { return key(i) < t; });
        for (; it != order.end() && key(*it) == target; ++it) {
          if (*it != j) implies.emplace_back(*it, j);
        }
        if (n < std::size(frontier) && std::find(frontier, frontier + n, e.target) == frontier + n) frontier[n++] = e.target;
      }
    }
  }
  std::sort(implies.begin(), implies.end());
  // In kernel order, as the pairwise definition reads: item i is dropped when an item after
  // it, or one before it that was kept, implies it (of items implying each other, one stays).
  std::vector<uint8_t> implied(kernel.size(), 0);
  for (size_t k = 0; k < implies.size();) {
    const uint32_t i = implies[k].first;
    for (; k < implies.size() && implies[k].first == i; ++k) {
      const uint32_t j = implies[k].second;
      if (j > i || !implied[j]) implied[i] = 1;
    }
  }
  size_t k = 0;
  for (size_t i = 0; i < kernel.size(); ++i) {
    if (!implied[i]) kernel[k++] = kernel[i];
  }
  kernel.resize(k);
}

void EarleyMatcher::collect_kernel() {
  // Kernel items: those not created by prediction at this position. At position 0 the
  // root's start item stands for the whole set.
  const size_t here = parser_.num_bytes();
  const GrammarAutomaton& g = grammar();
  kernel_.clear();
  for (const auto& it : parser_.current_items()) {
    if (here == 0 ? (it.origin == 0 && it.state == g.rule_start(g.root_rule())) : it.origin < here) {
      kernel_.push_back(it);
    }
  }
  prune_implied(kernel_);
  ConfigurationCache& configurations = cache_->configurations();
  if (const uint64_t generation = configurations.generation(); generation != memo_generation_) {
    context_memo_.clear();
    memo_generation_ = generation;
  }
}

bool EarleyMatcher::configuration_key(std::vector<uint32_t>& key) {
  collect_kernel();
  if (!signature(kernel_, key)) return false;
  key.push_back(terminated_ ? 1 : 0);
  key.push_back(static_cast<uint32_t>(memo_generation_));
  return true;
}

void EarleyMatcher::fill_next_token_bitmask(std::span<uint32_t> words) {
  const Vocabulary& vocab = vocabulary();
  const size_t n_words = vocab.bitmask_words();
  if (words.size() < n_words) {
    throw std::invalid_argument(fmt::format("bitmask has {} words, the vocabulary needs {}",
                                            words.size(), n_words));
  }
  ++counters_.masks;
  // Words past the vocabulary's are cleared here; the mask's own are written whole below (a
  // configuration's copy, or cleared before they are composed), not cleared first and then
  // overwritten: 16 KB for Llama 3, about a tenth of a mask found among the configurations.
  std::fill(words.begin() + static_cast<ptrdiff_t>(n_words), words.end(), 0u);
  const std::span<uint32_t> mask = words.first(n_words);
  if (terminated_) {
    std::fill(mask.begin(), mask.end(), 0u);
    return;
  }

  collect_kernel();
  ConfigurationCache& configurations = cache_->configurations();
  const bool cacheable = use_configurations_ && signature(kernel_, key_);
  std::shared_ptr<const std::vector<uint32_t>> hit;
  if (cacheable && (hit = configurations.find(key_, memo_generation_))) {
    ++counters_.configuration_hits;
    std::copy(hit->begin(), hit->end(), mask.begin());
  } else {
    std::fill(mask.begin(), mask.end(), 0u);
    compose(kernel_, mask);
    if (parser_.accepting()) {
      for (int32_t id : vocab.eog_ids()) set_bit(mask, static_cast<size_t>(id));
    }
    if (cacheable) configurations.insert(key_, std::vector<uint32_t>(mask.begin(), mask.end()), memo_generation_);
  }
  if (max_tokens_ != SIZE_MAX) apply_budget(mask, cacheable ? &key_ : nullptr);
}

// ---- length-aware closing (docs/closing.md)

void EarleyMatcher::set_max_tokens(size_t max_tokens) {
  max_tokens_ = max_tokens;
  if (max_tokens == SIZE_MAX) {
    plans_.clear();
  } else {
    plans_.assign(history_.size() + 1, std::nullopt);
  }
  step_plan_.reset();
}

CompletionTracker& EarleyMatcher::tracker() {
  if (!tracker_) tracker_ = std::make_unique<CompletionTracker>(grammar(), cache_->closing());
  return *tracker_;
}

uint64_t EarleyMatcher::current_completion(std::string& text) {
  CompletionTracker& t = tracker();
  uint64_t tokens = t.tokens(parser_, t.best(parser_), text);
  if (!plans_.empty() && plans_.back()) {
    const uint32_t kept = cache_->closing().speller.min_tokens(*plans_.back());
    if (kept < tokens) {
      tokens = kept;
      text = *plans_.back();
    }
  }
  return tokens;
}

size_t EarleyMatcher::min_tokens_to_accept() {
  if (terminated_ || parser_.accepting()) return 0;
  std::string text;
  const uint64_t tokens = current_completion(text);
  return tokens == kNoCompletion ? SIZE_MAX : static_cast<size_t>(tokens);
}

std::string EarleyMatcher::completion_text() {
  std::string text;
  if (!terminated_) current_completion(text);
  return text;
}

void EarleyMatcher::apply_budget(std::span<uint32_t> mask, const std::vector<uint32_t>* key) {
  const Vocabulary& vocab = vocabulary();
  const size_t used = history_.size();
  const uint64_t remaining = max_tokens_ > used ? max_tokens_ - used : 0;
  const uint64_t ending = eog_tokens();
  if (remaining < 1 + ending) {
    // No room for another text token: end of generation (when allowed) or nothing.
    std::vector<int32_t> eog;
    for (int32_t id : vocab.eog_ids()) {
      if (remaining >= 1 && test_bit(mask, static_cast<size_t>(id))) eog.push_back(id);
    }
    std::fill(mask.begin(), mask.end(), 0u);
    for (int32_t id : eog) set_bit(mask, static_cast<size_t>(id));
    return;
  }
  const uint64_t limit = remaining - 1 - ending;  // tokens to accept after the next one
  const ClosingData& data = cache_->closing();
  const uint64_t bound = data.completions.max_configuration_bytes();
  if (data.speller.spells_every_byte() && bound != kNoCompletion && bound <= limit) return;
  if (key) {
    if (const auto r = data.find_restriction(*key, memo_generation_)) {
      if (r->largest <= limit) return;
      if (r->recorded) {
        for (const auto& [u, id] : r->needs) {
          if (u <= limit) break;
          clear_bit(mask, static_cast<size_t>(id));
        }
        step_plan_ = r->plan;
        return;
      }
    }
  }
  std::string plan;
  current_completion(plan);
  std::vector<std::pair<uint64_t, int32_t>> needs;
  const uint64_t largest = tracker().restrict(parser_, vocab, mask, limit, plan, key ? &needs : nullptr);
  if (key) {
    auto r = std::make_shared<ClosingData::Restriction>();
    r->largest = largest;
    if (needs.size() <= ClosingData::kMaxRecordedTokens) {
      std::sort(needs.begin(), needs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      r->needs = std::move(needs);
      r->recorded = true;
      r->plan = plan;
    }
    data.insert_restriction(*key, memo_generation_, std::move(r));
  }
  if (largest > limit) step_plan_ = std::move(plan);
}

void EarleyMatcher::push_plan(std::string_view bytes) {
  if (plans_.empty()) return;
  std::optional<std::string> next;
  if (step_plan_ && step_plan_->size() >= bytes.size() && step_plan_->compare(0, bytes.size(), bytes) == 0) {
    next = step_plan_->substr(bytes.size());
  }
  plans_.push_back(std::move(next));
  step_plan_.reset();
}

std::string EarleyMatcher::jump_forward_bytes(size_t max_bytes) {
  std::string out;
  if (terminated_) return out;
  const GrammarAutomaton& g = grammar();
  while (out.size() < max_bytes && !parser_.accepting()) {
    int only = -1;
    bool several = false;
    for (const auto& it : parser_.current_items()) {
      for (const auto& e : g.byte_edges(it.state)) {
        if (e.lo != e.hi || (only >= 0 && only != e.lo)) several = true;
        only = e.lo;
      }
      if (several) break;
    }
    if (several || only < 0) break;
    if (!parser_.advance(static_cast<uint8_t>(only))) break;
    out.push_back(static_cast<char>(only));
  }
  parser_.rollback(out.size());
  return out;
}

void fill_next_token_bitmasks(std::span<EarleyMatcher* const> matchers, std::span<uint32_t> words,
                              size_t stride, unsigned threads) {
  if (words.size() < matchers.size() * stride) {
    throw std::invalid_argument("fill_next_token_bitmasks: the output is smaller than matchers × stride");
  }
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(matchers.size()));
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < matchers.size();) {
      if (matchers[i] == nullptr) continue;
      try {
        matchers[i]->fill_next_token_bitmask(words.subspan(i * stride, stride));
      } catch (...) {
        std::lock_guard lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace lockstep
