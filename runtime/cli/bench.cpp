// runtime/cli/bench.cpp — `lockstep bench masks`: token-mask latency on a real document.
//
// Tokenizes DOC with a real tokenizer, then for every token: fills the mask (timed), checks
// that the document's own token is allowed, and accepts it (timed). Two passes: cold (a new
// cache, per-state masks computed on first use; gives the time to first mask) and warm
// (every per-state mask precomputed). Reports mask and accept time percentiles,
// allowed-token counts and the mask cache's size.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "automata/matcher.h"
#include "automata/token_bitmask.h"
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
  bool json = false;
  int64_t max_tokens = -1;  // a token budget for length-aware closing (-1: none)
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

struct Pass {
  std::vector<double> mask_us, accept_us, allowed;
  size_t configuration_hits = 0, probes = 0, masks = 0;
};

// Runs the document through a fresh matcher on `cache`, timing every mask and accept.
Pass run_document(const std::shared_ptr<TokenMaskCache>& cache, const Tokenizer& tok,
                  const std::vector<int32_t>& ids, int64_t max_tokens) {
  Pass p;
  EarleyMatcher m(cache);
  if (max_tokens >= 0) m.set_max_tokens(static_cast<size_t>(max_tokens));
  std::vector<uint32_t> mask(tok.vocabulary().bitmask_words());
  for (size_t i = 0; i <= ids.size(); ++i) {
    const auto t0 = Clock::now();
    m.fill_next_token_bitmask(mask);
    p.mask_us.push_back(us_since(t0));
    p.allowed.push_back(static_cast<double>(count_bits(mask)));
    if (i == ids.size()) {
      const auto eog = tok.vocabulary().eog_ids();
      if (!std::any_of(eog.begin(), eog.end(), [&](int32_t e) { return test_bit(mask, static_cast<size_t>(e)); })) {
        throw std::runtime_error("the grammar does not accept the whole document (no end-of-generation "
                                 "token allowed after its last token)");
      }
      break;
    }
    const int32_t id = ids[i];
    if (!test_bit(mask, static_cast<size_t>(id))) {
      throw std::runtime_error(fmt::format("token {} ({} of {}, bytes '{}') is not in the mask: the "
                                           "document does not match the grammar there",
                                           id, i, ids.size(), tok.token_bytes(id)));
    }
    const auto t1 = Clock::now();
    if (!m.accept_token(id)) throw std::runtime_error(fmt::format("token {} was rejected", id));
    p.accept_us.push_back(us_since(t1));
  }
  p.configuration_hits = m.counters().configuration_hits;
  p.probes = m.counters().probes;
  p.masks = m.counters().masks;
  return p;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

nlohmann::json stats_json(const std::vector<double>& v) {
  return {{"mean", mean_of(v)}, {"p50", percentile(v, 0.5)}, {"p90", percentile(v, 0.9)},
          {"p99", percentile(v, 0.99)}, {"max", percentile(v, 1.0)}};
}

void print_pass(const char* title, const Pass& p) {
  std::printf("%s\n", title);
  std::printf("  mask           mean %.2f  p50 %.2f  p90 %.2f  p99 %.2f  max %.1f µs  (%zu masks)\n",
              mean_of(p.mask_us), percentile(p.mask_us, 0.5), percentile(p.mask_us, 0.9),
              percentile(p.mask_us, 0.99), percentile(p.mask_us, 1.0), p.mask_us.size());
  std::printf("  accept         mean %.2f  p99 %.2f  max %.1f µs\n", mean_of(p.accept_us),
              percentile(p.accept_us, 0.99), percentile(p.accept_us, 1.0));
  std::printf("  configurations %zu of %zu masks from the configuration cache, %zu suffix probes\n",
              p.configuration_hits, p.masks, p.probes);
}

void run_masks(const BenchArgs& a) {
  const auto tok = load_tokenizer(a.tokenizer);
  const std::string doc = read_file(a.input);
  const std::vector<int32_t> ids = tok->encode_continuation(doc);

  // Cold: compile, then masks computed lazily as the document reaches new states.
  const auto t_compile = Clock::now();
  const auto grammar = compile_grammar_source(a.grammar);
  const double compile_us = us_since(t_compile);
  auto cache = std::make_shared<TokenMaskCache>(grammar, tok->shared_vocabulary());
  if (a.max_tokens >= 0 && static_cast<size_t>(a.max_tokens) < ids.size() + 1) {
    throw std::runtime_error(fmt::format("--max-tokens {}: the document takes {} tokens and end of generation",
                                         a.max_tokens, ids.size() + 1));
  }
  const Pass cold = run_document(cache, *tok, ids, a.max_tokens);
  const double ttfm_us = compile_us + cold.mask_us.front();
  const auto cold_stats = cache->stats();
  // Warm: every state's mask precomputed, then the same document again.
  const auto t_pre = Clock::now();
  cache->precompute();
  const double precompute_us = us_since(t_pre);
  const Pass warm = run_document(cache, *tok, ids, a.max_tokens);
  const auto st = cache->stats();

  if (a.json) {
    nlohmann::json j = {
        {"tokenizer", a.tokenizer}, {"vocab_size", tok->size()}, {"input", a.input},
        {"input_bytes", doc.size()}, {"tokens", ids.size()}, {"max_tokens", a.max_tokens}, {"compile_us", compile_us},
        {"ttfm_us", ttfm_us},
        {"cold", {{"mask_us", stats_json(cold.mask_us)}, {"accept_us", stats_json(cold.accept_us)},
                  {"states_computed", cold_stats.computed}, {"configuration_hits", cold.configuration_hits}}},
        {"precompute_us", precompute_us},
        {"warm", {{"mask_us", stats_json(warm.mask_us)}, {"accept_us", stats_json(warm.accept_us)},
                  {"configuration_hits", warm.configuration_hits}, {"probes", warm.probes}}},
        {"allowed_tokens", stats_json(warm.allowed)},
        {"cache", {{"states", st.states}, {"memory_bytes", st.memory_bytes}, {"segment_bytes", st.segment_bytes},
                   {"compute_us", st.compute_seconds * 1e6}, {"uncertain_tokens", st.uncertain_tokens}}}};
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("input            %s: %zu bytes, %zu tokens (vocabulary %zu)\n", a.input.c_str(), doc.size(),
              ids.size(), tok->size());
  std::printf("compile          %.1f µs\n", compile_us);
  std::printf("time to 1st mask %.1f µs (compile + first mask, lazy cache)\n", ttfm_us);
  print_pass("cold pass (per-state masks computed on first use)", cold);
  std::printf("  states         %zu of %zu computed during the pass\n", cold_stats.computed, cold_stats.states);
  std::printf("precompute       %.1f ms for the remaining states (%zu threads)\n", precompute_us / 1000,
              static_cast<size_t>(std::max(1u, std::thread::hardware_concurrency())));
  print_pass("warm pass (all per-state masks cached)", warm);
  std::printf("allowed tokens   mean %.0f  min %.0f  max %.0f\n", mean_of(warm.allowed),
              percentile(warm.allowed, 0), percentile(warm.allowed, 1.0));
  std::printf("mask cache       %zu states, %.1f KiB (+ %.1f KiB of walk segments), %.1f ms of compute in all, "
              "%zu uncertain tokens\n",
              st.states, static_cast<double>(st.memory_bytes) / 1024, static_cast<double>(st.segment_bytes) / 1024,
              st.compute_seconds * 1e3, st.uncertain_tokens);
}

}  // namespace

void add_bench(CLI::App& app) {
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks");
  bench->require_subcommand(1);
  auto args = std::make_shared<BenchArgs>();
  CLI::App* masks = bench->add_subcommand("masks", "Token-mask latency over a document");
  add_grammar_source_options(*masks, args->grammar, GrammarPurpose::kBench);
  masks->add_option("--tokenizer,-t", args->tokenizer, "Tokenizer file")->required();
  masks->add_option("--input,-i", args->input, "Document the grammar accepts")->required();
  masks->add_flag("--json", args->json, "Machine-readable output");
  masks->add_option("--max-tokens", args->max_tokens,
                    "Mask under a token budget of N (length-aware closing; at least the document's tokens + 1)");
  masks->callback([args] { run_masks(*args); });
  add_maskbench(*bench);
  add_closing_bench(*bench);
  add_generation_bench(*bench);
  add_speculative_bench(*bench);
}

}  // namespace lockstep::cli
