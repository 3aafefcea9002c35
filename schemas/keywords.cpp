// schemas/keywords.cpp — JSON Schema keywords → normal forms (drafts 4, 6, 7, 2019-09,
// 2020-12), and $ref resolution within the document.
#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "schemas/formats.h"
#include "schemas/number_sets.h"
#include "schemas/schema_compiler.h"
#include "schemas/schema_nesting.h"
#include "schemas/schema_uri.h"
#include "schemas/string_lengths.h"

namespace lockstep::schema {

std::string escape_pointer_token(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

namespace {

uint32_t as_count(const json& v, const std::string& pointer) {
  if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != std::floor(v.get<double>())) {
    throw SchemaError(pointer, "must be a non-negative integer");
  }
  const double d = v.get<double>();
  return d > 4294967294.0 ? kUnbounded - 1 : static_cast<uint32_t>(d);
}

// Keywords whose values are data, not schemas: the index does not look inside them.
bool is_data_keyword(const std::string& k) {
  return k == "enum" || k == "const" || k == "default" || k == "examples" || k == "example";
}

Norm only_objects(std::vector<ObjectRec> recs) {
  Norm n = Norm::any();
  n.objects = std::move(recs);
  return n;
}

}  // namespace

SchemaCompiler::SchemaCompiler(const json& document, const JsonSchemaOptions& options)
    : doc_(document), opt_(options) {
  if (!document.is_object() && !document.is_boolean()) throw SchemaError("", "a schema must be an object or a boolean");
  // Before anything recurses over the document (index, copies of it, const values).
  check_nesting(document);
  static const std::map<std::string, int> drafts = {{"2020-12", 2020}, {"2019-09", 2019}, {"7", 7}, {"6", 6}, {"4", 4}};
  auto d = drafts.find(options.default_draft);
  if (d == drafts.end()) throw SchemaError("", fmt::format("unknown default draft '{}'", options.default_draft));
  root_draft_ = d->second;
  if (document.is_object() && document.contains("$schema") && document["$schema"].is_string()) {
    const std::string uri = document["$schema"].get<std::string>();
    const int d = draft_from_uri(uri);
    if (d > 0) {
      root_draft_ = d;
    } else if (d == 0) {
      unsupported("", "$schema",
                  fmt::format("unknown meta-schema '{}': lockstep knows json-schema.org's drafts 4, 6, 7, 2019-09 "
                              "and 2020-12 (lenient mode compiles it as draft {})",
                              uri, options.default_draft));
    }
  }
  bases_.push_back(kRootBase);
  index(document, Place{}, 0, root_draft_);
  if (document.is_object()) report_keyword_typos();
}

std::string SchemaCompiler::Place::pointer() const {
  std::vector<const Place*> chain;
  for (const Place* p = this; p->up; p = p->up) chain.push_back(p);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    out += '/';
    out += (*it)->key ? escape_pointer_token(*(*it)->key) : std::to_string((*it)->item);
  }
  return out;
}

const std::string* SchemaCompiler::base_of(const json* node) const {
  const uint32_t k = based_nodes_.find(reinterpret_cast<uintptr_t>(node));
  return k == based_nodes_.kNotFound ? nullptr : &bases_[base_index_[k]];
}

void SchemaCompiler::index(const json& node, const Place& place, uint32_t parent_base, int draft) {
  if (!node.is_object() && !node.is_array()) return;
  uint32_t base = parent_base;
  if (node.is_object()) {
    const KeywordView keys(node);
    const char* id_key = draft <= 4 ? "id" : "$id";
    // Drafts 4–7: a $ref replaces its siblings, $id included.
    const bool ref_wins = draft <= 7 && keys.contains("$ref");
    auto set_base = [&](std::string b) {
      if (b != bases_[base]) {
        base = static_cast<uint32_t>(bases_.size());
        bases_.push_back(std::move(b));
      }
    };
    if (!ref_wins && keys.contains(id_key) && keys[id_key].is_string()) {
      const std::string id = keys[id_key].get<std::string>();
      const std::string full = resolve_uri(bases_[parent_base], id);
      if (id.empty() || id[0] != '#') {
        set_base(strip_fragment(full));
        resources_[bases_[base]] = {&node, place.pointer(), draft};
      }
      if (full.find('#') != std::string::npos && full.size() > full.find('#') + 1) {
        resources_[full] = {&node, place.pointer(), draft};  // "#name" identifiers of drafts 6 and 7
      }
    }
    for (const char* anchor : {"$anchor", "$dynamicAnchor"}) {
      if (keys.contains(anchor) && keys[anchor].is_string()) {
        resources_[bases_[base] + "#" + keys[anchor].get<std::string>()] = {&node, place.pointer(), draft};
      }
    }
    if (!place.up) resources_[bases_[base]] = {&node, "", draft};
  }
  if (based_nodes_.intern(reinterpret_cast<uintptr_t>(&node)).second) base_index_.push_back(base);
  if (node.is_object()) {
    for (const auto& [key, v] : node.items()) {
      if (is_data_keyword(key)) continue;
      index(v, Place{&place, &key, 0}, base, draft);
    }
  } else {
    for (size_t i = 0; i < node.size(); ++i) index(node[i], Place{&place, nullptr, i}, base, draft);
  }
}

