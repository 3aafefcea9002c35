// runtime/beam_search.h — beam search over the model, each beam with its own KV cache and
// grammar matcher (sampler/beam.h has the scoring and selection).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/generator.h"
#include "sampler/beam.h"

namespace lockstep {

struct BeamSearchOptions {
  std::string prompt;
  int32_t max_tokens = 256;  ///< as GenerateOptions::max_tokens
  BeamParams beam;
  int32_t num_return_sequences = 1;  ///< K <= B: the K best finished hypotheses
  std::map<int32_t, float> logit_bias;
  std::shared_ptr<const GrammarAutomaton> grammar;  ///< null: unconstrained
  int32_t context_length = 0;
  int32_t threads = 0;
  bool length_aware_closing = true;
};

struct BeamSequence {
  std::string text;
  std::vector<int32_t> tokens;  ///< a final end-of-generation id included
  double sum_logprob = 0;       ///< of the masked, renormalized distributions
  double score = 0;             ///< sum_logprob / length^α
  bool complete = true;         ///< the grammar accepts it (always without a grammar)
  StopReason stop = StopReason::kEndOfGeneration;
};

struct BeamSearchResult {
  std::vector<BeamSequence> sequences;  ///< best first, at most num_return_sequences
  int32_t prompt_tokens = 0;
  int32_t budget = 0;
  size_t steps = 0;             ///< decoding steps
  size_t forward_passes = 0;    ///< one per running beam per step, the prompt's included
  size_t kv_cache_bytes = 0;    ///< all beams' KV caches (one per beam, copied on a fork)
  size_t kv_cache_copies = 0;   ///< forks that copied a cache
  double prompt_seconds = 0;
  double generate_seconds = 0;
};

/// Beam search (sampler/beam.h). Each running beam owns an InferenceState (its KV cache:
/// when a beam has several children, the first keeps the cache and the others copy the
/// positions written so far — memory B × the cache of one sequence) and an EarleyMatcher
/// forked from its parent's, so every hypothesis stays grammatical; with length-aware
/// closing every finished one is complete. No jump-forward: forced text is chosen by the
/// beams like any other. With B = 1 and α = 0 (or early stopping) it is greedy decoding.
/// Throws like generate(): std::invalid_argument (prompt, parameters), BudgetError.
BeamSearchResult beam_search(const LoadedModel& model, const BeamSearchOptions& options);

}  // namespace lockstep
