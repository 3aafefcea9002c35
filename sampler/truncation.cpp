// sampler/truncation.cpp — truncation samplers beyond top-k / top-p / min-p: locally typical
// sampling, ε- and η-sampling, and mirostat v1 / v2 (see sampler.h; docs/decoding.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "sampler/sampler.h"

namespace lockstep {

namespace {

// Entropy in nats of the candidates' distribution (after softmax); zero-probability entries
// (logit -inf) contribute nothing.
double entropy(const Candidates& c) {
  double h = 0;
  for (const auto& t : c.data) {
    if (t.p > 0) h -= t.p * std::log(static_cast<double>(t.p));
  }
  return h;
}

// Keeps the candidates whose probability is at least `threshold`, and always the most
// probable one (c is sorted by softmax).
void keep_at_least(Candidates& c, double threshold) {
  size_t keep = 1;
  while (keep < c.data.size() && c.data[keep].p >= threshold) ++keep;
  c.data.resize(keep);
}

class Typical : public LogitsProcessor {
 public:
  explicit Typical(float p) : p_(p) {}
  const char* name() const override { return "typical"; }
  void apply(Candidates& c) override {
    if (p_ >= 1.0f || c.data.size() <= 1) return;
    c.softmax();
    const double h = entropy(c);
    // Distance of each token's information content from the expected one, |−log p − H|;
    // the tokens closest to it are kept until their mass reaches p (the one that crosses
    // stays). Zero-probability tokens are infinitely far.
    std::vector<double> d(c.data.size());
    for (size_t i = 0; i < c.data.size(); ++i) {
      const double p = c.data[i].p;
      d[i] = p > 0 ? std::abs(-std::log(p) - h) : std::numeric_limits<double>::infinity();
    }
    std::vector<size_t> order(c.data.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return d[a] < d[b]; });
    double cum = 0;
    size_t keep = order.size();
    for (size_t i = 0; i < order.size(); ++i) {
      cum += c.data[order[i]].p;
      if (cum >= p_) {
        keep = i + 1;
        break;
      }
    }
    std::vector<TokenCandidate> kept;
    kept.reserve(keep);
    for (size_t i = 0; i < keep; ++i) kept.push_back(c.data[order[i]]);
    c.data = std::move(kept);
    c.sorted = false;
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<Typical>(*this); }

 private:
  float p_;
};

class EpsilonCutoff : public LogitsProcessor {
 public:
  explicit EpsilonCutoff(float e) : e_(e) {}
  const char* name() const override { return "epsilon"; }
  void apply(Candidates& c) override {
    if (e_ <= 0.0f || c.data.empty()) return;
    c.softmax();
    keep_at_least(c, e_);
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<EpsilonCutoff>(*this); }

 private:
  float e_;
};

class EtaCutoff : public LogitsProcessor {
 public:
  explicit EtaCutoff(float e) : e_(e) {}
  const char* name() const override { return "eta"; }
  void apply(Candidates& c) override {
    if (e_ <= 0.0f || c.data.empty()) return;
    c.softmax();
    // η = min(ε, √ε · exp(−H)): the cut-off tightens when the distribution is peaked.
    const double eta = std::min<double>(e_, std::sqrt(static_cast<double>(e_)) * std::exp(-entropy(c)));
    keep_at_least(c, eta);
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<EtaCutoff>(*this); }

 private:
  float e_;
};

// Mirostat keeps the surprise (−log₂ p of the chosen token) near τ with a feedback value μ,
// starting at 2τ and moved by η·(observed − τ) after every token the chain chose. It is a
// selector: it truncates, then draws. μ is stacked per accepted token so that rollback()
// restores it; a token the chain did not choose (a forced one) leaves μ as it was.
class Mirostat : public LogitsProcessor {
 public:
  Mirostat(int version, float tau, float eta, size_t n_vocab, uint64_t seed)
      : version_(version), tau_(tau), eta_(eta), n_vocab_(n_vocab), seed_(seed), rng_(seed), mu_{2.0 * tau} {}
  const char* name() const override { return version_ == 1 ? "mirostat-v1" : "mirostat-v2"; }

