// schemas/schema_grammar.cpp — GrammarBuilder (grammar_builder.h) for values, strings,
// numbers, arrays and lists, and the public entry points.
#include <algorithm>
#include <bit>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "grammar/expr_identity.h"
#include "grammar/hash.h"
#include "schemas/grammar_builder.h"
#include "schemas/number_sets.h"
#include "schemas/schema_compiler.h"
#include "schemas/schema_nesting.h"
#include "schemas/string_lengths.h"

namespace lockstep::schema {

Grammar GrammarBuilder::build(const TermPtr& root, uint32_t depth, bool bare) {
  if (opt_.whitespace == JsonSchemaOptions::Whitespace::kFlexible) {
    // One shared rule: inlined, its chain of states would be copied at every separator.
    // An automaton rule: the same in every schema, so its byte DFA and token masks are
    // shared process-wide (automata/mask_cache.h).
    static std::mutex mutex;
    static std::map<uint32_t, DfaPtr> ws_dfas;
    DfaPtr dfa;
    {
      std::lock_guard lock(mutex);
      DfaPtr& slot = ws_dfas[opt_.max_whitespace];
      if (!slot) {
        slot = std::make_shared<const CharDfa>(CharDfa::from_expr(
            Expr::repeat(Expr::char_class({{' ', ' '}, {'\t', '\n'}, {'\r', '\r'}}), 0, opt_.max_whitespace)));
      }
      dfa = slot;
    }
    ws_rule_ = g_.add_rule("ws", automaton_expr(dfa, false), {}, true);
  }
  const uint32_t value = term_rule(root, depth);
  // The root allows whitespace around the value, as JSON texts do (RFC 8259 §2).
  g_.root = bare ? value : g_.add_rule("root", seq({ws(), Expr::rule_ref(value), ws()}));
  return std::move(g_);
}

GrammarBuilder::Pieces GrammarBuilder::pieces(char open, char close, uint32_t depth) const {
  const std::string o(1, open), c(1, close);
  if (pretty_at(depth)) {
    return {lit(o + c), lit(o + "\n" + indent(depth + 1)), lit(",\n" + indent(depth + 1)),
            lit("\n" + indent(depth) + c)};
  }
  return {seq({lit(o), ws(), lit(c)}), seq({lit(o), ws()}), seq({ws(), lit(","), ws()}), seq({ws(), lit(c)})};
}

uint32_t GrammarBuilder::add_rule(const std::string& hint, Expr body, bool no_inline) {
  // The hint's last 40 characters from its first letter or digit on, every character but a
  // letter, a digit or '-' made '-'; then '-' and the rule's index ("r" and the index
  // without a hint). Only that tail is read: hints are JSON pointers, some long.
  const auto name_char = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0; };
  size_t from = 0;
  while (from < hint.size() && !name_char(hint[from])) ++from;
  if (hint.size() - from > 40) from = hint.size() - 40;
  std::string name;
  name.reserve(hint.size() - from + 12);
  for (size_t i = from; i < hint.size(); ++i) name += name_char(hint[i]) || hint[i] == '-' ? hint[i] : '-';
  name += name.empty() ? "r" : "-";
  name += std::to_string(g_.rules.size());
  return g_.add_rule(std::move(name), std::move(body), {}, no_inline);
}

uint32_t GrammarBuilder::term_rule(const TermPtr& t, uint32_t depth) {
  depth = std::min(depth, kMaxPrettyDepth);
  const TermAt key{t, pretty() ? depth : 0, nullptr};
  if (auto it = rules_.find(key); it != rules_.end()) return it->second;
  // One level per nested value (array items, member values), whatever $refs lead there
  // (any value, `true`, is one rule whose recursion is a rule cycle: it does not count).
  std::optional<NestingGuard> level;
  if (t->kind != Term::Kind::kTrue && t->kind != Term::Kind::kFalse) level.emplace(depth_, t->pointer, "values");
  c_.deadline_.check(ErrorLocation::at_pointer(t->pointer));
  const uint32_t id = add_rule(t->kind == Term::Kind::kSchema ? t->pointer : "", Expr::empty());
  rules_[key] = id;
  const Norm n = c_.normalize(t);
  g_.rules[id].body = norm_expr(n, depth, t->pointer);
  hash_cons(id);
  return id;
}