int SchemaCompiler::draft_of(const std::string&) const { return root_draft_; }

void SchemaCompiler::unsupported(const std::string& pointer, const std::string& keyword, const std::string& why) {
  const std::string where = pointer + "/" + escape_pointer_token(keyword);
  if (opt_.lenient) {
    unenforced_.push_back(fmt::format("{}: {} ({})", where, keyword, why));
    return;
  }
  throw SchemaError(where, fmt::format("'{}' is not enforced: {}", keyword, why));
}

void SchemaCompiler::warn(const std::string& pointer, const std::string& message) {
  // A schema normalized again (after a failed attempt, e.g. inside `disjoint`) warns once.
  std::string w = fmt::format("{}: {}", pointer.empty() ? "(root)" : pointer, message);
  if (std::find(warnings_.begin(), warnings_.end(), w) == warnings_.end()) warnings_.push_back(std::move(w));
}

void SchemaCompiler::never_matches(const std::string& pointer, const std::string& why) {
  warn(pointer, why);
  std::string w = fmt::format("{}: {}", pointer.empty() ? "(root)" : pointer, why);
  if (std::find(never_.begin(), never_.end(), w) == never_.end()) never_.push_back(std::move(w));
}

TermPtr SchemaCompiler::resolve_ref(const std::string& ref, const std::string& base, const std::string& pointer) {
  const std::string uri = resolve_uri(base, ref);
  const std::string resource_uri = strip_fragment(uri);
  const size_t hash = uri.find('#');
  const std::string fragment = hash == std::string::npos ? "" : url_decode(uri.substr(hash + 1));
  auto fail = [&](const std::string& why) -> TermPtr {
    throw SchemaError(pointer, fmt::format("cannot resolve $ref '{}': {}", ref, why));
  };
  if (!fragment.empty() && fragment[0] != '/') {
    auto it = resources_.find(resource_uri + "#" + fragment);
    if (it == resources_.end()) return fail("no such anchor");
    const std::string* b = base_of(it->second.node);
    return t_schema(it->second.node, it->second.pointer, b ? *b : std::string());
  }
  auto it = resources_.find(resource_uri);
  if (it == resources_.end()) return fail("not in this document (remote references are not fetched)");
  const json* node = it->second.node;
  std::string target = it->second.pointer;
  if (!fragment.empty()) {
    try {
      const json::json_pointer jp(fragment);
      node = &node->at(jp);
      target += fragment;
    } catch (const json::exception&) {
      return fail("no schema at that JSON pointer");
    }
  }
  if (!node->is_object() && !node->is_boolean()) return fail("the target is not a schema");
  const std::string* b = base_of(node);
  return t_schema(node, target, b ? *b : resource_uri);
}

TermPtr SchemaCompiler::child(const Term& parent, const json& node, const std::string& path) {
  const std::string pointer = parent.pointer + path;
  if (!node.is_object() && !node.is_boolean()) {
    throw SchemaError(pointer, "a schema must be an object or a boolean");
  }
  const std::string* b = base_of(&node);
  return t_schema(&node, pointer, b ? *b : parent.base);
}

