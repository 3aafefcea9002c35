// automata/direct_automaton.cpp — the byte DFA of a whole-rule code-point automaton, built
// directly (see rule_automaton.h).
#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "automata/json_escapes.h"
#include "automata/rule_automaton.h"
#include "automata/utf8_ranges.h"
#include "grammar/char_dfa.h"
#include "grammar/hash.h"
#include "grammar/intern_table.h"

namespace lockstep {

namespace {

// The byte DFA of a code-point DFA embedded as a whole rule (Expr::Kind::kAutomaton), built
// directly instead of through a Thompson NFA and subset construction: each code-point state
// keeps its identity, and the partial byte sequences between two code points (UTF-8
// continuation bytes, escapes, \uXXXX digits) are states shared by hash-consing, so equal
// ones exist once. States with the same shape (the same code-point ranges to the same
// pattern of targets: every position of a length counter) share one template of those
// partial states, instantiated with their own targets. Same language as
// Nfa::codepoint_edges. With `escapes`, a JSON string's \u spellings are read by escape
// rules (json_escapes.h): with escapes->bmp, the partial state after the backslash calls
// the escape rule of each target's code points, so a position's escapes cost it that one
// state; else those up to U+FFFF are spelled out, and the state after "\uD" (or "\ud")
// calls the rule of the surrogate pairs of each target's code points above U+FFFF. Without
// `escapes`, code points above U+FFFF are read as UTF-8 only.
//
// Templates depend only on the shape, on JSON or plain text and on whether escape rules are
// called, so they are kept process-wide (a call is recorded by its code points, resolved to
// the grammar's rule when instantiated): the "any character but the quote" shape of a string
// body is built once, not once per string rule of every grammar.
class DirectAutomatonDfa {
  struct Template;
  struct PrintableShape;

 public:
  // A shape's template and the grammar's escape rules it calls (found once per shape).
  struct Shape {
    std::shared_ptr<const Template> t;
    std::vector<uint32_t> escape_rules;  // per t->escapes
  };
  // Shapes by key (shape_of): one rule's, or a grammar's (DirectShapeMemo).
  using ShapeMap = std::unordered_map<std::string, Shape>;

  DirectAutomatonDfa(const CharDfa& d, bool json, const Rule& rule, uint32_t max_states, const EscapeRuleFn* escapes,
                     ShapeMap* memo = nullptr)
      : d_(d), json_(json), rule_(rule), max_states_(max_states), escapes_(json ? escapes : nullptr),
        bmp_calls_(escapes_ && escapes_->bmp), n_(static_cast<uint32_t>(d.size())), memo_(memo) {}

  RuleDfa build() {
    if (n_ > max_states_) too_big();
    // The code-point states' byte edges, one run per state (interior states come after
    // them in the numbering, so they are laid out once all are known).
    std::vector<Edge> char_edges;
    std::vector<uint32_t> char_begin(n_ + 1, 0);
    // The shapes met so far: each one's template and the grammar's escape rules it calls
    // (found once per shape, not per state; with a memo, once per grammar).
    ShapeMap own;
    ShapeMap& templates = memo_ ? *memo_ : own;
    std::vector<uint32_t> slots;
    std::string shape;
    for (uint32_t q = 0; q < n_; ++q) {
      if (!json_ && ascii_only(q)) {  // bytes are code points: the edges as they are
        append_ascii(q, char_edges);
        char_begin[q + 1] = static_cast<uint32_t>(char_edges.size());
        continue;
      }
      uint32_t tail = kEmpty;
      if (bmp_calls_ && escapes_->direct_ascii && (printable_ascii(q) || ascii_with_tail(q, tail))) {
        const bool by_shape = n_ >= kPrintableMemoStates && printable_lookups_ != UINT32_MAX;
        const size_t first = char_edges.size();
        if (!by_shape || !append_known_shape(q, tail, char_edges)) {
          append_printable(q, tail, char_edges);
          if (by_shape) keep_shape(first, tail, char_edges);
        }
        char_begin[q + 1] = static_cast<uint32_t>(char_edges.size());
        continue;
      }
      shape_of(q, slots, shape);
      auto [it, fresh] = templates.try_emplace(shape);
      if (fresh) {
        it->second.t = template_of(shape, q);
        for (const auto& ranges : it->second.t->escapes) it->second.escape_rules.push_back(escapes_->rule(ranges));
      }
      instantiate(*it->second.t, it->second.escape_rules, slots, char_edges);
      char_begin[q + 1] = static_cast<uint32_t>(char_edges.size());
    }
    const size_t states = n_ + interior_count();
    RuleDfa out = RuleDfa::with_capacity(states, char_edges.size() + interior_bytes_.size(), interior_calls_.size());
    for (uint32_t q = 0; q < states; ++q) {
      const bool is_char = q < n_;
      out.add_state(is_char && d_.states()[q].final);
      if (is_char) {
        out.bytes.insert(out.bytes.end(), char_edges.begin() + char_begin[q], char_edges.begin() + char_begin[q + 1]);
      } else {
        const uint32_t k = q - n_;
        out.bytes.insert(out.bytes.end(), interior_bytes_.begin() + byte_begin_[k],
                         interior_bytes_.begin() + byte_begin_[k + 1]);
        out.rules.insert(out.rules.end(), interior_calls_.begin() + call_begin_[k],
                         interior_calls_.begin() + call_begin_[k + 1]);
      }
      out.close_state();
    }
    return out;
  }

