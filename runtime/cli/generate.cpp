// runtime/cli/generate.cpp — `lockstep generate`: the main job.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/grammar_source.h"
#include "runtime/cli/generate_args.h"
#include "runtime/cli/sampling_options.h"
#include "runtime/contrastive_search.h"
#include "runtime/generator.h"
#include "runtime/mapped_file.h"

namespace lockstep::cli {

namespace {



void print_statistics(const GenerateResult& r, uint64_t seed) {
  const size_t n = r.tokens.size();
  std::string forced;
  if (r.forced_tokens > 0) {
    forced = fmt::format("; jump-forward {} of {} tokens ({:.0f} %)", r.forced_tokens, n, 100.0 * r.forced_tokens / n);
  }
  std::fprintf(stderr,
               "lockstep: %zu tokens in %.3f s (%.1f tokens/s; prompt %d tokens in %.3f s; sampling %.1f µs/token%s), "
               "stop: %s, seed %llu\n",
               n, r.generate_seconds, r.generate_seconds > 0 ? n / r.generate_seconds : 0.0, r.prompt_tokens,
               r.prompt_seconds, n ? 1e6 * r.sampling_seconds / n : 0.0, forced.c_str(), to_string(r.stop),
               static_cast<unsigned long long>(seed));
}

// A token as the OpenAI `logprobs` shape writes it: its text and its bytes.
nlohmann::json token_json(const Tokenizer& tok, int32_t id) {
  const std::string_view bytes = tok.token_bytes(id);
  return {{"id", id},
          {"token", std::string(bytes)},
          {"bytes", std::vector<unsigned char>(bytes.begin(), bytes.end())}};
}

nlohmann::json alternatives_json(const Tokenizer& tok, const std::vector<TokenLogprob>& top) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& t : top) {
    nlohmann::json j = token_json(tok, t.id);
    j["logprob"] = t.logprob;
    a.push_back(std::move(j));
  }
  return a;
}

nlohmann::json logprobs_json(const Tokenizer& tok, const GenerateResult& r) {
  nlohmann::json content = nlohmann::json::array();
  for (const StepLogprobs& s : r.logprobs) {
    nlohmann::json j = token_json(tok, s.id);
    j["forced"] = s.forced;
    if (s.forced) {
      j["logprob"] = nullptr;
      j["masked_logprob"] = nullptr;
    } else {
      j["logprob"] = s.logprob;
      j["top_logprobs"] = alternatives_json(tok, s.top);
      j["masked_logprob"] = s.masked_logprob;
      j["masked_top_logprobs"] = alternatives_json(tok, s.masked_top);
      j["argmax_removed"] = s.argmax_removed;
    }
    content.push_back(std::move(j));
  }
  return {{"content", std::move(content)}};
}

nlohmann::json stats_json(const GenerationStats& s) {
  return {{"tokens", s.tokens},
          {"sampled_tokens", s.sampled},
          {"type_token_ratio", s.type_token_ratio},
          {"repeated_2grams", s.repeated_ngrams[0]},
          {"repeated_3grams", s.repeated_ngrams[1]},
          {"repeated_4grams", s.repeated_ngrams[2]},
          {"mean_logprob", s.mean_logprob},
          {"mean_masked_logprob", s.mean_masked_logprob},
          {"grammar_override_share", s.argmax_removed_share}};
}