const Norm& SchemaCompiler::normalize(const TermPtr& t) {
  if (auto it = norms_.find(t); it != norms_.end()) return it->second;
  if (!in_progress_.insert(t).second) {
    throw SchemaError(t->pointer.empty() && t->kind != Term::Kind::kSchema ? "" : t->pointer,
                      "the schema refers to itself before any array or object nests ($ref cycle)");
  }
  Norm n;
  const bool schema = t->kind == Term::Kind::kSchema;
  try {
    // Sub-schemas and $ref hops each nest one level (a chain of $refs recurses once per hop).
    std::optional<NestingGuard> level;
    if (schema) level.emplace(normalize_depth_, t->pointer, "sub-schemas and $ref hops");
    deadline_.check(schema ? ErrorLocation::at_pointer(t->pointer) : ErrorLocation{});
    switch (t->kind) {
      case Term::Kind::kTrue: n = Norm::any(); break;
      case Term::Kind::kFalse: n = Norm::nothing(); break;
      case Term::Kind::kSchema: n = normalize_schema(*t); break;
      case Term::Kind::kAnd: {
        std::vector<const Norm*> parts;  // norms_ is node-based: the references stay valid
        for (const auto& a : t->args) parts.push_back(&normalize(a));
        n = intersect_all(parts);
        break;
      }
      case Term::Kind::kOr: {
        std::vector<const Norm*> parts;  // norms_ is node-based: the references stay valid
        for (const auto& a : t->args) parts.push_back(&normalize(a));
        n = unite_all(parts);
        break;
      }
      case Term::Kind::kNot: n = complement(normalize(t->args[0])); break;
    }
  } catch (LimitError& e) {
    // The innermost schema places a limit its algebra or automata exceeded.
    in_progress_.erase(t);
    if (schema) e.locate(ErrorLocation::at_pointer(t->pointer));
    throw;
  } catch (const json::exception& e) {
    // A value of an unexpected type that no check caught: a schema error, not a crash.
    in_progress_.erase(t);
    if (!schema) throw;
    throw SchemaError(t->pointer, fmt::format("invalid schema ({})", e.what()));
  } catch (...) {
    in_progress_.erase(t);
    throw;
  }
  in_progress_.erase(t);
  return norms_.emplace(t, std::move(n)).first->second;
}

Norm SchemaCompiler::type_norm(const json& type, const std::string& pointer, int draft) {
  std::vector<std::string> names;
  if (type.is_string()) {
    names.push_back(type.get<std::string>());
  } else if (type.is_array()) {
    for (const auto& t : type) {
      if (!t.is_string()) throw SchemaError(pointer, "type names must be strings");
      names.push_back(t.get<std::string>());
    }
  } else {
    throw SchemaError(pointer, "type must be a string or an array of strings");
  }
  Norm n = Norm::nothing();
  for (const auto& name : names) {
    if (name == "null") n.null = true;
    else if (name == "boolean") n.booleans = 3;
    else if (name == "number") n.number = all_number_set();
    else if (name == "integer") {
      // Draft 4: "a JSON number without a fraction or exponent part"; later drafts: any
      // number with a zero fractional part (draft 6 core §4.2.2), so 1.0 and 1e5 are integers.
      if (n.number.texts != every_number()) n.number = numbers_integer(draft);
    } else if (name == "string") n.string = all_strings();
    else if (name == "array") n.arrays = Norm::any().arrays;  // made here alone: most types are neither
    else if (name == "object") n.objects = Norm::any().objects;
    else throw SchemaError(pointer, fmt::format("unknown type '{}'", name));
  }
  return n;
}

DfaPtr SchemaCompiler::pattern_dfa(const json& pattern, const std::string& pointer) {
  if (!pattern.is_string()) throw SchemaError(pointer, "a pattern must be a string");
  RegexOptions ro;
  ro.search = true;
  ro.ecma = true;
  try {
    return std::make_shared<CharDfa>(CharDfa::from_expr(regex_to_expr(pattern.get<std::string>(), ro)));
  } catch (const GrammarError& e) {
    throw SchemaError(pointer, fmt::format("regex '{}' at column {}: {}", pattern.get<std::string>(),
                                           e.where().column, e.message()));
  } catch (AutomatonLimitError& e) {
    e.locate(ErrorLocation::at_pointer(pointer));
    throw;
  }
}