void GrammarBuilder::hash_cons(uint32_t id) {
  const RuleCanon c = [this](uint32_t r) { return canon(r); };
  const Expr& body = g_.rules[id].body;
  auto& same_hash = bodies_[expr_hash(body, c)];
  for (uint32_t other : same_hash) {
    if (expr_identical(g_.rules[other].body, body, c)) {
      if (alias_.size() <= id) alias_.resize(g_.rules.size(), UINT32_MAX);
      alias_[id] = other;
      g_.rules[id].body = Expr::rule_ref(other);
      return;
    }
  }
  same_hash.push_back(id);
}

Expr GrammarBuilder::shared_automaton(const DfaPtr& d, bool json_string, bool blocks) {
  const auto key = std::make_pair(d.get(), json_string);
  auto it = dfa_rules_.find(key);
  if (it == dfa_rules_.end()) {
    Expr body;
    std::vector<CodepointRange> ranges;
    const auto bounds = json_string && blocks ? length_bounds(*d, ranges) : std::nullopt;
    if (bounds && (bounds->second == kUnbounded ? bounds->first : bounds->second) > kLengthBlock) {
      body = length_blocks(bounds->first, bounds->second, ranges);
    } else {
      body = automaton_expr(d, json_string);
    }
    it = dfa_rules_.emplace(key, add_rule(json_string ? "string" : "number", std::move(body), true)).first;
    keep_.push_back(d);
  }
  return Expr::rule_ref(it->second);
}

Expr GrammarBuilder::length_blocks(uint32_t lo, uint32_t hi, const std::vector<CodepointRange>& ranges) {
  constexpr uint32_t K = kLengthBlock;
  auto piece = [&](uint32_t a, uint32_t b) {
    auto [it, fresh] = length_pieces_.try_emplace({a, b, ranges.size()});
    if (fresh) it->second = std::make_shared<const CharDfa>(CharDfa::length(a, b, ranges));
    return shared_automaton(it->second, true, false);
  };
  const Expr block = piece(K, K);
  const uint32_t i_lo = lo / K;
  std::vector<Expr> parts{Expr::repeat(block, i_lo, i_lo)};
  if (hi == kUnbounded) {
    parts.push_back(piece(lo % K, kUnbounded));
  } else if (hi / K == i_lo) {
    parts.push_back(piece(lo % K, hi % K));
  } else {
    // i_lo blocks, then either a tail of lo % K .. K - 1, or one more block and any
    // length up to h = hi - (i_lo + 1)·K: j more blocks and a tail up to r, or fewer
    // blocks and any tail.
    const uint32_t h = hi - (i_lo + 1) * K, j = h / K, r = h % K;
    Expr rest = piece(0, r);
    if (j > 0) {
      rest = r == K - 1 ? seq({Expr::repeat(block, 0, j), piece(0, K - 1)})
                        : Expr::choice({seq({Expr::repeat(block, 0, j - 1), piece(0, K - 1)}),
                                        seq({Expr::repeat(block, j, j), piece(0, r)})});
    }
    parts.push_back(Expr::choice({piece(lo % K, K - 1), seq({block, std::move(rest)})}));
  }
  return seq(std::move(parts));
}

