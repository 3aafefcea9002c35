// runtime/json_warm_start.cpp — see json_warm_start.h.
#include "runtime/json_warm_start.h"

#include <mutex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/mask_cache.h"
#include "schemas/formats.h"
#include "schemas/json_schema.h"
#include "schemas/string_lengths.h"

namespace lockstep {

namespace {

// The masks of `source`'s grammar, computed into the process-wide caches: every one, or
// with `starts_only` those of its rules' start states (a rule shared by other grammars,
// such as a length block, is entered there).
void precompute_masks(const char* source, const JsonSchemaOptions& options, const std::shared_ptr<const Vocabulary>& vocabulary,
                      const CompileLimits& limits = {}, bool starts_only = false) {
  CompiledSchema cs = compile_json_schema(nlohmann::ordered_json::parse(source), options);
  TokenMaskCache cache(GrammarAutomaton::compile(std::move(cs.grammar), limits), vocabulary);
  if (!starts_only) {
    cache.precompute(1);
    return;
  }
  const GrammarAutomaton& g = cache.grammar();
  for (uint32_t r = 0; r < g.num_rules(); ++r) {
    if (g.rule_start(r) < g.rule_end(r)) cache.get(g.rule_start(r));
  }
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
    prepare_format_languages();
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
    // A large grammar's strings read \u escapes through escape rules (escapes_by_rule), so
    // they are other automata, whose states share no mask with the ones above: the string
    // body and the bounded positions again that way, and a string longer than a length
    // block (kLengthBlock: a block of exactly 512 code points and tails), whose block and
    // tail starts are every such string's first position.
    CompileLimits by_rule;
    by_rule.escape_rules = true;
    precompute_masks(R"({"type": "string"})", JsonSchemaOptions{}, vocabulary, by_rule);
    precompute_masks(kBoundedString, JsonSchemaOptions{}, vocabulary, by_rule);
    const std::string long_string = R"({"type": "string", "maxLength": )" + std::to_string(2 * schema::kLengthBlock) + "}";
    precompute_masks(long_string.c_str(), JsonSchemaOptions{}, vocabulary, by_rule, true);
  } catch (const std::exception&) {
    // Only a warm start is lost.
  }
}

}  // namespace lockstep