Norm SchemaCompiler::string_keywords(const KeywordView& s, const std::string& pointer) {
  DfaPtr c = all_strings();
  auto restrict = [&](DfaPtr d) {
    c = c == all_strings() ? d : std::make_shared<CharDfa>(CharDfa::intersect(*c, *d));
  };
  if (s.contains("minLength") || s.contains("maxLength")) {
    const uint32_t lo = s.contains("minLength") ? as_count(s["minLength"], pointer + "/minLength") : 0;
    const uint32_t hi = s.contains("maxLength") ? as_count(s["maxLength"], pointer + "/maxLength") : kUnbounded;
    if (lo > hi) {
      never_matches(pointer, fmt::format("minLength {} > maxLength {}: this schema matches no string", lo, hi));
      c = no_strings();
    } else if (lo > 0 || hi != kUnbounded) {
      // A bound alone is written as blocks of code points (string_lengths.h) from its
      // bounds, with no chain of a state per code point: its grammar has a state per block
      // (10 ms to compile at the cap). Beside a pattern or a format, the product with their
      // automaton has a layer of states per code point.
      const uint32_t bound = std::max(lo, hi == kUnbounded ? 0 : hi);
      const bool shaped = s.contains("pattern") || (s.contains("format") && opt_.assert_formats);
      if (shaped && bound > 100000) {
        unsupported(pointer, "maxLength", "lengths above 100000 code points beside a pattern or format");
      } else if (bound > 10000000) {
        unsupported(pointer, "maxLength", "lengths above 10000000 code points");
      } else {
        restrict(std::make_shared<CharDfa>(bound > kLengthBlock ? CharDfa::length_range(lo, hi)
                                                                : CharDfa::length(lo, hi)));
      }
    }
  }
  if (s.contains("pattern")) restrict(pattern_dfa(s["pattern"], pointer + "/pattern"));
  if (s.contains("format") && opt_.assert_formats) {
    if (!s["format"].is_string()) throw SchemaError(pointer + "/format", "must be a string");
    const std::string f = s["format"].get<std::string>();
    if (auto d = format_language(f)) {
      restrict(d);
    } else {
      warn(pointer + "/format", fmt::format("format '{}' is not known: it constrains nothing", f));
    }
  }
  Norm n = Norm::any();
  n.string = c;
  return n;
}

Norm SchemaCompiler::array_keywords(const KeywordView& s, const Term& t, int draft) {
  const std::string& p = t.pointer;
  static const char* keys[] = {"items", "prefixItems", "additionalItems", "minItems", "maxItems",
                               "contains", "minContains", "maxContains", "uniqueItems", "unevaluatedItems"};
  bool any = false;
  for (const char* k : keys) any = any || s.contains(k);
  if (!any) return Norm::any();
  ArrayRec r;
  r.rest = t_true();
  bool empty = false;  // contradictory bounds: no array matches
  const bool items_array = s.contains("items") && s["items"].is_array();
  if (s.contains("prefixItems")) {
    if (!s["prefixItems"].is_array()) throw SchemaError(p + "/prefixItems", "must be an array of schemas");
    for (size_t i = 0; i < s["prefixItems"].size(); ++i) {
      r.prefix.push_back(child(t, s["prefixItems"][i], "/prefixItems/" + std::to_string(i)));
    }
  }
  if (items_array) {
    if (draft >= 2020 && s.contains("prefixItems")) throw SchemaError(p + "/items", "must be a schema");
    for (size_t i = 0; i < s["items"].size(); ++i) r.prefix.push_back(child(t, s["items"][i], "/items/" + std::to_string(i)));
    if (s.contains("additionalItems")) r.rest = child(t, s["additionalItems"], "/additionalItems");
  } else if (s.contains("items")) {
    r.rest = child(t, s["items"], "/items");
  }
  if (s.contains("minItems")) r.min = as_count(s["minItems"], p + "/minItems");
  if (s.contains("maxItems")) r.max = as_count(s["maxItems"], p + "/maxItems");
  if (s.contains("contains")) {
    Contains c{child(t, s["contains"], "/contains"), 1, kUnbounded, 0};
    if (s.contains("minContains")) c.min = as_count(s["minContains"], p + "/minContains");
    if (s.contains("maxContains")) c.max = as_count(s["maxContains"], p + "/maxContains");
    if (c.min > c.max) {
      never_matches(p, fmt::format("minContains {} > maxContains {}: this schema matches no array", c.min, c.max));
      empty = true;
    }
    r.contains.push_back(c);
  }
  if (s.contains("uniqueItems")) {
    if (!s["uniqueItems"].is_boolean()) throw SchemaError(p + "/uniqueItems", "must be a boolean");
    if (s["uniqueItems"].get<bool>()) {
      r.unique = true;
      r.unique_pointer = p + "/uniqueItems";
    }
  }
  if (s.contains("unevaluatedItems") && !(s["unevaluatedItems"].is_boolean() && s["unevaluatedItems"].get<bool>())) {
    // Without applicators, the evaluated items are exactly items / prefixItems / contains.
    static const char* applicators[] = {"allOf", "anyOf", "oneOf", "not", "if", "$ref", "$dynamicRef"};
    bool plain = !s.contains("contains");
    for (const char* a : applicators) plain = plain && !s.contains(a);
    if (plain && !s.contains("items") && !(items_array && s.contains("additionalItems"))) {
      r.rest = child(t, s["unevaluatedItems"], "/unevaluatedItems");
    } else if (!plain || !(s.contains("items") && !items_array)) {
      unsupported(p, "unevaluatedItems", "only supported next to items / prefixItems without applicators");
    }
  }
  if (r.min > r.max) {
    never_matches(p, fmt::format("minItems {} > maxItems {}: this schema matches no array", r.min, r.max));
    empty = true;
  }
  Norm n = Norm::any();
  n.arrays = empty ? std::vector<ArrayRec>{} : std::vector<ArrayRec>{r};
  return n;
}