  /// Puts the template of each state in the process-wide cache, and the automata of the
  /// escape rules it calls in escape_tail's (prepare_key_templates).
  void prepare() {
    std::vector<uint32_t> slots;
    std::string shape;
    for (uint32_t q = 0; q < n_; ++q) {
      shape_of(q, slots, shape);
      for (const auto& ranges : template_of(shape, q)->escapes) escape_tail(ranges, !bmp_calls_);
    }
  }

 private:
  // Whether every code point state q reads is ASCII (then, outside JSON strings, a byte).
  bool ascii_only(uint32_t q) const {
    const auto& edges = d_.states()[q].edges;
    return edges.empty() || edges.back().hi < 0x80;  // sorted, disjoint
  }
  // State q's edges as byte edges, adjacent ranges to one target joined (as a template's).
  void append_ascii(uint32_t q, std::vector<GrammarAutomaton::ByteEdge>& out) const {
    const size_t first = out.size();
    for (const auto& e : d_.states()[q].edges) {
      if (out.size() > first && out.back().target == e.target && out.back().hi + 1u == e.lo) {
        out.back().hi = static_cast<uint8_t>(e.hi);
      } else {
        out.push_back({static_cast<uint8_t>(e.lo), static_cast<uint8_t>(e.hi), e.target});
      }
    }
  }

