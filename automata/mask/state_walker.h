// automata/mask/state_walker.h — the walk of token bytes from one grammar state (stack mode,
// Earley mode), shared by the vocabulary-trie walk and composition. Internal to the mask
// engine; header-only so its per-byte steps inline into the walks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "automata/grammar_automaton.h"
#include "automata/earley.h"
#include "automata/next_bytes.h"

namespace lockstep::mask {

// The trie walk for one state. A path (the bytes of a token prefix) is followed in one of
// two modes. Stack mode: the parse is a few stacks of automaton states — the seed's rule at
// the bottom, a sub-rule entered through a rule edge above the state it returns to — kept as
// nodes of a parent-linked arena, the top nodes of each depth listed. Along a path where the
// grammar is deterministic (at each byte at most one way to go, as JSON and most grammars
// are) there is one stack; where a byte has several ways to go (the members of an object
// that also admits other keys both start with a quote) each is a stack of its own, up to
// kMaxStacks distinct ones (the set of a generalized LR parse, Tomita 1985). Earley mode:
// from a byte that would pass kMaxStacks, or enter more than kMaxEnter rules (nullable or
// left-recursive ones), an Earley parser in boundary mode (seeded with the seed state and
// replaying the path) carries the path; it is left when the walk backs out above that
// depth. Both record the depths at which the seed's rule can complete (boundaries): in
// stack mode, where one of the stacks can complete down to the seed.
class StateWalker {
 public:
  StateWalker(const GrammarAutomaton& g, ParserLimits limits, uint32_t seed, size_t max_depth,
              bool skip_seed_rules)
      : g_(g), limits_(limits), seed_(seed), skip_seed_rules_(skip_seed_rules), buffers_(take_buffers()),
        nodes_(buffers_->nodes), stacks_(buffers_->stacks), lo_(buffers_->lo), hi_(buffers_->hi),
        arena_(buffers_->arena), bytes_(buffers_->bytes),
        boundaries_(buffers_->boundaries), next_(buffers_->next), next_known_(buffers_->next_known) {
    lo_.assign(max_depth + 2, 0);
    hi_.assign(max_depth + 2, 0);
    arena_.assign(max_depth + 2, 0);
    bytes_.assign(max_depth + 2, 0);
    boundaries_.assign(max_depth + 2, 0);
    next_known_.assign(max_depth + 2, 0);  // next_ is read only where next_known_ says so
    nodes_.clear();
    nodes_.reserve(4 * max_depth + 16);
    nodes_.push_back({seed, kNone, g.is_final(seed)});
    stacks_.assign(1, 0);
    lo_[0] = 0;
    hi_[0] = 1;
    arena_[0] = 1;
    boundaries_[0] = 0;  // a completion before any byte is the context's business
  }
  ~StateWalker() { pool().push_back(std::move(buffers_)); }
  StateWalker(const StateWalker&) = delete;
  StateWalker& operator=(const StateWalker&) = delete;

  size_t depth() const { return depth_; }
  /// Whether the Earley parser carries the path (else stack mode), and the stacks of the
  /// current depth in stack mode.
  bool in_earley_mode() const { return earley_from_ != kNone; }
  size_t stacks() const { return earley_from_ != kNone ? 0 : hi_[depth_] - lo_[depth_]; }
  /// The automaton state on top of the path's one stack, in stack mode; UINT32_MAX with
  /// several stacks or in Earley mode.
  uint32_t single_top() const {
    if (earley_from_ != kNone || hi_[depth_] - lo_[depth_] != 1) return kNone;
    return nodes_[stacks_[lo_[depth_]]].state;
  }
  /// Boundaries (completions of the seed's rule) at depths 1..d of the current path.
  uint32_t boundaries_upto(size_t d) const { return boundaries_[d]; }
  bool boundary_at(size_t d) const { return boundaries_[d] != boundaries_[d - 1]; }

