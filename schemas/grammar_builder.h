// schemas/grammar_builder.h — GrammarBuilder: normal forms → grammar rules (internal to
// schemas/). Its definitions are in schema_grammar.cpp (values, strings, numbers, arrays,
// the lists both are written as) and object_grammar.cpp (objects).
//
// Each term becomes a rule (so recursion through items and properties is a rule cycle).
// Strings and numbers are automata. An array or an object is a list of elements whose
// constraints (counts, `contains`, required properties, property order) form a small state
// machine over element kinds that only moves forward (or loops on one state); it is
// written as non-recursive rules, which the compiler inlines into one automaton.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/hash.h"
#include "schemas/schema_compiler.h"

namespace lockstep::schema {

// A list of elements driven by a forward-only state machine.
// Moves name their element by its index in `elements`: a member machine has 2^q states
// with up to q moves each, over q + 1 distinct elements.
struct Machine {
  struct Move {
    uint32_t element;  ///< index in elements
    uint32_t target;
  };
  std::vector<Expr> elements;
  std::vector<std::vector<Move>> moves;
  std::vector<char> accepting;
};

class GrammarBuilder {
 public:
  explicit GrammarBuilder(SchemaCompiler& c) : c_(c), opt_(c.options()) {}

  /// The grammar of `root`'s values at indent level `depth`; with `bare`, the root rule is
  /// the value itself, without the whitespace a JSON text may have around it.
  Grammar build(const TermPtr& root, uint32_t depth = 0, bool bare = false);

 private:
  static constexpr size_t kMaxExactObligations = 8;
  // Key patterns (patternProperties, additionalProperties, propertyNames, patterned
  // obligations) one object may have, and the regions of keys they may split the other
  // keys into (each region one member kind).
  static constexpr size_t kMaxKeyPatterns = 64;
  static constexpr size_t kMaxKeyRegions = 256;
  static Expr lit(const std::string& s) { return Expr::literal(s); }
  static Expr never() { return Expr::char_class({}); }
  static Expr seq(std::vector<Expr> v) { return Expr::sequence(std::move(v)); }
  /// seq() without an initializer list's copies: temporaries are moved in (a member machine
  /// builds one sequence per move, some around a whole choice).
  template <class... E>
  static Expr seq_of(E&&... parts) {
    std::vector<Expr> v;
    v.reserve(sizeof...(parts));
    (v.push_back(std::forward<E>(parts)), ...);
    return Expr::sequence(std::move(v));
  }

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
  Pieces pieces(char open, char close, uint32_t depth) const;

  uint32_t add_rule(const std::string& hint, Expr body, bool no_inline = false);

  uint32_t term_rule(const TermPtr& t, uint32_t depth);

  // Rules of values are hash-consed: a value rule whose body is identical to an earlier
  // one's (up to rules known identical) becomes a reference to it. Schemas repeat value
  // schemas under different names (`{"type": "string", "description": …}` per property);
  // grouping members by their value (merge_kinds) needs to see them as one.
  uint32_t canon(uint32_t r) const { return r < alias_.size() && alias_[r] != UINT32_MAX ? alias_[r] : r; }
  void hash_cons(uint32_t id);

  // One rule per distinct automaton, never inlined: every use shares its states, and so
  // their cached token masks.
  // With `blocks`, a long length-only string is written in blocks (length_blocks).
  Expr shared_automaton(const DfaPtr& d, bool json_string, bool blocks = true);

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
  Expr length_blocks(uint32_t lo, uint32_t hi, const std::vector<CodepointRange>& ranges);

  DfaPtr key_dfa(const std::string& name) {
    auto [it, fresh] = literal_keys_.try_emplace(name);
    if (fresh) it->second = literal_key(name);
    return it->second;
  }

  // The trie of `names` (CharDfa::literals), and with `complement` the keys it does not hold,
  // made once per set of names in this grammar: a definition copied under many properties
  // (every Kubernetes ObjectMeta) lists the same names each time.
  DfaPtr names_dfa(const std::vector<std::string>& names, bool complement);

  Expr norm_expr(const Norm& n, uint32_t depth, const std::string& pointer);

  // ---- lists