Norm SchemaCompiler::dependency_norm(const KeywordView& s, const Term& t, const std::string& name, const json& dep,
                                     const std::string& pointer) {
  (void)s;
  ObjectRec without;
  without.rules.push_back({literal_key(name), name, t_false(), nullptr});
  ObjectRec with;
  with.must.push_back({literal_key(name), name, t_true()});
  if (dep.is_array()) {
    for (const auto& d : dep) {
      if (!d.is_string()) throw SchemaError(pointer, "dependencies must list property names");
      with.must.push_back({literal_key(d.get<std::string>()), d.get<std::string>(), t_true()});
    }
    return only_objects({without, with});
  }
  const Norm cond = intersect(only_objects({with}), normalize(child(t, dep, pointer.substr(t.pointer.size()))));
  std::vector<ObjectRec> recs{without};
  recs.insert(recs.end(), cond.objects.begin(), cond.objects.end());
  return only_objects(std::move(recs));
}

Norm SchemaCompiler::object_keywords(const KeywordView& s, const Term& t, int draft) {
  const std::string& p = t.pointer;
  (void)draft;
  static const char* keys[] = {"properties", "patternProperties", "additionalProperties", "required",
                               "propertyNames", "minProperties", "maxProperties", "unevaluatedProperties"};
  bool any = opt_.forbid_additional_properties;
  for (const char* k : keys) any = any || s.contains(k);
  Norm n = Norm::any();
  if (any) {
    ObjectRec r;
    std::vector<DfaPtr> pattern_keys;  // the patterns' key languages, for additionalProperties
    if (s.contains("properties")) {
      if (!s["properties"].is_object()) throw SchemaError(p + "/properties", "must be an object");
      for (const auto& [name, sub] : s["properties"].items()) {
        r.order.push_back(name);
        auto keyset = literal_key(name);
        r.rules.push_back({keyset, name, child(t, sub, "/properties/" + escape_pointer_token(name)), nullptr});
      }
    }
    if (s.contains("patternProperties")) {
      if (!s["patternProperties"].is_object()) throw SchemaError(p + "/patternProperties", "must be an object");
      for (const auto& [pat, sub] : s["patternProperties"].items()) {
        const std::string ptr = "/patternProperties/" + escape_pointer_token(pat);
        auto keyset = pattern_dfa(json(pat), p + ptr);
        r.rules.push_back({keyset, std::nullopt, child(t, sub, ptr), nullptr});
        pattern_keys.push_back(keyset);
      }
    }
    TermPtr additional;
    if (s.contains("additionalProperties")) additional = child(t, s["additionalProperties"], "/additionalProperties");
    if (s.contains("unevaluatedProperties") &&
        !(s["unevaluatedProperties"].is_boolean() && s["unevaluatedProperties"].get<bool>())) {
      static const char* applicators[] = {"allOf", "anyOf", "oneOf", "not", "if", "$ref", "$dynamicRef",
                                          "dependentSchemas", "dependencies"};
      bool plain = !s.contains("additionalProperties");
      for (const char* a : applicators) plain = plain && !s.contains(a);
      if (plain) {
        additional = child(t, s["unevaluatedProperties"], "/unevaluatedProperties");
      } else if (!s.contains("additionalProperties")) {
        unsupported(p, "unevaluatedProperties", "only supported in a schema without applicators");
      }
    }
    if (opt_.forbid_additional_properties) additional = t_false();
    if (additional && additional->kind != Term::Kind::kTrue) {
      // The declared keys: one trie for all the names (a union per name would cost quadratic
      // time), and the patterns' languages. Made only here: most objects allow other keys.
      DfaPtr declared = no_strings();
      if (!r.order.empty()) declared = std::make_shared<CharDfa>(CharDfa::literals(r.order));
      for (const DfaPtr& keyset : pattern_keys) {
        declared = declared == no_strings() ? keyset : std::make_shared<CharDfa>(CharDfa::unite(*declared, *keyset));
      }
      auto others = std::make_shared<CharDfa>(declared == no_strings() ? CharDfa::all() : declared->complement());
      std::shared_ptr<const std::vector<std::string>> all_but;
      if (!s.contains("patternProperties")) all_but = std::make_shared<const std::vector<std::string>>(r.order);
      r.rules.push_back({others, std::nullopt, additional, std::move(all_but)});
    }
    if (s.contains("required")) {
      if (!s["required"].is_array()) throw SchemaError(p + "/required", "must be an array of names");
      for (const auto& k : s["required"]) {
        if (!k.is_string()) throw SchemaError(p + "/required", "must be an array of names");
        const std::string name = k.get<std::string>();
        r.must.push_back({literal_key(name), name, t_true()});
      }
    }
    if (s.contains("propertyNames")) {
      const Norm names = normalize(child(t, s["propertyNames"], "/propertyNames"));
      const DfaPtr allowed = names.string ? names.string : no_strings();
      if (allowed != all_strings()) {
        auto forbidden = std::make_shared<CharDfa>(allowed == no_strings() ? CharDfa::all() : allowed->complement());
        r.rules.push_back({forbidden, std::nullopt, t_false(), nullptr});
      }
    }
    if (s.contains("minProperties")) r.min = as_count(s["minProperties"], p + "/minProperties");
    if (s.contains("maxProperties")) r.max = as_count(s["maxProperties"], p + "/maxProperties");
    if (r.min > r.max) {
      never_matches(p, fmt::format("minProperties {} > maxProperties {}: this schema matches no object", r.min, r.max));
      n.objects.clear();
    } else {
      n.objects = {r};
    }
  }
  auto dependencies = [&](const char* key, bool arrays, bool schemas) {
    if (!s.contains(key)) return;
    if (!s[key].is_object()) throw SchemaError(p + "/" + key, "must be an object");
    for (const auto& [name, dep] : s[key].items()) {
      const std::string ptr = p + "/" + key + "/" + escape_pointer_token(name);
      if ((dep.is_array() && !arrays) || (!dep.is_array() && !schemas)) {
        throw SchemaError(ptr, dep.is_array() ? "must be a schema" : "must be an array of names");
      }
      n = intersect(std::move(n), dependency_norm(s, t, name, dep, ptr));
    }
  };
  dependencies("dependentRequired", true, false);
  dependencies("dependentSchemas", false, true);
  dependencies("dependencies", true, true);
  return n;
}