  // Whether every code point state q reads is printable ASCII (U+0020..U+007F).
  bool printable_ascii(uint32_t q) const {
    const auto& edges = d_.states()[q].edges;
    return !edges.empty() && edges.front().lo >= 0x20 && edges.back().hi <= 0x7F;  // sorted, disjoint
  }
  // Whether state q reads ASCII and every code point from U+0080 on, all of those into one
  // target (`tail`): a position in a key trie's complement (every key but the names that go
  // on with the letters read here) or after a printable prefix of any string.
  bool ascii_with_tail(uint32_t q, uint32_t& tail) const {
    const auto& edges = d_.states()[q].edges;  // sorted, disjoint: the others are below the last
    if (edges.empty() || edges.back().hi != kMaxCodepoint || edges.back().lo > 0x80) return false;
    tail = edges.back().target;
    return true;
  }
  // State q of a JSON string whose escapes are all read by escape rules (bmp_calls_), its
  // code points printable ASCII, or ASCII and every code point from U+0080 on into `tail`
  // (else kEmpty): the byte edges its template would give, without the template. Each
  // printable code point is its byte, but the quote and the backslash (read escaped only);
  // the backslash leads to one partial state, with the short escapes of those code points
  // (\", \/, \\, \b, \f, \n, \r, \t) and a call of each target's escape rule (its code
  // points' \u spellings); the code points from U+0080 on are their UTF-8 sequences into
  // `tail`, through the partial states of one template for them all (tail_edges). Edges to
  // one target over adjacent bytes are one edge, as a template's.
  void append_printable(uint32_t q, uint32_t tail, std::vector<GrammarAutomaton::ByteEdge>& out) {
    const auto& edges = d_.states()[q].edges;
    node_.bytes.clear();
    node_.calls.clear();
    escape_calls(edges, true, calls_);
    for (const EscapeCall& c : calls_) node_.calls.push_back({escape_rule_of(c.ranges), c.target});
    std::sort(node_.calls.begin(), node_.calls.end(),
              [](const auto& a, const auto& b) { return a.rule != b.rule ? a.rule < b.rule : a.target < b.target; });
    // The short escapes in the order of their letters' bytes.
    static constexpr std::pair<uint32_t, uint8_t> kShortByLetter[] = {{'"', '"'}, {'/', '/'}, {'\\', '\\'}, {8, 'b'},
                                                                      {12, 'f'},  {10, 'n'}, {13, 'r'},   {9, 't'}};
    for (const auto& [cp, letter] : kShortByLetter) {
      if (tail == kEmpty && letter > '\\') break;  // printable code points only: no control characters
      for (const auto& e : edges) {
        if (e.lo <= cp && cp <= e.hi) node_.bytes.push_back({letter, letter, e.target});
      }
    }
    const uint32_t after_backslash = intern(node_);
    const size_t first = out.size();
    auto add = [&](uint32_t lo, uint32_t hi, uint32_t target) {
      if (out.size() > first && out.back().target == target && out.back().hi + 1u == lo) {
        out.back().hi = static_cast<uint8_t>(hi);
      } else {
        out.push_back({static_cast<uint8_t>(lo), static_cast<uint8_t>(hi), target});
      }
    };
    bool escaped = false;  // the backslash's edge is in place
    auto emit = [&](uint32_t lo, uint32_t hi, uint32_t target) {  // in byte order, the backslash's edge among them
      if (!escaped && lo > '\\') {
        add('\\', '\\', after_backslash);
        escaped = true;
      }
      add(lo, hi, target);
    };
    for (const auto& e : edges) {
      if (e.hi < 0x20 || e.lo > 0x7F) continue;  // control characters: escaped only; past ASCII: the tail's
      uint32_t lo = std::max<uint32_t>(e.lo, 0x20);
      const uint32_t hi = std::min<uint32_t>(e.hi, 0x7F);
      for (const uint32_t cut : {uint32_t{'"'}, uint32_t{'\\'}}) {  // read escaped only
        if (cut < lo || cut > hi) continue;
        if (lo < cut) emit(lo, cut - 1, e.target);
        lo = cut + 1;
      }
      if (lo <= hi) emit(lo, hi, e.target);
    }
    if (!escaped) add('\\', '\\', after_backslash);
    if (tail != kEmpty) {
      const auto& lead = tail_edges(tail);
      out.insert(out.end(), lead.begin(), lead.end());  // lead bytes C2..F4: past every ASCII byte
    }
  }
  // Printable states through their shapes (printable_shapes_): whether state q's shape was
  // met before, and then its edges appended (append_printable_shape); else the shape is
  // numbered, and keep_shape records what append_printable gives for it.
  bool append_known_shape(uint32_t q, uint32_t tail, std::vector<GrammarAutomaton::ByteEdge>& out) {
    shape_words(q, shape_slots_, shape_key_);
    if (!printable_shapes_) printable_shapes_.emplace(kPrintableMemoStates);
    const auto [id, fresh] = printable_shapes_->intern(shape_key_);
    if (++printable_lookups_ == kPrintableMemoStates && 2 * printable_shapes_->size() > kPrintableMemoStates) {
      printable_lookups_ = UINT32_MAX;  // shapes rarely repeat here: no more lookups
    }
    if (fresh) return false;
    append_printable_shape(printable_[id], tail, out);
    return true;
  }
  // The edges append_printable gave from out[first] on and its backslash state, targets as
  // slots of the shape just numbered.
  void keep_shape(size_t first, uint32_t tail, const std::vector<GrammarAutomaton::ByteEdge>& out) {
    const size_t last = tail == kEmpty ? out.size() : out.size() - tail_edges(tail).size();  // the tail's are per target
    uint32_t after_backslash = kEmpty;
    for (size_t i = first; i < last; ++i) {
      if (out[i].lo == '\\') after_backslash = out[i].target;  // every printable state reads a backslash
    }
    auto slot_of = [&](uint32_t target) {
      return target == after_backslash
                 ? kBackslash
                 : static_cast<uint32_t>(std::find(shape_slots_.begin(), shape_slots_.end(), target) - shape_slots_.begin());
    };
    PrintableShape& p = printable_.emplace_back();
    p.edges_begin = static_cast<uint32_t>(printable_edges_.size());
    for (size_t i = first; i < last; ++i) printable_edges_.push_back({out[i].lo, out[i].hi, slot_of(out[i].target)});
    p.edges_end = p.bytes_begin = static_cast<uint32_t>(printable_edges_.size());
    // The backslash state as interned (node_ is instantiate's scratch too: tail_edges may
    // have used it since).
    const uint32_t k = after_backslash - n_;
    for (uint32_t i = byte_begin_[k]; i < byte_begin_[k + 1]; ++i) {
      const Edge& b = interior_bytes_[i];
      printable_edges_.push_back({b.lo, b.hi, slot_of(b.target)});
    }
    p.bytes_end = static_cast<uint32_t>(printable_edges_.size());
    p.calls_begin = static_cast<uint32_t>(printable_calls_.size());
    for (uint32_t i = call_begin_[k]; i < call_begin_[k + 1]; ++i) {
      printable_calls_.push_back({interior_calls_[i].rule, slot_of(interior_calls_[i].target)});
    }
    p.calls_end = static_cast<uint32_t>(printable_calls_.size());
  }
  // A printable state whose shape was met before: that shape's byte edges and backslash
  // state, with this state's targets (shape_slots_) in place of its slots. The calls' rules
  // are distinct (their code points are disjoint), so their order does not depend on the
  // targets; nor does that of the short escapes (by letter), nor which edges were joined.
  void append_printable_shape(const PrintableShape& p, uint32_t tail, std::vector<GrammarAutomaton::ByteEdge>& out) {
    node_.bytes.clear();
    node_.calls.clear();
    for (uint32_t i = p.bytes_begin; i < p.bytes_end; ++i) {
      const Edge& b = printable_edges_[i];
      node_.bytes.push_back({b.lo, b.hi, shape_slots_[b.target]});
    }
    for (uint32_t i = p.calls_begin; i < p.calls_end; ++i) {
      node_.calls.push_back({printable_calls_[i].rule, shape_slots_[printable_calls_[i].target]});
    }
    const uint32_t after_backslash = intern(node_);
    for (uint32_t i = p.edges_begin; i < p.edges_end; ++i) {
      const Edge& e = printable_edges_[i];
      out.push_back({e.lo, e.hi, e.target == kBackslash ? after_backslash : shape_slots_[e.target]});
    }
    if (tail != kEmpty) {
      const auto& lead = tail_edges(tail);
      out.insert(out.end(), lead.begin(), lead.end());
    }
  }
  // The lead-byte edges of the UTF-8 sequences of U+0080..U+10FFFF (surrogates excluded) into
  // `tail`, their partial states interned: one template for every such state (tail_template),
  // instantiated once per target.
  const std::vector<GrammarAutomaton::ByteEdge>& tail_edges(uint32_t tail) {
    if (tail_of_.empty()) tail_of_.assign(n_, kEmpty);  // targets are code-point states
    uint32_t& at = tail_of_[tail];
    if (at == kEmpty) {
      static const std::shared_ptr<const Template> kTail = std::make_shared<const Template>(tail_template());
      at = static_cast<uint32_t>(tails_.size());
      instantiate(*kTail, {}, std::vector<uint32_t>{tail}, tails_.emplace_back());
    }
    return tails_[at];
  }
  // The template of a state reading U+0080..U+10FFFF into one target, outside JSON (no
  // escapes: the UTF-8 sequences alone, as a JSON string's template has them).
  static Template tail_template() {
    std::vector<CharDfa::State> states(1);
    states[0].edges.push_back({0x80, kMaxCodepoint, 0});
    const CharDfa d = CharDfa::from_states(std::move(states));
    const Rule rule{"utf8-tail", Expr::empty(), {}, false};
    return DirectAutomatonDfa(d, false, rule, UINT32_MAX, nullptr).make_template(0);
  }
  // The grammar's escape rule of `ranges`: one code point's, below U+0080, asked once.
  uint32_t escape_rule_of(const std::vector<CodepointRange>& ranges) {
    if (ranges.size() != 1 || ranges[0].lo != ranges[0].hi || ranges[0].lo >= ascii_rules_.size()) {
      return escapes_->rule(ranges);
    }
    uint32_t& r = ascii_rules_[ranges[0].lo];
    if (r == kEmpty) r = escapes_->rule(ranges);
    return r;
  }

