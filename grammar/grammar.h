// grammar/grammar.h — the grammar IR every front end produces (GBNF, regex, JSON Schema).
//
// A Grammar is a list of named rules; each rule's body is an expression tree over
// code-point terminals (string literals, character classes) and references to other
// rules. The automata layer compiles it into byte-level automata.
//
// Terminals are Unicode code points (as in llama.cpp's GBNF): a literal is stored as
// its UTF-8 bytes, a character class as sorted, disjoint code-point ranges. Surrogate
// code points (U+D800..U+DFFF) have no UTF-8 encoding and are never matched.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/errors.h"
#include "grammar/intern_table.h"

namespace lockstep {

/// Inclusive code-point range [lo, hi].
struct CodepointRange {
  uint32_t lo = 0;
  uint32_t hi = 0;
  friend bool operator==(const CodepointRange&, const CodepointRange&) = default;
};

inline constexpr uint32_t kMaxCodepoint = 0x10FFFF;
inline constexpr uint32_t kUnbounded = std::numeric_limits<uint32_t>::max();

class CharDfa;
struct ElementMachine;

/// One node of a rule body.
struct Expr {
  enum class Kind : uint8_t {
    kEmpty,      ///< matches the empty string
    kLiteral,    ///< `bytes`: UTF-8 text matched exactly
    kCharClass,  ///< one code point in `ranges` (already normalized; negation resolved)
    kRuleRef,    ///< the rule with index `rule`
    kSequence,   ///< `children` one after another
    kChoice,     ///< one of `children`
    kRepeat,     ///< `children[0]` repeated between `min` and `max` (kUnbounded) times
    kAutomaton,  ///< a string of `automaton`'s language (char_dfa.h); with `json_string`, the
                 ///< body of a JSON string literal whose decoded value is in the language
    kMachine,    ///< a walk of `machine` (ElementMachine): `children[1 + e]` for each move's
                 ///< element e, `children[0]` (the separator) between two elements
  };

  Kind kind = Kind::kEmpty;
  std::string bytes;
  std::vector<CodepointRange> ranges;
  uint32_t rule = 0;
  uint32_t min = 0;
  uint32_t max = 0;
  std::vector<Expr> children;
  std::shared_ptr<const CharDfa> automaton;
  std::shared_ptr<const ElementMachine> machine;
  bool json_string = false;
  SourceLocation where;  ///< where the node starts in the source, when known