bool SchemaCompiler::disjoint(const Norm& a, const Norm& b) {
  if ((a.null && b.null) || (a.booleans & b.booleans)) return false;
  auto overlap = [](const DfaPtr& x, const DfaPtr& y) {
    return x && y && x != no_strings() && y != no_strings() && !CharDfa::intersect(*x, *y).empty();
  };
  if (!numbers_disjoint(a.number, b.number) || overlap(a.string, b.string)) return false;
  // Terms that cannot hold together; recursion still being normalized counts as "may".
  auto empty_and = [&](std::vector<TermPtr> parts) {
    try {
      return obviously_empty(normalize(t_and(std::move(parts))));
    } catch (const SchemaError&) {
      return false;
    } catch (const LimitError& e) {
      if (e.limit() == "compile_ms") throw;
      return false;  // too large to decide here; the schema itself may still compile
    }
  };
  for (const auto& x : a.arrays) {
    for (const auto& y : b.arrays) {
      const uint32_t lo = std::max(x.min, y.min), hi = std::min(x.max, y.max);
      bool apart = lo > hi;
      for (uint32_t i = 0; !apart && i < lo && i < 16; ++i) {
        auto at = [&](const ArrayRec& r) { return i < r.prefix.size() ? r.prefix[i] : r.rest; };
        apart = empty_and({at(x), at(y)});
      }
      if (!apart) return false;
    }
  }
  for (const auto& x : a.objects) {
    for (const auto& y : b.objects) {
      bool apart = std::max(x.min, y.min) > std::min(x.max, y.max);
      // A name one record requires, whose value no member can have under both.
      auto required_apart = [&](const ObjectRec& r) {
        for (const auto& o : r.must) {
          if (!o.literal) continue;
          std::vector<TermPtr> parts{o.value};
          for (const ObjectRec* rec : {&x, &y}) {
            for (const auto& k : rec->rules) {
              if (k.literal ? *k.literal == *o.literal : k.keys->accepts(*o.literal)) parts.push_back(k.value);
            }
          }
          if (empty_and(std::move(parts))) return true;
        }
        return false;
      };
      apart = apart || required_apart(x) || required_apart(y);
      if (!apart) return false;
    }
  }
  return true;
}

