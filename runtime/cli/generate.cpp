// runtime/cli/generate.cpp — `lockstep generate`: the main job.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include <fmt/format.h>

#include "automata/compiled_grammar.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/grammar_source.h"
#include "runtime/generator.h"
#include "runtime/mapped_file.h"

namespace lockstep::cli {

namespace {

struct GenerateArgs {
  std::string model, tokenizer, prompt;
  GrammarSourceArgs grammar;
  int32_t max_tokens = 256;
  int32_t ctx_size = 0;
  SamplerParams sampling;
  std::vector<std::string> logit_bias;
  int64_t seed = -1;
};

void run_generate(const GenerateArgs& a) {
  GenerateOptions opt;
  opt.prompt = a.prompt;
  opt.max_tokens = a.max_tokens;
  opt.context_length = a.ctx_size;
  opt.sampling = a.sampling;
  opt.sampling.seed = a.seed >= 0 ? static_cast<uint64_t>(a.seed) : std::random_device{}();
  for (const auto& b : a.logit_bias) {
    const auto eq = b.find('=');
    if (eq == std::string::npos) {
      throw std::runtime_error(fmt::format("--logit-bias '{}': expected TOKEN_ID=BIAS", b));
    }
    try {
      opt.sampling.logit_bias[std::stoi(b.substr(0, eq))] = std::stof(b.substr(eq + 1));
    } catch (const std::logic_error&) {
      throw std::runtime_error(fmt::format("--logit-bias '{}': expected TOKEN_ID=BIAS", b));
    }
  }
  opt.grammar = compile_grammar_source(a.grammar);
  const LoadedModel model = load_model(a.model, a.tokenizer);
  for (const auto& [id, bias] : opt.sampling.logit_bias) {
    if (id < 0 || static_cast<size_t>(id) >= model.tokenizer->size()) {
      throw std::runtime_error(fmt::format("--logit-bias: token id {} is outside the vocabulary "
                                           "(0..{})", id, model.tokenizer->size() - 1));
    }
  }

  const GenerateResult r = generate(model, opt, [](std::string_view piece) {
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  });
  const size_t n = r.tokens.size();
  std::fprintf(stderr,
               "%slockstep: %zu tokens in %.3f s (%.1f tokens/s; prompt %d tokens in %.3f s; "
               "sampling %.1f µs/token), stop: %s, seed %llu\n",
               isatty(STDERR_FILENO) && !r.text.empty() && r.text.back() != '\n' ? "\n" : "", n, r.generate_seconds,
               r.generate_seconds > 0 ? n / r.generate_seconds : 0.0, r.prompt_tokens,
               r.prompt_seconds, n ? 1e6 * r.sampling_seconds / n : 0.0, to_string(r.stop),
               static_cast<unsigned long long>(opt.sampling.seed));
}

}  // namespace

void add_generate(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate text with the model, optionally "
                                                 "constrained by a grammar");
  cmd->add_option("--model,-m", args->model,
                  "Model file or folder (default: the bundled stories260K)");
  cmd->add_option("--tokenizer", args->tokenizer, "Tokenizer file (default: beside the model)");
  cmd->add_option("--prompt,-p", args->prompt, "Text to continue (not repeated in the output)");
  add_grammar_source_options(*cmd, args->grammar);
  cmd->add_option("--max-tokens,-n", args->max_tokens, "Tokens to generate (-1: until the end)")
      ->capture_default_str();
  cmd->add_option("--ctx-size,-c", args->ctx_size,
                  "Context (KV cache) in tokens (0: the model's, at most 4096)")
      ->capture_default_str();
  auto& s = args->sampling;
  cmd->add_option("--temperature", s.temperature, "Temperature (0: greedy)")->capture_default_str();
  cmd->add_option("--top-k", s.top_k, "Top-k (0: off)")->capture_default_str();
  cmd->add_option("--top-p", s.top_p, "Top-p / nucleus (1: off)")->capture_default_str();
  cmd->add_option("--min-p", s.min_p, "Min-p (0: off)")->capture_default_str();
  cmd->add_option("--repeat-penalty", s.repeat_penalty, "Repetition penalty (1: off)")
      ->capture_default_str();
  cmd->add_option("--repeat-last-n", s.penalty_last_n, "Tokens the penalties look back (-1: all)")
      ->capture_default_str();
  cmd->add_option("--frequency-penalty", s.frequency_penalty, "Frequency penalty (0: off)")
      ->capture_default_str();
  cmd->add_option("--presence-penalty", s.presence_penalty, "Presence penalty (0: off)")
      ->capture_default_str();
  cmd->add_option("--logit-bias", args->logit_bias, "TOKEN_ID=BIAS added to a logit (repeatable)");
  cmd->add_option("--seed,-s", args->seed, "Random seed (default: random)");
  cmd->callback([args] { run_generate(*args); });
}

}  // namespace lockstep::cli
