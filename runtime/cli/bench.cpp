// runtime/cli/bench.cpp — `lockstep bench masks`: token-mask latency on a real document.
//
// Tokenizes DOC with a real tokenizer, then for every token: fills the mask (timed), checks
// that the document's own token is allowed, and accepts it (timed). Reports time to first
// mask (compile + first fill), mask time percentiles, accept time, allowed-token counts and
// the mask cache's size.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "automata/matcher.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/grammar_source.h"
#include "runtime/mapped_file.h"
#include "runtime/tokenizer.h"

namespace lockstep::cli {

namespace {

using Clock = std::chrono::steady_clock;
double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

struct BenchArgs {
  GrammarSourceArgs grammar;
  std::string tokenizer, input;
  bool json = false, precompute = false;
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

void run_masks(const BenchArgs& a) {
  const auto tok = load_tokenizer(a.tokenizer);
  const std::string doc = read_file(a.input);
  const std::vector<int32_t> ids = tok->encode(doc, false);

  const auto t_compile = Clock::now();
  const auto grammar = compile_grammar_source(a.grammar);
  const double compile_us = us_since(t_compile);
  auto cache = std::make_shared<TokenMaskCache>(grammar, tok->shared_vocabulary());
  double precompute_us = 0;
  if (a.precompute) {
    const auto t = Clock::now();
    cache->precompute();
    precompute_us = us_since(t);
  }
  GrammarMatcher m(cache);
  std::vector<uint32_t> mask(tok->vocabulary().bitmask_words());
  std::vector<double> mask_us, accept_us;
  std::vector<double> allowed;
  double ttfm_us = 0;
  for (size_t i = 0; i <= ids.size(); ++i) {
    const auto t0 = Clock::now();
    m.fill_next_token_bitmask(mask);
    const double us = us_since(t0);
    if (i == 0) ttfm_us = compile_us + us;
    mask_us.push_back(us);
    size_t n = 0;
    for (uint32_t w : mask) n += static_cast<size_t>(__builtin_popcount(w));
    allowed.push_back(static_cast<double>(n));
    if (i == ids.size()) {
      const bool eog_ok = std::any_of(tok->vocabulary().eog_ids().begin(), tok->vocabulary().eog_ids().end(),
                                      [&](int32_t e) { return (mask[e >> 5] >> (e & 31)) & 1; });
      if (!eog_ok) {
        throw std::runtime_error("the grammar does not accept the whole document (no end-of-generation "
                                 "token allowed after its last token)");
      }
      break;
    }
    const int32_t id = ids[i];
    if (!((mask[id >> 5] >> (id & 31)) & 1)) {
      throw std::runtime_error(fmt::format("token {} ({} of {}, bytes '{}') is not in the mask: the "
                                           "document does not match the grammar there",
                                           id, i, ids.size(), tok->token_bytes(id)));
    }
    const auto t1 = Clock::now();
    if (!m.accept_token(id)) throw std::runtime_error(fmt::format("token {} was rejected", id));
    accept_us.push_back(us_since(t1));
  }
  const auto st = cache->stats();
  double mean = 0, accept_mean = 0, allowed_mean = 0;
  for (double x : mask_us) mean += x;
  for (double x : accept_us) accept_mean += x;
  for (double x : allowed) allowed_mean += x;
  mean /= static_cast<double>(mask_us.size());
  accept_mean /= static_cast<double>(std::max<size_t>(1, accept_us.size()));
  allowed_mean /= static_cast<double>(allowed.size());
  const auto& ctr = m.counters();
  if (a.json) {
    nlohmann::json j = {
        {"tokenizer", a.tokenizer}, {"vocab_size", tok->size()}, {"input", a.input},
        {"input_bytes", doc.size()}, {"tokens", ids.size()}, {"masks", mask_us.size()},
        {"compile_us", compile_us}, {"precompute_us", precompute_us}, {"ttfm_us", ttfm_us},
        {"mask_us", {{"mean", mean}, {"p50", percentile(mask_us, 0.5)}, {"p90", percentile(mask_us, 0.9)},
                     {"p99", percentile(mask_us, 0.99)}, {"max", percentile(mask_us, 1.0)}}},
        {"accept_us", {{"mean", accept_mean}, {"p99", percentile(accept_us, 0.99)}, {"max", percentile(accept_us, 1.0)}}},
        {"allowed_tokens", {{"mean", allowed_mean}, {"min", percentile(allowed, 0)}, {"max", percentile(allowed, 1.0)}}},
        {"cache", {{"states", st.states}, {"computed", st.computed}, {"memory_bytes", st.memory_bytes},
                   {"compute_us", st.compute_seconds * 1e6}, {"uncertain_tokens", st.uncertain_tokens}}},
        {"configuration_hits", ctr.configuration_hits}, {"probes", ctr.probes}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("input            %s: %zu bytes, %zu tokens (vocabulary %zu)\n", a.input.c_str(), doc.size(),
              ids.size(), tok->size());
  std::printf("compile          %.1f µs%s\n", compile_us,
              a.precompute ? fmt::format(" (+ precompute {:.1f} ms)", precompute_us / 1000).c_str() : "");
  std::printf("time to 1st mask %.1f µs\n", ttfm_us);
  std::printf("mask             mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.1f µs  (%zu masks)\n", mean,
              percentile(mask_us, 0.5), percentile(mask_us, 0.9), percentile(mask_us, 0.99),
              percentile(mask_us, 1.0), mask_us.size());
  std::printf("accept           mean %.2f  p99 %.2f  max %.1f µs\n", accept_mean, percentile(accept_us, 0.99),
              percentile(accept_us, 1.0));
  std::printf("allowed tokens   mean %.0f  min %.0f  max %.0f\n", allowed_mean, percentile(allowed, 0),
              percentile(allowed, 1.0));
  std::printf("mask cache       %zu / %zu states computed in %.1f ms, %.1f KiB, %zu uncertain tokens\n",
              st.computed, st.states, st.compute_seconds * 1e3, static_cast<double>(st.memory_bytes) / 1024,
              st.uncertain_tokens);
  std::printf("configurations   %zu of %zu masks served from the configuration cache, %zu probes\n",
              ctr.configuration_hits, ctr.masks, ctr.probes);
}

}  // namespace

void add_bench(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto args = std::make_shared<BenchArgs>();
  CLI::App* masks = bench->add_subcommand("masks", "Token-mask latency over a document");
  add_grammar_source_options(*masks, args->grammar);
  masks->add_option("--tokenizer,-t", args->tokenizer, "Tokenizer file")->required();
  masks->add_option("--input,-i", args->input, "Document the grammar accepts")->required();
  masks->add_flag("--json", args->json, "Machine-readable output");
  masks->add_flag("--precompute", args->precompute, "Fill the whole mask cache before starting");
  masks->callback([args] { run_masks(*args); });
}

}  // namespace lockstep::cli
