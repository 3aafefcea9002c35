// schemas/schema_grammar.cpp — normal forms → grammar rules, and the public entry points.
//
// Each term becomes a rule (so recursion through items and properties is a rule cycle).
// Strings and numbers are automata. An array or an object is a list of elements whose
// constraints (counts, `contains`, required properties, property order) form a small state
// machine over element kinds that only moves forward (or loops on one state); it is
// written as non-recursive rules, which the compiler inlines into one automaton.
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
#include "schemas/number_sets.h"
#include "schemas/schema_compiler.h"
#include "schemas/schema_nesting.h"
#include "schemas/string_lengths.h"

namespace lockstep::schema {

namespace {

constexpr size_t kMaxExactObligations = 8;

Expr lit(const std::string& s) { return Expr::literal(s); }
Expr never() { return Expr::char_class({}); }
Expr seq(std::vector<Expr> v) { return Expr::sequence(std::move(v)); }

// A list of elements driven by a forward-only state machine.
struct Machine {
  struct Move {
    Expr element;
    uint32_t target;
  };
  std::vector<std::vector<Move>> moves;
  std::vector<char> accepting;
};

}  // namespace

class GrammarBuilder {
 public:
  explicit GrammarBuilder(SchemaCompiler& c) : c_(c), opt_(c.options()) {}

  /// The grammar of `root`'s values at indent level `depth`; with `bare`, the root rule is
  /// the value itself, without the whitespace a JSON text may have around it.
  Grammar build(const TermPtr& root, uint32_t depth = 0, bool bare = false) {
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

 private:
  bool pretty() const { return opt_.whitespace == JsonSchemaOptions::Whitespace::kPretty; }
  // Pretty indentation stops at kMaxPrettyDepth: each level is a rule set of its own, and
  // values of unbounded depth (recursive schemas, any JSON value) would need infinitely
  // many. Deeper values are written without whitespace.
  static constexpr uint32_t kMaxPrettyDepth = 16;
  bool pretty_at(uint32_t depth) const { return pretty() && depth < kMaxPrettyDepth; }
  Expr ws() const { return ws_rule_ != UINT32_MAX ? Expr::rule_ref(ws_rule_) : Expr::empty(); }
  std::string indent(uint32_t depth) const { return std::string(depth * opt_.indent, ' '); }

  struct Pieces {
    Expr empty, open, sep, close;
  };
  Pieces pieces(char open, char close, uint32_t depth) const {
    const std::string o(1, open), c(1, close);
    if (pretty_at(depth)) {
      return {lit(o + c), lit(o + "\n" + indent(depth + 1)), lit(",\n" + indent(depth + 1)),
              lit("\n" + indent(depth) + c)};
    }
    return {seq({lit(o), ws(), lit(c)}), seq({lit(o), ws()}), seq({ws(), lit(","), ws()}), seq({ws(), lit(c)})};
  }

  uint32_t add_rule(const std::string& hint, Expr body, bool no_inline = false) {
    std::string name = hint;
    for (char& ch : name) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-') ch = '-';
    }
    while (!name.empty() && name[0] == '-') name.erase(0, 1);
    if (name.size() > 40) name = name.substr(name.size() - 40);
    return g_.add_rule(fmt::format("{}{}{}", name.empty() ? "r" : name, name.empty() ? "" : "-", g_.rules.size()),
                       std::move(body), {}, no_inline);
  }

