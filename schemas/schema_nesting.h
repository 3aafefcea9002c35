// schemas/schema_nesting.h — the depth bound of the schema compiler's recursive walks
// (internal).
//
// check_nesting() bounds the depth of the document itself, before anything recurses over
// it (nlohmann::json parses and destroys without recursion, but copies recursively).
// Indexing the document, normalizing terms and building grammar rules recurse once per
// nesting level of the schema. Each walk counts its levels with a NestingGuard, which throws
// LimitError("nesting_depth") at the level past EngineLimits::nesting_depth, before any work
// for that level (and so before the stack can overflow). The bound also bounds the
// pointers the walks build, one per level, each as long as its depth.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "grammar/errors.h"
#include "grammar/limits.h"

namespace lockstep::schema {

/// Checks, without recursion, that a schema document nests at most
/// EngineLimits::nesting_depth levels; throws LimitError("nesting_depth") with the pointer
/// (after `prefix`) of the first value past it. A level is a schema object or any other
/// JSON object or array (keyword values, `enum` and `const` data); the objects and arrays
/// that only hold sub-schemas (`properties`, `$defs`, `allOf`, `prefixItems`, ...) do not
/// count, so `{"properties": {"a": {...}}}` nests one level per property schema. The walks
/// that follow (indexing, copies of the document, `const` values) recurse at most twice per
/// level.
void check_nesting(const nlohmann::ordered_json& document, const std::string& prefix = "");

class NestingGuard {
 public:
  /// Enters one more level of the walk counted by `depth`; `pointer` is where it is, `what`
  /// what nests ("sub-schemas", "$ref hops and sub-schemas", "values").
  NestingGuard(uint32_t& depth, const std::string& pointer, const char* what) : depth_(depth) {
    const uint64_t limit = engine_limits().nesting_depth;
    if (depth_ + 1ull > limit) {
      throw LimitError(ErrorLocation::at_pointer(pointer), "nesting_depth", limit,
                       fmt::format("the nesting of {} ({} levels at this point)", what, depth_ + 1ull));
    }
    ++depth_;
  }
  ~NestingGuard() { --depth_; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;

 private:
  uint32_t& depth_;
};

}  // namespace lockstep::schema