  void apply(Candidates& c) override {
    c.selected = -1;
    observed_ = false;
    if (c.data.empty()) return;
    c.softmax();
    if (c.data[0].logit == -std::numeric_limits<float>::infinity()) return;
    const double mu = mu_.back();
    if (version_ == 1) {
      c.data.resize(std::min(c.data.size(), v1_k(c, mu)));
    } else {
      // v2: drop every token more surprising than μ (the most probable one stays).
      size_t keep = 1;
      while (keep < c.data.size() && c.data[keep].p > 0 && -std::log2(static_cast<double>(c.data[keep].p)) <= mu) {
        ++keep;
      }
      c.data.resize(keep);
    }
    // The surprise is measured on the distribution as received (the paper's reference code
    // takes −log₂ of the untruncated probability); the draw uses the renormalized one.
    received_.resize(c.data.size());
    for (size_t i = 0; i < c.data.size(); ++i) received_[i] = c.data[i].p;
    c.sorted = false;
    c.softmax();  // renormalized over the kept tokens (a stable sort: the order stays)
    const int32_t x = draw_from(c, static_cast<double>(rng_() >> 11) * 0x1.0p-53);
    size_t i = 0;
    while (c.data[i].id != x) ++i;
    c.selected = selected_ = x;
    surprise_ = -std::log2(static_cast<double>(received_[i]));
    observed_ = true;
  }

  void accept(int32_t token) override {
    double mu = mu_.back();
    if (observed_ && token == selected_) mu -= eta_ * (surprise_ - tau_);
    mu_.push_back(mu);
    observed_ = false;
  }
  void rollback(size_t n) override {
    if (n >= mu_.size()) throw std::out_of_range("mirostat: rollback past the start");
    mu_.resize(mu_.size() - n);
  }
  void reset() override {
    rng_.seed(seed_);
    mu_.assign(1, 2.0 * tau_);
    observed_ = false;
  }
  std::unique_ptr<LogitsProcessor> clone() const override { return std::make_unique<Mirostat>(*this); }
  double mu() const { return mu_.back(); }

 private:
  // Mirostat v1 (Basu et al. 2021, Algorithm 1): estimate the Zipf exponent s from the m = 100
  // most probable tokens by least squares on log(p_i / p_{i+1}) against log((i+2)/(i+1)), then
  // k = ((ε̂ · 2^μ) / (1 − N^(−ε̂)))^(1/ŝ) with ε̂ = ŝ − 1 and N the vocabulary size.
  size_t v1_k(const Candidates& c, double mu) const {
    constexpr size_t kM = 100;
    double num = 0, den = 0;
    for (size_t i = 0; i + 1 < std::min(kM, c.data.size()); ++i) {
      if (c.data[i + 1].p <= 0) break;
      const double t = std::log((i + 2.0) / (i + 1.0));
      const double b = std::log(static_cast<double>(c.data[i].p) / c.data[i + 1].p);
      num += t * b;
      den += t * t;
    }
    if (den == 0) return 1;
    const double s = num / den;
    const double e = s - 1;
    if (!(s > 0) || std::abs(e) < 1e-9) return c.data.size();
    const double n = static_cast<double>(n_vocab_ ? n_vocab_ : c.data.size());
    const double k = std::pow(e * std::exp2(mu) / (1 - std::pow(n, -e)), 1 / s);
    if (!std::isfinite(k) || k >= static_cast<double>(c.data.size())) return c.data.size();
    return std::max<size_t>(1, static_cast<size_t>(std::llround(k)));
  }

  int version_;
  double tau_, eta_;
  size_t n_vocab_;
  uint64_t seed_;
  std::mt19937_64 rng_;
  std::vector<double> mu_;  // μ before the first token, then after each accepted one
  // The draw of the last apply(): accept() of that token moves μ; of any other (a token the
  // grammar forced, or one the caller chose) leaves it unchanged.
  bool observed_ = false;
  std::vector<float> received_;  // probabilities of the kept tokens before renormalizing
  int32_t selected_ = -1;
  double surprise_ = 0;
};

}  // namespace

std::unique_ptr<LogitsProcessor> make_typical(float p) { return std::make_unique<Typical>(p); }
std::unique_ptr<LogitsProcessor> make_epsilon_cutoff(float epsilon) { return std::make_unique<EpsilonCutoff>(epsilon); }
std::unique_ptr<LogitsProcessor> make_eta_cutoff(float epsilon) { return std::make_unique<EtaCutoff>(epsilon); }
std::unique_ptr<LogitsProcessor> make_mirostat(int version, float tau, float eta, size_t n_vocab, uint64_t seed) {
  if (version != 1 && version != 2) throw std::invalid_argument("mirostat version must be 1 or 2");
  if (!(tau > 0) || !std::isfinite(tau)) throw std::invalid_argument("mirostat tau must be > 0");
  if (!(eta > 0) || !std::isfinite(eta)) throw std::invalid_argument("mirostat eta must be > 0");
  return std::make_unique<Mirostat>(version, tau, eta, n_vocab, seed);
}
double mirostat_mu(const LogitsProcessor& p) {
  const auto* m = dynamic_cast<const Mirostat*>(&p);
  if (!m) throw std::invalid_argument("mirostat_mu: not a mirostat processor");
  return m->mu();
}

}  // namespace lockstep
