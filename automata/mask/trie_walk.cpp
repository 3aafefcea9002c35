// automata/mask/trie_walk.cpp — the walk of the sorted vocabulary (a trie) from a grammar
// state, with StateWalker carrying the parse along each token's bytes.
#include <algorithm>
#include <array>
#include <string_view>
#include <utility>
#include <vector>

#include "automata/mask/byte_classes.h"
#include "automata/mask/impl.h"
#include "automata/mask/shared_caches.h"
#include "automata/mask/state_walker.h"
#include "automata/token_bitmask.h"

namespace lockstep {

using mask::PartialMask;
using mask::StateWalker;

namespace {

// The uniform run from grammar state s1 along its byte edges (as mask::uniform_run along an
// automaton-only rule's table rows): C, the bytes s1 sends to its most common target, and
// how many states from s1 on (at most `max_length`) send every byte of C to one next state.
// A token that reads a byte into s1 and then only bytes of kinds C holds whole, no more of
// them than `length`, is read whole by that path of byte edges, one parse of it: the trie
// walk accepts exactly the tokens some parse reads, so it accepts this one. The states'
// rule edges and completions are other ways to go, which a token read whole needs none of.
mask::UniformRun grammar_uniform_run(const GrammarAutomaton& g, uint32_t s1, size_t max_length) {
  constexpr uint32_t kNone = UINT32_MAX;
  mask::UniformRun run;
  std::array<uint32_t, 256> to;
  auto targets_of = [&](uint32_t s) {
    to.fill(kNone);
    for (const auto& e : g.byte_edges(s)) {
      for (unsigned b = e.lo; b <= e.hi; ++b) to[b] = e.target;
    }
  };
  // The target s1 sends the most bytes to, from its edges (most states of a key trie send
  // one byte to each target: they are done here).
  std::array<uint32_t, 256> target, bytes;  // the first `targets` entries
  uint32_t targets = 0;
  for (const auto& e : g.byte_edges(s1)) {
    uint32_t t = 0;
    while (t < targets && target[t] != e.target) ++t;
    if (t == targets) target[targets] = e.target, bytes[targets++] = 0;
    bytes[t] += static_cast<uint32_t>(e.hi) - e.lo + 1;
  }
  if (targets == 0) return run;
  const size_t top = static_cast<size_t>(std::max_element(bytes.begin(), bytes.begin() + targets) - bytes.begin());
  // One byte (a key's next letter) holds no kind but its own, which a run of it seldom meets.
  if (bytes[top] < 2) return run;
  const uint32_t best = target[top];
  targets_of(s1);
  uint32_t partly = 0;
  std::array<uint8_t, 256> in_c;  // C's bytes: the first `size` entries
  uint32_t size = 0;
  for (unsigned b = 0; b < 256; ++b) {
    const bool in = to[b] == best;
    (in ? run.kinds : partly) |= Vocabulary::byte_kind(static_cast<uint8_t>(b));
    if (in) in_c[size++] = static_cast<uint8_t>(b);
  }
  run.kinds &= ~partly;
  if (run.kinds == 0) return run;
  for (uint32_t s = s1; run.length < max_length; ++run.length) {
    if (s != s1) targets_of(s);
    const uint32_t e = to[in_c[0]];
    if (e == kNone || !std::all_of(in_c.begin(), in_c.begin() + size, [&](uint8_t b) { return to[b] == e; })) break;
    if (e == s) {  // a loop: as long as any token
      run.length = max_length;
      break;
    }
    s = e;
  }
  return run;
}

}  // namespace

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

  // Uniform runs (grammar_uniform_run) by their first state, the first kRunsKept found
  // kept for the rest of the walk (in place: most walks are short, a thousand of them after
  // `{"` in an anyOf of 200 objects, where allocating a list cost more than the runs).
  constexpr size_t kRunsKept = 8;
  std::array<std::pair<uint32_t, mask::UniformRun>, kRunsKept> runs;
  size_t runs_kept = 0;
  auto run_from = [&](uint32_t s1) {
    for (size_t k = 0; k < runs_kept; ++k) {
      if (runs[k].first == s1) return runs[k].second;
    }
    const mask::UniformRun run = grammar_uniform_run(g, s1, mask::kShortTokenBytes);
    if (runs_kept < kRunsKept) runs[runs_kept++] = {s1, run};
    return run;
  };
  const auto rest_kinds = vocab.sorted_rest_kinds();
  size_t run_tokens = 0;

  size_t dead = 0;  // length of a rejected prefix of the current path, or 0
  bool dead_uncertain = false;  // tokens with that prefix are uncertain
  // The sorted tokens [begin, end); `first`: their common first byte, or 256 when they do
  // not share one.
  auto walk_run = [&](size_t begin, size_t end, unsigned first) {
    // Tokens read whole along a uniform run from the state after their first byte, in stack
    // mode with one stack: at least mask::kRunMinTokens of them, as in the table walk, and at
    // most mask::kShortTokenBytes states along it.
    size_t run_length = 0;
    uint32_t outside = ~uint32_t{0};
    size_t kept = 0;  // bytes of the path the first token keeps (its common prefix is 0)
    if (first < 256 && end - begin >= mask::kRunMinTokens) {
      w.back_to(0);
      if (w.advance(static_cast<uint8_t>(first))) {
        kept = 1;  // the first byte, read once for the whole run (where several stacks make it costly)
        if (const uint32_t s1 = w.single_top(); s1 != UINT32_MAX) {
          const mask::UniformRun run = run_from(s1);
          run_length = run.length;
          outside = ~run.kinds;
        }
      }
    }
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
      w.back_to(std::min<size_t>(w.depth(), i == begin ? kept : common[i]));
      if (run_length != 0 && (rest_kinds[i] & outside) == 0 && bytes.size() - 1 <= run_length) {
        // Read whole along the run; the path stays a prefix of this token.
        set_bit(out.accepted, static_cast<size_t>(id));
        if (out.accepted_ids.size() <= out.ids_max) out.accepted_ids.push_back(id);
        ++run_tokens;
        continue;
      }
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
    walk_run(0, sorted.size(), 256);
  } else {
    for (unsigned b = GrammarAutomaton::next_byte(first, 0); b < 256; b = GrammarAutomaton::next_byte(first, b + 1)) {
      walk_run(vocab.sorted_first_byte_begin(b), vocab.sorted_first_byte_begin(b + 1), b);
    }
  }
  if (run_tokens != 0) trie_run_tokens_ += run_tokens;
}

}  // namespace lockstep