namespace {

// Whether `keyword` means anything in `draft` (4, 6, 7, 2019, 2020). A keyword from another
// draft is an unknown keyword there, which validators ignore (e.g. "if" in a draft-04
// schema). "dependencies" keeps its drafts-4-to-7 meaning in 2019-09 and 2020-12, as the
// test suite's optional dependencies-compatibility tests and ajv have it: a schema that says
// it wants a property's dependencies enforced gets them.
bool keyword_in_draft(const std::string& keyword, int draft) {
  static const std::map<std::string, std::pair<int, int>> spans = {
      {"const", {6, 9999}},           {"contains", {6, 9999}},         {"propertyNames", {6, 9999}},
      {"if", {7, 9999}},              {"then", {7, 9999}},             {"else", {7, 9999}},
      {"dependentRequired", {2019, 9999}}, {"dependentSchemas", {2019, 9999}},
      {"minContains", {2019, 9999}},  {"maxContains", {2019, 9999}},   {"unevaluatedItems", {2019, 9999}},
      {"unevaluatedProperties", {2019, 9999}}, {"prefixItems", {2020, 9999}},
      {"additionalItems", {0, 2019}},
  };
  const auto it = spans.find(keyword);
  return it == spans.end() || (draft >= it->second.first && draft <= it->second.second);
}

}  // namespace

namespace {
// A schema that is a non-empty anyOf and nothing else but annotations.
bool only_any_of(const json& node) {
  if (!node.is_object() || !node.contains("anyOf") || !node["anyOf"].is_array() || node["anyOf"].empty()) return false;
  static const std::set<std::string> annotations = {"anyOf", "description", "title", "$comment", "comment", "examples", "default"};
  return std::all_of(node.items().begin(), node.items().end(), [](const auto& kv) { return annotations.count(kv.key()) > 0; });
}
}  // namespace

