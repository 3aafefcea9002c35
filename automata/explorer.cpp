// automata/explorer.cpp — see explorer.h.
#include "automata/explorer.h"

#include <chrono>
#include <deque>
#include <map>

#include <fmt/format.h>

#include "automata/token_bitmask.h"

namespace lockstep {

namespace {

using Clock = std::chrono::steady_clock;

bool any_byte(const GrammarAutomaton::ByteSet& s) { return (s[0] | s[1] | s[2] | s[3]) != 0; }

class Explorer {
 public:
  Explorer(const std::shared_ptr<TokenMaskCache>& cache, const ExploreOptions& options)
      : cache_(cache),
        options_(options),
        vocab_(cache->vocabulary()),
        words_(vocab_.bitmask_words()),
        start_(Clock::now()),
        rng_(options.seed) {
    report_.allowed.assign(vocab_.size(), false);
  }

  ExploreReport run() {
    walks();
    breadth_first();
    sweep_states();
    report_.seconds = elapsed();
    return std::move(report_);
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  // The time limit is shared: walks may take 40 % of it, the breadth-first pass up to 75 %
  // (with what the walks left), the state sweep the rest.
  bool out_of_time(double share = 1.0) {
    const double now = elapsed();
    if (now > options_.time_limit_seconds) report_.timed_out = true;
    return report_.timed_out || now > share * options_.time_limit_seconds;
  }
  void tick(const char* phase) {
    if (!options_.progress) return;
    const double now = elapsed();
    if (now < next_progress_) return;
    next_progress_ = now + 1.0;
    options_.progress(fmt::format("{}: {} walks, {} configurations, {} dead ends, {} end-of-generation traps, {:.0f} s",
                                  phase, report_.walks, report_.configurations, report_.dead_ends.size(),
                                  report_.eog_traps.size(), now));
  }

  // Records the allowed tokens of `mask` and what is wrong at this configuration; returns
  // whether a text token is allowed.
  bool inspect(EarleyMatcher& m, const std::vector<uint32_t>& mask, const std::vector<int32_t>& tokens,
               bool budgeted = false) {
    bool text = false, eog = false;
    for_each_set_bit(mask, [&](size_t id) {
      report_.allowed[id] = true;
      if (vocab_.is_eog(static_cast<int32_t>(id))) {
        eog = true;
      } else {
        text = true;
      }
    });
    if (text || budgeted) return text;  // a budget narrows the mask: not the grammar's own
    const bool accepting = m.is_accepting();
    const GrammarAutomaton::ByteSet next = m.next_bytes();
    if (!eog && !accepting) {
      note(report_.dead_ends, dead_end_index_, m, tokens, next);
    } else if (eog && any_byte(next)) {
      note(report_.eog_traps, eog_trap_index_, m, tokens, next);
    } else if (!eog && accepting && vocab_.eog_ids().empty() && !any_byte(next)) {
      note(report_.no_eog, no_eog_index_, m, tokens, next);
    }
    return false;
  }

  // One site per configuration, reached the shortest way found.
  using SiteIndex = std::map<std::vector<uint32_t>, size_t>;
  void note(std::vector<ExploreSite>& sites, SiteIndex& index, EarleyMatcher& m, const std::vector<int32_t>& tokens,
            const GrammarAutomaton::ByteSet& next) {
    std::vector<uint32_t> key;
    if (!m.configuration_key(key)) key = {UINT32_MAX, static_cast<uint32_t>(sites.size())};
    ExploreSite site{tokens, bytes_of(tokens), next};
    auto [it, fresh] = index.try_emplace(key, sites.size());
    if (fresh) {
      sites.push_back(std::move(site));
    } else if (tokens.size() < sites[it->second].tokens.size()) {
      sites[it->second] = std::move(site);
    }
  }

  std::string bytes_of(const std::vector<int32_t>& tokens) const {
    std::string out;
    for (int32_t id : tokens) out += vocab_.token_bytes(id);
    return out;
  }

  int32_t choose(const std::vector<int32_t>& tokens, const std::vector<uint32_t>& mask) {
    if (options_.choose) return options_.choose(tokens, mask, rng_);
    const size_t count = count_bits(mask);
    size_t pick = std::uniform_int_distribution<size_t>(0, count - 1)(rng_);
    for (size_t w = 0; w < mask.size(); ++w) {
      const size_t n = popcount32(mask[w]);
      if (pick >= n) {
        pick -= n;
        continue;
      }
      uint32_t bits = mask[w];
      for (; pick > 0; --pick) bits &= bits - 1;
      return static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(bits)));
    }
    return -1;
  }