  // A state's shape: the flags, then its ranges with targets numbered by first appearance
  // (`slots` lists the targets in that order).
  void shape_of(uint32_t q, std::vector<uint32_t>& slots, std::string& shape) {
    shape_words(q, slots, shape_key_);
    shape.assign(1, static_cast<char>((json_ ? 1 : 0) | (escapes_ ? 2 : 0) | (bmp_calls_ ? 4 : 0)));
    shape.append(reinterpret_cast<const char*>(shape_key_.data()), shape_key_.size() * sizeof(uint32_t));
  }
  // State q's ranges as (lo, hi, slot) words, each target numbered by first appearance
  // (`slots` lists the targets in that order): its shape without the flags.
  void shape_words(uint32_t q, std::vector<uint32_t>& slots, std::vector<uint32_t>& words) const {
    slots.clear();
    words.clear();
    for (const auto& e : d_.states()[q].edges) {
      const auto at = std::find(slots.begin(), slots.end(), e.target);
      words.insert(words.end(), {e.lo, e.hi, static_cast<uint32_t>(at - slots.begin())});
      if (at == slots.end()) slots.push_back(e.target);
    }
  }

  using Edge = GrammarAutomaton::ByteEdge;
  using Call = GrammarAutomaton::RuleEdge;
  // The bytes allowed at one position, sorted, disjoint: one range for UTF-8 and escape
  // letters, up to three for a hex digit ('0'-'9', 'A'-'F', 'a'-'f'). Fixed-size, so items
  // are flat values and a template costs no allocation per position.
  struct Elem {
    std::array<ByteRange, 3> r{};
    uint8_t n = 0;
  };
  static Elem one(char c) { return Elem{{ByteRange{static_cast<uint8_t>(c), static_cast<uint8_t>(c)}}, 1}; }
  static Elem elem_of(const std::vector<ByteRange>& ranges) {
    Elem e;
    for (const ByteRange& br : ranges) e.r[e.n++] = br;
    return e;
  }
  static constexpr uint32_t kNoCall = UINT32_MAX;
  struct Item {
    std::array<Elem, 6> seq{};  // "\uXXXX" is the longest sequence
    uint8_t len = 0;
    uint32_t slot = 0;  // which target (by first appearance in the state's edges) it reaches
    uint32_t call = kNoCall;  // else: `seq` then this rule reach the target
    void push(const Elem& e) { seq[len++] = e; }
  };
  static constexpr uint32_t kLeaf = 0x80000000u;  // template edge target: kLeaf | slot, or a node
  // A partial state: its byte edges and its calls (sorted by rule; targets always leaves).
  struct Node {
    std::vector<Edge> bytes;
    std::vector<Call> calls;
  };
  // Calls in a template name an index of `escapes` (the code points of an escape rule).
  struct Template {
    std::vector<Node> nodes;  // children before parents
    std::vector<Edge> root;
    std::vector<std::vector<CodepointRange>> escapes;
  };

