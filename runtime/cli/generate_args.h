// runtime/cli/generate_args.h — the flags of `generate`, shared by its sampling and beam paths.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "runtime/cli/grammar_source.h"
#include "runtime/cli/sampling_options.h"
#include "runtime/speculative.h"
#include "sampler/beam.h"

namespace lockstep::cli {

struct GenerateArgs {
  std::string model, tokenizer, prompt;
  GrammarSourceArgs grammar;
  int32_t max_tokens = 256;
  int32_t ctx_size = 0;
  int32_t threads = 0;
  SamplingArgs sampling;
  int64_t seed = -1;
  bool json = false;
  bool no_jump_forward = false;
  bool token_healing = false;
  bool no_closing = false;
  int32_t logprobs = -1;
  bool stats = false;
  bool context_shift = false;
  int32_t keep = 0;
  std::string draft_model;  ///< speculative decoding: one of draft_model, draft_layers, lookup_ngram
  int32_t draft_layers = 0;
  int32_t lookup_ngram = 0;
  int32_t draft_tokens = 4;
  float cfg_scale = 1.0f;
  std::string negative_prompt;
  std::string contrast_model;
  float contrast_alpha = 0.1f;
  float penalty_alpha = -1;  ///< contrastive search when >= 0
  CLI::Option* top_k = nullptr;
  BeamParams beam{.beams = 0};  ///< beams 0: sampling, no beam search
  int32_t num_return_sequences = 1;
  std::vector<CLI::Option*> sampling_only;  ///< flags beam search has no use for
};

/// Registers --draft, --draft-layers, --lookup-ngram, --draft-tokens.
void add_speculative_options(CLI::App& cmd, GenerateArgs& args);
/// The speculative options of `args` (after loading `target`, and the draft model if any);
/// nullopt when no draft is asked for. Throws std::runtime_error for two drafts at once or a
/// draft whose vocabulary is not the target's.
std::optional<SpeculativeOptions> speculative_options(const GenerateArgs& args, const LoadedModel& target);

/// Registers --cfg-scale, --negative-prompt, --contrast-model, --contrast-alpha, --penalty-alpha.
void add_guidance_options(CLI::App& cmd, GenerateArgs& args);
/// Sets the guidance fields of `options` from `args` (loading the contrast model).
void apply_guidance(const GenerateArgs& args, const LoadedModel& model, GenerateOptions& options);

/// Registers --beams, --length-penalty, --early-stopping, --num-return-sequences.
void add_beam_options(CLI::App& cmd, GenerateArgs& args);
/// `generate --beams B`: beam search, then the K best sequences (text, or --json).
void run_beam_generate(const GenerateArgs& args);

}  // namespace lockstep::cli
