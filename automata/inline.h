// automata/inline.h — rule inlining, an optimization of the grammar IR before compilation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/hash.h"

namespace lockstep {

struct InlineLimits {
  /// Rules whose (already inlined) body expands into more automaton states than this stay
  /// separate rules: copying them into every caller would multiply states.
  size_t max_rule_size = 256;
  /// The same bound for a rule referenced only once (inlining it copies nothing).
  size_t max_single_use_size = 4096;
  /// States inlining may add to one rule's body.
  size_t max_body_size = 20000;
};

/// Which rule references inlining substitutes: every reference to a non-recursive rule
/// (other than the root) within the size limits stands for that rule's body, read with the
/// same plan (so the callee's own substitutions apply inside it). Nothing is copied: the
/// automaton builder (rule_automaton.h) follows substituted references as it goes, so a
/// body shared by many callers exists once. A plan points into the grammar it was made
/// for, which must outlive it and stay unchanged.
class InlinePlan {
 public:
  /// A plan that substitutes nothing (inlining off).
  InlinePlan() = default;
  /// True when the rule reference `ref` (a node of a rule body of the planned grammar)
  /// stands for the referenced rule's body.
  bool substitutes(const Expr& ref) const {
    if (substituted_.empty()) return false;
    const size_t mask = substituted_.size() - 1;
    for (size_t i = slot_of(&ref); ; i = (i + 1) & mask) {
      if (substituted_[i] == &ref) return true;
      if (substituted_[i] == nullptr) return false;
    }
  }
  /// `e`, or, while it is a substituted reference, the body it stands for.
  const Expr& resolve(const Expr& e) const;
  /// The body of `rule` in the planned grammar.
  const Expr& body(uint32_t rule) const { return grammar_->rules[rule].body; }
  /// Merged bodies nest at most this deep in one automaton (the builder recurses into each);
  /// a reference past it stays a call, whose rule merges the rest in its own automaton.
  static constexpr uint32_t kMaxMergeDepth = 256;
  /// True when the reference `ref` (not substituted) is built as its rule's body continuing
  /// the caller's automaton (Rule::tail_merged): it ends the body (`tail`), and either its
  /// body is merged already in this automaton (`merged_already`) or merged bodies nest less
  /// than kMaxMergeDepth deep there (`depth`). The automaton builder and the shape key of
  /// the rule-automaton cache both ask this, so they read a body alike.
  bool merges(const Expr& ref, bool tail, uint32_t depth, bool merged_already) const {
    return tail && grammar_ && grammar_->rules[ref.rule].tail_merged && (merged_already || depth < kMaxMergeDepth);
  }

 private:
  // The substituted references: open addressing with linear probing (empty slots null),
  // a power-of-two size at least twice their number, filled once (no allocation per
  // reference: a grammar of many member machines substitutes a great many).
  size_t slot_of(const Expr* ref) const {
    return static_cast<size_t>(mix64(reinterpret_cast<uintptr_t>(ref)) >> (64 - slot_bits_));
  }
  void fill(const std::vector<const Expr*>& refs);

  const Grammar* grammar_ = nullptr;
  std::vector<const Expr*> substituted_;
  unsigned slot_bits_ = 0;
  friend InlinePlan plan_inlining(const Grammar&, const InlineLimits&);
};

/// Plans inlining for `grammar`: rules are processed callees first, and a rule whose
/// (already inlined) body expands beyond the limits stays a rule. The language does not
/// change. Rules keep their indices; rules no longer referenced stay in the grammar (the
/// compiler skips unreachable rules).
InlinePlan plan_inlining(const Grammar& grammar, const InlineLimits& limits = {});

}  // namespace lockstep