  static Expr empty();
  static Expr literal(std::string utf8);
  /// Normalizes `ranges` (sorts, merges, drops surrogates); `negated` takes the complement
  /// within [0, U+10FFFF].
  static Expr char_class(std::vector<CodepointRange> ranges, bool negated = false);
  static Expr any_codepoint();
  static Expr rule_ref(uint32_t rule);
  static Expr sequence(std::vector<Expr> children);
  static Expr choice(std::vector<Expr> children);
  static Expr repeat(Expr child, uint32_t min, uint32_t max);
  /// A walk of `machine` (kMachine) over `elements`, `separator` between two of them.
  /// Throws std::invalid_argument when the machine has no state, its offsets do not frame
  /// its moves, or a move names a state or an element it does not have.
  static Expr machine_walk(std::shared_ptr<const ElementMachine> machine, Expr separator, std::vector<Expr> elements);
};

/// A finite-state machine whose steps are expressions (Expr::Kind::kMachine): a walk from
/// state 0 of one move or more that ends in an accepting state, each move reading its
/// element, with the separator between two elements. A front end's way to write a machine of
/// many states whose elements are few: a JSON object's members in any order, where a state
/// is the set of required names read (2^q states, q·2^(q-1) moves, a handful of distinct
/// members). Written as rules, a rule per state and a node or three per move, every pass
/// over the grammar paid for each move; here a move is two words, and each element is one
/// expression however many moves read it. The compiler builds the walk as one automaton
/// (rule_automaton.cpp), the same as the rules would give (docs/masks.md, "Machine walks").
struct ElementMachine {
  struct Move {
    uint32_t element;  ///< index into the elements (the node's children after the separator)
    uint32_t target;   ///< the state after it
  };
  std::vector<uint8_t> accepting;                ///< per state
  std::vector<uint32_t> move_begin{0};           ///< moves of state s: [move_begin[s], move_begin[s + 1])
  std::vector<Move> moves;
  uint32_t num_states() const { return static_cast<uint32_t>(accepting.size()); }
  std::span<const Move> moves_of(uint32_t s) const {
    return {moves.data() + move_begin[s], move_begin[s + 1] - move_begin[s]};
  }
  /// True when some walk of at least one move ends in an accepting state, using only the
  /// elements e with usable(e), and the separator only if `separator_usable`.
  template <typename Usable>
  bool has_walk(const Usable& usable, bool separator_usable) const;
};

template <typename Usable>
bool ElementMachine::has_walk(const Usable& usable, bool separator_usable) const {
  // States reached after one move or more (a second move needs the separator).
  std::vector<char> seen(num_states(), 0);
  std::vector<uint32_t> todo;
  for (const Move& m : moves_of(0)) {
    if (usable(m.element) && !seen[m.target]) seen[m.target] = 1, todo.push_back(m.target);
  }
  while (!todo.empty()) {
    const uint32_t s = todo.back();
    todo.pop_back();
    if (accepting[s]) return true;
    if (!separator_usable) continue;
    for (const Move& m : moves_of(s)) {
      if (usable(m.element) && !seen[m.target]) seen[m.target] = 1, todo.push_back(m.target);
    }
  }
  return false;
}

/// Thompson's construction of a machine walk (Expr::Kind::kMachine) from NFA state `from` to
/// `to`, for an NFA builder: `add()` makes a fresh state, `eps(a, b)` an ε-edge and
/// `build(x, a, b)` the NFA of expression x from a to b. A fresh state stands for each
/// machine state after one element or more, another for after its separator (read once per
/// state); nothing enters `from` or leaves `to`.
template <typename Add, typename Eps, typename Build>
void walk_nfa(const ElementMachine& m, const std::vector<Expr>& children, uint32_t from, uint32_t to, const Add& add,
              const Eps& eps, const Build& build) {
  std::vector<uint32_t> after(m.num_states(), UINT32_MAX), todo;
  const auto after_of = [&](uint32_t s) {
    if (after[s] == UINT32_MAX) after[s] = add(), todo.push_back(s);
    return after[s];
  };
  for (const auto& mv : m.moves_of(0)) build(children[1 + mv.element], from, after_of(mv.target));
  while (!todo.empty()) {
    const uint32_t s = todo.back();
    todo.pop_back();
    if (m.accepting[s]) eps(after[s], to);
    if (m.moves_of(s).empty()) continue;
    const uint32_t separated = add();
    build(children[0], after[s], separated);
    for (const auto& mv : m.moves_of(s)) build(children[1 + mv.element], separated, after_of(mv.target));
  }
}

struct Rule {
  std::string name;
  Expr body;
  SourceLocation where;  ///< where the definition starts
  /// Keep this rule a rule of its own: the compiler must not copy its body into callers
  /// (a front end's hint, e.g. for a string automaton shared by many properties).
  bool no_inline = false;
  /// Where a rule body ends with a reference to this rule (its last step, through sequences
  /// and choices), the compiler continues the caller's automaton into this rule's body
  /// instead of calling it: one shared copy per caller automaton, so a chain of such rules
  /// becomes one automaton with a state per place (a front end's hint: the states of a JSON
  /// object's member machine, one rule each, become one rule's states; docs/masks.md).
  /// The language is the same. Only with inlining on (CompileLimits::inline_rules).
  bool tail_merged = false;
};

/// Something about a grammar worth telling its author that does not stop it from working
/// (a rule that can never finish, which the root can do without).
struct GrammarWarning {
  SourceLocation where;  ///< the rule's definition (line 0 when unknown)
  std::string rule;      ///< the rule it is about
  std::string message;   ///< without the location: "rule 'loop' can never finish ..."
};

struct Rule;

/// Rule names to rule indices, for Grammar::find_rule and add_rule's check that a name is
/// new: the shared open-addressing slots of the intern tables (intern_table.h) over the
/// names' hashes, each key numbering a rule; the names themselves stay in the rules. A JSON
/// Schema's grammar adds tens of thousands of rules, and a map holding a copy of each name
/// (two allocations per rule) took a tenth of compiling an anyOf of 200 objects. Copyable;
/// not thread-safe for writes.
class RuleNameIndex {
 public:
  /// The index of the rule named `name` among the rules added, or -1. An added rule renamed
  /// since is not found under either name.
  int64_t find(const std::vector<Rule>& rules, std::string_view name) const;
  /// Adds rules[index] under its current name (one not found by find()).
  void add(const std::vector<Rule>& rules, uint32_t index);
  /// How many rules were added.
  size_t added() const { return rule_.size(); }

 private:
  intern_detail::Slots slots_{16};
  std::vector<uint32_t> rule_;  // by key number: the rule added under it
};

/// A context-free grammar over code points. `root` is the start rule.
struct Grammar {
  std::vector<Rule> rules;
  uint32_t root = 0;
  /// name → index of the rules added with add_rule (find_rule falls back to a scan).
  RuleNameIndex names;
  /// Added by validate() (parse_gbnf, GrammarAutomaton::compile): rules that can never finish.
  std::vector<GrammarWarning> warnings;
  /// Set by validate() and prune_unproductive() when they return: every reference is in
  /// range, the root derives a string, and the warnings about the rules it reaches are in
  /// `warnings`. add_rule() clears it; code that changes bodies in place must clear it too.
  /// GrammarAutomaton::compile validates only a grammar without it: each check walks every
  /// expression node, and a large schema's grammar holds hundreds of thousands.
  bool validated = false;
  /// Byte sets (each a string of its bytes) that a rule's FOLLOW set is widened to for
  /// token masks: the smallest of them that holds it, none when none does. A wider FOLLOW
  /// only makes more tokens uncertain (checked against the parse when the mask is used), so
  /// masks stay exact; the point is that rules whose FOLLOW differs from grammar to grammar
  /// (whitespace before a value: which values the schema has) share masks across grammars.
  /// JSON Schema grammars set JSON's punctuation (schemas/json_schema.h); empty elsewhere.
  std::vector<std::string> follow_classes;