Expr GrammarBuilder::norm_expr(const Norm& n, uint32_t depth, const std::string& pointer) {
  std::vector<Expr> alts;
  if (n.null) alts.push_back(lit("null"));
  if (n.booleans & 2) alts.push_back(lit("true"));
  if (n.booleans & 1) alts.push_back(lit("false"));
  const NumberSet& number = made(n.number);
  if (number.lost_exponents) {
    c_.warn(pointer, "numbers are accepted here only without exponent: the automaton combining the number "
                     "constraints for exponent notation would be too large");
  }
  if (number.texts && number.texts != no_strings()) {
    alts.push_back(shared_automaton(opt_.canonical_numbers ? numbers_canonical(number.texts) : number.texts, false));
  }
  if (n.string && !n.string->empty()) alts.push_back(seq({lit("\""), shared_automaton(n.string, true), lit("\"")}));
  for (const auto& r : n.arrays) alts.push_back(array_expr(r, depth, pointer));
  for (const auto& r : n.objects) alts.push_back(object_expr(r, depth, pointer));
  return alts.empty() ? never() : Expr::choice(std::move(alts));
}

namespace {

// Where the onward moves of one state (to other states, in order) are those of another
// state after its first move: tail[s] = s', or UINT32_MAX. A machine over declared names in
// schema order is such a chain: the names that may come at position p are name p and those
// that may come at p + 1. `links[s]` counts the states down s's chain of tails. A state's
// tail starts with its second onward move, so the states are looked up by their first one
// (sorted pairs, no table): in any order, where a move adds a name to the set of names read,
// no two states have a second and a first move alike, and nothing is compared.
struct MoveChains {
  std::vector<uint32_t> tail, links;
  std::vector<char> is_tail;
};

MoveChains move_chains(const Machine& m) {
  const auto n = static_cast<uint32_t>(m.moves.size());
  MoveChains c;
  c.tail.assign(n, UINT32_MAX);
  c.links.assign(n, 0);
  c.is_tail.assign(n, 0);
  // The i-th onward move of s (self-loops skipped), or nullptr past the last.
  auto onward = [&](uint32_t s, size_t i) -> const Machine::Move* {
    for (const auto& mv : m.moves[s]) {
      if (mv.target != s && i-- == 0) return &mv;
    }
    return nullptr;
  };
  auto key = [](const Machine::Move& mv) { return uint64_t{mv.element} << 32 | mv.target; };
  std::vector<std::pair<uint64_t, uint32_t>> by_first;  // (first onward move, state)
  for (uint32_t s = 0; s < n; ++s) {
    if (const Machine::Move* mv = onward(s, 0)) by_first.emplace_back(key(*mv), s);
  }
  std::sort(by_first.begin(), by_first.end());
  // Whether t's onward moves are s's after the first.
  auto is_tail_of = [&](uint32_t t, uint32_t s) {
    auto a = m.moves[s].begin(), ae = m.moves[s].end(), b = m.moves[t].begin(), be = m.moves[t].end();
    bool skipped = false;
    for (;;) {
      while (a != ae && a->target == s) ++a;
      if (a != ae && !skipped) {
        skipped = true, ++a;
        continue;
      }
      while (b != be && b->target == t) ++b;
      if (a == ae || b == be) return a == ae && b == be;
      if (a->element != b->element || a->target != b->target) return false;
      ++a, ++b;
    }
  };
  for (uint32_t s = 0; s < n; ++s) {
    const Machine::Move* second = onward(s, 1);
    if (!second) continue;
    const std::pair<uint64_t, uint32_t> lo{key(*second), 0};
    for (auto it = std::lower_bound(by_first.begin(), by_first.end(), lo); it != by_first.end() && it->first == lo.first; ++it) {
      if (it->second != s && is_tail_of(it->second, s)) {
        c.tail[s] = it->second;
        c.is_tail[it->second] = 1;
        break;
      }
    }
  }
  // Links down each chain (a tail has one onward move fewer: no cycle).
  std::vector<uint32_t> path;
  std::vector<char> known(n, 0);
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t x = s; !known[x]; x = c.tail[x]) {
      path.push_back(x);
      if (c.tail[x] == UINT32_MAX) break;
    }
    while (!path.empty()) {
      const uint32_t x = path.back();
      path.pop_back();
      c.links[x] = c.tail[x] == UINT32_MAX ? 0 : c.links[c.tail[x]] + 1;
      known[x] = 1;
    }
  }
  return c;
}

