// automata/mask/byte_classes.cpp — byte classes of automaton-only rules: the bytes no edge
// of the rule tells apart.
#include "automata/mask/byte_classes.h"

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <vector>

#include "automata/mask/impl.h"
#include "automata/vocabulary.h"

namespace lockstep {

namespace mask {

ByteClasses compute_byte_classes(const GrammarAutomaton& g, uint32_t rule) {
  // Bytes b and b + 1 share a class unless some edge of the rule starts at b + 1 or ends
  // at b: then every edge reads whole classes.
  // The rule's edges in one pass over their block, not state by state (the automaton of a
  // 50,000-string enum has ~10^5 states: a third of the first mask inside it).
  std::array<bool, 257> cut{};
  ByteClasses c;
  for (const auto& e : g.rule_byte_edges(rule)) cut[e.lo] = cut[e.hi + 1u] = true;
  // The rules called (a JSON string's escape rules, json_escapes.h), each looked at once: a
  // large enum's automaton calls thousands (one per set of code points its states read).
  const auto calls = g.rule_call_edges(rule);
  if (!calls.empty()) {
    std::vector<char> called(g.num_rules(), 0);
    for (const auto& e : calls) {
      if (called[e.rule]) continue;
      called[e.rule] = 1;
      c.calls_walkable = c.calls_walkable && !g.rule_nullable(e.rule) && g.rule_call_edges(e.rule).empty();
    }
  }
  uint32_t n = 0;
  for (unsigned b = 0; b < 256; ++b) {
    if (b > 0 && cut[b]) ++n;
    c.of[b] = static_cast<uint8_t>(n);
  }
  c.count = n + 1;
  return c;
}

ClassTables::ClassTables(const GrammarAutomaton& g, uint32_t rule, const ByteClasses& classes)
    : g_(g), classes_(classes), base_(g.rule_start(rule)), table_of_(g.rule_end(rule) - base_, nullptr) {}

const uint32_t* ClassTables::build(uint32_t q) {
  const uint32_t n_classes = classes_.count;
  if (chunk_used_ + n_classes > kChunk) {
    chunks_.push_back(std::make_unique_for_overwrite<uint32_t[]>(kChunk));
    chunk_used_ = 0;
  }
  uint32_t* row = chunks_.back().get() + chunk_used_;
  chunk_used_ += n_classes;
  std::fill_n(row, n_classes, kNone);
  for (const auto& e : g_.byte_edges(q)) {
    const uint32_t entry = e.target | (g_.is_final(e.target) ? kFinalBit : 0u);
    for (unsigned c = classes_.of[e.lo]; c <= classes_.of[e.hi]; ++c) row[c] = entry;
  }
  for (const auto& e : g_.rule_edges(q)) {
    const auto& first = g_.rule_first(e.rule);
    for (unsigned b = 0; b < 256; ++b) {
      if ((first[b >> 6] >> (b & 63)) & 1) row[classes_.of[b]] = kCall;
    }
  }
  return table_of_[q - base_] = row;
}

UniformRun uniform_run(ClassTables& tables, uint32_t s1, size_t max_length) {
  UniformRun run;
  const uint32_t* row = tables.row(s1);
  // The target s1 sends the most bytes to: a row has a few distinct targets.
  std::array<uint32_t, 256> target, bytes;  // the first `targets` entries
  uint32_t targets = 0;
  for (unsigned b = 0; b < 256; ++b) {
    const uint32_t e = row[tables.class_of(static_cast<uint8_t>(b))];
    if (e >= ClassTables::kCall) continue;
    uint32_t t = 0;
    while (t < targets && target[t] != e) ++t;
    if (t == targets) target[targets] = e, bytes[targets++] = 0;
    ++bytes[t];
  }
  if (targets == 0) return run;
  const size_t top = static_cast<size_t>(std::max_element(bytes.begin(), bytes.begin() + targets) - bytes.begin());
  // One byte (a key's next letter) holds no kind but its own, which a run of it seldom meets.
  if (bytes[top] < 2) return run;
  const uint32_t best = target[top];
  // The kinds of bytes C holds whole.
  uint32_t partly = 0;
  for (unsigned b = 0; b < 256; ++b) {
    (row[tables.class_of(static_cast<uint8_t>(b))] == best ? run.kinds : partly) |= Vocabulary::byte_kind(static_cast<uint8_t>(b));
  }
  run.kinds &= ~partly;
  if (run.kinds == 0) return run;
  std::array<uint32_t, 256> in_c;  // C's classes: the first `size` entries
  uint32_t size = 0;
  for (uint32_t c = 0; c < tables.classes().count; ++c) {
    if (row[c] == best) in_c[size++] = c;
  }
  for (uint32_t s = s1; run.length < max_length; ++run.length) {
    const uint32_t* r = tables.row(s);
    const uint32_t e = r[in_c[0]];
    if (e >= ClassTables::kCall || !std::all_of(in_c.begin(), in_c.begin() + size, [&](uint32_t c) { return r[c] == e; })) break;
    if ((e & ~ClassTables::kFinalBit) == s) {  // a loop: as long as any token
      run.length = max_length;
      break;
    }
    s = e & ~ClassTables::kFinalBit;
  }
  return run;
}

}  // namespace mask

const mask::ByteClasses& TokenMaskCache::Impl::byte_classes(uint32_t rule) const {
  std::lock_guard lock(byte_classes_mutex_);
  auto& slot = byte_classes_[rule];
  if (!slot) slot = std::make_unique<const mask::ByteClasses>(mask::compute_byte_classes(*grammar_, rule));
  return *slot;
}

}  // namespace lockstep