  /// Index of the rule named `name`, or -1.
  int64_t find_rule(std::string_view name) const;
  /// Appends a rule and returns its index (names must be unique; throws GrammarError).
  uint32_t add_rule(std::string name, Expr body, SourceLocation where = {}, bool no_inline = false);

  /// GBNF text that parses back into an equivalent grammar (for debugging and `--print`).
  std::string to_gbnf() const;
};

/// Copies every rule of `from` into `into`, each renamed `prefix` + its name (references
/// follow), and returns the index of `from`'s root in `into`. Throws GrammarError when a
/// new name is already taken.
uint32_t append_grammar(Grammar& into, const Grammar& from, std::string_view prefix);

/// Checks whole-grammar properties every front end relies on and throws GrammarError
/// naming the offending rule: references to missing rules, and a root that derives no
/// finite string (e.g. `root ::= a`, `a ::= "x" a`: the error names `a`). A rule the root
/// reaches that derives no finite string while the root still does (`root ::= "a" | loop`)
/// is not an error: validate() adds a GrammarWarning naming it to `grammar.warnings` (once)
/// and the compiler drops the alternatives that need it. Linear in the grammar's size
/// (diagnostics.h).
void validate(Grammar& grammar);

/// Removes what can never match from a grammar built by a front end that may produce dead
/// branches (JSON Schema: an unsatisfiable oneOf branch): references to rules that derive no
/// string, and the sequences and choices that depend on them. Throws GrammarError when the
/// root itself derives no string.
void prune_unproductive(Grammar& grammar);

/// A generation default (docs/generation.md): every rule whose strings are all whitespace
/// (space, tab, line feed, carriage return) and of unbounded length — `ws ::= [ \t\n]*`,
/// `ws ::= ([ \t\n] ws)?` — is restricted to its strings of at most `max_run` characters
/// (or, if it has none that short, its shortest ones). It only removes strings, so every
/// output of the bounded grammar is a sentence of the original; rules with a bound of their
/// own (`[ \t]{0,20}`) are left as they are. Returns the names of the rules it restricted.
std::vector<std::string> bound_whitespace_rules(Grammar& grammar, uint32_t max_run);

/// Parses llama.cpp's GBNF dialect (grammars/README.md of llama.cpp): rules `name ::= ...`,
/// sequences, `|`, `( )`, `* + ? {m} {m,} {m,n}`, string literals, character classes with
/// ranges and `^`, `.`, escapes `\n \t \r \\ \" \[ \] \xHH \uHHHH \UHHHHHHHH`, `#` comments.
/// The start rule is `root` (or `root_rule` when given).
/// Throws GrammarError "line:column: expected ..." on malformed text, undefined rules,
/// duplicate definitions, and the whole-grammar errors of validate().
Grammar parse_gbnf(std::string_view text, std::string_view root_rule = "root");

struct RegexOptions {
  /// false: the whole output must match (`--regex`). true: JSON Schema `pattern` semantics,
  /// an unanchored search — the pattern may match anywhere unless `^` / `$` anchor it.
  bool search = false;
  /// ECMA-262 meanings (JSON Schema): `.` excludes every line terminator (\n \r U+2028
  /// U+2029) and `\s` is Unicode whitespace. Otherwise RE2's: `.` excludes \n, `\s` is
  /// [\t\n\f\r ].
  bool ecma = false;
};

/// Parses a regular expression in the syntax ECMA-262 and RE2 share: literals and escapes
/// (\n \t \r \f \v \0 \xHH \x{H…} \uHHHH \u{H…}, escaped metacharacters), `.`,
/// classes `[...]` `[^...]` with ranges and \d \w \s \D \W \S, POSIX `[:alpha:]`,
/// Unicode general categories \p{L} \p{Lu} \pN … and \P{…}, groups (capturing, `(?:…)`,
/// `(?<name>…)`, `(?P<name>…)`), alternation, quantifiers `* + ? {m} {m,} {m,n}` and their
/// lazy forms (same language), `^` `$` (\A \z) at the ends, flags `(?i)` `(?s)` and
/// `(?i:…)`. Regular languages only: lookaround, backreferences and word boundaries are
/// rejected. Code points become UTF-8 byte automata later, like GBNF classes.
/// Throws GrammarError naming the position (line:column of the pattern, byte offset).
Expr regex_to_expr(std::string_view pattern, const RegexOptions& options = {});

/// A grammar whose root rule is the regex.
Grammar parse_regex(std::string_view pattern, const RegexOptions& options = {});

}  // namespace lockstep