// Whether two onward moves of a state lead to one target (a count of required names: every
// name to the next count). Such a machine stays rules, where the choice of those moves' elements
// is one rule that every state calls (list_expr): a machine walk builds each move on its own,
// n counts of n names n^2 times.
bool leads_twice_anywhere(const Machine& m) {
  std::vector<uint32_t> last(m.moves.size(), UINT32_MAX);  // the state whose move last led there
  for (uint32_t s = 0; s < m.moves.size(); ++s) {
    for (const auto& mv : m.moves[s]) {
      if (mv.target == s) continue;
      if (last[mv.target] == s) return true;
      last[mv.target] = s;
    }
  }
  return false;
}

// Chains are cut into automata of this many links (a kept rule at every kChainBlock-th
// link): one automaton for a chain of n links would be determinized in time about n^3.
constexpr uint32_t kChainBlock = 32;

}  // namespace

Expr GrammarBuilder::list_expr(const Machine& m, const Pieces& p, const std::string& hint) {
  // A(s): after at least one element, in state s.
  std::vector<int64_t> after(m.moves.size(), -1);
  // A machine of one or two states writes the separator in a place or two: no rule for it.
  const Expr sep = m.moves.size() > 2 ? sep_ref(p.sep) : p.sep;
  // C(s): the choice of s's next element and what follows it. Where s's onward moves are
  // another state's after a first one (schema order: the name at this position, or any
  // that may come at the next), C(s) is that first move or C(that state): a chain of n
  // links in n rules, where the choices spelled out would be n^2/2 moves. Its rules are
  // tail-merged into automata of kChainBlock links; each next block is a kept rule the
  // automaton calls (docs/schemas.md).
  const MoveChains chains = m.moves.size() > 2 ? move_chains(m) : MoveChains{};
  if (m.moves.size() > 2 && std::all_of(chains.tail.begin(), chains.tail.end(), [](uint32_t t) { return t == UINT32_MAX; }) &&
      !leads_twice_anywhere(m)) {
    return walk_expr(m, p, sep, hint);
  }
  std::vector<int64_t> choice_rule(m.moves.size(), -1);
  std::function<Expr(uint32_t)> A;
  std::function<Expr(uint32_t)> C = [&](uint32_t s) -> Expr {
    if (choice_rule[s] >= 0) return Expr::rule_ref(static_cast<uint32_t>(choice_rule[s]));
    std::vector<Expr> alts;
    for (const auto& mv : m.moves[s]) {
      if (mv.target == s) continue;
      alts.push_back(seq_of(m.elements[mv.element], A(mv.target)));
      if (chains.tail[s] != UINT32_MAX) break;  // the rest: C(tail)
    }
    if (chains.tail[s] != UINT32_MAX) alts.push_back(C(chains.tail[s]));
    const uint32_t id = add_rule(hint + "-c" + std::to_string(s), Expr::choice(std::move(alts)), true);
    g_.rules[id].tail_merged = chains.links[s] == 0 || chains.links[s] % kChainBlock != 0;
    choice_rule[s] = id;
    return Expr::rule_ref(id);
  };
  auto chained = [&](uint32_t s) {
    return !chains.tail.empty() && (chains.tail[s] != UINT32_MAX || chains.is_tail[s]);
  };
  // A state's onward moves (with `loops`, all its moves) by target, in order of first
  // appearance: (target, elements).
  auto targets_of = [&](uint32_t s, bool loops = false) {
    std::vector<std::pair<uint32_t, std::vector<uint32_t>>> out;
    std::unordered_map<uint32_t, size_t> at;
    for (const auto& mv : m.moves[s]) {
      if (mv.target == s && !loops) continue;
      const auto [it, fresh] = at.try_emplace(mv.target, out.size());
      if (fresh) out.emplace_back(mv.target, std::vector<uint32_t>{});
      out[it->second].second.push_back(mv.element);
    }
    return out;
  };
  // Several elements leading to one target are their choice, then the target, once; a
  // choice that leads on from several states is a rule of its own. A count of required
  // names (past kMaxExactObligations) offers every name at every count, each to the next:
  // n counts of n names spelled out were n^2 members (587 required names, 1.2 million
  // expression nodes), and are n references to one choice.
  //
  // repeats_target: whether two of a state's moves (with `loops`, its loops too) share a
  // target. Most states' do not (a required name's bit): they are written move by move,
  // without grouping (the anyOf of 200 objects of the stress corpus has 25,000 states).
  std::vector<uint32_t> scratch;
  auto repeats_target = [&](uint32_t s, bool loops) {
    scratch.clear();
    for (const auto& mv : m.moves[s]) {
      if (mv.target != s || loops) scratch.push_back(mv.target);
    }
    if (scratch.size() <= 16) {
      for (size_t i = 0; i < scratch.size(); ++i) {
        if (std::find(scratch.begin() + static_cast<ptrdiff_t>(i) + 1, scratch.end(), scratch[i]) != scratch.end()) return true;
      }
      return false;
    }
    std::sort(scratch.begin(), scratch.end());
    return std::adjacent_find(scratch.begin(), scratch.end()) != scratch.end();
  };
  // States whose moves repeat a target (state 0 counting its loops, which `first` reads).
  std::vector<char> grouped(m.moves.size(), 0);
  std::map<std::vector<uint32_t>, int64_t> shared;  // a repeated choice → its rule (-1: not made yet)
  {
    std::map<std::vector<uint32_t>, uint32_t> seen;
    for (uint32_t s = 0; s < m.moves.size(); ++s) {
      if (s != 0 && chained(s)) continue;
      if (!repeats_target(s, s == 0)) continue;
      grouped[s] = 1;
      for (auto& [t, elements] : targets_of(s, s == 0)) {
        if (elements.size() > 1 && ++seen[elements] == 2) shared.emplace(elements, -1);
      }
    }
  }
  auto choice_of = [&](const std::vector<uint32_t>& elements) {
    if (elements.size() == 1) return m.elements[elements[0]];
    std::vector<Expr> alts;
    alts.reserve(elements.size());
    for (const uint32_t e : elements) alts.push_back(m.elements[e]);
    const auto it = shared.find(elements);
    if (it == shared.end()) return Expr::choice(std::move(alts));
    if (it->second < 0) it->second = add_rule(hint + "-g" + std::to_string(elements[0]), Expr::choice(std::move(alts)), true);
    return Expr::rule_ref(static_cast<uint32_t>(it->second));
  };
  A = [&](uint32_t s) -> Expr {
    if (after[s] >= 0) return Expr::rule_ref(static_cast<uint32_t>(after[s]));
    std::vector<Expr> loops, exits, onward;
    for (const auto& mv : m.moves[s]) {
      if (mv.target == s) loops.push_back(m.elements[mv.element]);
    }
    if (m.accepting[s]) exits.push_back(Expr::empty());
    if (chained(s)) {
      exits.push_back(seq_of(sep, C(s)));
    } else {
      if (grouped[s]) {
        for (const auto& [t, elements] : targets_of(s)) onward.push_back(seq_of(choice_of(elements), A(t)));
      } else {
        onward.reserve(m.moves[s].size());
        for (const auto& mv : m.moves[s]) {
          if (mv.target != s) onward.push_back(seq_of(m.elements[mv.element], A(mv.target)));  // two rule references
        }
      }
      // The separator once, before the choice of the next element: a member machine has
      // 2^q states with up to q moves each, and every expression node is paid for in each
      // pass over the grammar (the rule automaton is the same either way).
      if (!onward.empty()) exits.push_back(seq_of(sep, Expr::choice(std::move(onward))));
    }
    std::vector<Expr> body;
    if (!loops.empty()) body.push_back(Expr::repeat(seq_of(sep, Expr::choice(std::move(loops))), 0, kUnbounded));
    body.push_back(exits.empty() ? never() : Expr::choice(std::move(exits)));
    // A state stays a rule of its own: inlined, each state's automaton would copy the states
    // after it (up to the inlining budget), multiplying a member machine's 2^q states. It is
    // tail-merged: every reference to it ends a body (the state's rule or `first` below), so
    // the compiler makes the whole machine one automaton, a few states per machine state,
    // instead of a rule per state with a state per move (docs/schemas.md).
    const uint32_t id = add_rule(hint + "-s" + std::to_string(s), Expr::sequence(std::move(body)), true);
    g_.rules[id].tail_merged = true;
    after[s] = id;
    return Expr::rule_ref(id);
  };
  std::vector<Expr> first;
  if (chained(0) && std::none_of(m.moves[0].begin(), m.moves[0].end(), [](const auto& mv) { return mv.target == 0; })) {
    first.push_back(C(0));  // no loop at the start: its moves are its onward ones
  } else {
    if (grouped[0]) {
      for (const auto& [t, elements] : targets_of(0, true)) first.push_back(seq_of(choice_of(elements), A(t)));
    } else {
      for (const auto& mv : m.moves[0]) first.push_back(seq_of(m.elements[mv.element], A(mv.target)));
    }
  }
  std::vector<Expr> alts;
  if (m.accepting[0]) alts.push_back(p.empty);
  if (!first.empty()) {
    // The machine from its first element on: a rule of its own (kept, not inlined), so that
    // the state rules are references that end its body and merge into its automaton.
    Expr rest = Expr::choice(std::move(first));
    if (m.moves.size() > 2) rest = Expr::rule_ref(add_rule(hint + "-first", std::move(rest), true));
    alts.push_back(seq_of(p.open, std::move(rest), p.close));
  }
  return alts.empty() ? never() : Expr::choice(std::move(alts));
}

