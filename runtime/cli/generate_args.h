// runtime/cli/generate_args.h — the flags of `generate`, shared by its sampling and beam paths.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "runtime/cli/grammar_source.h"
#include "runtime/cli/sampling_options.h"
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
  BeamParams beam{.beams = 0};  ///< beams 0: sampling, no beam search
  int32_t num_return_sequences = 1;
  std::vector<CLI::Option*> sampling_only;  ///< flags beam search has no use for
};

/// Registers --beams, --length-penalty, --early-stopping, --num-return-sequences.
void add_beam_options(CLI::App& cmd, GenerateArgs& args);
/// `generate --beams B`: beam search, then the K best sequences (text, or --json).
void run_beam_generate(const GenerateArgs& args);

}  // namespace lockstep::cli
