// runtime/sequence_distribution.h — the exact distribution of a generation's first tokens, and
// a chi-square test of sampled outputs against it: how speculative decoding's exactness is
// measured (tests/runtime/speculative_test.cpp, `bench speculative`).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/generator.h"

namespace lockstep {

/// Every output of at most `length` tokens plain sampling can give for `options` (prompt,
/// sampling chain, grammar), with its probability: the product of the chain's distributions
/// (SamplerChain::distribution) along it; an output that ends with end of generation before
/// `length` tokens is one outcome. Enumerates every branch the chain leaves (top-k keeps it
/// small: k^length forward passes at most). Throws std::invalid_argument when more than
/// `max_outcomes` outcomes would be listed.
std::map<std::vector<int32_t>, double> exact_output_distribution(const LoadedModel& model,
                                                                 const GenerateOptions& options, size_t length,
                                                                 size_t max_outcomes = 100000);

struct ChiSquare {
  double statistic = 0;
  int degrees_of_freedom = 0;
  double p_value = 1;  ///< P(χ² ≥ statistic) under the expected distribution
  size_t bins = 0;     ///< after pooling the outcomes expected fewer than 5 times
};

/// Pearson's chi-square goodness-of-fit test of `observed` outcome counts (n in all) against
/// `expected` probabilities; outcomes expected fewer than 5 times are pooled into one bin
/// (with any observed outcome the expected distribution does not list).
ChiSquare chi_square_test(const std::map<std::vector<int32_t>, size_t>& observed,
                          const std::map<std::vector<int32_t>, double>& expected);

}  // namespace lockstep
