// runtime/json_warm_start.h — the engine's generic JSON building blocks, prepared once per
// process and vocabulary when a vocabulary is loaded.
#pragma once

#include <memory>

#include "automata/vocabulary.h"

namespace lockstep {

/// Compiles a few generic JSON Schemas (any value; an integer; an object of the common
/// member types; a string of at most 16 code points, whose positions are the last 16 of
/// every length bound) and computes every mask of their grammars over `vocabulary`; then
/// the string body and the 16 bounded positions again with \u escapes read through escape
/// rules, as large grammars read them, and the first positions of the length block and
/// tails of strings longer than 512 code points; and builds the languages of the `format`s
/// lockstep enforces (prepare_format_languages). What they leave in the process-wide caches
/// (the exact number languages, the format languages, the byte-DFA templates and rule
/// automata of string bodies, the state masks and walk segments of string, number and
/// punctuation states) is what the first grammar compiled afterwards would otherwise build
/// itself: this is the per-vocabulary work done at load, as other engines precompile their
/// built-in JSON grammar or lexeme masks. Runs once per vocabulary id (later calls return at
/// once); about 150 ms and 3 MB resident for Llama 3's 128k tokens (docs/masks.md).
/// Thread-safe. Never throws: a failure only leaves the caches cold.
void prepare_json_building_blocks(const std::shared_ptr<const Vocabulary>& vocabulary);

}  // namespace lockstep
