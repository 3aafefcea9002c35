// runtime/json_warm_start.cpp — see json_warm_start.h.
#include "runtime/json_warm_start.h"

#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/mask_cache.h"
#include "schemas/json_schema.h"

namespace lockstep {

namespace {

// Every mask of `source`'s grammar, computed into the process-wide caches.
void precompute_masks(const char* source, const JsonSchemaOptions& options, const std::shared_ptr<const Vocabulary>& vocabulary) {
  CompiledSchema cs = compile_json_schema(nlohmann::ordered_json::parse(source), options);
  TokenMaskCache cache(GrammarAutomaton::compile(std::move(cs.grammar)), vocabulary);
  cache.precompute(1);
}

}  // namespace

void prepare_json_building_blocks(const std::shared_ptr<const Vocabulary>& vocabulary) {
  static std::mutex mutex;
  static std::set<uint64_t> prepared;
  std::lock_guard<std::mutex> lock(mutex);
  if (!vocabulary || !prepared.insert(vocabulary->id()).second) return;
  // Generic shapes only: nothing here is tuned to a benchmark's schemas.
  static const char* const kSchemas[] = {
      R"({})",
      R"({"type": "integer"})",
      R"({"type": "object", "properties": {"s": {"type": "string"}, "i": {"type": "integer"},
          "n": {"type": "number"}, "b": {"type": "boolean"}, "a": {"type": "array", "items": {"type": "string"}},
          "o": {"type": "object"}}, "required": ["s"]})",
  };
  // The last positions of every length bound: a position with k code points left reads the
  // same whatever the bound, and those within the short-token depth (16) of it are each a
  // walk of their own (docs/masks.md, "A loop and its unrolling"). The string body is the
  // same rule in every whitespace mode and property order, so it is made once.
  static const char* const kBoundedString = R"({"type": "string", "maxLength": 16})";
  try {
    prepare_key_templates();
    for (const auto whitespace : {JsonSchemaOptions::Whitespace::kFlexible, JsonSchemaOptions::Whitespace::kCompact}) {
      for (const auto order : {JsonSchemaOptions::PropertyOrder::kSchema, JsonSchemaOptions::PropertyOrder::kAny}) {
        JsonSchemaOptions options;
        options.whitespace = whitespace;
        options.property_order = order;
        for (const char* source : kSchemas) precompute_masks(source, options, vocabulary);
      }
    }
    precompute_masks(kBoundedString, JsonSchemaOptions{}, vocabulary);
  } catch (const std::exception&) {
    // Only a warm start is lost.
  }
}

}  // namespace lockstep