Expr GrammarBuilder::walk_expr(const Machine& m, const Pieces& p, const Expr& sep, const std::string& hint) {
  // The machine as one node: each move two words, each element once (a member machine of q
  // required names in any order has 2^q states and q·2^(q-1) moves, and as rules was a rule
  // per state and three nodes per move for every pass over the grammar to read).
  auto walk = std::make_shared<ElementMachine>();
  walk->accepting.assign(m.accepting.begin(), m.accepting.end());
  for (const auto& moves : m.moves) {
    for (const auto& mv : moves) walk->moves.push_back({mv.element, mv.target});
    walk->move_begin.push_back(static_cast<uint32_t>(walk->moves.size()));
  }
  const bool starts = !m.moves[0].empty();
  std::vector<Expr> alts;
  if (m.accepting[0]) alts.push_back(p.empty);
  if (starts) {
    // A rule of its own (kept, not inlined), as the machine's state rules were.
    Expr body = Expr::machine_walk(std::move(walk), sep, m.elements);
    alts.push_back(seq_of(p.open, Expr::rule_ref(add_rule(hint + "-first", std::move(body), true)), p.close));
  }
  return alts.empty() ? never() : Expr::choice(std::move(alts));
}

Expr GrammarBuilder::sep_ref(const Expr& sep) {
  if (sep.kind != Expr::Kind::kSequence) return sep;
  const RuleCanon same = [](uint32_t r) { return r; };
  for (const auto& [e, rule] : sep_rules_) {
    if (expr_identical(e, sep, same)) return Expr::rule_ref(rule);
  }
  sep_rules_.emplace_back(sep, add_rule("sep", sep));
  return Expr::rule_ref(sep_rules_.back().second);
}