void print_logprobs(const Tokenizer& tok, const GenerateResult& r) {
  const auto text = [&](int32_t id) {
    return nlohmann::json(std::string(tok.token_bytes(id))).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  std::fprintf(stderr, "lockstep: log-probabilities (model / after the mask; alternatives of the model)\n");
  for (size_t i = 0; i < r.logprobs.size(); ++i) {
    const StepLogprobs& s = r.logprobs[i];
    if (s.forced) {
      std::fprintf(stderr, "  %4zu %-16s forced\n", i, text(s.id).c_str());
      continue;
    }
    std::string alts;
    for (const auto& t : s.top) alts += fmt::format(" {}={:.3f}", text(t.id), t.logprob);
    std::fprintf(stderr, "  %4zu %-16s %8.4f %8.4f%s |%s\n", i, text(s.id).c_str(), s.logprob, s.masked_logprob,
                 s.argmax_removed ? " (argmax removed)" : "", alts.c_str());
  }
}

void print_stats(const GenerationStats& s) {
  std::fprintf(stderr,
               "lockstep: stats: %zu tokens (%zu sampled), type-token ratio %.3f, repeated 2/3/4-grams %.3f/%.3f/%.3f, "
               "mean log-probability %.4f (after the mask %.4f), grammar overrode the model's argmax at %.1f %% of "
               "sampled steps\n",
               s.tokens, s.sampled, s.type_token_ratio, s.repeated_ngrams[0], s.repeated_ngrams[1],
               s.repeated_ngrams[2], s.mean_logprob, s.mean_masked_logprob, 100 * s.argmax_removed_share);
}

nlohmann::json result_json(const GenerateResult& r, uint64_t seed) {
  const size_t n = r.tokens.size();
  return {{"text", r.text},
          {"complete", r.complete},
          {"stop", to_string(r.stop)},
          {"tokens", n},
          {"token_ids", r.tokens},
          {"budget", r.budget},
          {"forced_tokens", r.forced_tokens},
          {"forced_share", n ? static_cast<double>(r.forced_tokens) / static_cast<double>(n) : 0.0},
          {"healed_tokens", r.healed_tokens},
          {"context_shifts", r.context_shifts},
          {"draft_tokens", r.draft_tokens},
          {"accepted_draft_tokens", r.accepted_draft_tokens},
          {"target_passes", r.target_passes},
          {"prompt_tokens", r.prompt_tokens},
          {"prompt_seconds", r.prompt_seconds},
          {"generate_seconds", r.generate_seconds},
          {"sampling_seconds", r.sampling_seconds},
          {"tokens_per_second", r.generate_seconds > 0 ? static_cast<double>(n) / r.generate_seconds : 0.0},
          {"seed", seed}};
}

void run_generate(const GenerateArgs& a) {
  if (a.beam.beams > 0) {
    run_beam_generate(a);
    return;
  }
  GenerateOptions opt;
  opt.prompt = a.prompt;
  opt.max_tokens = a.max_tokens;
  opt.context_length = a.ctx_size;
  opt.threads = a.threads;
  opt.sampling.seed = a.seed >= 0 ? static_cast<uint64_t>(a.seed) : std::random_device{}();
  opt.jump_forward = !a.no_jump_forward;
  opt.token_healing = a.token_healing;
  opt.length_aware_closing = !a.no_closing;
  opt.context_shift = a.context_shift;
  opt.keep = a.keep;
  opt.logprobs = a.logprobs >= 0 ? a.logprobs : a.stats ? 0 : -1;
  opt.grammar = compile_grammar_source(a.grammar);
  const LoadedModel model = load_model(a.model, a.tokenizer);
  const uint64_t seed = opt.sampling.seed;
  opt.sampling = resolve_sampling(a.sampling, model.tokenizer->vocabulary());
  opt.sampling.seed = seed;

  apply_guidance(a, model, opt);
  const std::optional<SpeculativeOptions> speculative = speculative_options(a, model);
  if (speculative) opt.jump_forward = false;  // the draft proposes forced text like any other
  const auto stream = [&](std::string_view piece) {
    if (a.json) return;
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  };
  GenerateResult r;
  try {
    r = speculative             ? generate_speculative(model, opt, *speculative, stream)
        : a.penalty_alpha >= 0  ? contrastive_search(model, opt, a.penalty_alpha, stream)
                                : generate(model, opt, stream);
  } catch (const BudgetError& e) {
    throw CommandExit{kExitIncomplete, fmt::format("lockstep: error: {}", e.what())};
  }
  const GenerationStats stats = generation_stats(r.tokens, r.logprobs);
  if (a.json) {
    nlohmann::json j = result_json(r, opt.sampling.seed);
    if (a.logprobs >= 0) j["logprobs"] = logprobs_json(*model.tokenizer, r);
    if (a.stats) j["stats"] = stats_json(stats);
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else if (isatty(STDOUT_FILENO) && !r.text.empty() && r.text.back() != '\n') {
    std::fputc('\n', stdout);  // a terminal's prompt starts on its own line; a pipe gets the bytes only
  }
  std::fflush(stdout);
  if (!a.json && a.logprobs >= 0) print_logprobs(*model.tokenizer, r);
  if (!a.json && a.stats) print_stats(stats);
  print_statistics(r, opt.sampling.seed);
  if (speculative) {
    std::fprintf(stderr,
                 "lockstep: speculative: %d of %d draft tokens accepted (%.1f %%), %.2f tokens per target pass (%d "
                 "passes)\n",
                 r.accepted_draft_tokens, r.draft_tokens,
                 r.draft_tokens ? 100.0 * r.accepted_draft_tokens / r.draft_tokens : 0.0,
                 r.target_passes ? static_cast<double>(r.tokens.size()) / r.target_passes : 0.0, r.target_passes);
  }
  if (r.context_shifts > 0) std::fprintf(stderr, "lockstep: the context was shifted %d times\n", r.context_shifts);
  if (r.stop == StopReason::kContextFull) {
    std::fprintf(stderr, "lockstep: generation stopped because the context is full (%d prompt + %zu generated tokens): "
                         "raise --ctx-size (up to the model's), or --context-shift to drop old text and go on\n",
                 r.prompt_tokens, r.tokens.size());
  }
  if (r.stop == StopReason::kNoTokenAllowed) {
    throw CommandExit{kExitIncomplete,
                      fmt::format("lockstep: incomplete output: no token of the vocabulary is allowed at byte offset {} of "
                                  "the output ({}; generation stopped after {} tokens)",
                                  r.text.size(),
                                  opt.grammar ? "the grammar allows no token the vocabulary has, or the logit biases "
                                                "ban all it allows"
                                              : "the logit biases ban every token",
                                  r.tokens.size())};
  }
  if (!r.complete) {
    throw CommandExit{kExitIncomplete, fmt::format("lockstep: incomplete output: generation stopped ({}) before the grammar "
                                     "accepted the text",
                                     to_string(r.stop))};
  }
}

}  // namespace

void add_generate(CLI::App& app) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand("generate", "Generate text with the model, optionally "
                                                 "constrained by a grammar (exit 0: complete output; "
                                                 "3: a limit ended it incomplete)");
  cmd->add_option("--model,-m", args->model,
                  "Model file or folder (default: the bundled stories260K)");
  cmd->add_option("--tokenizer", args->tokenizer, "Tokenizer file (default: beside the model)");
  cmd->add_option("--prompt,-p", args->prompt, "Text to continue (not repeated in the output)");
  add_grammar_source_options(*cmd, args->grammar, GrammarPurpose::kGenerate);
  cmd->add_option("--max-tokens,-n", args->max_tokens,
                  "Tokens to generate, a final end-of-generation token included (-1: until the context is full); "
                  "under a grammar the output is complete within it")
      ->check(in_range(-1, 1 << 30, "-1: no limit but the context"))
      ->capture_default_str();
  cmd->add_option("--ctx-size,-c", args->ctx_size,
                  "Context (KV cache) in tokens (0: the model's, at most 4096)")
      ->check(in_range(0, 1 << 30, "0: the model's"))
      ->capture_default_str();
  cmd->add_option("--threads,-t", args->threads,
                  "Threads of the forward pass (0: automatic — the hardware's threads, but one for a model too small "
                  "to gain, such as the bundled one); the output does not depend on it")
      ->check(in_range(0, 1024, "0: automatic"))
      ->capture_default_str();
  add_sampling_options(*cmd, args->sampling);
  cmd->add_option("--seed,-s", args->seed, "Random seed (default: random)")->check(in_range(0, 9.2e18, ""));
  cmd->add_flag("--no-jump-forward", args->no_jump_forward,
                "Let the model write text the grammar forces (default: appended without a model choice, "
                "tokenized as the tokenizer would)");
  cmd->add_flag("--token-healing", args->token_healing,
                "Back the prompt up by its last token; the first tokens must re-spell it (a prompt ending inside a "
                "word continues as one token would)");
  cmd->add_flag("--no-closing", args->no_closing,
                "Turn length-aware closing off: the output may end cut at the token limit (exit 3); for comparison");
  cmd->add_option("--logprobs", args->logprobs,
                  "Report each generated token's log-probability and the N most likely alternatives, under the "
                  "model's distribution and after the grammar mask (in --json output: OpenAI's logprobs shape; "
                  "else a table on stderr)")
      ->check(in_range(0, 1 << 20, ""));
  cmd->add_flag("--stats", args->stats,
                "Report type-token ratio, repeated n-grams, mean log-probability and how often the grammar "
                "overrode the model's most likely token");
  cmd->add_flag("--context-shift", args->context_shift,
                "When the context is full, drop the oldest half of the text after the first --keep prompt tokens and "
                "go on (llama.cpp's context shift; the KV cache is recomputed). Default: stop, stop reason 'context "
                "full'");
  cmd->add_option("--keep", args->keep,
                  "Context shift: prompt tokens always kept, after the BOS token (-1: the whole prompt)")
      ->check(in_range(-1, 1 << 30, "-1: the whole prompt"))
      ->capture_default_str();
  add_speculative_options(*cmd, *args);
  add_guidance_options(*cmd, *args);
  args->top_k = cmd->get_option("--top-k");
  add_beam_options(*cmd, *args);
  cmd->add_flag("--json", args->json,
                "Print the completion and the statistics as one JSON object on stdout (instead of streaming text)");
  cmd->callback([args] { run_generate(*args); });
}

}  // namespace lockstep::cli
