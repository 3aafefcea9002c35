// schemas/schema_nesting.cpp — see schema_nesting.h.
#include "schemas/schema_nesting.h"

#include <set>
#include <vector>

namespace lockstep::schema {

namespace {

using json = nlohmann::ordered_json;

// Keywords whose value, an object or an array, only holds sub-schemas (or property names).
bool is_container(const std::string& k, const json& value) {
  static const std::set<std::string> maps = {"properties",       "patternProperties", "$defs",
                                             "definitions",      "dependentSchemas",  "dependencies",
                                             "dependentRequired"};
  static const std::set<std::string> lists = {"allOf", "anyOf", "oneOf", "prefixItems", "items"};
  return (value.is_object() ? maps : lists).count(k) != 0;
}

bool is_data_keyword(const std::string& k) {
  return k == "enum" || k == "const" || k == "default" || k == "examples" || k == "example";
}

struct Frame {
  const json* node;
  json::const_iterator next;  // the next child to visit (objects and arrays alike)
  uint64_t depth;             // levels counted down to this node, itself included
  bool container;             // holds sub-schemas: its children count, it does not
  bool data;                  // inside enum / const / default / examples
  std::string key;            // the pointer token of this node in its parent
};

}  // namespace

void check_nesting(const json& document, const std::string& prefix) {
  if (!document.is_object() && !document.is_array()) return;
  const uint64_t limit = engine_limits().nesting_depth;
  std::vector<Frame> stack;
  stack.push_back({&document, document.cbegin(), 1, false, false, ""});
  auto fail = [&](const Frame& f) {
    std::string pointer = prefix;
    for (size_t i = 1; i < stack.size(); ++i) pointer += "/" + stack[i].key;
    pointer += "/" + f.key;
    throw LimitError(ErrorLocation::at_pointer(pointer), "nesting_depth", limit,
                     fmt::format("the nesting of the schema ({} levels of sub-schemas or values)", f.depth));
  };
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == f.node->cend()) {
      stack.pop_back();
      continue;
    }
    const json::const_iterator it = f.next++;
    const json& child = *it;
    if (!child.is_object() && !child.is_array()) continue;
    std::string key;
    if (f.node->is_object()) {
      for (char c : it.key()) key += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
    } else {
      key = std::to_string(it - f.node->cbegin());
    }
    const bool schema_object = f.node->is_object() && !f.container && !f.data;
    const bool container = schema_object && is_container(it.key(), child);
    const bool data = f.data || (schema_object && is_data_keyword(it.key()));
    Frame next{&child, child.cbegin(), container ? f.depth : f.depth + 1, container, data, std::move(key)};
    if (next.depth > limit) fail(next);
    stack.push_back(std::move(next));
  }
}

}  // namespace lockstep::schema
