// automata/json_escapes.h — the \uXXXX escapes of JSON strings (RFC 8259 §7) as byte ranges,
// and the shared rules that read them.
//
// A JSON string may write any code point as an escape: "\u0061" for "a", and a code point
// above U+FFFF as the escapes of its UTF-16 surrogate pair, "\uD83D\uDE00" (one code point
// for lengths and patterns). Spelled out at every position of a string automaton, the
// escapes into each target take ~4 partial states ("\u", "\u0", "\u00", the third digit's),
// which positions share only when they have the same targets (a trie of property names
// shares none), and a pair's 12 bytes ~10 more. So a string automaton calls escape rules,
// shared by every position with the same code points, which read the escape and return to
// the target. Two ways, chosen per grammar by a cost model (escapes_by_rule), since each
// distinct set of code points is one more rule to build:
//   - every \u spelling through the rules: the partial state after the backslash calls, for
//     each target, the rule reading "u" and the spellings of the code points that lead
//     there; a position's escapes cost it that one state. The rules' languages are disjoint
//     (one code point, one target), so at most one call completes, and they start with 'u',
//     which no short escape reads;
//   - surrogate pairs only: \u0000..\uFFFF spelled out, and the partial state after "\uD"
//     (or "\ud"), which those need anyway for \uD000..\uD7FF, calls the rule reading the
//     rest of the pairs of each target's code points above U+FFFF ("[89ABab]XX\u[Dd][C-Fc-f]XX");
//     its first bytes are disjoint from the digits [0-7] read there, so the automaton stays
//     deterministic.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "automata/utf8_ranges.h"
#include "grammar/char_dfa.h"
#include "grammar/hash.h"
#include "grammar/intern_table.h"

namespace lockstep {

/// Four hex digits, each a range of digit values (0..15).
using HexDigits = std::array<std::pair<uint32_t, uint32_t>, 4>;

/// 4-hex-digit strings with values lo..hi (at most 0xFFFF), as per-digit ranges (the UTF-8
/// range split in base 16).
std::vector<HexDigits> hex_sequences(uint32_t lo, uint32_t hi);

/// The bytes spelling the hex digits d0..d1 in either case ('0'-'9', 'A'-'F', 'a'-'f'):
/// sorted, disjoint ranges.
std::vector<ByteRange> hex_digit_bytes(uint32_t d0, uint32_t d1);

/// The code points with a \u spelling (all but surrogates) that a code-point state reads
/// into one target: one call of an escape rule.
struct EscapeCall {
  uint32_t target;
  std::vector<CodepointRange> ranges;  ///< sorted, disjoint, not adjacent
};
/// The calls of a state with `edges` (sorted, disjoint), targets in order of first
/// appearance, into `out` (whose storage is reused: a chain of states makes one call each).
/// With `bmp` false, only code points above U+FFFF (the others spelled out).
void escape_calls(const CharDfa::Edges& edges, bool bmp, std::vector<EscapeCall>& out);

/// The escape rules a grammar's JSON strings call: `rule` names the grammar's rule for a
/// call's code points (EscapeCall::ranges). With `bmp`, the rules read the \u spellings of
/// code points up to U+FFFF as well; without, the string automata spell those out (those
/// above U+FFFF always go through the rules).
struct DirectShapeMemo;  // rule_automaton.h
struct EscapeRuleFn {
  std::function<uint32_t(const std::vector<CodepointRange>&)> rule;
  bool bmp = false;
  /// direct_automaton_dfa's memo for the grammar these rules belong to (make_direct_shape_memo):
  /// each state shape's template and the escape rules it calls, found once per grammar,
  /// not once per string automaton. Null: none kept.
  std::shared_ptr<DirectShapeMemo> shapes;
  /// With `bmp`, a state reading printable ASCII only is built as it stands (its bytes, and
  /// the state after its backslash), not through its shape's template; false: templates for
  /// every state (the same automaton, state for state: what the direct build is tested
  /// against).
  bool direct_ascii = true;
};

/// Whether the JSON strings of `grammar` should read their \u spellings up to U+FFFF
/// through escape rules (EscapeRuleFn::bmp), a cost model over its string automata. Spelled
/// out, each (position, target) pair of an automaton costs about four partial states
/// ("\u", "\u0", "\u00", the third digit's), shared only by positions with the same
/// targets; through rules, only the backslash state, but each distinct set of code points
/// is one more rule to build, which costs about as much as twenty pairs' spelled-out states
/// (measured: ~12 µs against ~0.55 µs). So rules when the pairs outnumber twenty times the
/// distinct sets: many names sharing characters, long length counters; not a schema of a
/// few short names, nor the one state of any string.
bool escapes_by_rule(const Grammar& grammar);

/// The language of the escape rule of `ranges`: the \u spellings of those code points
/// without their backslash ("u" and 4 hex digits; for a code point above U+FFFF, "u", the
/// high surrogate's digits, "\u" and the low surrogate's), hex digits in either case. With
/// `after_high_digit` (the code points all above U+FFFF), without their first three bytes,
/// "\uD" or "\ud": the rule a string calls from there when it spells out the escapes up to
/// U+FFFF (its first bytes [89ABab] are disjoint from the digits [0-7] of \uD000..\uD7FF
/// read in the same state, so the automaton stays deterministic). The rule's body is this
/// automaton over bytes (an automaton-only rule), made once per set of code points in the
/// process.
std::shared_ptr<const CharDfa> escape_tail(const std::vector<CodepointRange>& ranges, bool after_high_digit = false);

/// Escape rules made on demand for one grammar, numbered from its rule count on (the
/// grammar itself is not touched): read from after the backslash (`bmp`: every \u
/// spelling), or from after "\uD" (surrogate pairs only; the rest spelled out).
class EscapeRules {
 public:
  EscapeRules(const Grammar& grammar, bool bmp)
      : grammar_(grammar), first_(static_cast<uint32_t>(grammar.rules.size())), bmp_(bmp) {}
  /// The index of the rule for `ranges`, made on first use.
  uint32_t rule(const std::vector<CodepointRange>& ranges);
  /// Whether the rules read every \u spelling (from after the backslash).
  bool bmp() const { return bmp_; }
  /// One past the last index handed out.
  uint32_t end() const { return first_ + static_cast<uint32_t>(rules_.size()); }
  /// A rule made here (first rule count <= index < end()), and its code points.
  const Rule& at(uint32_t index) const { return rules_[index - first_]; }
  const std::vector<CodepointRange>& ranges(uint32_t index) const { return ranges_[index - first_]; }

 private:
  const Grammar& grammar_;
  const uint32_t first_;
  const bool bmp_;
  SeqInternTable<> index_;     // flattened ranges, numbered as their rules from first_
  std::vector<uint32_t> key_;  // rule()'s scratch
  std::deque<Rule> rules_;  // references stay valid while rules are added
  std::deque<std::vector<CodepointRange>> ranges_;
  std::vector<CodepointRange> last_;  // the ranges of the previous call (a chain repeats them)
  uint32_t last_rule_ = UINT32_MAX;
};

}  // namespace lockstep