  // Process-wide templates by shape (the flags byte, then ranges and target slots).
  // Bounded: past kMaxTemplateNodes nodes it starts over.
  class TemplateCache {
   public:
    static TemplateCache& instance() {
      static TemplateCache* cache = new TemplateCache;  // never destroyed: no exit-order issue
      return *cache;
    }
    std::shared_ptr<const Template> find(const std::string& shape) {
      std::lock_guard<std::mutex> lock(mutex_);
      const auto it = map_.find(shape);
      return it == map_.end() ? nullptr : it->second;
    }
    void insert(const std::string& shape, std::shared_ptr<const Template> t) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (nodes_ + t->nodes.size() > kMaxTemplateNodes) {
        map_.clear();
        nodes_ = 0;
      }
      nodes_ += t->nodes.size() + 1;
      map_.emplace(shape, std::move(t));
    }

   private:
    static constexpr size_t kMaxTemplateNodes = size_t{1} << 18;  // about 25 MB at most
    std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<const Template>> map_;
    size_t nodes_ = 0;
  };

  std::shared_ptr<const Template> template_of(const std::string& shape, uint32_t q) const {
    TemplateCache& cache = TemplateCache::instance();
    if (auto t = cache.find(shape)) return t;
    auto t = std::make_shared<const Template>(make_template(q));
    cache.insert(shape, t);
    return t;
  }

  static uint64_t hash_of(const Node& node) {
    uint64_t h = fnv1a_step(kFnvOffsetBasis, node.calls.size());
    for (const auto& c : node.calls) h = fnv1a_step(fnv1a_step(h, c.rule), c.target);
    for (const auto& e : node.bytes) h = fnv1a_step(h, (uint64_t{e.target} << 16) | (uint64_t{e.hi} << 8) | e.lo);
    return h;  // FNV-1a: its high bits depend on every input (tables index by those)
  }
  // Whether a node with these bytes and calls is `b`.
  static bool same(std::span<const Edge> bytes, std::span<const Call> calls, const Node& b) {
    return std::ranges::equal(bytes, b.bytes,
                              [](const Edge& x, const Edge& y) { return x.lo == y.lo && x.hi == y.hi && x.target == y.target; }) &&
           std::ranges::equal(calls, b.calls, [](const Call& x, const Call& y) { return x.rule == y.rule && x.target == y.target; });
  }
  static bool same(const Node& a, const Node& b) { return same(a.bytes, a.calls, b); }
  // Whether interior node k is `node`.
  bool same_interior(uint32_t k, const Node& node) const {
    return same({interior_bytes_.data() + byte_begin_[k], interior_bytes_.data() + byte_begin_[k + 1]},
                {interior_calls_.data() + call_begin_[k], interior_calls_.data() + call_begin_[k + 1]}, node);
  }
  uint32_t interior_count() const { return static_cast<uint32_t>(interior_hash_.size()); }
  // The state of `node`: an equal interior node's, or a new one (hash-consing). Interior
  // nodes are kept end to end in flat arrays: a length-counted string automaton has one
  // per position, and a node with two vectors of its own cost two allocations and a move
  // each time the list grew.
  uint32_t intern(const Node& node) {
    const uint64_t h = hash_of(node);
    if (slots_.empty()) {
      slot_bits_ = 6;
      slots_.assign(size_t{1} << slot_bits_, kEmpty);
      // Room for the first nodes at once: most automata here are short strings (property
      // names) with a few interior nodes, whose five arrays otherwise grew from nothing.
      constexpr size_t kFirstNodes = 16;
      byte_begin_.reserve(kFirstNodes + 1);
      call_begin_.reserve(kFirstNodes + 1);
      interior_hash_.reserve(kFirstNodes);
      interior_bytes_.reserve(8 * kFirstNodes);
      interior_calls_.reserve(2 * kFirstNodes);
    }
    size_t mask = slots_.size() - 1;
    for (size_t i = slot_of(h); ; i = (i + 1) & mask) {
      const uint32_t at = slots_[i];
      if (at == kEmpty) break;
      if (interior_hash_[at] == h && same_interior(at, node)) return n_ + at;
    }
    if (n_ + interior_count() >= max_states_) too_big();
    const uint32_t at = interior_count();
    interior_bytes_.insert(interior_bytes_.end(), node.bytes.begin(), node.bytes.end());
    interior_calls_.insert(interior_calls_.end(), node.calls.begin(), node.calls.end());
    byte_begin_.push_back(static_cast<uint32_t>(interior_bytes_.size()));
    call_begin_.push_back(static_cast<uint32_t>(interior_calls_.size()));
    interior_hash_.push_back(h);
    if (2 * interior_count() > slots_.size()) {  // keep the load under one half
      ++slot_bits_;
      slots_.assign(size_t{1} << slot_bits_, kEmpty);
      mask = slots_.size() - 1;
      for (uint32_t k = 0; k < interior_count(); ++k) {
        size_t i = slot_of(interior_hash_[k]);
        while (slots_[i] != kEmpty) i = (i + 1) & mask;
        slots_[i] = k;
      }
    } else {
      size_t i = slot_of(h);
      while (slots_[i] != kEmpty) i = (i + 1) & mask;
      slots_[i] = at;
    }
    return n_ + at;
  }
  // Fibonacci hashing: the high bits of the product.
  size_t slot_of(uint64_t h) const { return static_cast<size_t>(mix64(h) >> (64 - slot_bits_)); }

