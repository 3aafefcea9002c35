// runtime/cli/generation_bench.cpp — `lockstep bench generation`: what a grammar costs a
// generation loop.
//
// Model mode (default): the same prompt and sampling settings generated with and without
// the grammar, alternating, `--runs` times each; tokens/s of each run and the ratio of
// medians. With jump-forward (the default) forced tokens enter the KV cache in one batched
// pass, so the constrained loop may read more tokens per second than the free one;
// `--no-jump-forward` makes every token a model step.
//
// Synthetic mode (`--synthetic --tokenizer FILE`): no model. Logits: float[vocab_size] are
// drawn once per step from N(0, 2²) (fixed seed), so the model's speed is not in the figure;
// each step runs the full sampling chain with and without the grammar mask (and the
// matcher's accept), and the difference per token is the grammar's overhead on that
// vocabulary. A constrained sequence that completes starts over with a new matcher.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "automata/matcher.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/grammar_source.h"
#include "runtime/generator.h"
#include "runtime/tokenizer.h"
#include "sampler/sampler.h"

namespace lockstep::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  GrammarSourceArgs grammar;
  std::string model, tokenizer, prompt = "Once upon a time";
  int32_t max_tokens = 128;
  int runs = 10;
  bool synthetic = false;
  bool no_jump_forward = false;
  bool no_closing = false;
  size_t steps = 2000;
  SamplerParams sampling;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void run_model(const Args& a, const std::shared_ptr<const GrammarAutomaton>& grammar) {
  const LoadedModel loaded = load_model(a.model, a.tokenizer);
  // One mask cache for every constrained run, as a service keeps its compiled grammars: the
  // first run computes the masks it meets and the later ones read them (the cold cost is
  // what `bench maskbench` measures).
  const auto masks = std::make_shared<TokenMaskCache>(grammar, loaded.tokenizer->shared_vocabulary());
  std::vector<double> free_tps, constrained_tps, free_tokens, constrained_tokens, forced;
  for (int run = 0; run < a.runs; ++run) {
    for (const bool constrained : {run % 2 == 0, run % 2 != 0}) {  // alternating order
      GenerateOptions o;
      o.prompt = a.prompt;
      o.max_tokens = a.max_tokens;
      o.sampling = a.sampling;
      o.sampling.seed = a.sampling.seed + static_cast<uint64_t>(run);
      o.jump_forward = !a.no_jump_forward;
      o.length_aware_closing = !a.no_closing;
      if (constrained) o.grammar = grammar, o.mask_cache = masks;
      const GenerateResult r = generate(loaded, o, [](std::string_view) {});
      const double tps = r.generate_seconds > 0 ? static_cast<double>(r.tokens.size()) / r.generate_seconds : 0;
      (constrained ? constrained_tps : free_tps).push_back(tps);
      (constrained ? constrained_tokens : free_tokens).push_back(static_cast<double>(r.tokens.size()));
      if (constrained) forced.push_back(static_cast<double>(r.forced_tokens));
    }
    std::fprintf(stderr, "bench generation: run %d / %d\r", run + 1, a.runs);
  }
  std::fprintf(stderr, "\n");
  const double f = median(free_tps), c = median(constrained_tps);
  std::printf("model %s, %d runs each, alternating, jump-forward %s, length-aware closing %s\n",
              loaded.model_path.c_str(), a.runs, a.no_jump_forward ? "off" : "on", a.no_closing ? "off" : "on");
  std::printf("unconstrained  %8.0f tokens/s (median; %.0f tokens per run)\n", f, median(free_tokens));
  std::printf("constrained    %8.0f tokens/s (median; %.0f tokens per run, %.0f of them forced)\n", c,
              median(constrained_tokens), median(forced));
  std::printf("ratio          %8.3f (constrained / unconstrained)\n", f > 0 ? c / f : 0.0);
}