Machine GrammarBuilder::prune(Machine m) {
  const size_t n = m.moves.size();
  std::vector<char> live(n, 0);
  // Backwards: a machine numbered in the order its states are found (forward moves go to
  // higher numbers) settles in one pass, and a second pass finds nothing new.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = n; s-- > 0;) {
      if (live[s]) continue;
      bool l = m.accepting[s];
      for (const auto& mv : m.moves[s]) l = l || (mv.target != s && live[mv.target]);
      if (l) live[s] = 1, changed = true;
    }
  }
  Machine out;
  out.elements = std::move(m.elements);
  std::vector<uint32_t> id(n, UINT32_MAX);
  for (size_t s = 0; s < n; ++s) {
    if (live[s] || s == 0) {
      id[s] = static_cast<uint32_t>(out.moves.size());
      out.moves.emplace_back();
      out.accepting.push_back(m.accepting[s]);
    }
  }
  for (size_t s = 0; s < n; ++s) {
    if (id[s] == UINT32_MAX) continue;
    for (const auto& mv : m.moves[s]) {
      if (id[mv.target] != UINT32_MAX && (live[mv.target] || mv.target == s)) {
        out.moves[id[s]].push_back({mv.element, id[mv.target]});  // elements kept, even unused
      }
    }
  }
  return out;
}

