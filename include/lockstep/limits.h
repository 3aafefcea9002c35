// include/lockstep/limits.h — EngineLimits: every bound lockstep puts on its inputs and its own work,
// in one place.
//
// Hostile or accidental input (a 2,000-deep schema, `(a{1,300}){1,300}`, a 100,000-rule
// chain, /dev/zero as a grammar) must end in a clear error, not a crash, a hang or unbounded
// memory. Each bound below is checked where the work happens; exceeding a hard limit throws
// LimitError (lockstep/errors.h), which names the limit, its value and the place (line:column
// or JSON pointer). Cache sizes are soft: a full cache starts over.
//
// The limits are process-wide, like XGrammar's set_max_recursion_depth: set them once at
// start-up (set_engine_limits, or the CLI's `--limit name=value`), before compiling.
// Reading them is thread-safe; changing them while another thread compiles is a data race.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/errors.h"

namespace lockstep {

struct EngineLimits {
  // Inputs.
  uint64_t source_bytes = 64ull << 20;      ///< bytes of one input file or text
  uint64_t nesting_depth = 500;             ///< GBNF parentheses, regex groups, sub-schema nesting
  uint64_t repetition_bound = 100000;       ///< m and n of {m,n} in GBNF, regex and `pattern`
  uint64_t vocab_size = 1ull << 21;         ///< token ids (2,097,152; real vocabularies reach ~262k)
  // Compilation.
  uint64_t string_automaton_states = 200000;  ///< states of one schema string/number constraint's DFA
  uint64_t rule_automaton_states = 1u << 20;  ///< byte-automaton states one grammar rule may expand into
  uint64_t grammar_automaton_states = 1u << 22;  ///< byte-automaton states of a whole grammar
  uint64_t automaton_state_set = 1u << 22;   ///< NFA states summed over a determinization's sets
  uint64_t object_states = 4096;            ///< states of one JSON object's member machine
  uint64_t schema_alternatives = 256;       ///< array or object records of one schema's normal form
  uint64_t compile_ms = 60000;              ///< wall time of one compilation (0: none)
  // Parsing.
  uint64_t earley_items_per_set = 1u << 17;  ///< items one Earley set may hold
  uint64_t earley_items_total = 1u << 25;    ///< items all sets together may hold (8 bytes each)
  // Caches (soft: a full cache starts over).
  uint64_t mask_cache_bytes = 256ull << 20;       ///< token masks shared between grammars
  uint64_t grammar_mask_bytes = 64ull << 20;      ///< token masks of one compiled grammar
  uint64_t rule_automaton_cache_bytes = 64ull << 20;  ///< rule automata shared between grammars
};

/// The limits in force (process-wide; see the header comment for thread-safety).
const EngineLimits& engine_limits();
void set_engine_limits(const EngineLimits& limits);

/// Sets the limits for a scope (a test, one compilation) and restores the previous ones when
/// it ends. Same thread-safety as set_engine_limits.
class ScopedEngineLimits {
 public:
  explicit ScopedEngineLimits(const EngineLimits& limits) : saved_(engine_limits()) { set_engine_limits(limits); }
  ~ScopedEngineLimits() { set_engine_limits(saved_); }
  ScopedEngineLimits(const ScopedEngineLimits&) = delete;
  ScopedEngineLimits& operator=(const ScopedEngineLimits&) = delete;

 private:
  EngineLimits saved_;
};

/// One limit, for --help, `--limit name=value` and the docs.
struct EngineLimitInfo {
  std::string_view name;
  std::string_view unit;  ///< "bytes", "states", "items", "ms", ...
  std::string_view description;
  uint64_t EngineLimits::*field;
};
const std::vector<EngineLimitInfo>& engine_limit_table();

/// Parses "name=value" (value a decimal integer, optionally with a k/M/G suffix for powers
/// of 1024) into `limits`. Throws Error naming the known limits or the accepted range
/// (1 to 2^62; compile_ms also 0).
void set_engine_limit(EngineLimits& limits, std::string_view assignment);

}  // namespace lockstep
