// schemas/keyword_typos.cpp — likely misspellings of keywords in a schema document: the
// distance, the known keywords, and the walk over every schema position the root reaches.
#include "schemas/keyword_typos.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <deque>
#include <iterator>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "grammar/intern_table.h"
#include "schemas/schema_compiler.h"

namespace lockstep::schema {

namespace {

// The JSON types a keyword's value may have (any draft's), as bits.
enum : uint8_t { kNull = 1, kBool = 2, kNumber = 4, kString = 8, kArray = 16, kObject = 32, kAny = 63 };
constexpr uint8_t kSchema = kBool | kObject;

struct Keyword {
  std::string name;
  uint8_t values;
};

// Every keyword and annotation of drafts 4, 6, 7, 2019-09 and 2020-12 (core, applicator,
// validation, unevaluated, format, content and meta-data vocabularies), draft 3's renamed
// ones, and the schema-object keywords of OpenAPI 3.0 that real schemas carry. A key
// listed here is never reported.
const std::vector<Keyword>& known_keywords() {
  static const std::vector<Keyword> k = {
      // core
      {"$schema", kString}, {"$id", kString}, {"id", kString}, {"$ref", kString}, {"$anchor", kString},
      {"$dynamicRef", kString}, {"$dynamicAnchor", kString}, {"$recursiveRef", kString},
      {"$recursiveAnchor", kBool}, {"$vocabulary", kObject}, {"$comment", kString}, {"$defs", kObject},
      {"definitions", kObject},
      // applicators
      {"allOf", kArray}, {"anyOf", kArray}, {"oneOf", kArray}, {"not", kSchema}, {"if", kSchema},
      {"then", kSchema}, {"else", kSchema}, {"dependentSchemas", kObject}, {"dependencies", kObject},
      {"prefixItems", kArray}, {"items", kSchema | kArray}, {"additionalItems", kSchema}, {"contains", kSchema},
      {"properties", kObject}, {"patternProperties", kObject}, {"additionalProperties", kSchema},
      {"propertyNames", kSchema}, {"unevaluatedItems", kSchema}, {"unevaluatedProperties", kSchema},
      // validation
      {"type", kString | kArray}, {"enum", kArray}, {"const", kAny}, {"multipleOf", kNumber},
      {"maximum", kNumber}, {"exclusiveMaximum", kNumber | kBool}, {"minimum", kNumber},
      {"exclusiveMinimum", kNumber | kBool}, {"maxLength", kNumber}, {"minLength", kNumber},
      {"pattern", kString}, {"maxItems", kNumber}, {"minItems", kNumber}, {"uniqueItems", kBool},
      {"maxContains", kNumber}, {"minContains", kNumber}, {"maxProperties", kNumber},
      {"minProperties", kNumber}, {"required", kArray | kBool}, {"dependentRequired", kObject},
      // format, content, meta-data
      {"format", kString}, {"contentEncoding", kString}, {"contentMediaType", kString},
      {"contentSchema", kSchema}, {"title", kString}, {"description", kString}, {"default", kAny},
      {"deprecated", kBool}, {"readOnly", kBool}, {"writeOnly", kBool}, {"examples", kArray},
      // draft 3
      {"extends", kSchema | kArray}, {"disallow", kString | kArray}, {"divisibleBy", kNumber},
      // OpenAPI 3.0 schema objects
      {"nullable", kBool}, {"discriminator", kObject}, {"example", kAny}, {"externalDocs", kObject},
      {"xml", kObject},
      // JSON Editor's spelling of readOnly, common in real schemas (135 of JSONSchemaBench's)
      {"readonly", kBool},
  };
  return k;
}

uint8_t type_bit(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return kNull;
    case json::value_t::boolean: return kBool;
    case json::value_t::string: return kString;
    case json::value_t::array: return kArray;
    case json::value_t::object: return kObject;
    default: return kNumber;
  }
}

// Keys that are not keywords, whose nearest keyword means something else.
std::string_view misconception(std::string_view key) {
  if (key == "inclusiveMinimum") return "minimum";
  if (key == "inclusiveMaximum") return "maximum";
  return "";
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

size_t common_prefix(std::string_view a, std::string_view b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

size_t keyword_distance(std::string_view a, std::string_view b) {
  if (a == b) return 0;
  if (equal_ignoring_case(a, b)) return 1;
  const size_t n = a.size(), m = b.size();
  // d[i][j]: distance between a[0, i) and b[0, j), rows kept three at a time.
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::string likely_keyword(std::string_view key, const json& value) {
  static const std::set<std::string, std::less<>> known = [] {
    std::set<std::string, std::less<>> names;
    for (const Keyword& k : known_keywords()) names.insert(k.name);
    return names;
  }();
  if (key.size() < 4 || known.count(key)) return "";
  // Extensions, and keys switched off or namespaced on purpose ("_format", "@type").
  if (key.rfind("x-", 0) == 0 || key[0] == '_' || key[0] == '@') return "";
  if (!misconception(key).empty()) return std::string(misconception(key));
  const bool dollar = key[0] == '$';
  std::string best;
  size_t best_distance = 3;
  for (const auto& [k, values] : known_keywords()) {
    // "$" keys are compared with "$" keywords only, and the others with the others ("comment"
    // is a common annotation of its own, not a misspelled "$comment"). A value the keyword
    // cannot have says the key is something else ("definition": "a text").
    if (dollar != (k[0] == '$') || k.size() < 4 || !(values & type_bit(value))) continue;
    // Two edits only between words longer than 5 characters ("form" is no "format").
    const size_t limit = std::min(k.size(), key.size()) <= 5 ? 1 : 2;
    const size_t gap = k.size() > key.size() ? k.size() - key.size() : key.size() - k.size();
    if (gap > limit) continue;
    const size_t d = keyword_distance(key, k);
    if (d > limit) continue;
    // Of equally near keywords, the one sharing the longer prefix (typos come late more often).
    if (d < best_distance || (d == best_distance && common_prefix(key, k) > common_prefix(key, best))) {
      best = k, best_distance = d;
    }
  }
  return best;
}

void SchemaCompiler::report_keyword_typos() {
  // Schema positions from the root through applicators and in-document $refs, each once (by
  // node). A position's JSON pointer is made only for a warning: an entry names the entry it
  // was reached from and the keyword (and name or item) between, or holds the pointer of a
  // $ref's target. The same $ref (by base) is resolved once: every property of a Kubernetes
  // schema refers to one of a few definitions.
  struct Entry {
    const json* node;
    uint32_t up;              // the entry it was reached from (kNone: the root, or a $ref's target)
    const char* keyword;      // between them
    const std::string* name;  // and the member's name (maps), or
    int64_t item;             // its number (arrays; -1: neither)
    uint32_t ref_pointer;     // a $ref's target: its pointer in ref_pointers
  };
  static constexpr uint32_t kNone = UINT32_MAX;
  std::vector<Entry> entries{{&doc_, kNone, nullptr, nullptr, -1, kNone}};
  std::deque<std::string> ref_pointers;
  auto pointer_of = [&](uint32_t e) {
    std::vector<uint32_t> chain;
    for (; e != kNone && entries[e].ref_pointer == kNone && entries[e].up != kNone; e = entries[e].up) chain.push_back(e);
    std::string out = e != kNone && entries[e].ref_pointer != kNone ? ref_pointers[entries[e].ref_pointer] : "";
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Entry& x = entries[*it];
      out += '/';
      out += x.keyword;
      if (x.name) out += "/" + escape_pointer_token(*x.name);
      if (x.item >= 0) out += "/" + std::to_string(x.item);
    }
    return out;
  };
  InternTable<uint64_t, Mixed64Hash> seen;
  std::unordered_map<std::string, uint32_t> refs;  // base, '\n', $ref → the target's entry (kNone: none)
  std::vector<uint32_t> todo{0}, children;
  auto push = [&](const json& node, uint32_t up, const char* keyword, const std::string* name, int64_t item) {
    if (!node.is_object()) return;
    entries.push_back({&node, up, keyword, name, item, kNone});
    children.push_back(static_cast<uint32_t>(entries.size() - 1));
  };
  static const char* const kSchema[] = {"additionalItems", "additionalProperties", "contains", "contentSchema",
                                        "else", "if", "items", "not", "propertyNames", "then",
                                        "unevaluatedItems", "unevaluatedProperties"};
  static const char* const kSchemaArrays[] = {"allOf", "anyOf", "oneOf", "prefixItems", "items"};
  static const char* const kSchemaMaps[] = {"properties", "patternProperties", "$defs", "definitions",
                                            "dependentSchemas", "dependencies"};
  // The applicator keywords above and "$ref", by index: where each is among a node's members.
  constexpr size_t kNumSchema = std::size(kSchema), kNumArrays = std::size(kSchemaArrays);
  constexpr size_t kNumMaps = std::size(kSchemaMaps), kRef = kNumSchema + kNumArrays + kNumMaps;
  static const std::unordered_map<std::string_view, std::vector<size_t>> kIndex = [] {
    std::unordered_map<std::string_view, std::vector<size_t>> index;
    size_t i = 0;
    for (const char* k : kSchema) index[k].push_back(i++);
    for (const char* k : kSchemaArrays) index[k].push_back(i++);
    for (const char* k : kSchemaMaps) index[k].push_back(i++);
    index["$ref"].push_back(i);
    return index;
  }();
  std::array<const json*, kRef + 1> member{};
  while (!todo.empty()) {
    const uint32_t at = todo.back();
    todo.pop_back();
    const json* node = entries[at].node;
    if (!seen.intern(reinterpret_cast<uintptr_t>(node)).second) continue;
    member.fill(nullptr);
    for (const auto& [key, value] : node->items()) {
      const std::string keyword = likely_keyword(key, value);
      if (!keyword.empty()) warn(pointer_of(at), fmt::format("unknown keyword '{}': did you mean '{}'?", key, keyword));
      if (const auto it = kIndex.find(key); it != kIndex.end()) {
        for (const size_t i : it->second) {
          if (!member[i]) member[i] = &value;  // the first of duplicate keys, as find() would
        }
      }
    }
    children.clear();
    for (size_t i = 0; i < kNumSchema; ++i) {
      if (member[i]) push(*member[i], at, kSchema[i], nullptr, -1);
    }
    for (size_t i = 0; i < kNumArrays; ++i) {
      const json* a = member[kNumSchema + i];
      if (!a || !a->is_array()) continue;
      for (size_t j = 0; j < a->size(); ++j) push((*a)[j], at, kSchemaArrays[i], nullptr, static_cast<int64_t>(j));
    }
    for (size_t i = 0; i < kNumMaps; ++i) {
      const json* m = member[kNumSchema + kNumArrays + i];
      if (!m || !m->is_object()) continue;
      for (const auto& [name, sub] : m->items()) push(sub, at, kSchemaMaps[i], &name, -1);
    }
    const std::string* base = base_of(node);
    if (member[kRef] && member[kRef]->is_string() && base) {
      const std::string& ref = member[kRef]->get_ref<const std::string&>();
      auto [it, fresh] = refs.try_emplace(*base + '\n' + ref, kNone);
      if (fresh) {
        try {
          // The place only words an error, which is the compiler's to report where the $ref is used.
          const TermPtr target = resolve_ref(ref, *base, "");
          if (target->kind == Term::Kind::kSchema && target->node->is_object()) {
            ref_pointers.push_back(target->pointer);
            entries.push_back({target->node, kNone, nullptr, nullptr, -1, static_cast<uint32_t>(ref_pointers.size() - 1)});
            it->second = static_cast<uint32_t>(entries.size() - 1);
          }
        } catch (const SchemaError&) {
          // An unresolvable $ref is the compiler's error to report, where it is used.
        }
      }
      if (it->second != kNone) children.push_back(it->second);
    }
    todo.insert(todo.end(), children.rbegin(), children.rend());  // visited in document order
  }
}

}  // namespace lockstep::schema