  uint32_t term_rule(const TermPtr& t, uint32_t depth) {
    depth = std::min(depth, kMaxPrettyDepth);
    const std::string key = pretty() ? fmt::format("{}@{}", t->key, depth) : t->key;
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

  // Rules of values are hash-consed: a value rule whose body is identical to an earlier
  // one's (up to rules known identical) becomes a reference to it. Schemas repeat value
  // schemas under different names (`{"type": "string", "description": …}` per property);
  // grouping members by their value (merge_kinds) needs to see them as one.
  uint32_t canon(uint32_t r) const { return r < alias_.size() && alias_[r] != UINT32_MAX ? alias_[r] : r; }
  void hash_cons(uint32_t id) {
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

  // One rule per distinct automaton, never inlined: every use shares its states, and so
  // their cached token masks.
  // With `blocks`, a long length-only string is written in blocks (length_blocks).
  Expr shared_automaton(const DfaPtr& d, bool json_string, bool blocks = true) {
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

  // Strings whose only constraint is a length bound, C{lo,hi} (C: one code point), with a
  // bound above kLengthBlock: unrolled, maxLength 65535 is a chain of 65,536 code-point
  // states (several hundred thousand byte states) and every position a state of its own,
  // with a token mask of its own. Written instead as blocks of exactly kLengthBlock code
  // points and a short tail: a length m = i·K + t (0 ≤ t < K) is i blocks, then t code
  // points. The block and tail automata are the same in every schema, so their byte DFAs
  // and their states' masks are shared process-wide; the rule counting blocks has about
  // m / K states. Each length has one parse: tails are shorter than a block. length_bounds
  // (schemas/string_lengths.h) recognizes such strings.

  // C{lo,hi} as a JSON string body in blocks (see kLengthBlock).
  Expr length_blocks(uint32_t lo, uint32_t hi, const std::vector<CodepointRange>& ranges) {
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

  DfaPtr key_dfa(const std::string& name) {
    auto [it, fresh] = literal_keys_.try_emplace(name);
    if (fresh) it->second = literal_key(name);
    return it->second;
  }

  Expr norm_expr(const Norm& n, uint32_t depth, const std::string& pointer) {
    std::vector<Expr> alts;
    if (n.null) alts.push_back(lit("null"));
    if (n.booleans & 2) alts.push_back(lit("true"));
    if (n.booleans & 1) alts.push_back(lit("false"));
    if (n.number.lost_exponents) {
      c_.warn(pointer, "numbers are accepted here only without exponent: the automaton combining the number "
                       "constraints for exponent notation would be too large");
    }
    if (n.number.texts && n.number.texts != no_strings()) {
      alts.push_back(shared_automaton(opt_.canonical_numbers ? numbers_canonical(n.number.texts) : n.number.texts, false));
    }
    if (n.string && !n.string->empty()) alts.push_back(seq({lit("\""), shared_automaton(n.string, true), lit("\"")}));
    for (const auto& r : n.arrays) alts.push_back(array_expr(r, depth, pointer));
    for (const auto& r : n.objects) alts.push_back(object_expr(r, depth, pointer));
    return alts.empty() ? never() : Expr::choice(std::move(alts));
  }

  // ---- lists

  Expr list_expr(const Machine& m, const Pieces& p, const std::string& hint) {
    // A(s): after at least one element, in state s.
    std::vector<int64_t> after(m.moves.size(), -1);
    std::function<Expr(uint32_t)> A = [&](uint32_t s) -> Expr {
      if (after[s] >= 0) return Expr::rule_ref(static_cast<uint32_t>(after[s]));
      std::vector<Expr> loops, exits;
      for (const auto& mv : m.moves[s]) {
        if (mv.target == s) loops.push_back(mv.element);
      }
      if (m.accepting[s]) exits.push_back(Expr::empty());
      for (const auto& mv : m.moves[s]) {
        if (mv.target != s) exits.push_back(seq({p.sep, mv.element, A(mv.target)}));
      }
      std::vector<Expr> body;
      if (!loops.empty()) body.push_back(Expr::repeat(seq({p.sep, Expr::choice(std::move(loops))}), 0, kUnbounded));
      body.push_back(exits.empty() ? never() : Expr::choice(std::move(exits)));
      const uint32_t id = add_rule(hint + "-s" + std::to_string(s), seq(std::move(body)));
      after[s] = id;
      return Expr::rule_ref(id);
    };
    std::vector<Expr> first;
    for (const auto& mv : m.moves[0]) first.push_back(seq({mv.element, A(mv.target)}));
    std::vector<Expr> alts;
    if (m.accepting[0]) alts.push_back(p.empty);
    if (!first.empty()) alts.push_back(seq({p.open, Expr::choice(std::move(first)), p.close}));
    return alts.empty() ? never() : Expr::choice(std::move(alts));
  }

  // Keeps only states that can still reach an accepting one; renumbers from 0.
  static Machine prune(const Machine& m) {
    const size_t n = m.moves.size();
    std::vector<char> live(n, 0);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t s = 0; s < n; ++s) {
        if (live[s]) continue;
        bool l = m.accepting[s];
        for (const auto& mv : m.moves[s]) l = l || (mv.target != s && live[mv.target]);
        if (l) live[s] = 1, changed = true;
      }
    }
    Machine out;
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
          out.moves[id[s]].push_back({mv.element, id[mv.target]});
        }
      }
    }
    return out;
  }