  /// The bytes the path can read next, a superset: a byte outside it fails advance(). Null
  /// when not known (nested nullable rules past kMaxEnter). Computed once per node of the
  /// walk. In Earley mode, the byte edges of the parser's current items: the parser scans
  /// only those (the start of an anyOf of 200 objects tried each of the ~60 tokens after
  /// `{` against two thousand items, most of them for a byte no item reads).
  const GrammarAutomaton::ByteSet* next_bytes() {
    uint8_t& known = next_known_[depth_];
    if (known == 0) {
      if (next_.size() < next_known_.size()) next_.resize(next_known_.size());  // most walks never need it
      GrammarAutomaton::ByteSet& out = next_[depth_];
      out = {};
      bool all_known = true;
      if (earley_from_ != kNone) {
        out = lockstep::next_bytes(*parser_);
      } else {
        for (uint32_t k = lo_[depth_]; k < hi_[depth_] && all_known; ++k) {
          const uint32_t n = stacks_[k];
          all_known = readable(nodes_[n].state, nodes_[n].parent, n == 0 && skip_seed_rules_, 0, out);
        }
      }
      known = all_known ? 1 : 2;
    }
    return known == 1 ? &next_[depth_] : nullptr;
  }

  void back_to(size_t d) {
    if (d >= depth_) return;
    if (earley_from_ != kNone) {
      if (d >= earley_from_) {
        parser_->rollback(depth_ - d);
        depth_ = d;
        return;
      }
      earley_from_ = kNone;
    }
    depth_ = d;
    truncate(arena_[d]);
  }

