// sampler/processors.cpp — the logits processors that reshape logits: bias, penalties,
// temperature, top-k, top-p, min-p (see sampler.h).
#include "automata/vocabulary.h"
#include "sampler/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>


namespace lockstep {

void Candidates::assign(std::span<const float> logits) {
  data.resize(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) {
    data[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
  }
  sorted = false;
  selected = -1;
}

namespace {
void sort_descending(Candidates& c) {
  if (c.sorted) return;
  std::stable_sort(c.data.begin(), c.data.end(), [](const TokenCandidate& a, const TokenCandidate& b) {
    return a.logit > b.logit;
  });
  c.sorted = true;
}
}  // namespace

void Candidates::softmax() {
  sort_descending(*this);
  if (data.empty()) return;
  const float max = data[0].logit;
  double sum = 0;
  for (auto& t : data) {
    t.p = std::exp(t.logit - max);
    sum += t.p;
  }
  for (auto& t : data) t.p = static_cast<float>(t.p / sum);
}

namespace {

class LogitBias : public LogitsProcessor {
 public:
  explicit LogitBias(std::map<int32_t, float> bias) : bias_(std::move(bias)) {}
  const char* name() const override { return "logit-bias"; }
  void apply(Candidates& c) override {
    for (auto& t : c.data) {
      auto it = bias_.find(t.id);
      if (it != bias_.end()) t.logit += it->second;
    }
    c.sorted = false;
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<LogitBias>(*this); }

 private:
  std::map<int32_t, float> bias_;
};

class Penalties : public LogitsProcessor {
 public:
  Penalties(int32_t last_n, float repeat, float frequency, float presence)
      : last_n_(last_n), repeat_(repeat), frequency_(frequency), presence_(presence) {}
  const char* name() const override { return "penalties"; }
  void apply(Candidates& c) override {
    if (counts_.empty()) return;
    for (auto& t : c.data) {
      auto it = counts_.find(t.id);
      if (it == counts_.end()) continue;
      if (t.logit > 0) {
        t.logit /= repeat_;
      } else {
        t.logit *= repeat_;
      }
      t.logit -= static_cast<float>(it->second) * frequency_ + presence_;
    }
    c.sorted = false;
  }
  // counts_ covers the window: the last last_n_ entries of history_ (all with last_n_ < 0).
  void accept(int32_t token) override {
    if (last_n_ == 0) return;
    history_.push_back(token);
    ++counts_[token];
    if (last_n_ > 0 && history_.size() > static_cast<size_t>(last_n_)) {
      uncount(history_[history_.size() - 1 - static_cast<size_t>(last_n_)]);
    }
  }
  void accept_context(int32_t token) override { accept(token); }
  void rollback(size_t n) override {
    if (last_n_ == 0) return;
    if (n > history_.size()) throw std::out_of_range("penalties: rollback past the start");
    for (size_t i = 0; i < n; ++i) {
      uncount(history_.back());
      history_.pop_back();
      // The entry that slid out of the window when the undone one came in slides back.
      if (last_n_ > 0 && history_.size() >= static_cast<size_t>(last_n_)) {
        ++counts_[history_[history_.size() - static_cast<size_t>(last_n_)]];
      }
    }
  }
  void reset() override {
    history_.clear();
    counts_.clear();
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<Penalties>(*this); }

 private:
  void uncount(int32_t token) {
    if (--counts_[token] == 0) counts_.erase(token);
  }
  int32_t last_n_;
  float repeat_, frequency_, presence_;
  std::vector<int32_t> history_;  // every accepted token (the window is its tail)
  std::unordered_map<int32_t, int32_t> counts_;
};

class Temperature : public LogitsProcessor {
 public:
  explicit Temperature(float t) : t_(t) {}
  const char* name() const override { return "temperature"; }
  void apply(Candidates& c) override {
    for (auto& t : c.data) t.logit /= t_;
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<Temperature>(*this); }

 private:
  float t_;
};

class TopK : public LogitsProcessor {
 public:
  explicit TopK(int32_t k) : k_(k) {}
  const char* name() const override { return "top-k"; }
  void apply(Candidates& c) override {
    if (k_ <= 0 || c.data.size() <= static_cast<size_t>(k_)) return;
    if (!c.sorted) {
      std::partial_sort(c.data.begin(), c.data.begin() + k_, c.data.end(),
                        [](const TokenCandidate& a, const TokenCandidate& b) {
                          return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
                        });
      c.sorted = true;
    }
    c.data.resize(static_cast<size_t>(k_));
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<TopK>(*this); }

 private:
  int32_t k_;
};

class TopP : public LogitsProcessor {
 public:
  explicit TopP(float p) : p_(p) {}
  const char* name() const override { return "top-p"; }
  void apply(Candidates& c) override {
    if (p_ >= 1.0f || c.data.empty()) return;
    c.softmax();
    double cum = 0;
    size_t keep = c.data.size();
    for (size_t i = 0; i < c.data.size(); ++i) {
      cum += c.data[i].p;
      if (cum >= p_) {
        keep = i + 1;  // the first token that crosses p stays
        break;
      }
    }
    c.data.resize(keep);
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<TopP>(*this); }

 private:
  float p_;
};

class MinP : public LogitsProcessor {
 public:
  explicit MinP(float p) : p_(p) {}
  const char* name() const override { return "min-p"; }
  void apply(Candidates& c) override {
    if (p_ <= 0.0f || c.data.empty()) return;
    c.softmax();
    const float threshold = p_ * c.data[0].p;
    size_t keep = 1;
    while (keep < c.data.size() && c.data[keep].p >= threshold) ++keep;
    c.data.resize(keep);
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<MinP>(*this); }

 private:
  float p_;
};

}  // namespace

std::unique_ptr<LogitsProcessor> make_logit_bias(std::map<int32_t, float> bias) {
  return std::make_unique<LogitBias>(std::move(bias));
}
std::unique_ptr<LogitsProcessor> make_penalties(int32_t last_n, float repeat, float frequency,
                                                float presence) {
  return std::make_unique<Penalties>(last_n, repeat, frequency, presence);
}
std::vector<int32_t> tokens_spelled(const Vocabulary& vocab, std::string_view text) {
  std::vector<int32_t> ids;
  if (text.empty()) return ids;
  for (size_t i = 0; i < vocab.size(); ++i) {
    const auto id = static_cast<int32_t>(i);
    if (!vocab.is_control(id) && vocab.token_bytes(id) == text) ids.push_back(id);
  }
  return ids;
}
std::unique_ptr<LogitsProcessor> make_temperature(float t) { return std::make_unique<Temperature>(t); }
std::unique_ptr<LogitsProcessor> make_top_k(int32_t k) { return std::make_unique<TopK>(k); }
std::unique_ptr<LogitsProcessor> make_top_p(float p) { return std::make_unique<TopP>(p); }
std::unique_ptr<LogitsProcessor> make_min_p(float p) { return std::make_unique<MinP>(p); }

}  // namespace lockstep
