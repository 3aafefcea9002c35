// schemas/number_conditions.h — the mantissa walks of the number languages (internal).
//
// Each class is a number_automaton::Condition on the magnitude of a number text: every
// magnitude, zero or non-zero, the exact region's cap, a comparison with a constant, a
// multiple, and the conjunction of several walked together (their exponent intervals
// intersected, states no text leads on from dropped), which keeps "integer ∧ minimum ∧
// maximum" near the size of its minimal automaton instead of the product of three.
// The algorithms are described in number_language.h.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "grammar/intern_table.h"
#include "schemas/number_automaton.h"
#include "schemas/number_language.h"

namespace lockstep::number_conditions {

using number_automaton::Condition;
using number_automaton::Reach;
using number_automaton::Verdict;

/// Every magnitude.
class AnyMagnitude final : public Condition {
 public:
  uint64_t start() const override { return 0; }
  uint64_t step(uint64_t, char) const override { return 0; }
  Verdict end(uint64_t) const override { return Verdict::all(); }
};

/// Magnitude zero (`zero`) or not zero.
class ZeroMagnitude final : public Condition {
 public:
  explicit ZeroMagnitude(bool zero) : zero_(zero) {}
  uint64_t start() const override { return 0; }
  uint64_t step(uint64_t s, char c) const override;
  Verdict end(uint64_t s) const override;

 private:
  bool zero_;
};

/// Where the walks decide exponent texts exactly (number_language.h): with `compare`, the
/// comparisons' region (at most `cap` integer digits, or after "0." a first significant
/// digit at most `cap` places after the point); with `multiple`, the multiples' region (the fraction
/// empty, exactly "0", or ending in a non-zero digit at most `cap` places after the point;
/// without a non-zero fraction digit, at most `cap` trailing zeros in the integer part).
/// Zero mantissas and plain texts are always inside.
class InRegion final : public Condition {
 public:
  InRegion(int cap, bool compare, bool multiple)
      : cap_(static_cast<uint64_t>(cap)), compare_(compare), multiple_(multiple) {}
  uint64_t start() const override { return 0; }
  uint64_t step(uint64_t s, char c) const override;
  Verdict end(uint64_t s) const override;

 private:
  uint64_t cap_;
  bool compare_, multiple_;
};

/// Magnitudes in a finite set (of one sign). The walk follows a trie of the constants'
/// significant digits and tracks the mantissa's scale; a constant with digits D and scale q
/// (value 0.D·10^q) is met by digits D (then zeros) at scale p with exponent q − p.
/// Constants sharing their digits must have consecutive scales (one interval of exponents);
/// split the set otherwise (see `groups`).
class EqualSet final : public Condition {
 public:
  /// With `cap` 0 (plain texts only), the walk drops states from which no constant's plain
  /// text can be completed, so it stays near the size of the digit trie.
  EqualSet(const std::vector<Decimal>& magnitudes, int cap);
  /// `magnitudes` split into sets EqualSet accepts.
  static std::vector<std::vector<Decimal>> groups(const std::vector<Decimal>& magnitudes);
  /// A lower bound of the states the walk with exponents reaches: for each node but the
  /// root, at (longest) depth d, the point after each of its first min(d, max p) digits, and
  /// the node read after "0." and each count of zeros up to max z.
  size_t exponent_walk_lower_bound() const;
  /// From now on, plain texts only: as if made with `cap` 0.
  void drop_exponents();
  uint64_t start() const override { return 0; }
  uint64_t step(uint64_t s, char c) const override;
  Verdict end(uint64_t s) const override;

