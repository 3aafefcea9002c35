// automata/mask/trie_walk.cpp — the walk of the sorted vocabulary (a trie) from a grammar
// state, with StateWalker carrying the parse along each token's bytes.
#include <algorithm>
#include <string_view>
#include <vector>

#include "automata/mask/impl.h"
#include "automata/mask/state_walker.h"
#include "automata/token_bitmask.h"

namespace lockstep {

using mask::PartialMask;
using mask::StateWalker;

bool TokenMaskCache::Impl::first_bytes(uint32_t state, bool skip_seed_rules, GrammarAutomaton::ByteSet& first) const {
  const GrammarAutomaton& g = *grammar_;
  first = {};
  for (const auto& e : g.byte_edges(state)) {
    GrammarAutomaton::add_byte_range(first, e.lo, e.hi);
  }
  if (skip_seed_rules) return true;
  bool exact = true;
  for (const auto& e : g.rule_edges(state)) {
    exact = exact && !g.rule_nullable(e.rule);
    for (size_t k = 0; k < first.size(); ++k) first[k] |= g.rule_first(e.rule)[k];
  }
  return exact;
}

// The walk of the sorted vocabulary from `state` (see StateWalker), into `out`. With
// `skip_seed_rules`, the seed's own rule edges are not entered (compose() covers them).
void TokenMaskCache::Impl::walk_vocabulary(uint32_t state, bool skip_seed_rules, PartialMask& out) const {
  const GrammarAutomaton& g = *grammar_;
  const Vocabulary& vocab = *vocabulary_;
  const uint32_t rule = g.rule_of(state);
  StateWalker w(g, limits_, state, vocab.max_token_bytes(), skip_seed_rules);
  const auto sorted = vocab.sorted_text_tokens();
  const auto common = vocab.sorted_common_prefix();

  // A token that fails after `failed_at` bytes is uncertain through every earlier depth at
  // which the rule can complete and whose next byte can follow the rule. Those depths and
  // bytes lie in the failed prefix, so the answer is the same for every token sharing it.
  auto classify_failed = [&](int32_t id, std::string_view bytes, size_t failed_at) {
    bool any = false;
    for (size_t j = 1; j <= failed_at && w.boundaries_upto(failed_at) != 0; ++j) {
      if (!w.boundary_at(j) || !g.can_follow(rule, static_cast<uint8_t>(bytes[j]))) continue;
      out.uncertain.emplace_back(id, static_cast<uint32_t>(j));
      any = true;
    }
    return any;
  };

  // A run of tokens starting with a byte the state cannot read fails at its first byte, so it
  // is rejected (uncertain needs a completion after a byte) without a step. Only the runs of
  // the bytes it can read are visited (Vocabulary::sorted_first_byte_begin): the state after
  // a key's quote reads a few letters, and the other ~250 runs cost nothing (a thousand such
  // states after `{"` in an anyOf of 200 objects).
  GrammarAutomaton::ByteSet first{};
  const bool first_known = first_bytes(state, skip_seed_rules, first);

  size_t dead = 0;  // length of a rejected prefix of the current path, or 0
  bool dead_uncertain = false;  // tokens with that prefix are uncertain
  auto walk_run = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const int32_t id = sorted[i];
      const std::string_view bytes = vocab.sorted_bytes(i);
      if (dead != 0 && common[i] >= dead) {
        if (!dead_uncertain) {
          // Every token with this prefix is rejected: skip the run.
          i = vocab.sorted_prefix_end(i, dead) - 1;
        } else {
          classify_failed(id, bytes, dead - 1);
        }
        continue;
      }
      dead = 0;
      w.back_to(std::min<size_t>(w.depth(), common[i]));
      while (w.depth() < bytes.size() && w.advance(static_cast<uint8_t>(bytes[w.depth()]))) {
      }
      if (w.depth() == bytes.size()) {
        set_bit(out.accepted, static_cast<size_t>(id));
        if (out.accepted_ids.size() <= out.ids_max) out.accepted_ids.push_back(id);
      } else if (const size_t c = w.depth(); w.boundaries_upto(c) == 0 && c > 0 && w.next_bytes() != nullptr) {
        // Rejected with no completion on the path, as is every token of this subtree whose
        // byte at c the path cannot read: go straight to the next one it can read.
        i = mask::next_readable(i, vocab.sorted_prefix_end(i, c), *w.next_bytes(),
                                [&](size_t k) { return static_cast<uint8_t>(vocab.sorted_bytes(k)[c]); }) - 1;
      } else {
        dead = w.depth() + 1;
        dead_uncertain = classify_failed(id, bytes, w.depth());
      }
    }
  };
  if (!first_known) {
    walk_run(0, sorted.size());
    return;
  }
  for (unsigned b = GrammarAutomaton::next_byte(first, 0); b < 256; b = GrammarAutomaton::next_byte(first, b + 1)) {
    walk_run(vocab.sorted_first_byte_begin(b), vocab.sorted_first_byte_begin(b + 1));
  }
}

}  // namespace lockstep
