// runtime/errors.h — errors for malformed model and tokenizer files (FileFormatError,
// ModelFormatError, TokenizerError; declared in include/lockstep/errors.h).
#pragma once

#include "grammar/errors.h"