Norm SchemaCompiler::normalize_schema(const Term& t) {
  const std::string& p = t.pointer;
  if (!t.node->is_object()) throw SchemaError(p, "a schema must be an object or a boolean");
  const int draft = draft_of(p);
  // Keywords of other drafts are dropped from a copy of the node (sub-schemas keep their
  // pointers: references resolve through the document index, not through this copy).
  const json* node = t.node;
  for (const auto& [k, v] : t.node->items()) {
    (void)v;
    if (!keyword_in_draft(k, draft)) {
      json copy = json::object();
      for (const auto& [k2, v2] : t.node->items()) {
        if (keyword_in_draft(k2, draft)) copy[k2] = v2;
      }
      synthetic_.push_back(std::move(copy));
      node = &synthetic_.back();
      break;
    }
  }
  const KeywordView s(*node);
  Norm n = Norm::any();
  if (s.contains("$ref")) {
    if (!s["$ref"].is_string()) throw SchemaError(p + "/$ref", "must be a string");
    const TermPtr target = resolve_ref(s["$ref"].get<std::string>(), t.base, p + "/$ref");
    if (draft <= 7) return normalize(target);  // drafts 4–7: $ref replaces its siblings
    n = normalize(target);
  }
  for (const char* k : {"$dynamicRef", "$recursiveRef"}) {
    if (s.contains(k)) unsupported(p, k, "dynamic scopes are not supported");
  }
  if (s.contains("type")) n = intersect(std::move(n), type_norm(s["type"], p + "/type", draft));
  if (s.contains("enum")) n = intersect(std::move(n), enum_norm(s["enum"], p + "/enum"));
  if (s.contains("const")) n = intersect(std::move(n), value_norm(s["const"], p + "/const"));
  n = intersect(std::move(n), number_keywords(s, p, draft));
  n = intersect(std::move(n), string_keywords(s, p));
  n = intersect(std::move(n), array_keywords(s, t, draft));
  n = intersect(std::move(n), object_keywords(s, t, draft));
  auto list = [&](const char* key) {
    std::vector<TermPtr> out;
    if (!s[key].is_array() || s[key].empty()) throw SchemaError(p + "/" + key, "must be a non-empty array of schemas");
    for (size_t i = 0; i < s[key].size(); ++i) out.push_back(child(t, s[key][i], std::string("/") + key + "/" + std::to_string(i)));
    return out;
  };
  if (s.contains("allOf")) {
    std::vector<const Norm*> parts{&n};
    for (const auto& a : list("allOf")) parts.push_back(&normalize(a));
    n = intersect_all(parts);
  }
  if (s.contains("anyOf")) n = intersect(std::move(n), normalize(t_or(list("anyOf"))));
  if (s.contains("oneOf")) {
    // Branch i ∧ ¬(every other branch). A branch provably disjoint from branch i (e.g. a
    // different "type" const on a required discriminator property) needs no complement:
    // complements of object records multiply alternatives.
    const auto branches = list("oneOf");
    std::vector<const Norm*> norms;
    for (const auto& b : branches) norms.push_back(&normalize(b));
    std::vector<TermPtr> exactly_one;
    for (size_t i = 0; i < branches.size(); ++i) {
      std::vector<TermPtr> parts{branches[i]};
      for (size_t j = 0; j < branches.size(); ++j) {
        if (j != i && !disjoint(*norms[i], *norms[j])) parts.push_back(t_not(branches[j]));
      }
      exactly_one.push_back(t_and(std::move(parts)));
    }
    n = intersect(std::move(n), normalize(t_or(std::move(exactly_one))));
  }
  if (s.contains("not")) {
    // not: {anyOf: [x…]} is ∧ ¬x (De Morgan), each complement joining the running
    // intersection: where the sets so far are small (a range of integers), every product
    // stays small, where the complement of the union alone can be huge (the plain texts of
    // numbers that are no multiple of 2, 5, 7, 11, 13 or 37: 62,963 states, 250 ms).
    const json& target = s["not"];
    if (only_any_of(target)) {
      const json& branches = target["anyOf"];
      for (size_t i = 0; i < branches.size(); ++i) {
        n = intersect(std::move(n), normalize(t_not(child(t, branches[i], "/not/anyOf/" + std::to_string(i)))));
      }
    } else {
      n = intersect(std::move(n), normalize(t_not(child(t, target, "/not"))));
    }
  }
  if (s.contains("if") && (s.contains("then") || s.contains("else"))) {
    const TermPtr cond = child(t, s["if"], "/if");
    const TermPtr then = s.contains("then") ? child(t, s["then"], "/then") : t_true();
    const TermPtr otherwise = s.contains("else") ? child(t, s["else"], "/else") : t_true();
    // (if ∧ then) ∨ (¬if ∧ else); without else it is ¬if ∨ then, without then if ∨ else,
    // which need one complement fewer intersections.
    if (!s.contains("else")) n = intersect(std::move(n), normalize(t_or({t_not(cond), then})));
    else if (!s.contains("then")) n = intersect(std::move(n), normalize(t_or({cond, otherwise})));
    else n = intersect(std::move(n), normalize(t_or({t_and({cond, then}), t_and({t_not(cond), otherwise})})));
  }
  if (s.contains("nullable") && s["nullable"].is_boolean() && s["nullable"].get<bool>()) n.null = true;
  return n;
}

}  // namespace lockstep::schema