  void walks() {
    EarleyMatcher m(cache_);
    std::vector<uint32_t> mask(words_);
    std::vector<int32_t> tokens;
    // Every second walk runs under length-aware closing with max_steps as its budget, so it
    // ends complete and can be re-checked; the others see the grammar's own masks.
    m.reset();
    report_.min_tokens = m.min_tokens_to_accept() == SIZE_MAX ? SIZE_MAX : m.min_tokens_to_accept() + m.eog_tokens();
    const bool can_close = report_.min_tokens <= options_.max_steps;
    for (size_t w = 0; w < options_.walks && !out_of_time(0.4); ++w) {
      m.reset();
      const bool closed = can_close && w % 2 == 1;
      m.set_max_tokens(closed ? options_.max_steps : SIZE_MAX);
      tokens.clear();
      ++report_.walks;
      report_.closed_walks += closed ? 1 : 0;
      bool finished = false, stopped = false;
      for (size_t step = 0; step < options_.max_steps && !stopped; ++step) {
        m.fill_next_token_bitmask(mask);
        const bool text = inspect(m, mask, tokens, closed);
        bool any = text;
        for (int32_t id : vocab_.eog_ids()) any = any || test_bit(mask, static_cast<size_t>(id));
        if (!any) {
          finished = m.is_accepting();  // accepting without an end-of-generation token
          stopped = true;
          break;
        }
        const int32_t id = choose(tokens, mask);
        if (id < 0 || !m.accept_token(id)) {
          stopped = true;
          break;
        }
        if (vocab_.is_eog(id)) {
          finished = true;
          stopped = true;
          break;
        }
        tokens.push_back(id);
        ++report_.walk_tokens;
      }
      if (finished) {
        report_.completed.push_back(tokens);
      } else if (!stopped) {
        ++report_.unfinished;
      }
      tick("walks");
    }
  }

  void breadth_first() {
    struct Node {
      EarleyMatcher m;
      std::vector<int32_t> tokens;
    };
    std::deque<Node> queue;
    std::map<std::vector<uint32_t>, bool> seen;
    EarleyMatcher root(cache_);
    std::vector<uint32_t> key;
    bool complete = root.configuration_key(key);
    seen.emplace(key, true);
    queue.push_back({std::move(root), {}});
    report_.configurations = 1;
    std::vector<uint32_t> mask(words_);
    size_t expanded = 0;
    while (!queue.empty()) {
      if (expanded >= options_.max_configurations || out_of_time(0.75)) {
        complete = false;
        break;
      }
      Node node = std::move(queue.front());
      queue.pop_front();
      ++expanded;
      node.m.fill_next_token_bitmask(mask);
      inspect(node.m, mask, node.tokens);
      for (size_t w = 0; w < mask.size(); ++w) {
        for (uint32_t bits = mask[w]; bits != 0; bits &= bits - 1) {
          const int32_t id = static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(bits)));
          if (vocab_.is_eog(id) || !node.m.accept_token(id)) continue;
          if (!node.m.configuration_key(key)) {
            complete = false;  // nested past the interning depth: cannot tell configurations apart
          } else if (seen.emplace(key, true).second) {
            std::vector<int32_t> path = node.tokens;
            path.push_back(id);
            queue.push_back({node.m.fork(), std::move(path)});
            ++report_.configurations;
          }
          node.m.rollback(1);
        }
        if ((w & 255) == 0) {
          tick("configurations");
          if (out_of_time(0.75)) break;
        }
      }
    }
    report_.exhaustive = complete && queue.empty() && !out_of_time(0.75);
  }

  // Every token any state's mask could allow in some context.
  void sweep_states() {
    const GrammarAutomaton& g = cache_->grammar();
    std::vector<uint32_t> words(words_, 0);
    for (uint32_t c = 0; c < g.num_mask_classes(); ++c) {
      if (out_of_time()) return;  // `possible` stays empty: unknown
      const StateMask& sm = cache_->get(g.mask_class_state(c));
      sm.accepted.or_into(words);
      for (const int32_t id : sm.suffix_token_ids) set_bit(words, static_cast<size_t>(id));
      tick("states");
    }
    report_.possible.assign(vocab_.size(), false);
    for (size_t id = 0; id < vocab_.size(); ++id) report_.possible[id] = test_bit(words, id);
    for (int32_t id : vocab_.eog_ids()) report_.possible[static_cast<size_t>(id)] = true;
  }

  std::shared_ptr<TokenMaskCache> cache_;
  const ExploreOptions& options_;
  const Vocabulary& vocab_;
  size_t words_;
  Clock::time_point start_;
  std::mt19937_64 rng_;
  double next_progress_ = 1.0;
  ExploreReport report_;
  SiteIndex dead_end_index_, eog_trap_index_, no_eog_index_;
};

}  // namespace

ExploreReport explore(const std::shared_ptr<TokenMaskCache>& cache, const ExploreOptions& options) {
  return Explorer(cache, options).run();
}

}  // namespace lockstep
