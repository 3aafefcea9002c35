// runtime/cli/speculative_bench.cpp — `lockstep bench speculative`: speculative decoding's
// exactness and speed-up on a model, for each draft kind, in one run.
//
// Exactness: `--runs` seeded generations of `--exact-tokens` tokens (default 20,000 of 3)
// with plain sampling and with each draft; each sample's outcome counts against the exact
// distribution plain sampling has (runtime/sequence_distribution.h), by Pearson's
// chi-square test. Speed: greedy generations of `--max-tokens` (default 256) tokens from
// each prompt, plain and with each draft alternating `--rounds` times; acceptance rate,
// tokens per target pass, and the ratio of median wall-clock times against plain decoding.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <unistd.h>

#include "runtime/cli/commands.h"
#include "runtime/sequence_distribution.h"
#include "runtime/speculative.h"

namespace lockstep::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::string model, draft;
  int32_t draft_layers = 2;
  int32_t ngram = 2;
  int32_t draft_tokens = 4;
  int64_t runs = 20000;
  int32_t exact_tokens = 3;
  std::string exact_prompt = "The dog and the cat and the dog and the";
  float temperature = 2.0f;
  int32_t top_k = 4;
  int32_t max_tokens = 256;
  int rounds = 5;
  std::vector<std::string> prompts = {"Once upon a time", "One day", "The cat", "Lily and Ben", "Tom had a"};
};

struct Draft {
  std::string name;
  SpeculativeOptions options;
};

std::vector<Draft> drafts(const Args& a, const LoadedModel& target, std::shared_ptr<const LlamaModel> draft_model) {
  std::vector<Draft> d;
  if (draft_model) {
    SpeculativeOptions m;
    m.kind = DraftKind::kModel;
    m.draft_model = std::move(draft_model);
    m.draft_tokens = a.draft_tokens;
    d.push_back({"draft model", m});
  }
  SpeculativeOptions l;
  l.kind = DraftKind::kLayers;
  l.draft_layers = std::min(a.draft_layers, target.model->config().n_layers);
  l.draft_tokens = a.draft_tokens;
  d.push_back({fmt::format("first {} layers", l.draft_layers), l});
  SpeculativeOptions g;
  g.kind = DraftKind::kLookup;
  g.ngram = a.ngram;
  g.draft_tokens = a.draft_tokens;
  d.push_back({fmt::format("{}-gram lookup", a.ngram), g});
  return d;
}

