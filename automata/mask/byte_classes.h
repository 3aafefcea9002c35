// automata/mask/byte_classes.h — byte classes of automaton-only rules (the bytes no edge of
// the rule tells apart), and the dense per-state tables over them that the automaton walk
// reads. Internal to the mask engine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "automata/grammar_automaton.h"

namespace lockstep::mask {

// Byte classes of an automaton-only rule: bytes no edge of the rule tells apart. With
// calls_walkable, every rule it calls reads bytes only and is not nullable (call_walk.h).
struct ByteClasses {
  std::array<uint8_t, 256> of{};
  uint32_t count = 0;
  bool calls_walkable = true;
};

/// The byte classes of `rule` (an automaton-only rule of `g`).
ByteClasses compute_byte_classes(const GrammarAutomaton& g, uint32_t rule);

// Dense tables over the rule's byte classes, built on first visit: entry = target |
// kFinalBit when the target is final, kNone without a transition. Classes keep a state's
// table a few dozen entries (a JSON string automaton tells apart ~30 kinds of bytes), so
// the tables of a whole walk stay in cache. Rows are cut from chunks that never move, so
// each depth of the walk holds its state's row.
// kCall: a byte a callee may read (a JSON string's escape rule): the token's rest is
// read by walk_with_calls.
// One walk's scratch: not thread-safe; `g` and `classes` must outlive it.
class ClassTables {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kFinalBit = 0x80000000u;
  static constexpr uint32_t kCall = kNone - 1;

  ClassTables(const GrammarAutomaton& g, uint32_t rule, const ByteClasses& classes);
  /// The row of state `q` of the rule (indexed by class_of()), built on first use.
  const uint32_t* row(uint32_t q) {
    const uint32_t* t = table_of_[q - base_];
    if (!t) [[unlikely]] t = build(q);
    return t;
  }
  uint8_t class_of(uint8_t byte) const { return classes_.of[byte]; }
  const ByteClasses& classes() const { return classes_; }

 private:
  static constexpr size_t kChunk = 16384;  // entries; >= 256, so a row always fits in a fresh chunk
  const uint32_t* build(uint32_t q);

  const GrammarAutomaton& g_;
  const ByteClasses& classes_;
  const uint32_t base_;  // the rule's first state
  std::vector<const uint32_t*> table_of_;
  std::vector<std::unique_ptr<uint32_t[]>> chunks_;
  size_t chunk_used_ = kChunk;
};

// The bytes a state s1 of the rule and the states after it read alike: C, the bytes s1
// sends to its most common target, and `length`, how many states from s1 on each send every
// byte of C to one next state with no call (at most `max_length`). Each position of a
// counted repeat of a class (`[A-Za-z0-9_]{0,15}`) and a loop over one (a string body's
// printable bytes) start such runs. A token that reads a byte into s1 and then only bytes
// of C, no more of them than `length`, is read whole: its steps could only lead along the
// run. `kinds` are the byte kinds C holds whole (Vocabulary::byte_kind), so one load of a
// token's Vocabulary::sorted_rest_kinds() finds such a token; one with a byte of a kind C
// holds only in part (`[a-m]` of a-f and g-z) is left to the steps. length 0: no run.
struct UniformRun {
  uint32_t kinds = 0;
  size_t length = 0;
};
UniformRun uniform_run(ClassTables& tables, uint32_t s1, size_t max_length);
// The fewest tokens sharing a first byte for which a walk looks for a uniform run (the
// table walk's and the trie walk's): a smaller group is walked at about the cost of finding
// its run.
inline constexpr size_t kRunMinTokens = 16;

}  // namespace lockstep::mask