 private:
  struct Node {
    int child[10];
    int stripped;                  // the node of this prefix without its trailing zeros
    int64_t q_lo = 1, q_hi = 0;    // scales of the constants with exactly these digits
    int64_t sub_lo = INT64_MAX, sub_hi = INT64_MIN;  // of the constants in the subtree
    int depth = 0;                 // longest path from the root, once subtries are shared
    bool shared = false;           // reached from the root once subtries are shared
  };
  void share_subtries();
  uint64_t walk(uint64_t s, char c) const;  // step() without dropping dead states
  bool plain_live(uint64_t s) const;
  int64_t cap_;
  bool zero_ = false;
  std::vector<Node> trie_;
  int64_t max_p_ = 0, max_z_ = 0;
  int64_t top_q_ = 0, bottom_z_ = 0;  // the constants' largest scale and most leading zeros (0 if none)
};

/// The magnitude compared with a constant C > 0. `cap`: mantissa scales |p| ≤ cap decide
/// exponent texts (0: plain texts only).
class Compare final : public Condition {
 public:
  enum Mode { kGe, kGt, kLe, kLt, kEq };
  Compare(const Decimal& c, Mode mode, int cap);
  uint64_t start() const override { return 0; }
  uint64_t step(uint64_t s, char c) const override;
  Verdict end(uint64_t s) const override;
  Reach reach(uint64_t s) const override;
  bool fixed(uint64_t s, Verdict& v) const override;

 private:
  uint64_t next(uint64_t s, int x) const;
  bool settled(uint64_t s) const;
  Mode mode_;
  int64_t cap_;
  int64_t q_ = 0;       // C = 0.digits_ · 10^q_
  std::string digits_;  // significant digits of C
  int64_t max_p_ = 0, max_z_ = 0;
  uint64_t below_ = 0, above_ = 0;
};

/// Multiples of m > 0, or with `negated` the magnitudes that are no multiple of m within the
/// multiples' region (InRegion with `multiple`: an exponent text outside it is rejected, as
/// the complement of the multiples taken within their region rejects it). Throws
/// std::invalid_argument when m has more than 18 significant digits or its residues alone
/// exceed `max_states`.
class Multiple final : public Condition {
 public:
  Multiple(const Decimal& m, int cap, size_t max_states, bool negated = false);
  uint64_t start() const override { return 0; }
  uint64_t step(uint64_t s, char c) const override;
  Verdict end(uint64_t s) const override;
  Reach reach(uint64_t s) const override;
  bool costly_steps() const override { return true; }

 private:
  struct MState {
    uint64_t frac, nz, fnz, nr, u, t, f, z, rs;
    uint64_t pack() const;
    static MState unpack(uint64_t k);
  };
  MState canonical(MState s) const;
  int64_t delta(uint64_t u) const;
  Verdict multiples_end(const MState& s) const;
  // Negated: past a non-zero fraction digit beyond the cap, where the multiples reject every
  // text, every plain text is accepted and no exponent text (outside the region). Never a
  // packed state (its f field, 1023, is past every cap), nor Conjunction's kFolded.
  static constexpr uint64_t kPlainOnly = uint64_t{0x3FF} << 43;
  bool negated_;
  int64_t cap_;
  int a_ = 0, b_ = 0;        // m = 2^a·5^b·r·10^s
  uint64_t r_ = 1, p_ = 1;   // p_ = 2^a·5^b
  int64_t s_ = 0;
  int64_t plain_r_ = 0;      // a non-zero fraction digit past this position: never a multiple
  int64_t max_t_ = 0, plain_t_ = 0, max_f_ = 0;  // caps of t (exponent texts / plain only), f
  int max_z_ = 1;            // cap of the zeros since the last non-zero digit
  std::vector<uint64_t> pow10_;  // 10^i mod p_
};

/// Multiples of m > 0 among plain texts only (no exponent): m = M·10^−k, the walk tracks N
/// mod M over the integer part and the first k fraction digits, then allows only zeros:
/// (k + 2)·M states, where Multiple needs a state per residue of N0 and position. Throws
/// std::invalid_argument past `max_states`.
class PlainMultiple final : public Condition {
 public:
  /// `negated`: the plain texts that are no multiple of m.
  PlainMultiple(const Decimal& m, size_t max_states, bool negated = false);
  uint64_t start() const override { return 0; }
  uint64_t step(uint64_t s, char c) const override;
  Verdict end(uint64_t s) const override;