Expr GrammarBuilder::array_expr(ArrayRec r, uint32_t depth, const std::string& pointer) {
  const Pieces p = pieces('[', ']', depth);
  if (r.unique && r.max > 1) {
    c_.unsupported(r.unique_pointer.substr(0, r.unique_pointer.rfind('/')), "uniqueItems",
                   "a grammar cannot check that items differ");
  }
  if (r.rest->kind == Term::Kind::kFalse) r.max = std::min<uint32_t>(r.max, static_cast<uint32_t>(r.prefix.size()));
  if (r.min > r.max) return never();
  if (r.contains.size() > 1) {
    c_.unsupported(pointer, "contains", "several contains constraints on one array");
    r.contains.resize(1);
  }
  if (r.contains.empty()) return plain_array(r, depth, p);
  // With contains: states (items so far k, matching items c), both capped.
  const Contains& ct = r.contains[0];
  const uint32_t psize = static_cast<uint32_t>(r.prefix.size());
  const bool bounded = r.max != kUnbounded;
  const uint32_t kcap = bounded ? r.max : std::max({psize, ct.from, r.min});
  const uint32_t ccap = ct.max != kUnbounded ? ct.max + 1 : ct.min;
  if (static_cast<uint64_t>(kcap + 1) * (ccap + 1) > engine_limits().object_states) {
    c_.unsupported(pointer, "contains", "the item counts are too large to track");
    return plain_array(r, depth, p);
  }
  Machine m;
  auto state_id = [&](uint32_t k, uint32_t c) { return k * (ccap + 1) + c; };
  auto element = [&](Expr e) {
    m.elements.push_back(std::move(e));
    return static_cast<uint32_t>(m.elements.size() - 1);
  };
  m.moves.resize((kcap + 1) * (ccap + 1));
  m.accepting.resize(m.moves.size());
  for (uint32_t k = 0; k <= kcap; ++k) {
    for (uint32_t c = 0; c <= ccap; ++c) {
      const uint32_t s = state_id(k, c);
      const bool c_ok = c >= std::min(ct.min, ccap) && (ct.max == kUnbounded || c <= ct.max);
      m.accepting[s] = k >= r.min && c_ok;
      if (bounded && k == r.max) continue;
      const TermPtr base = k < psize ? r.prefix[k] : r.rest;
      const uint32_t nk = bounded ? k + 1 : std::min(k + 1, kcap);
      if (k >= ct.from) {
        m.moves[s].push_back({element(item(t_and({base, ct.term}), depth)), state_id(nk, std::min(c + 1, ccap))});
        m.moves[s].push_back({element(item(t_and({base, t_not(ct.term)}), depth)), state_id(nk, c)});
      } else {
        m.moves[s].push_back({element(item(base, depth)), state_id(nk, c)});
      }
    }
  }
  return list_expr(prune(std::move(m)), p, pointer + "-items");
}

