// runtime/cli/sampling_options.h — the sampling-chain flags of `generate` (and their checks).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "automata/vocabulary.h"
#include "sampler/sampler.h"

namespace lockstep::cli {

struct SamplingArgs {
  SamplerParams params;
  std::vector<std::string> logit_bias;  ///< TOKEN_ID=BIAS or TEXT=BIAS, as given
  CLI::Option* mirostat = nullptr;
  std::vector<CLI::Option*> truncation;  ///< options mirostat replaces
  std::vector<CLI::Option*> sampling;    ///< every option of the chain but the logit bias
};

/// Registers --temperature … --logit-bias, --typical-p, --epsilon-cutoff, --eta-cutoff and
/// --mirostat(-tau, -eta) on `cmd`, writing into `args`.
void add_sampling_options(CLI::App& cmd, SamplingArgs& args);

/// The chain's parameters with the logit biases resolved against `vocab` (ids checked, texts
/// looked up). Throws std::runtime_error naming the flag for a malformed bias, an id outside
/// the vocabulary, a text no token spells, or a truncation flag given with --mirostat
/// (mirostat replaces them).
SamplerParams resolve_sampling(const SamplingArgs& args, const Vocabulary& vocab);

}  // namespace lockstep::cli
