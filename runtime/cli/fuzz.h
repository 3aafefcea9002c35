// runtime/cli/fuzz.h — what `lockstep fuzz` found, and its report (human or JSON).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "automata/explorer.h"
#include "runtime/tokenizer.h"

namespace lockstep::cli {

/// A rule the grammar never uses, or one that can never finish.
struct RuleFinding {
  std::string name;
  SourceLocation where;
};

/// A finished walk whose text the tokenizer would spell in other tokens, and the grammar
/// rejects that spelling at `rejected_at` (index into `canonical`): a model writing the text
/// its own way is refused there.
struct NonCanonicalPath {
  std::vector<int32_t> tokens;
  std::vector<int32_t> canonical;
  size_t rejected_at = 0;
  std::string bytes;
  std::string why;
};

/// A finished walk the independent re-check refused: a bug in lockstep.
struct Disagreement {
  std::vector<int32_t> tokens;
  std::string bytes;
  std::string checker;  ///< "earley", "re2", "json", "ajv"
  std::string why;
};

struct FuzzFindings {
  std::string source;  ///< what was fuzzed ("json.gbnf", "--regex ...")
  std::string tokenizer;
  size_t vocab_size = 0;
  ExploreReport explored;
  std::vector<RuleFinding> unreachable, unproductive;
  std::vector<int32_t> never_allowed;  ///< text tokens
  bool never_allowed_exact = false;
  size_t non_canonical_walks = 0;  ///< finished walks spelled unlike the tokenizer would
  std::vector<NonCanonicalPath> non_canonical;
  std::vector<Disagreement> disagreements;
  std::vector<std::string> rechecks;  ///< checkers run on every finished walk
  std::string ajv_skipped;            ///< why ajv did not re-check a schema's or tools' walks

  /// A model can get stuck or stopped, or lockstep disagrees with itself.
  bool failed() const {
    return !explored.dead_ends.empty() || !explored.eog_traps.empty() || !explored.no_eog.empty() ||
           !disagreements.empty();
  }
  /// Findings that fail only with --strict.
  bool warned() const {
    return !unreachable.empty() || !unproductive.empty() || !never_allowed.empty() || !non_canonical.empty();
  }
};

/// The report: grouped, with counts and up to `examples` examples per group.
std::string human_report(const FuzzFindings& f, const Tokenizer& tok, size_t examples);
/// The same as one JSON object.
std::string json_report(const FuzzFindings& f, const Tokenizer& tok, size_t examples);

}  // namespace lockstep::cli