  // ---- arrays

  Expr item(const TermPtr& t, uint32_t depth) { return Expr::rule_ref(term_rule(t, depth + 1)); }

  Expr array_expr(ArrayRec r, uint32_t depth, const std::string& pointer) {
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
          m.moves[s].push_back({item(t_and({base, ct.term}), depth), state_id(nk, std::min(c + 1, ccap))});
          m.moves[s].push_back({item(t_and({base, t_not(ct.term)}), depth), state_id(nk, c)});
        } else {
          m.moves[s].push_back({item(base, depth), state_id(nk, c)});
        }
      }
    }
    return list_expr(prune(m), p, pointer + "-items");
  }

  Expr plain_array(const ArrayRec& r, uint32_t depth, const Pieces& p) {
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

  // ---- objects

  struct Kind {
    Expr key;           // the JSON string of the key (set by key_kinds)
    DfaPtr key_dfa;     // its language
    TermPtr value;
    uint64_t satisfies;  // obligations met by a member of this kind
    int order;           // index in the declared order, or -1
    const std::string* name;  // the key, when the kind is one literal name
  };

  // In any order, kinds that differ only in their keys lead the member machine alike: they
  // become one kind whose key language is the union (a trie of the names, and any key
  // regions). An object of 800 optional properties of five types reads a key through five
  // key rules instead of 800; after `"` a token is walked through those few, not through
  // one rule per property (several of which would read its first byte: the Earley
  // fallback, milliseconds per mask). A group of one keeps the name's own automaton,
  // shared with every object that uses the name.
  void merge_kinds(std::vector<Kind>& kinds, uint32_t depth) {
    if (opt_.property_order == JsonSchemaOptions::PropertyOrder::kSchema || kinds.size() < 2) return;
    std::unordered_map<std::string, size_t> group_of;
    std::vector<std::vector<size_t>> groups;
    for (size_t i = 0; i < kinds.size(); ++i) {
      const uint32_t value = canon(term_rule(kinds[i].value, depth + 1));
      auto [it, fresh] = group_of.try_emplace(fmt::format("{}|{}", kinds[i].satisfies, value), groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(i);
    }
    if (groups.size() == kinds.size()) return;
    std::vector<Kind> merged;
    merged.reserve(groups.size());
    for (const auto& g : groups) {
      Kind k = kinds[g[0]];
      if (g.size() > 1) {
        std::vector<std::string> names;
        std::vector<DfaPtr> regions;
        for (size_t i : g) {
          if (kinds[i].name) names.push_back(*kinds[i].name);
          else regions.push_back(kinds[i].key_dfa);
        }
        CharDfa keys = names.empty() ? CharDfa::none() : CharDfa::literals(names);
        for (const auto& region : regions) keys = CharDfa::unite(keys, *region);
        k.key_dfa = std::make_shared<const CharDfa>(std::move(keys));
        k.order = -1;
        k.name = nullptr;
      }
      merged.push_back(std::move(k));
    }
    kinds = std::move(merged);
  }

  Expr key_expr(const DfaPtr& keys) { return seq({lit("\""), shared_automaton(keys, true), lit("\"")}); }

  Expr object_expr(const ObjectRec& r, uint32_t depth, const std::string& pointer) {
    const Pieces p = pieces('{', '}', depth);
    // Literal names: declared ones in order, then the others named by rules or obligations.
    // Hashed lookups throughout: objects may declare 100,000 properties.
    std::vector<std::string> names = r.order;
    std::unordered_map<std::string, int> order_of;
    for (size_t i = 0; i < r.order.size(); ++i) order_of.try_emplace(r.order[i], static_cast<int>(i));
    std::unordered_set<std::string> seen(names.begin(), names.end());
    auto add_name = [&](const std::optional<std::string>& n) {
      if (n && seen.insert(*n).second) names.push_back(*n);
    };
    for (const auto& k : r.rules) add_name(k.literal);
    for (const auto& o : r.must) add_name(o.literal);
    DfaPtr named = no_strings();
    if (names.size() == 1) named = key_dfa(names[0]);
    if (names.size() > 1) named = std::make_shared<CharDfa>(CharDfa::literals(names));
    // Key languages that split the other keys into regions.
    std::vector<DfaPtr> splitters;
    for (const auto& k : r.rules) {
      if (!k.literal) splitters.push_back(k.keys);
    }
    for (const auto& o : r.must) {
      if (!o.literal) splitters.push_back(o.keys);
    }
    if (splitters.size() > 6) {
      throw SchemaError(pointer, fmt::format("{} key patterns on one object: too many to partition", splitters.size()));
    }
    const size_t q = r.must.size();
    const bool exact_obligations = q <= kMaxExactObligations;
    if (q > 63) {
      throw SchemaError(pointer, fmt::format("{} required-member conditions on one object: at most 63 are supported", q));
    }
    auto in_keys = [](const DfaPtr& keys, const std::optional<std::string>& lit_key, const std::string& k) {
      return lit_key ? *lit_key == k : keys->accepts(k);
    };
    std::vector<Kind> kinds;
    // Splits a member kind by the obligations whose value constraint it may or may not meet.
    auto add_kind = [&](DfaPtr keys, TermPtr value, uint64_t key_matches, int order, const std::string* name) {
      std::vector<std::pair<TermPtr, uint64_t>> variants{{value, 0}};
      for (size_t o = 0; o < q; ++o) {
        if (!(key_matches >> o & 1)) continue;
        const TermPtr& need = r.must[o].value;
        std::vector<std::pair<TermPtr, uint64_t>> next;
        for (auto& [v, bits] : variants) {
          if (need->kind == Term::Kind::kTrue) {
            next.push_back({v, bits | (1ull << o)});
          } else {
            next.push_back({t_and({v, need}), bits | (1ull << o)});
            next.push_back({t_and({v, t_not(need)}), bits});
          }
        }
        variants = std::move(next);
      }
      for (auto& [v, bits] : variants) {
        if (v->kind == Term::Kind::kFalse) continue;
        kinds.push_back({Expr::empty(), keys, v, bits, order, name});
      }
    };
    std::unordered_map<std::string, std::vector<size_t>> literal_rules;  // name → rules, in order
    std::vector<size_t> pattern_rules;
    for (size_t i = 0; i < r.rules.size(); ++i) {
      if (r.rules[i].literal) literal_rules[*r.rules[i].literal].push_back(i);
      else pattern_rules.push_back(i);
    }
    for (const auto& name : names) {
      std::vector<size_t> applies;
      if (auto it = literal_rules.find(name); it != literal_rules.end()) applies = it->second;
      for (size_t i : pattern_rules) {
        if (r.rules[i].keys->accepts(name)) applies.push_back(i);
      }
      std::sort(applies.begin(), applies.end());
      std::vector<TermPtr> parts;
      for (size_t i : applies) parts.push_back(r.rules[i].value);
      uint64_t matches = 0;
      for (size_t o = 0; o < q; ++o) {
        if (in_keys(r.must[o].keys, r.must[o].literal, name)) matches |= 1ull << o;
      }
      const auto pos = order_of.find(name);
      add_kind(key_dfa(name), t_and(std::move(parts)), matches, pos == order_of.end() ? -1 : pos->second, &name);
    }
    const DfaPtr others = named == no_strings() ? all_strings() : std::make_shared<CharDfa>(named->complement());
    for (uint32_t mask = 0; mask < (1u << splitters.size()); ++mask) {
      CharDfa keys = *others;
      for (size_t j = 0; j < splitters.size() && !keys.empty(); ++j) {
        keys = CharDfa::intersect(keys, (mask >> j & 1) ? *splitters[j] : splitters[j]->complement());
      }
      if (keys.empty()) continue;
      const auto region = std::make_shared<CharDfa>(std::move(keys));
      std::vector<TermPtr> parts;
      size_t j = 0;
      for (const auto& k : r.rules) {
        if (!k.literal) {
          if (mask >> j & 1) parts.push_back(k.value);
          ++j;
        }
      }
      uint64_t matches = 0;
      for (size_t o = 0; o < q; ++o) {
        if (!r.must[o].literal && (mask >> j & 1)) matches |= 1ull << o;
        if (!r.must[o].literal) ++j;
      }
      add_kind(region, t_and(std::move(parts)), matches, -1, nullptr);
    }
    if (!exact_obligations) {
      // Too many to track as a set: plain required names (no value condition) are counted
      // instead, which is exact as long as no key repeats; the others stay a set.
      size_t others = 0;
      for (const auto& o : r.must) others += !(o.literal && o.value->kind == Term::Kind::kTrue);
      if (others > kMaxExactObligations) {
        throw SchemaError(pointer, fmt::format("{} required-member conditions on one object are too many to track: at most {} "
                                               "that are more than a plain required name (each doubles the object's "
                                               "states)",
                                               others, kMaxExactObligations));
      }
    }
    merge_kinds(kinds, depth);
    for (auto& k : kinds) k.key = key_expr(k.key_dfa);
    return list_expr(object_machine(r, kinds, depth, pointer), p, pointer + "-members");
  }

  Machine object_machine(const ObjectRec& r, const std::vector<Kind>& kinds, uint32_t depth,
                         const std::string& pointer) {
    const bool schema_order = opt_.property_order == JsonSchemaOptions::PropertyOrder::kSchema;
    const size_t q = r.must.size();
    const bool exact = q <= kMaxExactObligations;
    // Counted obligations (see object_expr): plain required names, when there are too many
    // obligations for a set. `counted` marks them; the rest keep a bit each.
    uint64_t counted = 0;
    if (!exact) {
      for (size_t o = 0; o < q; ++o) {
        if (r.must[o].literal && r.must[o].value->kind == Term::Kind::kTrue) counted |= 1ull << o;
      }
    }
    const uint32_t n_counted = static_cast<uint32_t>(std::popcount(counted));
    const uint32_t n_order = static_cast<uint32_t>(r.order.size());
    const bool counting = r.min > 0 || r.max != kUnbounded;
    const uint32_t ccap = r.max != kUnbounded ? r.max : r.min;
    // Which obligation a declared required name stands for (for order checks).
    std::vector<std::pair<uint32_t, int>> required_at;  // (position, obligation)
    {
      std::unordered_map<std::string, uint32_t> order_of;
      for (uint32_t i = 0; i < n_order; ++i) order_of.try_emplace(r.order[i], i);
      std::vector<int> at(n_order, -1);
      for (size_t o = 0; o < q; ++o) {
        if (!r.must[o].literal || r.must[o].value->kind != Term::Kind::kTrue) continue;
        if (auto pos = order_of.find(*r.must[o].literal); pos != order_of.end()) at[pos->second] = static_cast<int>(o);
      }
      for (uint32_t j = 0; j < n_order; ++j) {
        if (at[j] >= 0) required_at.push_back({j, at[j]});
      }
    }
    struct State {
      uint32_t pos;
      uint64_t sat;      // obligations met, as a set (counted ones excluded)
      uint32_t present;  // counted obligations met
      uint32_t count;
      bool operator<(const State& o) const {
        return std::tie(pos, sat, present, count) < std::tie(o.pos, o.sat, o.present, o.count);
      }
    };
    std::map<State, uint32_t> ids;
    std::vector<State> states;
    Machine m;
    auto id_of = [&](const State& s) {
      auto [it, fresh] = ids.try_emplace(s, static_cast<uint32_t>(states.size()));
      if (fresh) {
        if (states.size() >= engine_limits().object_states) {
          throw LimitError(ErrorLocation::at_pointer(pointer), "object_states", engine_limits().object_states,
                           "the member machine of this object's constraints");
        }
        states.push_back(s);
        m.moves.emplace_back();
        m.accepting.push_back(0);
      }
      return it->second;
    };
    const uint64_t all = (q == 64 ? ~0ull : (1ull << q) - 1) & ~counted;
    id_of({0, 0, 0, 0});
    for (uint32_t i = 0; i < states.size(); ++i) {
      c_.deadline_.check_now(ErrorLocation::at_pointer(pointer));
      const State s = states[i];
      const bool done = s.sat == all && s.present == n_counted;
      m.accepting[i] = done && s.count >= std::min(r.min, ccap);
      if (counting && r.max != kUnbounded && s.count >= r.max) continue;
      auto met = [&](int o) { return (counted >> o & 1) ? false : (s.sat >> o & 1) != 0; };
      // The first required declared name at or after s.pos not seen yet (a counted one
      // cannot have been seen: declared names come once, in order).
      uint32_t first_unmet = n_order;
      for (const auto& [j, o] : required_at) {
        if (j >= s.pos && !met(o)) {
          first_unmet = j;
          break;
        }
      }
      for (const auto& k : kinds) {
        State t = s;
        if (schema_order) {
          const uint32_t to = k.order >= 0 ? static_cast<uint32_t>(k.order) : n_order;
          if (k.order >= 0 && to < s.pos) continue;
          // Skipping a required declared name that was not seen makes the object invalid.
          if (first_unmet < to) continue;
          t.pos = k.order >= 0 ? to + 1 : n_order;
        }
        t.sat |= k.satisfies & ~counted;
        t.present += static_cast<uint32_t>(std::popcount(k.satisfies & counted));
        if (t.present > n_counted) continue;  // a repeated key: not a valid object's text
        if (counting) t.count = std::min(s.count + 1, std::max(ccap, 1u));
        const uint32_t target = id_of(t);  // may grow m.moves: index it afterwards
        Expr element = member(k, depth);
        m.moves[i].push_back({std::move(element), target});
      }
    }
    return prune(m);
  }

  // A member (key, colon, value) is a rule of its own: the object's state machine names it
  // in many states, and copying it into each would multiply automaton states.
  Expr member(const Kind& k, uint32_t depth) {
    const std::string key = fmt::format("{}|{}|{}", static_cast<const void*>(k.key_dfa.get()), k.value->key, depth);
    auto it = member_rules_.find(key);
    if (it == member_rules_.end()) {
      const Expr value = item(k.value, depth);
      Expr body = pretty_at(depth) ? seq({k.key, lit(": "), value}) : seq({k.key, ws(), lit(":"), ws(), value});
      it = member_rules_.emplace(key, add_rule("member", std::move(body), true)).first;
    }
    return Expr::rule_ref(it->second);
  }

  SchemaCompiler& c_;
  const JsonSchemaOptions& opt_;
  Grammar g_;
  uint32_t ws_rule_ = UINT32_MAX;
  std::unordered_map<std::string, uint32_t> rules_;
  uint32_t depth_ = 0;  // term_rule calls in progress, one inside the other
  std::map<std::pair<const CharDfa*, bool>, uint32_t> dfa_rules_;
  std::map<std::tuple<uint32_t, uint32_t, size_t>, DfaPtr> length_pieces_;  // (lo, hi, ranges)
  std::vector<DfaPtr> keep_;
  std::unordered_map<std::string, DfaPtr> literal_keys_;
  std::unordered_map<std::string, uint32_t> member_rules_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> bodies_;  // hash_cons: body hash → rules
  std::vector<uint32_t> alias_;                                // hash_cons: rule → its representative
};

CompiledSchema SchemaCompiler::run(uint32_t depth, bool bare) {
  auto b = base_of_.find("");
  const TermPtr root = t_schema(&doc_, "", b != base_of_.end() ? b->second : "");
  if (!doc_.is_object() && !doc_.is_boolean()) throw SchemaError("", "a schema must be an object or a boolean");
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
