// automata/mask/impl.h — what the files of the mask engine share: the partial mask a state's
// walk fills. Internal to automata/mask/.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "automata/mask_cache.h"

namespace lockstep::mask {

// A state's classification while it is being assembled from parts.
struct PartialMask {
  std::vector<uint32_t> accepted;                          // bitmask words
  // (token, offset): the token is allowed iff the context accepts its bytes from offset on.
  std::vector<std::pair<int32_t, uint32_t>> uncertain;
};

}  // namespace lockstep::mask