Expr GrammarBuilder::plain_array(const ArrayRec& r, uint32_t depth, const Pieces& p) {
  const uint32_t psize = static_cast<uint32_t>(r.prefix.size());
  // Elements from index i on (the one at index 0 has no separator), at least `min` in all.
  std::function<Expr(uint32_t, uint32_t)> from = [&](uint32_t i, uint32_t min) -> Expr {
    if (i >= r.max) return Expr::empty();
    const Expr sep = i == 0 ? Expr::empty() : p.sep;
    if (i < psize) {
      Expr e = seq({sep, item(r.prefix[i], depth), from(i + 1, min)});
      return i >= min ? Expr::choice({Expr::empty(), std::move(e)}) : e;
    }
    const uint32_t lo = min > i ? min - i : 0;
    const uint32_t hi = r.max == kUnbounded ? kUnbounded : r.max - i;
    const Expr it = item(r.rest, depth);
    if (i > 0) return Expr::repeat(seq({p.sep, it}), lo, hi);
    Expr list = seq({it, Expr::repeat(seq({p.sep, it}), lo > 0 ? lo - 1 : 0, hi == kUnbounded ? kUnbounded : hi - 1)});
    return lo == 0 ? Expr::choice({Expr::empty(), std::move(list)}) : list;
  };
  std::vector<Expr> alts;
  if (r.min == 0) alts.push_back(p.empty);
  if (r.max > 0) alts.push_back(seq({p.open, from(0, std::max<uint32_t>(r.min, 1)), p.close}));
  return alts.empty() ? never() : Expr::choice(std::move(alts));
}

CompiledSchema SchemaCompiler::run(uint32_t depth, bool bare) {
  const std::string* b = base_of(&doc_);
  const TermPtr root = t_schema(&doc_, "", b ? *b : "");
  if (!doc_.is_object() && !doc_.is_boolean()) throw SchemaError("", "a schema must be an object or a boolean");
  const ProductBudget budget;  // the number algebra's, for this schema (number_sets.h)
  GrammarBuilder builder(*this);
  CompiledSchema out;
  try {
    out.grammar = builder.build(root, depth, bare);
  } catch (AutomatonLimitError& e) {
    e.locate(ErrorLocation::at_pointer(""));
    throw;
  }
  try {
    prune_unproductive(out.grammar);
  } catch (const GrammarError&) {
    std::string why;
    for (const auto& n : never_) why += (why.empty() ? " (" : "; ") + n;
    throw SchemaError("", "the schema is unsatisfiable: no JSON value is valid" + (why.empty() ? why : why + ")"));
  }
  // What may follow whitespace (a value's first byte, punctuation) and what may follow a
  // value (whitespace, punctuation): the FOLLOW sets of whitespace and number rules widened
  // to these are the same in every schema, so their masks are shared across schemas and
  // with the building blocks prepared at vocabulary load (docs/masks.md).
  out.grammar.follow_classes = {"\",-0123456789:[]fnt{}", std::string("\t\n\r ,]}")};
  out.warnings = warnings_;
  out.unenforced = unenforced_;
  return out;
}

}  // namespace lockstep::schema

namespace lockstep {

CompiledSchema compile_json_schema(const nlohmann::ordered_json& schema, const JsonSchemaOptions& options) {
  schema::SchemaCompiler c(schema, options);
  return c.run();
}

Grammar json_value_grammar(const JsonSchemaOptions& options) {
  return compile_json_schema(nlohmann::ordered_json(true), options).grammar;
}

}  // namespace lockstep
