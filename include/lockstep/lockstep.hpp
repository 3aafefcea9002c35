// include/lockstep/lockstep.hpp — lockstep's public C++ API in one include.
//
//   lockstep/tokenizer.h          TokenizerInfo: a vocabulary as the engine sees it
//   lockstep/compiler.h           GrammarCompiler, CompiledGrammar (JSON Schema, tools, regex, GBNF)
//   lockstep/matcher.h            GrammarMatcher, fill_next_token_bitmasks
//   lockstep/bitmask.h            TokenBitmask and the bit helpers
//   lockstep/json_schema_options.h  JsonSchemaOptions
//   lockstep/errors.h             Error and its subclasses, with locations
//   lockstep/limits.h             EngineLimits
// The C API is lockstep/lockstep.h.
#pragma once

#include "lockstep/bitmask.h"
#include "lockstep/compiler.h"
#include "lockstep/errors.h"
#include "lockstep/json_schema_options.h"
#include "lockstep/limits.h"
#include "lockstep/matcher.h"
#include "lockstep/tokenizer.h"