  [[noreturn]] void too_big() const {
    throw LimitError(ErrorLocation::at(rule_.where), "rule_automaton_states", max_states_,
                     fmt::format("the automaton of rule '{}' (reduce its repetition bounds)", rule_.name));
  }

  Template make_template(uint32_t q) const {
    std::vector<Item> items;
    items.reserve(64);
    std::vector<uint32_t> slots;
    std::vector<std::vector<CodepointRange>> escape_ranges;
    for (const auto& e : d_.states()[q].edges) {
      const auto at = std::find(slots.begin(), slots.end(), e.target);
      const auto slot = static_cast<uint32_t>(at - slots.begin());
      if (at == slots.end()) slots.push_back(e.target);
      add_items(items, e.lo, e.hi, slot);
    }
    if (escapes_) {
      // The backslash (with the escapes up to U+FFFF spelled out: "\u" and the high
      // surrogate's first digit, D or d), then the escape rule of the target's code points.
      std::vector<EscapeCall> calls;
      escape_calls(d_.states()[q].edges, bmp_calls_, calls);
      for (const EscapeCall& c : calls) {
        const auto slot = static_cast<uint32_t>(std::find(slots.begin(), slots.end(), c.target) - slots.begin());
        Item it;
        it.push(one('\\'));
        if (!bmp_calls_) {
          it.push(one('u'));
          it.push(Elem{{ByteRange{'D', 'D'}, ByteRange{'d', 'd'}}, 2});
        }
        it.slot = slot;
        it.call = static_cast<uint32_t>(escape_ranges.size());
        items.push_back(it);
        escape_ranges.push_back(c.ranges);
      }
    }
    Template t;
    t.nodes.reserve(32);
    t.escapes = std::move(escape_ranges);
    Scratch scratch;
    std::vector<const Item*> all;
    for (const auto& it : items) all.push_back(&it);
    t.root = transitions(all, 0, t, scratch).bytes;
    return t;
  }

  // The template's partial states for a state whose slots lead to `targets` (interned), and
  // its own byte edges appended to `root`; `escape_rule` names the grammar's rule of each of
  // the template's escapes. The node being built is scratch storage: only a node not seen
  // before is kept (most are shared).
  void instantiate(const Template& t, const std::vector<uint32_t>& escape_rule, const std::vector<uint32_t>& targets,
                   std::vector<Edge>& root) {
    ids_.resize(t.nodes.size());
    auto map_edges = [&](const std::vector<Edge>& edges, std::vector<Edge>& out) {
      for (const Edge& e : edges) {
        out.push_back({e.lo, e.hi, e.target & kLeaf ? targets[e.target & ~kLeaf] : ids_[e.target]});
      }
    };
    for (size_t i = 0; i < t.nodes.size(); ++i) {
      node_.bytes.clear();
      node_.calls.clear();
      map_edges(t.nodes[i].bytes, node_.bytes);
      for (const Call& c : t.nodes[i].calls) node_.calls.push_back({escape_rule[c.rule], targets[c.target & ~kLeaf]});
      std::sort(node_.calls.begin(), node_.calls.end(),
                [](const Call& a, const Call& b) { return a.rule != b.rule ? a.rule < b.rule : a.target < b.target; });
      ids_[i] = intern(node_);
    }
    map_edges(t.root, root);
  }

  // The items of code points lo..hi to `slot`: made once per range, flags and thread (the
  // ranges around a key trie's letters recur in every template of a schema).
  void add_items(std::vector<Item>& items, uint32_t lo, uint32_t hi, uint32_t slot) const {
    thread_local std::unordered_map<uint64_t, std::vector<Item>> memo;
    if (memo.size() > kMaxMemoRanges) memo.clear();
    const uint64_t key = (uint64_t{lo} << 32) | (uint64_t{hi} << 3) | (json_ ? 1 : 0) | (bmp_calls_ ? 2 : 0);
    auto [it, fresh] = memo.try_emplace(key);
    if (fresh) make_items(it->second, lo, hi);
    for (Item item : it->second) {
      item.slot = slot;
      items.push_back(item);
    }
  }
  static constexpr size_t kMaxMemoRanges = 4096;

