// automata/json_escapes.h — the \uXXXX escapes of JSON strings (RFC 8259 §7) as byte ranges,
// and the shared rules that read escaped surrogate pairs.
//
// A JSON string may write a code point above U+FFFF as the escapes of its UTF-16 surrogate
// pair, "\uD83D\uDE00" (one code point for lengths and patterns). Spelled out at every
// position of a string automaton, the pair's 12 bytes would add ~10 partial states per
// position. Instead the partial state after "\uD" (or "\ud") — which the BMP escapes
// \uD000..\uD7FF need anyway — calls one rule reading the pair's other 9 bytes,
// "[89ABab]XX\u[Dd][C-Fc-f]XX" restricted to the code points of the call's target, and returns
// to that target. The rule's first bytes [89ABab] are disjoint from the BMP digits [0-7] read
// in the same state, so the automaton stays deterministic.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "automata/utf8_ranges.h"
#include "grammar/char_dfa.h"

namespace lockstep {

/// Four hex digits, each a range of digit values (0..15).
using HexDigits = std::array<std::pair<uint32_t, uint32_t>, 4>;

/// 4-hex-digit strings with values lo..hi (at most 0xFFFF), as per-digit ranges (the UTF-8
/// range split in base 16).
std::vector<HexDigits> hex_sequences(uint32_t lo, uint32_t hi);

/// The bytes spelling the hex digits d0..d1 in either case ('0'-'9', 'A'-'F', 'a'-'f'):
/// sorted, disjoint ranges.
std::vector<ByteRange> hex_digit_bytes(uint32_t d0, uint32_t d1);

/// The code points above U+FFFF that a code-point state reads into one target: one call of
/// a pair rule.
struct PairCall {
  uint32_t target;
  std::vector<CodepointRange> ranges;  ///< sorted, disjoint, not adjacent
};
/// The calls of a state with `edges` (sorted, disjoint), targets in order of first
/// appearance, into `out` (whose storage is reused: a chain of states makes one call each).
void pair_calls(const std::vector<CharDfa::Edge>& edges, std::vector<PairCall>& out);

/// The grammar's pair rule for a call's code points (PairCall::ranges).
using PairRuleFn = std::function<uint32_t(const std::vector<CodepointRange>&)>;

/// The language of the pair rule of `ranges`: the escaped surrogate pairs of those code
/// points without their first three bytes ("\uD" or "\ud"). The rule's body is this
/// automaton (an automaton-only rule), made once per set of code points in the process.
std::shared_ptr<const CharDfa> surrogate_pair_tail(const std::vector<CodepointRange>& ranges);

/// Pair rules made on demand for one grammar, numbered from its rule count on (the grammar
/// itself is not touched).
class SurrogatePairRules {
 public:
  explicit SurrogatePairRules(const Grammar& grammar)
      : grammar_(grammar), first_(static_cast<uint32_t>(grammar.rules.size())) {}
  /// The index of the rule for `ranges`, made on first use.
  uint32_t rule(const std::vector<CodepointRange>& ranges);
  /// One past the last index handed out.
  uint32_t end() const { return first_ + static_cast<uint32_t>(rules_.size()); }
  /// A rule made here (first rule count <= index < end()), and its code points.
  const Rule& at(uint32_t index) const { return rules_[index - first_]; }
  const std::vector<CodepointRange>& ranges(uint32_t index) const { return ranges_[index - first_]; }

 private:
  const Grammar& grammar_;
  const uint32_t first_;
  std::map<std::vector<uint32_t>, uint32_t> index_;  // flattened ranges → rule
  std::deque<Rule> rules_;  // references stay valid while rules are added
  std::deque<std::vector<CodepointRange>> ranges_;
  std::vector<CodepointRange> last_;  // the ranges of the previous call (a chain repeats them)
  uint32_t last_rule_ = UINT32_MAX;
};

}  // namespace lockstep
