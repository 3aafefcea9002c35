// automata/mask/byte_classes.h — byte classes of automaton-only rules: the bytes no edge of
// the rule tells apart. Internal to the mask engine.
#pragma once

#include <array>
#include <cstdint>

#include "automata/compiled_grammar.h"

namespace lockstep::mask {

// Byte classes of an automaton-only rule: bytes no edge of the rule tells apart. With
// calls_walkable, every rule it calls reads bytes only and is not nullable (call_walk.h).
struct ByteClasses {
  std::array<uint8_t, 256> of{};
  uint32_t count = 0;
  bool calls_walkable = true;
};

/// The byte classes of `rule` (an automaton-only rule of `g`).
ByteClasses compute_byte_classes(const CompiledGrammar& g, uint32_t rule);

}  // namespace lockstep::mask