void run_synthetic(const Args& a, const std::shared_ptr<const GrammarAutomaton>& grammar) {
  if (a.tokenizer.empty()) throw std::invalid_argument("--synthetic needs --tokenizer FILE");
  const auto tok = load_tokenizer(a.tokenizer);
  const size_t n = tok->size();
  auto cache = std::make_shared<TokenMaskCache>(grammar, tok->shared_vocabulary());
  std::mt19937_64 rng(a.sampling.seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> logits(n);
  double free_s = 0, constrained_s = 0;
  size_t sequences = 0, constrained_steps = 0;
  SamplerChain free_chain = make_sampler_chain(a.sampling, nullptr, &tok->vocabulary());
  std::unique_ptr<EarleyMatcher> matcher;
  std::unique_ptr<SamplerChain> chain;
  auto restart = [&] {
    matcher = std::make_unique<EarleyMatcher>(cache);
    if (!a.no_closing) matcher->set_max_tokens(static_cast<size_t>(a.max_tokens));
    chain = std::make_unique<SamplerChain>(make_sampler_chain(a.sampling, matcher.get(), &tok->vocabulary()));
    ++sequences;
  };
  restart();
  for (size_t step = 0; step < a.steps; ++step) {
    for (auto& x : logits) x = normal(rng);
    auto t0 = Clock::now();
    const int32_t f = free_chain.sample(logits);
    if (f >= 0) free_chain.accept(f);
    free_s += std::chrono::duration<double>(Clock::now() - t0).count();
    t0 = Clock::now();
    const int32_t id = chain->sample(logits);
    if (id >= 0) chain->accept(id);
    constrained_s += std::chrono::duration<double>(Clock::now() - t0).count();
    ++constrained_steps;
    if (id < 0 || matcher->is_terminated() || tok->vocabulary().is_eog(id)) restart();
  }
  const double per_free = 1e6 * free_s / static_cast<double>(a.steps);
  const double per_constrained = 1e6 * constrained_s / static_cast<double>(constrained_steps);
  std::printf("synthetic logits, vocabulary %s (%zu tokens), %zu steps, %zu constrained sequences, "
              "length-aware closing %s\n",
              a.tokenizer.c_str(), n, a.steps, sequences, a.no_closing ? "off" : fmt::format("on ({} tokens)", a.max_tokens).c_str());
  std::printf("sampling chain, unconstrained   %8.1f µs per token\n", per_free);
  std::printf("sampling chain, with the grammar %7.1f µs per token (mask, masked sampling, accept)\n", per_constrained);
  std::printf("grammar overhead                %8.1f µs per token\n", per_constrained - per_free);
}

}  // namespace

void add_generation_bench(CLI::App& bench) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = bench.add_subcommand(
      "generation", "Tokens/s with and without a grammar on a model, or the grammar's per-token cost on synthetic logits");
  add_grammar_source_options(*cmd, args->grammar, GrammarPurpose::kGenerate);
  cmd->add_option("--model,-m", args->model, "Model file or folder (default: the bundled stories260K)");
  cmd->add_option("--tokenizer", args->tokenizer, "Tokenizer file (default: beside the model; required with --synthetic)");
  cmd->add_option("--prompt,-p", args->prompt, "Text to continue")->capture_default_str();
  cmd->add_option("--max-tokens,-n", args->max_tokens, "Tokens per generation")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--runs", args->runs, "Generations of each kind, alternating")->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--temperature", args->sampling.temperature, "Temperature (0: greedy)")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed,-s", args->sampling.seed, "Random seed of the first run")->capture_default_str();
  cmd->add_flag("--no-jump-forward", args->no_jump_forward, "Let the model write forced text too");
  cmd->add_flag("--no-closing", args->no_closing, "Turn length-aware closing off (the budget is not enforced by the grammar)");
  cmd->add_flag("--synthetic", args->synthetic, "No model: random logits over --tokenizer's vocabulary");
  cmd->add_option("--steps", args->steps, "Synthetic steps")->capture_default_str()->check(CLI::Range(1, 100000000));
  cmd->callback([args] {
    const auto grammar = compile_grammar_source(args->grammar);
    if (!grammar) throw std::invalid_argument("give a grammar: --schema, --tools, --grammar or --regex");
    if (args->synthetic) {
      run_synthetic(*args, grammar);
    } else {
      run_model(*args, grammar);
    }
  });
}

}  // namespace lockstep::cli
