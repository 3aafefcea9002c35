// api/compiler.cpp — GrammarCompiler and CompiledGrammar (include/lockstep/compiler.h): the
// front ends (GBNF, regex, JSON Schema, tools) → GrammarAutomaton → TokenMaskCache, with a
// cache by canonical source.
#include "lockstep/compiler.h"

#include <list>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "automata/grammar_automaton.h"
#include "automata/mask_cache.h"
#include "grammar/grammar.h"
#include "schemas/json_document.h"
#include "schemas/json_schema.h"
#include "schemas/tool_calls.h"

namespace lockstep {

using ordered_json = nlohmann::ordered_json;

struct CompiledGrammar::Impl {
  Kind kind = Kind::kGrammar;
  std::string source;
  std::string root;  // GBNF root rule
  JsonSchemaOptions options;
  bool parallel = false;
  TokenizerInfo tokenizer;
  std::shared_ptr<TokenMaskCache> cache;
  std::vector<std::string> warnings;
  size_t automaton_bytes = 0;  // measured once, when compiled
};

const char* CompiledGrammar::kind_name(Kind k) {
  switch (k) {
    case CompiledGrammar::Kind::kJsonSchema: return "json_schema";
    case CompiledGrammar::Kind::kTools: return "tools";
    case CompiledGrammar::Kind::kRegex: return "regex";
    case CompiledGrammar::Kind::kGrammar: return "grammar";
    case CompiledGrammar::Kind::kBuiltinJson: return "builtin_json";
  }
  return "?";
}

namespace {

ordered_json options_json(const JsonSchemaOptions& o) {
  using W = JsonSchemaOptions::Whitespace;
  return {{"whitespace", o.whitespace == W::kCompact ? "compact" : o.whitespace == W::kPretty ? "pretty" : "flexible"},
          {"max_whitespace", o.max_whitespace},
          {"indent", o.indent},
          {"property_order", o.property_order == JsonSchemaOptions::PropertyOrder::kAny ? "any" : "schema"},
          {"forbid_additional_properties", o.forbid_additional_properties},
          {"lenient", o.lenient},
          {"assert_formats", o.assert_formats},
          {"default_draft", o.default_draft},
          {"canonical_numbers", o.canonical_numbers}};
}

JsonSchemaOptions options_from_json(const ordered_json& j) {
  JsonSchemaOptions o;
  const std::string ws = j.at("whitespace").get<std::string>();
  o.whitespace = ws == "compact"  ? JsonSchemaOptions::Whitespace::kCompact
                 : ws == "pretty" ? JsonSchemaOptions::Whitespace::kPretty
                                  : JsonSchemaOptions::Whitespace::kFlexible;
  o.max_whitespace = j.at("max_whitespace").get<uint32_t>();
  o.indent = j.at("indent").get<uint32_t>();
  o.property_order = j.at("property_order").get<std::string>() == "any" ? JsonSchemaOptions::PropertyOrder::kAny
                                                                        : JsonSchemaOptions::PropertyOrder::kSchema;
  o.forbid_additional_properties = j.at("forbid_additional_properties").get<bool>();
  o.lenient = j.at("lenient").get<bool>();
  o.assert_formats = j.at("assert_formats").get<bool>();
  o.default_draft = j.at("default_draft").get<std::string>();
  o.canonical_numbers = j.at("canonical_numbers").get<bool>();
  return o;
}

// A schema or tool list as parsed JSON (key order kept); malformed JSON is a SchemaError at
// the root naming the byte offset.
ordered_json parse_json(std::string_view text, const char* what) {
  try {
    return read_json(text);
  } catch (const ordered_json::parse_error& e) {
    throw Error(ErrorLocation::at_offset(e.byte), fmt::format("the {} is not valid JSON ({})", what, e.what()));
  }
}

void add_grammar_warnings(const Grammar& g, std::vector<std::string>& out) {
  for (const auto& w : g.warnings) {
    out.push_back(w.where.line ? fmt::format("{}:{}: {}", w.where.line, w.where.column, w.message) : w.message);
  }
}

}  // namespace

CompiledGrammar::CompiledGrammar(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
CompiledGrammar::Kind CompiledGrammar::kind() const { return impl_->kind; }
const std::string& CompiledGrammar::source() const { return impl_->source; }
const TokenizerInfo& CompiledGrammar::tokenizer_info() const { return impl_->tokenizer; }
const std::vector<std::string>& CompiledGrammar::warnings() const { return impl_->warnings; }
const std::shared_ptr<TokenMaskCache>& CompiledGrammar::mask_cache() const { return impl_->cache; }
size_t CompiledGrammar::num_states() const { return impl_->cache->stats().states; }
size_t CompiledGrammar::num_computed_masks() const { return impl_->cache->stats().computed; }

size_t CompiledGrammar::memory_bytes() const {
  const auto stats = impl_->cache->stats();
  return impl_->source.size() + impl_->automaton_bytes + stats.memory_bytes + stats.segment_bytes;
}

std::string CompiledGrammar::serialize() const {
  ordered_json j = {{"format", "lockstep.compiled_grammar"},
                    {"version", 1},
                    {"kind", kind_name(impl_->kind)},
                    {"source", impl_->source},
                    {"vocabulary", impl_->tokenizer.fingerprint()}};
  if (impl_->kind == Kind::kGrammar) j["root"] = impl_->root;
  if (impl_->kind == Kind::kJsonSchema || impl_->kind == Kind::kTools || impl_->kind == Kind::kBuiltinJson) {
    j["options"] = options_json(impl_->options);
  }
  if (impl_->kind == Kind::kTools) j["parallel"] = impl_->parallel;
  return j.dump();
}

struct GrammarCompiler::Impl {
  TokenizerInfo tokenizer;
  CompilerOptions options;
  std::mutex mutex;
  // Least recently used first.
  struct Entry {
    std::string key;
    CompiledGrammar grammar;
    size_t bytes;
  };
  std::list<Entry> lru;
  std::unordered_map<std::string, std::list<Entry>::iterator> by_key;
  size_t bytes = 0;

  Impl(TokenizerInfo t, CompilerOptions o) : tokenizer(std::move(t)), options(o) {}

  // The cached grammar of `key`, or one made by `make` (outside the lock: two threads asking
  // for the same new grammar may both compile it; the first one stored wins).
  template <class Make>
  CompiledGrammar get(const std::string& key, Make&& make) {
    if (options.cache_limit_bytes != 0) {
      std::lock_guard lock(mutex);
      if (auto it = by_key.find(key); it != by_key.end()) {
        lru.splice(lru.end(), lru, it->second);
        return it->second->grammar;
      }
    }
    CompiledGrammar made = make();
    if (options.precompute) made.mask_cache()->precompute(options.max_threads);
    if (options.cache_limit_bytes == 0) return made;
    std::lock_guard lock(mutex);
    if (auto it = by_key.find(key); it != by_key.end()) return it->second->grammar;
    // Sizes change as masks fill in: re-measure before evicting.
    bytes = 0;
    for (Entry& e : lru) bytes += (e.bytes = e.key.size() + e.grammar.memory_bytes());
    const size_t size = key.size() + made.memory_bytes();
    while (!lru.empty() && bytes + size > options.cache_limit_bytes) {
      bytes -= lru.front().bytes;
      by_key.erase(lru.front().key);
      lru.pop_front();
    }
    if (size <= options.cache_limit_bytes) {
      lru.push_back({key, made, size});
      by_key.emplace(key, std::prev(lru.end()));
      bytes += size;
    }
    return made;
  }

  CompiledGrammar finish(CompiledGrammar::Impl&& impl, Grammar&& grammar) {
    add_grammar_warnings(grammar, impl.warnings);
    auto automaton = GrammarAutomaton::compile(std::move(grammar));
    // The automaton's arrays: about 24 bytes per state plus its edges (8 bytes each).
    size_t edges = 0;
    for (uint32_t s = 0; s < automaton->num_states(); ++s) {
      edges += automaton->byte_edges(s).size() + automaton->rule_edges(s).size();
    }
    impl.automaton_bytes = size_t{24} * automaton->num_states() + 8 * edges;
    impl.tokenizer = tokenizer;
    impl.cache = std::make_shared<TokenMaskCache>(std::move(automaton), tokenizer.vocabulary());
    return CompiledGrammar(std::make_shared<const CompiledGrammar::Impl>(std::move(impl)));
  }

  CompiledGrammar from_schema(CompiledGrammar::Kind kind, std::string source, const JsonSchemaOptions& options,
                              bool parallel, CompiledSchema&& cs) {
    CompiledGrammar::Impl impl{kind, std::move(source), "", options, parallel, tokenizer, nullptr, {}, 0};
    impl.warnings = cs.warnings;
    for (const auto& u : cs.unenforced) impl.warnings.push_back(u + ": not enforced");
    return finish(std::move(impl), std::move(cs.grammar));
  }
};

GrammarCompiler::GrammarCompiler(TokenizerInfo tokenizer_info, CompilerOptions options)
    : impl_(std::make_unique<Impl>(std::move(tokenizer_info), options)) {}
GrammarCompiler::~GrammarCompiler() = default;
GrammarCompiler::GrammarCompiler(GrammarCompiler&&) noexcept = default;
GrammarCompiler& GrammarCompiler::operator=(GrammarCompiler&&) noexcept = default;

const TokenizerInfo& GrammarCompiler::tokenizer_info() const { return impl_->tokenizer; }

CompiledGrammar GrammarCompiler::compile_json_schema(std::string_view schema, const JsonSchemaOptions& options) {
  const ordered_json doc = parse_json(schema, "schema");
  const std::string key = "json_schema\n" + options_json(options).dump() + "\n" + compact_json_text(schema);
  return impl_->get(key, [&] {
    return impl_->from_schema(CompiledGrammar::Kind::kJsonSchema, std::string(schema), options, false,
                              lockstep::compile_json_schema(doc, options));
  });
}

CompiledGrammar GrammarCompiler::compile_builtin_json(const JsonSchemaOptions& options) {
  const std::string key = "builtin_json\n" + options_json(options).dump();
  return impl_->get(key, [&] {
    CompiledGrammar::Impl impl{CompiledGrammar::Kind::kBuiltinJson, "", "", options, false, impl_->tokenizer, nullptr, {}, 0};
    return impl_->finish(std::move(impl), json_value_grammar(options));
  });
}

CompiledGrammar GrammarCompiler::compile_tools(std::string_view tools, const JsonSchemaOptions& options, bool parallel) {
  const ordered_json doc = parse_json(tools, "tool list");
  const std::string key =
      fmt::format("tools\n{}\n{}\n{}", options_json(options).dump(), parallel ? 1 : 0, compact_json_text(tools));
  return impl_->get(key, [&] {
    return impl_->from_schema(CompiledGrammar::Kind::kTools, std::string(tools), options, parallel,
                              compile_tool_calls(parse_tool_definitions(doc), options, parallel));
  });
}

CompiledGrammar GrammarCompiler::compile_regex(std::string_view pattern) {
  const std::string key = "regex\n" + std::string(pattern);
  return impl_->get(key, [&] {
    CompiledGrammar::Impl impl{CompiledGrammar::Kind::kRegex, std::string(pattern), "", {}, false, impl_->tokenizer, nullptr, {}, 0};
    return impl_->finish(std::move(impl), parse_regex(pattern));
  });
}

CompiledGrammar GrammarCompiler::compile_grammar(std::string_view gbnf, std::string_view root_rule) {
  const std::string key = fmt::format("grammar\n{}\n{}", root_rule, gbnf);
  return impl_->get(key, [&] {
    CompiledGrammar::Impl impl{CompiledGrammar::Kind::kGrammar, std::string(gbnf), std::string(root_rule), {}, false,
                               impl_->tokenizer, nullptr, {}, 0};
    return impl_->finish(std::move(impl), parse_gbnf(gbnf, root_rule));
  });
}

CompiledGrammar GrammarCompiler::deserialize(std::string_view serialized) {
  ordered_json j;
  try {
    j = ordered_json::parse(serialized);
  } catch (const ordered_json::parse_error& e) {
    throw Error(ErrorLocation::at_offset(e.byte), "not a serialized lockstep grammar: malformed JSON");
  }
  if (!j.is_object() || j.value("format", "") != "lockstep.compiled_grammar") {
    throw Error(ErrorLocation::at_pointer("/format"), "not a serialized lockstep grammar");
  }
  if (j.value("version", 0) != 1) {
    throw Error(ErrorLocation::at_pointer("/version"),
                fmt::format("version {} is not one this lockstep reads (1)", j.value("version", 0)));
  }
  const std::string vocab = j.value("vocabulary", "");
  if (vocab != impl_->tokenizer.fingerprint()) {
    throw Error(ErrorLocation::at_pointer("/vocabulary"),
                fmt::format("the grammar was compiled for vocabulary {}, this compiler's is {}", vocab,
                            impl_->tokenizer.fingerprint()));
  }
  try {
    const std::string kind = j.at("kind").get<std::string>();
    const std::string source = j.at("source").get<std::string>();
    if (kind == "regex") return compile_regex(source);
    if (kind == "grammar") return compile_grammar(source, j.at("root").get<std::string>());
    const JsonSchemaOptions options = options_from_json(j.at("options"));
    if (kind == "json_schema") return compile_json_schema(source, options);
    if (kind == "builtin_json") return compile_builtin_json(options);
    if (kind == "tools") return compile_tools(source, options, j.at("parallel").get<bool>());
    throw Error(ErrorLocation::at_pointer("/kind"), fmt::format("unknown grammar kind '{}'", kind));
  } catch (const ordered_json::exception& e) {
    throw Error(fmt::format("not a serialized lockstep grammar: {}", e.what()));
  }
}

size_t GrammarCompiler::cache_size_bytes() const {
  std::lock_guard lock(impl_->mutex);
  size_t bytes = 0;
  for (const auto& e : impl_->lru) bytes += e.key.size() + e.grammar.memory_bytes();
  return bytes;
}

size_t GrammarCompiler::cache_entries() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->lru.size();
}

void GrammarCompiler::clear_cache() {
  std::lock_guard lock(impl_->mutex);
  impl_->lru.clear();
  impl_->by_key.clear();
  impl_->bytes = 0;
}

}  // namespace lockstep