  Expr list_expr(const Machine& m, const Pieces& p, const std::string& hint);
  // A machine of more than two states none of whose states' moves chain or lead twice to one
  // target (see list_expr): one
  // machine walk (Expr::Kind::kMachine) in a rule of its own, between `p.open` and `p.close`.
  Expr walk_expr(const Machine& m, const Pieces& p, const Expr& sep, const std::string& hint);
  // The separator `sep` (whitespace, comma, whitespace) as a reference to one rule per
  // distinct separator; a separator of one node (a pretty layout's literal) as it is. A
  // member machine's states each begin with it: a reference is one node where the
  // separator is four, and every pass over the grammar reads each node. The compiler
  // substitutes the rule back, so the automata are the ones the separator written out gives.
  Expr sep_ref(const Expr& sep);

  // Keeps only states that can still reach an accepting one; renumbers from 0.
  static Machine prune(Machine m);

  // ---- arrays

  Expr item(const TermPtr& t, uint32_t depth) { return Expr::rule_ref(term_rule(t, depth + 1)); }

  Expr array_expr(ArrayRec r, uint32_t depth, const std::string& pointer);

  Expr plain_array(const ArrayRec& r, uint32_t depth, const Pieces& p);

  // ---- objects

  struct Kind {
    Expr key;           // the JSON string of the key (set after merge_kinds)
    DfaPtr key_dfa;     // its language
    TermPtr value;
    uint64_t satisfies;  // obligations tracked as a set that a member of this kind meets (their bits)
    uint32_t counts;     // counted obligations it meets (plain required names; see obligation_bits)
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
  void merge_kinds(std::vector<Kind>& kinds, uint32_t depth);

  Expr key_expr(const DfaPtr& keys) { return seq({lit("\""), shared_automaton(keys, true), lit("\"")}); }

  Expr object_expr(const ObjectRec& r, uint32_t depth, const std::string& pointer);

  // Each obligation of `r.must`: its bit in a member machine state's set, or -1 when it is
  // counted instead. Throws SchemaError when too many need a bit.
  static std::vector<int> obligation_bits(const ObjectRec& r, const std::string& pointer);
  // `bit_of`: obligation_bits(r), each obligation's bit in a state's set (-1: counted).
  Machine object_machine(const ObjectRec& r, const std::vector<Kind>& kinds, const std::vector<int>& bit_of,
                         uint32_t depth, const std::string& pointer);

  // A member (key, colon, value) is a rule of its own: the object's state machine names it
  // in many states, and copying it into each would multiply automaton states.
  Expr member(const Kind& k, uint32_t depth);

  SchemaCompiler& c_;
  const JsonSchemaOptions& opt_;
  Grammar g_;
  uint32_t ws_rule_ = UINT32_MAX;
  // A term at a nesting depth: term_rule's rules (the depth counts only in pretty output),
  // and with a key automaton, member's. Hashed from the term's hash (TermKeyHash).
  struct TermAt {
    TermPtr t;
    uint32_t depth = 0;
    const CharDfa* key_dfa = nullptr;
    bool operator==(const TermAt& o) const {
      return depth == o.depth && key_dfa == o.key_dfa && TermKeyEqual{}(t, o.t);
    }
  };
  struct TermAtHash {
    size_t operator()(const TermAt& k) const {
      return static_cast<size_t>(fmix64(k.t->hash ^ mix64(k.depth) ^ reinterpret_cast<uintptr_t>(k.key_dfa)));
    }
  };
  std::unordered_map<TermAt, uint32_t, TermAtHash> rules_;
  uint32_t depth_ = 0;  // term_rule calls in progress, one inside the other
  std::map<std::pair<const CharDfa*, bool>, uint32_t> dfa_rules_;
  std::map<std::tuple<uint32_t, uint32_t, size_t>, DfaPtr> length_pieces_;  // (lo, hi, ranges)
  std::vector<DfaPtr> keep_;
  std::unordered_map<std::string, DfaPtr> literal_keys_;
  std::unordered_map<std::string, std::pair<DfaPtr, DfaPtr>> name_sets_;  // names_dfa: (trie, complement)
  std::unordered_map<TermAt, uint32_t, TermAtHash> member_rules_;
  std::vector<std::pair<Expr, uint32_t>> sep_rules_;  // sep_ref: separator → its rule
  std::unordered_map<uint64_t, std::vector<uint32_t>> bodies_;  // hash_cons: body hash → rules
  std::vector<uint32_t> alias_;                                // hash_cons: rule → its representative
};

}  // namespace lockstep::schema
