// include/lockstep/compiler.h — GrammarCompiler and CompiledGrammar: a JSON Schema, tool
// list, regular expression or GBNF grammar compiled for one vocabulary.
//
// A CompiledGrammar is the grammar's pushdown automaton (one byte automaton per rule) plus
// its token-mask cache for the vocabulary: per automaton state, which tokens are always
// allowed, never allowed, or decided by what follows (XGrammar's adaptive token mask cache,
// arXiv:2411.15100). Masks are filled lazily as matchers reach states, or all at once with
// CompilerOptions::precompute. Many GrammarMatchers (one per sequence) share one
// CompiledGrammar.
//
// The compiler caches compiled grammars by canonical source (the kind, the source text — a
// schema or tool list without the whitespace between its JSON tokens —, the options, the
// root rule): asking twice for the same schema returns the same CompiledGrammar, with the
// masks the first one has computed so far. The cache holds at most cache_limit_bytes of masks and sources;
// past that, the least recently used grammars are dropped from it (CompiledGrammars in use
// stay valid).
//
// Thread-safety: GrammarCompiler's methods may be called from any number of threads;
// CompiledGrammar is immutable from the outside and may be shared freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/errors.h"
#include "lockstep/json_schema_options.h"
#include "lockstep/tokenizer.h"

namespace lockstep {

class TokenMaskCache;

class CompiledGrammar {
 public:
  enum class Kind { kJsonSchema, kTools, kRegex, kGrammar, kBuiltinJson };
  Kind kind() const;
  /// "json_schema", "tools", "regex", "grammar" or "builtin_json".
  static const char* kind_name(Kind kind);
  /// The source as given (schema, tools and GBNF text, or the pattern).
  const std::string& source() const;
  const TokenizerInfo& tokenizer_info() const;
  /// What the user should know: unknown formats, places where the grammar is stricter than
  /// a schema, unproductive rules ("<JSON pointer>: <message>", "line:column: <message>").
  const std::vector<std::string>& warnings() const;
  /// Bytes held: the automaton, the source and the token masks computed so far.
  size_t memory_bytes() const;
  /// Automaton states, and how many of their token masks are computed.
  size_t num_states() const;
  size_t num_computed_masks() const;

  /// A JSON text that GrammarCompiler::deserialize turns back into an equal grammar: the
  /// kind, source, options and root rule, and the vocabulary's fingerprint. Masks are not
  /// stored: they are computed again on use (lockstep's masks are made per state reached,
  /// in microseconds to a few ms each).
  std::string serialize() const;

  /// The engine's mask cache (for code inside lockstep).
  const std::shared_ptr<TokenMaskCache>& mask_cache() const;

  struct Impl;
  explicit CompiledGrammar(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

struct CompilerOptions {
  /// Threads used to compute every state's token mask at compile time when `precompute` is
  /// set (0: one per core).
  unsigned max_threads = 1;
  /// Compute every automaton state's token mask at compile time (XGrammar's behaviour),
  /// rather than as matchers reach the states (lockstep's default: the first mask of a
  /// fresh grammar is then ready sooner).
  bool precompute = false;
  /// Bytes of compiled grammars the cache keeps (0: no cache).
  size_t cache_limit_bytes = size_t{256} << 20;
};

class GrammarCompiler {
 public:
  explicit GrammarCompiler(TokenizerInfo tokenizer_info, CompilerOptions options = {});
  ~GrammarCompiler();
  GrammarCompiler(GrammarCompiler&&) noexcept;
  GrammarCompiler& operator=(GrammarCompiler&&) noexcept;

  /// A JSON Schema (drafts 4, 6, 7, 2019-09, 2020-12; `$schema` picks, else
  /// options.default_draft). Throws SchemaError with the JSON pointer of the keyword it
  /// cannot compile (or of malformed JSON's byte offset), LimitError past an EngineLimits
  /// value.
  CompiledGrammar compile_json_schema(std::string_view schema, const JsonSchemaOptions& options = {});
  /// Any JSON value (RFC 8259).
  CompiledGrammar compile_builtin_json(const JsonSchemaOptions& options = {});
  /// A tool call: {"name": …, "arguments": …} for one of `tools` (OpenAI `tools`, MCP
  /// `tools/list`, bare function definitions or BFCL entries); with `parallel`, a JSON array
  /// of one or more calls. Throws SchemaError naming the definition's JSON pointer.
  CompiledGrammar compile_tools(std::string_view tools, const JsonSchemaOptions& options = {}, bool parallel = false);
  /// A regular expression (RE2 / ECMAScript syntax; the whole output matches it). Throws
  /// GrammarError with the byte offset in the pattern.
  CompiledGrammar compile_regex(std::string_view pattern);
  /// A GBNF grammar (llama.cpp's syntax). Throws GrammarError with line:column.
  CompiledGrammar compile_grammar(std::string_view gbnf, std::string_view root_rule = "root");
  /// A grammar from serialize(). Throws Error when the text is not one, or when it was made
  /// for another vocabulary (the fingerprints differ); then the compile errors above.
  CompiledGrammar deserialize(std::string_view serialized);

  const TokenizerInfo& tokenizer_info() const;
  /// Bytes the cache holds, and how many grammars.
  size_t cache_size_bytes() const;
  size_t cache_entries() const;
  void clear_cache();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep
