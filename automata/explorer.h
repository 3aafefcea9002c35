// automata/explorer.h — explores a compiled grammar against a vocabulary, as a model would
// meet it: random legal token walks, and a breadth-first pass over the parse
// configurations the mask engine distinguishes. It finds where a model would be stuck
// (dead ends), forced to stop (end-of-generation traps), and which tokens the grammar never
// lets through. `lockstep fuzz` (runtime/cli/fuzz.cpp) reports what it finds; docs/fuzz.md
// explains each finding.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "automata/mask_cache.h"
#include "automata/matcher.h"

namespace lockstep {

struct ExploreOptions {
  size_t walks = 200;              ///< random walks
  size_t max_steps = 256;          ///< tokens per walk (an end-of-generation token included)
  uint64_t seed = 1;
  double time_limit_seconds = 60;  ///< walks and the breadth-first pass together
  size_t max_configurations = 2000;  ///< breadth-first pass: configurations expanded at most
  /// Picks the next token of a walk among the allowed ones (mask: uint32_t[bitmask_words]),
  /// after `tokens` (the walk so far; empty at the start of each walk); default: uniform.
  /// Lets a model weight the walk.
  std::function<int32_t(std::span<const int32_t> tokens, std::span<const uint32_t> mask, std::mt19937_64&)> choose;
  /// Called about once a second with a line of progress.
  std::function<void(const std::string&)> progress;
};

/// A parse configuration where something is wrong, with the shortest way found to it.
struct ExploreSite {
  std::vector<int32_t> tokens;  ///< token ids from the empty output
  std::string bytes;            ///< their bytes
  GrammarAutomaton::ByteSet next_bytes{};  ///< bytes the grammar allows next
};

struct ExploreReport {
  /// Not accepting, and no token allowed: a model here is stuck.
  std::vector<ExploreSite> dead_ends;
  /// Only end-of-generation allowed although the grammar could continue (the vocabulary
  /// cannot spell any continuation).
  std::vector<ExploreSite> eog_traps;
  /// Accepting, but the vocabulary has no end-of-generation token to end with.
  std::vector<ExploreSite> no_eog;
  /// Finished walks (ended by end-of-generation), their tokens without it.
  std::vector<std::vector<int32_t>> completed;
  /// Walks that reached max_steps unfinished.
  size_t unfinished = 0;
  /// Tokens some visited configuration allowed (ids; end-of-generation included).
  std::vector<bool> allowed;
  /// Tokens some automaton state's mask could allow in some context (a superset of every
  /// reachable configuration's mask): a token outside it is never allowed, whatever the
  /// walks saw.
  std::vector<bool> possible;
  /// The breadth-first pass visited every configuration reachable from the empty output
  /// (the grammar's reachable part is finite and was covered): `allowed` is then exact.
  bool exhaustive = false;
  size_t configurations = 0;  ///< distinct configurations the breadth-first pass met
  size_t walks = 0;           ///< walks run (fewer than asked when their share of the time ran out)
  size_t closed_walks = 0;    ///< walks under length-aware closing (budget: max_steps), which end complete
  /// Tokens of the grammar's shortest output, end of generation included (SIZE_MAX when the
  /// vocabulary cannot spell it); over max_steps, no walk is closed.
  size_t min_tokens = 0;
  size_t walk_tokens = 0;     ///< tokens the walks accepted
  bool timed_out = false;
  double seconds = 0;
};

/// Explores `cache`'s grammar against its vocabulary, on the calling thread (the cache may
/// be shared: it is thread-safe). Throws ParserLimitError past the parser limits.
ExploreReport explore(const std::shared_ptr<TokenMaskCache>& cache, const ExploreOptions& options);

}  // namespace lockstep