  void make_items(std::vector<Item>& items, uint32_t lo, uint32_t hi) const {
    constexpr uint32_t slot = 0;
    // JSON: raw code points but the quote, the backslash and control characters.
    static const std::vector<CodepointRange> kJsonRaw = Expr::char_class({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}, true).ranges;
    const std::vector<CodepointRange> plain{{lo, hi}};
    for (const auto& r : json_ ? kJsonRaw : Expr::char_class(plain).ranges) {
      const uint32_t a = std::max(r.lo, lo), b = std::min(r.hi, hi);
      if (a > b) continue;
      for (const auto& seq : utf8_sequences(Expr::char_class({{a, b}}).ranges)) {
        Item it;
        it.slot = slot;
        for (const auto& br : seq) it.push(Elem{{br}, 1});
        items.push_back(it);
      }
    }
    if (!json_) return;
    static constexpr std::pair<uint32_t, char> kShort[] = {{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {8, 'b'},
                                                           {12, 'f'}, {10, 'n'}, {13, 'r'}, {9, 't'}};
    for (const auto& [cp, letter] : kShort) {
      if (cp >= lo && cp <= hi) {
        Item it;
        it.slot = slot;
        it.push(one('\\'));
        it.push(one(letter));
        items.push_back(it);
      }
    }
    if (bmp_calls_) return;  // \u spellings: the escape rules (make_template)
    for (const auto& r : Expr::char_class({{lo, std::min<uint32_t>(hi, 0xFFFF)}}).ranges) {
      if (r.lo > r.hi || r.lo > 0xFFFF) continue;
      for (const auto& digits : hex_sequences(r.lo, r.hi)) {
        Item it;
        it.slot = slot;
        it.push(one('\\'));
        it.push(one('u'));
        for (const auto& [d0, d1] : digits) it.push(elem_of(hex_digit_bytes(d0, d1)));
        items.push_back(it);
      }
    }
  }

  // The template node after `pos` bytes of each item's sequence (the items share the path
  // to this point): the calls of the items that end here, the byte edges of the others.
  // Buffers of one template's construction: per depth (a call at depth `pos` keeps its own
  // while deeper ones run), and the hashes of the template's nodes for hash-consing them.
  struct Range {
    uint16_t lo, hi;
    const Item* item;
  };
  struct Scratch {
    std::array<std::vector<uint16_t>, 7> points;
    std::array<std::vector<Range>, 7> ranges, active;
    std::array<std::vector<const Item*>, 7> sub;
    std::vector<uint64_t> hashes;
  };

  static Node transitions(const std::vector<const Item*>& items, size_t pos, Template& t, Scratch& scratch) {
    Node out;
    std::vector<uint16_t>& points = scratch.points[pos];
    std::vector<Range>& ranges = scratch.ranges[pos];
    points.clear();
    ranges.clear();
    for (const Item* it : items) {
      if (it->len == pos) {
        out.calls.push_back({it->call, kLeaf | it->slot});
        continue;
      }
      const Elem& e = it->seq[pos];
      for (uint8_t i = 0; i < e.n; ++i) {
        points.push_back(e.r[i].lo);
        points.push_back(static_cast<uint16_t>(e.r[i].hi + 1));
        ranges.push_back({e.r[i].lo, e.r[i].hi, it});
      }
    }
    std::sort(out.calls.begin(), out.calls.end(), [](const Call& a, const Call& b) { return a.rule < b.rule; });
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    out.bytes.reserve(points.size());
    // A sweep over the intervals between points: every range starts and ends at points, so
    // the ranges that have started and not ended cover the whole interval (an item's ranges
    // are disjoint: it is there once). The result does not depend on the items' order.
    std::sort(ranges.begin(), ranges.end(), [](const Range& x, const Range& y) { return x.lo < y.lo; });
    std::vector<Range>& active = scratch.active[pos];
    active.clear();
    size_t started = 0;
    std::vector<const Item*>& sub = scratch.sub[pos];
    for (size_t i = 0; i + 1 < points.size(); ++i) {
      const uint16_t a = points[i], b = static_cast<uint16_t>(points[i + 1] - 1);
      std::erase_if(active, [&](const Range& r) { return r.hi < a; });
      for (; started < ranges.size() && ranges[started].lo <= a; ++started) active.push_back(ranges[started]);
      sub.clear();
      uint32_t target = UINT32_MAX;
      for (const Range& r : active) {
        const Item* it = r.item;
        if (it->len == pos + 1 && it->call == kNoCall) {
          target = kLeaf | it->slot;  // a DFA: every sequence ending here reads the same code point
        } else {
          sub.push_back(it);
        }
      }
      if (target == UINT32_MAX) {
        if (sub.empty()) continue;
        Node node = transitions(sub, pos + 1, t, scratch);
        const uint64_t h = hash_of(node);
        target = static_cast<uint32_t>(t.nodes.size());
        for (uint32_t k = 0; k < t.nodes.size(); ++k) {
          if (scratch.hashes[k] == h && same(t.nodes[k], node)) {
            target = k;
            break;
          }
        }
        if (target == t.nodes.size()) {
          t.nodes.push_back(std::move(node));
          scratch.hashes.push_back(h);
        }
      }
      if (!out.bytes.empty() && out.bytes.back().target == target && out.bytes.back().hi + 1 == a) {
        out.bytes.back().hi = static_cast<uint8_t>(b);
      } else {
        out.bytes.push_back({static_cast<uint8_t>(a), static_cast<uint8_t>(b), target});
      }
    }
    return out;
  }

  const CharDfa& d_;
  const bool json_;
  const Rule& rule_;
  const uint32_t max_states_;
  const EscapeRuleFn* const escapes_;
  const bool bmp_calls_;  // escape rules read the \u spellings up to U+FFFF too
  const uint32_t n_;
  ShapeMap* const memo_;
  std::vector<Edge> interior_bytes_;     // interior node k's: [byte_begin_[k], byte_begin_[k + 1])
  std::vector<Call> interior_calls_;     // interior node k's: [call_begin_[k], call_begin_[k + 1])
  std::vector<uint32_t> byte_begin_{0}, call_begin_{0};
  std::vector<uint64_t> interior_hash_;  // per interior node
  std::vector<uint32_t> slots_;          // open addressing: interior index, or kEmpty
  unsigned slot_bits_ = 0;               // slots_.size() == 2^slot_bits_
  Node node_;                            // instantiate's and append_printable's scratch
  std::vector<EscapeCall> calls_;        // append_printable's scratch
  // Printable states by shape, in an automaton of kPrintableMemoStates states or more: a
  // length-counted string repeats each shape at every position (an e-mail address under
  // maxLength 255: 28,149 states). The first kPrintableMemoStates lookups decide: if most
  // found a new shape, no more are made.
  static constexpr uint32_t kPrintableMemoStates = 1024;
  static constexpr uint32_t kBackslash = UINT32_MAX - 1;  // a slot standing for the backslash state
  struct PrintableShape {
    uint32_t edges_begin, edges_end, bytes_begin, bytes_end;  // in printable_edges_
    uint32_t calls_begin, calls_end;                          // in printable_calls_
  };
  std::optional<SeqInternTable<>> printable_shapes_;  // made on first use (a rule automaton is built per rule)
  std::vector<PrintableShape> printable_;
  std::vector<Edge> printable_edges_;
  std::vector<Call> printable_calls_;
  uint32_t printable_lookups_ = 0;
  std::vector<uint32_t> shape_slots_, shape_key_;  // shape_words scratch
  std::array<uint32_t, 0x80> ascii_rules_ = filled_rules();  // escape rule per code point, or kEmpty
  std::vector<uint32_t> ids_;
  std::vector<std::vector<Edge>> tails_;  // tail_edges' lead bytes, per target met
  std::vector<uint32_t> tail_of_;          // per code-point state: its index in tails_, or kEmpty
  static constexpr uint32_t kEmpty = UINT32_MAX;
  static std::array<uint32_t, 0x80> filled_rules() {
    std::array<uint32_t, 0x80> a;
    a.fill(kEmpty);
    return a;
  }
};

}  // namespace

struct DirectShapeMemo {
  DirectAutomatonDfa::ShapeMap shapes;
};

std::shared_ptr<DirectShapeMemo> make_direct_shape_memo() { return std::make_shared<DirectShapeMemo>(); }

RuleDfa direct_automaton_dfa(const CharDfa& automaton, bool json_string, const Rule& rule, uint32_t max_states,
                             const EscapeRuleFn* escapes) {
  DirectAutomatonDfa::ShapeMap* memo = escapes && escapes->shapes ? &escapes->shapes->shapes : nullptr;
  return DirectAutomatonDfa(automaton, json_string, rule, max_states, escapes, memo).build();
}

void prepare_key_templates() {
  // Per printable ASCII code point c but the quote and the backslash, the two states of an
  // object's name trie and of its complement (the keys no name claims): c alone to one
  // target, and c to one target with every other code point to another.
  // States 0 and 1 are the two targets: templates depend on the slots, not the states.
  std::vector<CharDfa::State> states(2);
  for (uint32_t c = 0x20; c < 0x7F; ++c) {
    if (c == '"' || c == '\\') continue;
    CharDfa::State single, complement;
    single.edges.push_back({c, c, 0});
    complement.edges.push_back({0, c - 1, 0});
    complement.edges.push_back({c, c, 1});
    complement.edges.push_back({c + 1, 0x10FFFF, 0});
    states.push_back(std::move(single));
    states.push_back(std::move(complement));
  }
  const CharDfa d = CharDfa::from_states(std::move(states));
  const Rule rule{"key-templates", Expr::empty(), {}, false};
  // Both ways of reading \u spellings (escapes_by_rule): escape rules for those above
  // U+FFFF only (the others spelled out), or for every one.
  for (const bool bmp : {false, true}) {
    EscapeRuleFn escapes;
    escapes.bmp = bmp;
    DirectAutomatonDfa(d, true, rule, UINT32_MAX, &escapes).prepare();
  }
}

}  // namespace lockstep