void exactness(const Args& a, const LoadedModel& target, const std::vector<Draft>& ds) {
  GenerateOptions o;
  o.prompt = a.exact_prompt;
  o.max_tokens = a.exact_tokens;
  o.sampling.temperature = a.temperature;
  o.sampling.top_k = a.top_k;
  o.sampling.top_p = 1.0f;
  o.sampling.min_p = 0.0f;
  o.jump_forward = false;
  const auto expected = exact_output_distribution(target, o, static_cast<size_t>(a.exact_tokens));
  std::printf("exactness: %lld seeded runs of %d tokens from \"%s\" (temperature %.1f, top-k %d): %zu possible outputs\n",
              static_cast<long long>(a.runs), a.exact_tokens, a.exact_prompt.c_str(), a.temperature, a.top_k,
              expected.size());
  std::printf("  %-18s %10s %5s %8s %10s %10s\n", "sampler", "chi-square", "df", "p", "accepted", "per pass");
  for (int which = -1; which < static_cast<int>(ds.size()); ++which) {
    std::map<std::vector<int32_t>, size_t> observed;
    int64_t drafted = 0, accepted = 0, tokens = 0, passes = 0;
    for (int64_t seed = 0; seed < a.runs; ++seed) {
      o.sampling.seed = static_cast<uint64_t>(seed);
      const GenerateResult r = which < 0 ? generate(target, o) : generate_speculative(target, o, ds[which].options);
      ++observed[r.tokens];
      drafted += r.draft_tokens;
      accepted += r.accepted_draft_tokens;
      tokens += static_cast<int64_t>(r.tokens.size());
      passes += which < 0 ? static_cast<int64_t>(r.tokens.size()) : r.target_passes;
      if ((seed + 1) % 5000 == 0) {
        std::fprintf(stderr, "\r  %s: %lld / %lld runs", which < 0 ? "plain" : ds[which].name.c_str(),
                     static_cast<long long>(seed + 1), static_cast<long long>(a.runs));
      }
    }
    std::fprintf(stderr, "\r%60s\r", "");
    const ChiSquare t = chi_square_test(observed, expected);
    std::printf("  %-18s %10.2f %5d %8.3f %9.1f%% %10.2f\n", which < 0 ? "plain" : ds[which].name.c_str(),
                t.statistic, t.degrees_of_freedom, t.p_value, drafted ? 100.0 * accepted / drafted : 0.0,
                passes ? static_cast<double>(tokens) / passes : 0.0);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void speed(const Args& a, const LoadedModel& target, const std::vector<Draft>& ds) {
  std::printf("speed: greedy, %d tokens, %zu prompts, %d alternating rounds\n", a.max_tokens, a.prompts.size(), a.rounds);
  std::printf("  %-18s %10s %10s %12s %10s %10s\n", "decoding", "accepted", "per pass", "median ms", "ratio", "same");
  std::vector<std::vector<double>> times(ds.size() + 1);
  std::vector<int64_t> drafted(ds.size() + 1), accepted(ds.size() + 1), tokens(ds.size() + 1), passes(ds.size() + 1);
  std::vector<bool> same(ds.size() + 1, true);
  for (int round = 0; round < a.rounds; ++round) {
    for (const std::string& prompt : a.prompts) {
      GenerateOptions o;
      o.prompt = prompt;
      o.max_tokens = a.max_tokens;
      o.sampling.temperature = 0;
      o.jump_forward = false;
      std::vector<int32_t> reference;
      for (size_t k = 0; k <= ds.size(); ++k) {
        const auto t0 = Clock::now();
        const GenerateResult r = k == 0 ? generate(target, o) : generate_speculative(target, o, ds[k - 1].options);
        times[k].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        if (k == 0) reference = r.tokens;
        same[k] = same[k] && r.tokens == reference;
        drafted[k] += r.draft_tokens;
        accepted[k] += r.accepted_draft_tokens;
        tokens[k] += static_cast<int64_t>(r.tokens.size());
        passes[k] += k == 0 ? static_cast<int64_t>(r.tokens.size()) : r.target_passes;
      }
    }
  }
  const double plain = median(times[0]);
  for (size_t k = 0; k <= ds.size(); ++k) {
    const double m = median(times[k]);
    std::printf("  %-18s %9.1f%% %10.2f %12.3f %10.3f %10s\n", k == 0 ? "plain" : ds[k - 1].name.c_str(),
                drafted[k] ? 100.0 * accepted[k] / drafted[k] : 0.0,
                passes[k] ? static_cast<double>(tokens[k]) / passes[k] : 0.0, m, m > 0 ? plain / m : 0.0,
                same[k] ? "yes" : "NO");
  }
  std::printf("  (ratio: plain decoding's median time over this one's; same: output identical to plain greedy)\n");
}

}  // namespace

void add_speculative_bench(CLI::App& bench) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = bench.add_subcommand(
      "speculative", "Speculative decoding's exactness (chi-square against the exact distribution) and speed-up, per "
                     "draft kind");
  cmd->add_option("--model,-m", args->model, "Target model (default: the bundled stories260K)");
  cmd->add_option("--draft", args->draft,
                  "Draft model (default: a llama2.c target converted to Q8_0 in a temporary file; none for another "
                  "target)");
  cmd->add_option("--draft-layers", args->draft_layers, "Layers of the self-speculative draft")
      ->capture_default_str()
      ->check(in_range(1, 1 << 20, ""));
  cmd->add_option("--lookup-ngram", args->ngram, "N of the lookup draft")->capture_default_str()->check(in_range(1, 64, ""));
  cmd->add_option("--draft-tokens", args->draft_tokens, "Tokens proposed per round")
      ->capture_default_str()
      ->check(in_range(1, 256, ""));
  cmd->add_option("--runs", args->runs, "Seeded runs per sampler for exactness (0: skip)")
      ->capture_default_str()
      ->check(in_range(0, 1e9, "0: skip"));
  cmd->add_option("--rounds", args->rounds, "Alternating rounds for speed (0: skip)")
      ->capture_default_str()
      ->check(in_range(0, 1000, "0: skip"));
  cmd->add_option("--max-tokens,-n", args->max_tokens, "Tokens per greedy generation for speed")
      ->capture_default_str()
      ->check(in_range(1, 1 << 20, ""));
  cmd->callback([args] {
    const LoadedModel target = load_model(args->model);
    std::shared_ptr<const LlamaModel> draft;
    if (!args->draft.empty()) {
      draft = load_model(args->draft).model;
    } else if (target.model_path.ends_with(".bin")) {
      const auto path = std::filesystem::temp_directory_path() / fmt::format("lockstep_draft.{}.gguf", ::getpid());
      std::fprintf(stderr, "lockstep: converting the model to Q8_0 as the draft (%s)\n", path.c_str());
      convert_llama2c_to_gguf(target.model_path, target.tokenizer_path, path.string(), WeightType::kQ8_0);
      draft = load_model(path.string()).model;
      std::filesystem::remove(path);
    }
    const auto ds = drafts(*args, target, draft);
    if (args->runs > 0) exactness(*args, target, ds);
    if (args->rounds > 0) speed(*args, target, ds);
  });
}

}  // namespace lockstep::cli
