// schemas/schema_compiler.h — the JSON Schema compiler's state (internal).
//
// keywords.cpp: the document index ($id, $anchor, $ref), and each keyword's meaning as a
// Norm. keyword_typos.cpp: warnings for keys that look like misspelled keywords.
// schema_grammar.cpp: Norms → grammar rules (strings and numbers as automata, arrays and
// objects as small state machines over items and members).
#pragma once

#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/intern_table.h"
#include "grammar/limits.h"

#include "schemas/json_schema.h"
#include "schemas/keyword_view.h"
#include "schemas/schema_model.h"

namespace lockstep::schema {

/// The base URI of the document root (and of nodes made up for const and enum members).
inline constexpr const char* kRootBase = "urn:lockstep:schema";

class SchemaCompiler {
 public:
  SchemaCompiler(const json& document, const JsonSchemaOptions& options);

  /// The grammar of the document's valid JSON texts; `depth` and `bare` as in
  /// GrammarBuilder::build (for embedding the value in a larger JSON text, e.g. a tool call).
  CompiledSchema run(uint32_t depth = 0, bool bare = false);

  /// The meaning of `t` for one value (memoized by term key). Throws SchemaError.
  const Norm& normalize(const TermPtr& t);

  /// "<pointer>: <message>" — an error, or in lenient mode an unenforced keyword.
  void unsupported(const std::string& pointer, const std::string& keyword, const std::string& why);
  void warn(const std::string& pointer, const std::string& message);
  /// A sub-schema that matches no value of some type (contradictory bounds, an empty enum):
  /// a warning, as the branch is only dropped; if the whole schema ends up matching nothing,
  /// the error repeats it.
  void never_matches(const std::string& pointer, const std::string& why);

  const JsonSchemaOptions& options() const { return opt_; }

 private:
  // ---- keywords.cpp
  struct Resource {
    const json* node;
    std::string pointer;
    int draft;
  };
  // A node's place in the document while index() walks it: its parent's place and its key
  // (or item number), made into a JSON pointer only where a resource needs one.
  struct Place {
    const Place* up = nullptr;
    const std::string* key = nullptr;  // null: item `item` of an array
    size_t item = 0;
    std::string pointer() const;
  };
  void index(const json& node, const Place& place, uint32_t parent_base, int draft);
  /// The base URI index() found for `node` (an object or array of the document it walked,
  /// outside data keywords), or null.
  const std::string* base_of(const json* node) const;
  int draft_of(const std::string& pointer) const;
  TermPtr resolve_ref(const std::string& ref, const std::string& base, const std::string& pointer);
  TermPtr child(const Term& parent, const json& node, const std::string& path);
  Norm normalize_schema(const Term& t);
  /// True when no value can satisfy both (a sound, incomplete test: false means "may").
  bool disjoint(const Norm& a, const Norm& b);
  Norm type_norm(const json& type, const std::string& pointer, int draft);
  Norm value_norm(const json& value, const std::string& pointer);  // value_keywords.cpp
  Norm enum_norm(const json& list, const std::string& pointer);    // value_keywords.cpp
  /// The automaton of these strings (value_keywords.cpp): one per distinct set within a
  /// compilation, so that an enum written at several places is one grammar rule.
  DfaPtr literal_set(std::vector<std::string> strings, const std::string& pointer);
  /// literal_set() after the lookup of large lists as given: sorts, then looks the set up by
  /// its words or makes it.
  DfaPtr sorted_literal_set(std::vector<std::string> strings, const std::string& pointer);
  Norm number_keywords(const KeywordView& s, const std::string& pointer, int draft);  // number_keywords.cpp
  Norm string_keywords(const KeywordView& s, const std::string& pointer);
  Norm array_keywords(const KeywordView& s, const Term& t, int draft);
  Norm object_keywords(const KeywordView& s, const Term& t, int draft);
  Norm dependency_norm(const KeywordView& s, const Term& t, const std::string& name, const json& dep,
                       const std::string& pointer);
  DfaPtr pattern_dfa(const json& pattern, const std::string& pointer);
  TermPtr const_term(const json& value, const std::string& pointer);

  // ---- keyword_typos.cpp
  /// Warns about keys of schema objects that look like misspelled keywords.
  void report_keyword_typos();

  // ---- schema_grammar.cpp
  friend class GrammarBuilder;

  const json& doc_;
  JsonSchemaOptions opt_;
  int root_draft_ = 2020;
  std::map<std::string, Resource> resources_;  // absolute URI (with #fragment for anchors)
  // Each indexed node's base URI, by node: a number in bases_ (a base is one string, shared
  // by the nodes under it; thousands of nodes cost no string of their own).
  std::vector<std::string> bases_;
  InternTable<uint64_t, Mixed64Hash> based_nodes_;
  std::vector<uint32_t> base_index_;  // per based_nodes_ number
  std::unordered_map<TermPtr, Norm, TermKeyHash, TermKeyEqual> norms_;
  std::unordered_set<TermPtr, TermKeyHash, TermKeyEqual> in_progress_;
  uint32_t normalize_depth_ = 0;  // kSchema terms being normalized, one inside the other
  CompileDeadline deadline_;      // EngineLimits::compile_ms, from construction
  std::deque<json> synthetic_;  // nodes made up for enum / const members
  std::unordered_map<uint64_t, std::vector<DfaPtr>> literal_sets_;  // hash of the words → sets
  // Lists of kListedWords strings or more as given (unsorted), by a hash of the list in its
  // order → their sets: the same large enum met again skips its sort (value_keywords.cpp).
  struct ListedSet {
    std::vector<std::string> list;
    DfaPtr set;
  };
  static constexpr size_t kListedWords = 1024;
  std::unordered_map<uint64_t, std::vector<ListedSet>> listed_sets_;
  std::vector<std::string> warnings_, unenforced_, never_;
};

std::string escape_pointer_token(const std::string& token);
/// The exact value of a JSON number of the schema (number_keywords.cpp).
Decimal decimal_of(const json& number);

}  // namespace lockstep::schema