 private:
  // Negated: past a non-zero digit beyond m's last. Never a packed state (fraction digits read
  // are capped at k + 1 ≤ 1001), nor Conjunction's kFolded.
  static constexpr uint64_t kNoMultiple = uint64_t{0xFFFFF} << 1;
  bool negated_;
  uint64_t m_ = 1;
  uint64_t k_ = 0;
  std::vector<uint64_t> scale_;  // scale_[i] = 10^(k − i) mod M
};

/// All of `parts` (not owned; two to four; longer lists nest). A state is the tuple of the parts' states, where a
/// part whose verdict is fixed (Condition::fixed) is folded into one fixed verdict; in the
/// fraction, a fixed interval that the other parts' reach already implies is dropped (in
/// "integer ∧ minimum: 1" the bound is implied once the fraction starts), and a state whose
/// parts can accept no common exponent is rejected.
class Conjunction final : public Condition {
 public:
  static constexpr size_t kMaxParts = 4;
  explicit Conjunction(std::vector<const Condition*> parts);
  uint64_t start() const override;
  uint64_t step(uint64_t s, char c) const override;
  Verdict end(uint64_t s) const override;
  Reach reach(uint64_t s) const override;
  bool costly_steps() const override { return true; }

 private:
  // parts' states (kFolded: folded into the fixed verdict), the fixed verdict, the fraction bit
  struct Tuple {
    uint64_t part[kMaxParts] = {};
    int64_t lo = number_automaton::kMinusInfinity, hi = number_automaton::kPlusInfinity;
    bool plain = true, frac = false;
    bool operator==(const Tuple& o) const;
  };
  struct TupleHash {
    uint64_t operator()(const Tuple& t) const;
  };
  static constexpr uint64_t kFolded = kReject - 1;
  // A part's step from a state by a character, with what step() asks of the state reached
  // (fixed(), reach()): memoized per part, since many tuples share a part's state (an
  // integer between bounds walks 2,557 tuples over about 300 states of its two parts). A
  // part whose steps rarely repeat (most of the first kProbeSteps new) is not memoized:
  // the multiples of 2.5 beside a bound at zero walk tuples that are their own states.
  struct PartKey {
    uint64_t state;
    char c;
    bool operator==(const PartKey& o) const { return state == o.state && c == o.c; }
  };
  struct PartKeyHash {
    uint64_t operator()(const PartKey& k) const;
  };
  struct PartStep {
    uint64_t next;
    bool fixed;
    Verdict verdict;  // when fixed
    Reach reach;      // of `next`
  };
  PartStep part_step(size_t i, uint64_t state, char c) const;
  PartStep compute_step(size_t i, uint64_t state, char c) const;
  uint64_t intern(const Tuple& t) const;
  Reach reach(const Tuple& t) const;
  std::vector<const Condition*> parts_;
  mutable InternTable<Tuple, TupleHash> tuples_;  // numbered as met: a state is its tuple's number
  mutable std::vector<InternTable<PartKey, PartKeyHash>> part_keys_;  // per part
  mutable std::vector<std::vector<PartStep>> part_steps_;              // per part, by key number
  static constexpr uint32_t kProbeSteps = 256;
  mutable std::vector<uint32_t> part_lookups_;  // per part, while probing
  mutable std::vector<char> part_memo_;         // per part: memoized (else computed each time)
};

/// Any of `parts` (not owned; one to kMaxParts), walked side by side: a state is the tuple
/// of the parts' states (kReject for a part no continuation satisfies), rejected when every
/// part is. At the end of a mantissa the plain text is accepted if any part accepts it, and
/// the exponents are each part's interval (intervals()): the sets of an enum whose constants
/// with the same digits have scales in separate runs (EqualSet::groups) are walked as one,
/// instead of one automaton per set and their union.
class AnyOf final : public Condition {
 public:
  static constexpr size_t kMaxParts = 8;
  explicit AnyOf(std::vector<const Condition*> parts);
  uint64_t start() const override;
  uint64_t step(uint64_t s, char c) const override;
  /// Plain only; the exponents are intervals().
  Verdict end(uint64_t s) const override;
  bool intervals(uint64_t s, std::vector<std::pair<int64_t, int64_t>>& out) const override;
  bool costly_steps() const override { return true; }

 private:
  struct Tuple {
    uint64_t part[kMaxParts] = {};
    bool operator==(const Tuple& o) const { return std::equal(part, part + kMaxParts, o.part); }
  };
  struct TupleHash {
    uint64_t operator()(const Tuple& t) const;
  };
  std::vector<const Condition*> parts_;
  mutable InternTable<Tuple, TupleHash> tuples_;  // numbered as met: a state is its tuple's number
};

}  // namespace lockstep::number_conditions
