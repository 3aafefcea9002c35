// automata/token_bitmask.h — bit operations on token bitmasks and the TokenBitmask view,
// defined in the public header include/lockstep/bitmask.h (the contract between the
// matcher and the sampler).
#pragma once

#include "lockstep/bitmask.h"
