// runtime/jump_forward.h — jump-forward: the tokens for bytes a grammar forces next,
// written the way the tokenizer would write the whole text (docs/jump_forward.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "automata/matcher.h"
#include "runtime/tokenizer.h"

namespace lockstep {

struct ForcedTokens {
  /// Output tokens to remove first: 1 when the tokenizer would merge the last output token
  /// with the forced bytes (so it is written again, merged, by `tokens`), else 0.
  size_t rollback = 0;
  /// Tokens to append: the tokenizer's own encoding of their text (the removed token's
  /// bytes, then the first `forced_bytes` forced bytes), so encode(text(tokens)) == tokens.
  std::vector<int32_t> tokens;
  /// Forced bytes the tokens cover: the rest of the forced string is left to the model,
  /// because a token could cross its end (e.g. `"` forced where `":` is one token).
  size_t forced_bytes = 0;
};

/// The forced tokens after `matcher`'s current state (EarleyMatcher::jump_forward_bytes()).
/// `previous`: the last output token when it may be re-tokenized together with the forced
/// bytes (not a prompt token: across the prompt boundary is token healing's business).
///
/// Method (as llguidance's fast-forward tokens): encode previous + forced bytes; find the
/// first byte index from which some vocabulary token starts with the rest of the text,
/// runs past its end and continues the way the grammar allows; keep only the tokens that
/// end before that index; then keep the longest prefix of those that the tokenizer encodes
/// to itself. Returns no tokens when nothing can be forced canonically. Leaves the matcher
/// as it was. Cost: one encode and, per candidate start index, a binary search of the
/// sorted vocabulary and a few parser steps.
ForcedTokens forced_tokens(const Tokenizer& tokenizer, EarleyMatcher& matcher, std::optional<int32_t> previous);

}  // namespace lockstep
