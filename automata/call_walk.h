// automata/call_walk.h — the exact walk of a token through a state of an automaton-only rule
// whose states call rules (the \u escapes of JSON strings, json_escapes.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "automata/grammar_automaton.h"

namespace lockstep {

/// Reads bytes[from..] starting in `state`, a state of a rule whose callees read bytes only
/// (no rule edges of their own) and are not nullable: every way at once, as configurations
/// (state, the caller's state to return to). Sets boundaries[d] = boundaries[d - 1] + 1
/// when the rule can complete after byte d - 1 (else + 0) for each byte read, and returns
/// how many bytes of `bytes` could be read (bytes.size() when all of them).
size_t walk_with_calls(const GrammarAutomaton& g, uint32_t state, std::string_view bytes, size_t from,
                       uint32_t* boundaries);

}  // namespace lockstep