  bool advance(uint8_t byte) {
    if (earley_from_ == kNone) {
      const uint32_t lo = lo_[depth_], hi = hi_[depth_];
      const uint32_t n = stacks_[lo];
      const Node node = nodes_[n];
      if (hi - lo == 1 &&
          ((n == 0 && skip_seed_rules_) ||
           (g_.rule_edges(node.state).empty() &&
            (node.parent == kNone || !g_.is_final(node.state) || !return_can_read(node.parent, byte))))) {
        // One stack whose top frame can only read a byte (returning from it cannot): a plain
        // DFA step.
        const uint32_t target = byte_target(node.state, byte);
        if (target == kNone) return false;
        const uint32_t next = push(target, node.parent);
        stacks_.resize(hi);
        stacks_.push_back(next);
        enter_depth(byte, nodes_[next].all_final);
        return true;
      }
      moves_.clear();
      overflow_ = false;
      for (uint32_t k = lo; k < hi && !overflow_; ++k) step(stacks_[k], byte, 0);
      if (overflow_) return start_earley(byte);
      if (moves_.empty()) {
        truncate(arena_[depth_]);
        return false;
      }
      stacks_.resize(hi);
      bool final = false;
      for (const uint32_t m : moves_) {
        stacks_.push_back(m);
        final = final || nodes_[m].all_final;
      }
      enter_depth(byte, final);
      return true;
    }
    if (!parser_->advance(byte)) return false;
    ++depth_;
    next_known_[depth_] = 0;
    bytes_[depth_] = byte;
    boundaries_[depth_] = boundaries_[depth_ - 1] + (parser_->boundary_at(depth_) ? 1 : 0);
    return true;
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr int kMaxEnter = 32;  // nested rule entries within one byte step
  static constexpr size_t kMaxStacks = 8;  // distinct stacks in stack mode
  struct Node {
    uint32_t state;
    uint32_t parent;  // the node to return to when this frame's rule completes
    bool all_final;   // this frame and every frame below it can complete here
  };

  // A walker's arrays, kept per thread between walks (a walk nests in another in compose()):
  // the states after `{"` in an anyOf of 200 objects are a thousand short walks, each of
  // which allocated its seven arrays.
  struct Buffers {
    std::vector<Node> nodes;
    std::vector<uint32_t> stacks, lo, hi, arena, boundaries;
    std::vector<uint8_t> bytes, next_known;
    std::vector<GrammarAutomaton::ByteSet> next;
  };
  static std::vector<std::unique_ptr<Buffers>>& pool() {
    thread_local std::vector<std::unique_ptr<Buffers>> buffers;
    return buffers;
  }
  static std::unique_ptr<Buffers> take_buffers() {
    auto& p = pool();
    if (p.empty()) return std::make_unique<Buffers>();
    std::unique_ptr<Buffers> b = std::move(p.back());
    p.pop_back();
    return b;
  }

  // The path goes one byte deeper in stack mode: its stacks were appended to stacks_.
  void enter_depth(uint8_t byte, bool final) {
    ++depth_;
    next_known_[depth_] = 0;
    lo_[depth_] = hi_[depth_ - 1];
    hi_[depth_] = static_cast<uint32_t>(stacks_.size());
    arena_[depth_] = static_cast<uint32_t>(nodes_.size());
    bytes_[depth_] = byte;
    boundaries_[depth_] = boundaries_[depth_ - 1] + (final ? 1 : 0);
  }

  void truncate(size_t n) {
    nodes_.resize(n);
    if (return_node_ != kNone && return_node_ >= n) return_node_ = kNone;
  }

  // Whether the stack topped by node `parent` may read `byte` (false only when it cannot),
  // its readable set kept for the last such node: a frame of an automaton rule (whitespace,
  // a number, a string body) that can complete reads its bytes by a plain step when its
  // caller cannot read them, instead of a step() through every way to go. The node's stack
  // is unchanged while its index stays in the arena (truncate() forgets it otherwise).
  bool return_can_read(uint32_t parent, uint8_t byte) {
    if (return_node_ != parent) {
      return_set_ = {};
      return_known_ = readable(nodes_[parent].state, nodes_[parent].parent, parent == 0 && skip_seed_rules_, 0, return_set_);
      return_node_ = parent;
    }
    return !return_known_ || ((return_set_[byte >> 6] >> (byte & 63)) & 1);
  }

  // The bytes readable from `state` with the stack below it topped by `parent`, as step()
  // reads them: byte edges, the FIRST sets of rules entered (and past a nullable one), and
  // the parent's when the state can return.
  bool readable(uint32_t state, uint32_t parent, bool skip_rules, int entered, GrammarAutomaton::ByteSet& out) const {
    for (const auto& e : g_.byte_edges(state)) GrammarAutomaton::add_byte_range(out, e.lo, e.hi);
    if (!skip_rules) {
      for (const auto& r : g_.rule_edges(state)) {
        for (size_t k = 0; k < out.size(); ++k) out[k] |= g_.rule_first(r.rule)[k];
        if (g_.rule_nullable(r.rule) &&
            (entered >= kMaxEnter || !readable(r.target, parent, false, entered + 1, out))) {
          return false;
        }
      }
    }
    if (parent != kNone && g_.is_final(state)) {
      if (entered >= kMaxEnter) return false;
      return readable(nodes_[parent].state, nodes_[parent].parent, false, entered + 1, out);
    }
    return true;
  }

  uint32_t byte_target(uint32_t state, uint8_t byte) const {
    for (const auto& e : g_.byte_edges(state)) {
      if (byte < e.lo) return kNone;
      if (byte <= e.hi) return e.target;
    }
    return kNone;
  }

  uint32_t push(uint32_t state, uint32_t parent) {
    const bool all_final = g_.is_final(state) && (parent == kNone || nodes_[parent].all_final);
    nodes_.push_back({state, parent, all_final});
    return static_cast<uint32_t>(nodes_.size() - 1);
  }

  // Too many ways to go: the Earley parser takes over from here, replaying the path.
  bool start_earley(uint8_t byte) {
    truncate(arena_[depth_]);
    if (!parser_) {
      parser_.emplace(g_, limits_, seed_);  // most walks never need it
    } else {
      parser_->reset_to_state(seed_);
    }
    for (size_t i = 1; i <= depth_; ++i) {
      if (!parser_->advance(bytes_[i])) throw std::logic_error("mask walk: replay failed");
    }
    earley_from_ = depth_;
    if (!parser_->advance(byte)) return false;
    ++depth_;
    next_known_[depth_] = 0;
    bytes_[depth_] = byte;
    boundaries_[depth_] = boundaries_[depth_ - 1] + (parser_->boundary_at(depth_) ? 1 : 0);
    return true;
  }

  // Every way to read `byte` from the stack topped by node n: a byte edge, entering a
  // sub-rule through a rule edge, or (the frame's rule being final) returning to the parent.
  void step(uint32_t n, uint8_t byte, int entered) {
    if (overflow_) return;
    const Node node = nodes_[n];
    const uint32_t target = byte_target(node.state, byte);
    if (target != kNone) add_move(push(target, node.parent));
    const auto rules = g_.rule_edges(node.state);
    if (!rules.empty() && !(n == 0 && skip_seed_rules_)) {
      if (entered >= kMaxEnter) {
        overflow_ = true;
        return;
      }
      for (const auto& r : rules) {
        // A callee whose FIRST set lacks the byte cannot read it: when it is nullable, the
        // byte is read past it (as its start state would return at once), else not at all.
        if (!((g_.rule_first(r.rule)[byte >> 6] >> (byte & 63)) & 1)) {
          if (g_.rule_nullable(r.rule)) step(push(r.target, node.parent), byte, entered + 1);
          continue;
        }
        const uint32_t back = push(r.target, node.parent);
        step(push(g_.rule_start(r.rule), back), byte, entered + 1);
      }
    }
    if (node.parent != kNone && g_.is_final(node.state)) step(node.parent, byte, entered);
  }

  void add_move(uint32_t n) {
    for (uint32_t m : moves_) {
      if (same_stack(m, n)) return;
    }
    moves_.push_back(n);
    if (moves_.size() > kMaxStacks) overflow_ = true;
  }

  bool same_stack(uint32_t a, uint32_t b) const {
    while (a != kNone && b != kNone) {
      if (nodes_[a].state != nodes_[b].state) return false;
      a = nodes_[a].parent, b = nodes_[b].parent;
    }
    return a == b;
  }

  const GrammarAutomaton& g_;
  ParserLimits limits_;
  std::optional<EarleyParser> parser_;  // Earley mode, made on first use
  uint32_t seed_;
  bool skip_seed_rules_;
  std::unique_ptr<Buffers> buffers_;  // the arrays below, returned to pool() at the end
  std::vector<Node>& nodes_;
  std::vector<uint32_t>& stacks_;      // stack mode: the top nodes of each depth's stacks,
  std::vector<uint32_t>& lo_;          // stacks_[lo_[d], hi_[d]) at depth d
  std::vector<uint32_t>& hi_;
  std::vector<uint32_t>& arena_;       // stack mode: nodes_.size() after each depth
  std::vector<uint8_t>& bytes_;        // the path: bytes_[d] was read to reach depth d
  std::vector<uint32_t>& boundaries_;  // prefix counts of boundary depths
  std::vector<GrammarAutomaton::ByteSet>& next_;  // next_bytes() per depth of the path
  std::vector<uint8_t>& next_known_;              // 0 not computed, 1 known, 2 unknown
  uint32_t return_node_ = kNone;                 // return_can_read()'s node, its set
  GrammarAutomaton::ByteSet return_set_{};
  bool return_known_ = false;
  std::vector<uint32_t> moves_;
  bool overflow_ = false;  // past kMaxStacks stacks or kMaxEnter rule entries
  size_t depth_ = 0;
  size_t earley_from_ = kNone;  // depth from which the Earley parser carries the path
};

}  // namespace lockstep::mask
