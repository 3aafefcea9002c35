// automata/mask/suffix_groups.h — a state's uncertain tokens grouped by the suffix the context
// must accept (internal to automata/mask/).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "automata/mask/token_set.h"
#include "automata/vocabulary.h"

namespace lockstep::mask {

/// Fills `out.suffixes`, `out.suffix_common` and the tokens behind each suffix from
/// `uncertain`, (token id, byte offset) pairs: token t is allowed iff the context accepts
/// `token_bytes(t)[offset:]`. Suffixes are sorted bytewise (so a probe walks them as a
/// trie), each once, with its tokens ascending; a pair listed twice counts once. Returns the
/// number of distinct tokens. `uncertain` is used as scratch space.
///
/// Cost: linear in the pairs (a radix sort on each suffix's first 8 bytes, then the token),
/// plus a comparison sort of the runs of suffixes longer than 8 bytes that share those bytes;
/// each token's bytes are read once, and each distinct suffix's once more when longer than 8.
size_t group_by_suffix(const Vocabulary& vocab, std::vector<std::pair<int32_t, uint32_t>>& uncertain,
                       StateMask& out);

}  // namespace lockstep::mask
