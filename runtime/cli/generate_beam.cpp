// runtime/cli/generate_beam.cpp — `generate --beams B`: beam search from the command line.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/beam_search.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/generate_args.h"

namespace lockstep::cli {

void add_beam_options(CLI::App& cmd, GenerateArgs& args) {
  cmd.add_option("--beams", args.beam.beams,
                 "Beam search with B beams instead of sampling (0: off): the output with the best "
                 "sum of log-probabilities / length^α; each beam keeps its own KV cache and grammar state")
      ->check(in_range(0, 256, "0: off"))
      ->capture_default_str();
  cmd.add_option("--length-penalty", args.beam.length_penalty,
                 "Beam search: α in score = sum of log-probabilities / length^α (0: the sum; larger favours longer)")
      ->check(in_range(-100, 100, ""))
      ->capture_default_str();
  cmd.add_flag("--early-stopping", args.beam.early_stopping,
               "Beam search: stop as soon as B hypotheses are finished (default: when no running beam can beat them)");
  cmd.add_option("--num-return-sequences", args.num_return_sequences,
                 "Beam search: print the K best finished sequences (K <= --beams)")
      ->check(in_range(1, 256, ""))
      ->capture_default_str();
  args.sampling_only = args.sampling.sampling;
  for (const char* name : {"--seed", "--token-healing", "--logprobs", "--stats", "--no-jump-forward", "--context-shift", "--keep",
                           "--cfg-scale", "--negative-prompt", "--contrast-model", "--penalty-alpha", "--draft",
                           "--draft-layers", "--lookup-ngram"}) {
    args.sampling_only.push_back(cmd.get_option(name));
  }
}

void run_beam_generate(const GenerateArgs& a) {
  for (const CLI::Option* o : a.sampling_only) {
    if (o->count() > 0) {
      throw std::runtime_error(fmt::format("{} has no effect with --beams: beam search keeps the most likely "
                                           "sequences and draws nothing (drop one of them)",
                                           o->get_name()));
    }
  }
  if (a.num_return_sequences > a.beam.beams) {
    throw std::runtime_error(fmt::format("--num-return-sequences {} is more than --beams {}: at most B sequences "
                                         "are kept",
                                         a.num_return_sequences, a.beam.beams));
  }
  BeamSearchOptions opt;
  opt.prompt = a.prompt;
  opt.max_tokens = a.max_tokens;
  opt.beam = a.beam;
  opt.num_return_sequences = a.num_return_sequences;
  opt.context_length = a.ctx_size;
  opt.threads = a.threads;
  opt.length_aware_closing = !a.no_closing;
  opt.grammar = compile_grammar_source(a.grammar);
  const LoadedModel model = load_model(a.model, a.tokenizer);
  opt.logit_bias = resolve_sampling(a.sampling, model.tokenizer->vocabulary()).logit_bias;
  BeamSearchResult r;
  try {
    r = beam_search(model, opt);
  } catch (const BudgetError& e) {
    throw CommandExit{kExitIncomplete, fmt::format("lockstep: error: {}", e.what())};
  }
  if (a.json) {
    nlohmann::json seqs = nlohmann::json::array();
    for (const auto& s : r.sequences) {
      seqs.push_back({{"text", s.text},
                      {"complete", s.complete},
                      {"stop", to_string(s.stop)},
                      {"tokens", s.tokens.size()},
                      {"token_ids", s.tokens},
                      {"sum_logprob", s.sum_logprob},
                      {"score", s.score}});
    }
    nlohmann::json j = seqs.empty() ? nlohmann::json::object() : seqs[0];
    j["sequences"] = seqs;
    j["beams"] = a.beam.beams;
    j["length_penalty"] = a.beam.length_penalty;
    j["budget"] = r.budget;
    j["prompt_tokens"] = r.prompt_tokens;
    j["steps"] = r.steps;
    j["forward_passes"] = r.forward_passes;
    j["kv_cache_bytes"] = r.kv_cache_bytes;
    j["kv_cache_copies"] = r.kv_cache_copies;
    j["prompt_seconds"] = r.prompt_seconds;
    j["generate_seconds"] = r.generate_seconds;
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    for (size_t i = 0; i < r.sequences.size(); ++i) {
      if (r.sequences.size() > 1) std::printf("%s", i ? "\n" : "");
      std::fwrite(r.sequences[i].text.data(), 1, r.sequences[i].text.size(), stdout);
      if (r.sequences.size() > 1 || isatty(1)) std::fputc('\n', stdout);
    }
  }
  std::fflush(stdout);
  for (size_t i = 0; i < r.sequences.size(); ++i) {
    const auto& s = r.sequences[i];
    std::fprintf(stderr, "lockstep: beam %zu: %zu tokens, sum of log-probabilities %.4f, score %.4f, stop: %s%s\n",
                 i + 1, s.tokens.size(), s.sum_logprob, s.score, to_string(s.stop), s.complete ? "" : " (incomplete)");
  }
  std::fprintf(stderr,
               "lockstep: beam search, %d beams: %zu steps, %zu forward passes in %.3f s (prompt %d tokens in %.3f s); "
               "KV caches %.1f MiB, %zu copied on a fork\n",
               a.beam.beams, r.steps, r.forward_passes, r.generate_seconds, r.prompt_tokens, r.prompt_seconds,
               static_cast<double>(r.kv_cache_bytes) / (1 << 20), r.kv_cache_copies);
  if (r.sequences.empty() || !r.sequences[0].complete) {
    throw CommandExit{kExitIncomplete, fmt::format("lockstep: incomplete output: beam search stopped ({}) before the "
                                                   "grammar accepted the text",
                                                   r.sequences.empty() ? "no sequence" : to_string(r.sequences[0].stop))};
  }
}

}  // namespace lockstep::cli
