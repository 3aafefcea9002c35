// api/c_api.cpp — the C API (include/lockstep/lockstep.h) over the public C++ API.
#include "lockstep/lockstep.h"

#include <exception>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/lockstep.hpp"

struct lockstep_tokenizer {
  lockstep::TokenizerInfo info;
};
struct lockstep_compiler {
  lockstep::GrammarCompiler compiler;
};
struct lockstep_grammar {
  lockstep::CompiledGrammar grammar;
};
struct lockstep_matcher {
  lockstep::GrammarMatcher matcher;
};

namespace {

struct LastError {
  std::string what;
  uint32_t line = 0, column = 0;
  std::optional<std::string> pointer;
  int64_t byte_offset = -1;
};
thread_local LastError last_error;

lockstep_status fail(lockstep_status status, const std::string& what) {
  last_error = LastError{};
  last_error.what = what;
  return status;
}

lockstep_status fail(lockstep_status status, const lockstep::Error& e) {
  fail(status, std::string(e.what()));
  const auto& at = e.location();
  if (at.source) last_error.line = at.source->line, last_error.column = at.source->column;
  last_error.pointer = at.pointer;
  if (at.byte_offset) last_error.byte_offset = static_cast<int64_t>(*at.byte_offset);
  return status;
}

// Runs f, turning every exception into a status and the thread's last error.
template <class F>
lockstep_status guarded(F&& f) {
  try {
    last_error = LastError{};
    f();
    return LOCKSTEP_OK;
  } catch (const lockstep::GrammarError& e) {
    return fail(LOCKSTEP_GRAMMAR_ERROR, e);
  } catch (const lockstep::SchemaError& e) {
    return fail(LOCKSTEP_SCHEMA_ERROR, e);
  } catch (const lockstep::FileFormatError& e) {
    return fail(LOCKSTEP_FILE_ERROR, e);
  } catch (const lockstep::LimitError& e) {
    return fail(LOCKSTEP_LIMIT_ERROR, e);
  } catch (const lockstep::Error& e) {
    return fail(LOCKSTEP_ERROR, e);
  } catch (const std::invalid_argument& e) {
    return fail(LOCKSTEP_INVALID_ARGUMENT, e.what());
  } catch (const std::out_of_range& e) {
    return fail(LOCKSTEP_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(LOCKSTEP_ERROR, "out of memory");
  } catch (const std::exception& e) {
    return fail(LOCKSTEP_ERROR, e.what());
  }
}

#define LOCKSTEP_NEED(p) \
  if ((p) == nullptr) return fail(LOCKSTEP_INVALID_ARGUMENT, #p " is NULL")

lockstep::JsonSchemaOptions schema_options(const lockstep_json_schema_options* o) {
  lockstep::JsonSchemaOptions out;
  if (o == nullptr) return out;
  if (o->whitespace < 0 || o->whitespace > 2) throw std::invalid_argument("whitespace is 0, 1 or 2");
  out.whitespace = o->whitespace == 1   ? lockstep::JsonSchemaOptions::Whitespace::kCompact
                   : o->whitespace == 2 ? lockstep::JsonSchemaOptions::Whitespace::kPretty
                                        : lockstep::JsonSchemaOptions::Whitespace::kFlexible;
  out.property_order = o->any_property_order ? lockstep::JsonSchemaOptions::PropertyOrder::kAny
                                             : lockstep::JsonSchemaOptions::PropertyOrder::kSchema;
  out.forbid_additional_properties = o->strict != 0;
  out.lenient = o->lenient != 0;
  if (o->max_whitespace != 0) out.max_whitespace = o->max_whitespace;
  out.indent = o->indent;
  return out;
}

template <class Make>
lockstep_status compile(lockstep_compiler* c, lockstep_grammar** out, Make&& make) {
  LOCKSTEP_NEED(c);
  LOCKSTEP_NEED(out);
  *out = nullptr;
  return guarded([&] { *out = new lockstep_grammar{make(c->compiler)}; });
}

}  // namespace

extern "C" {

const char* lockstep_last_error(void) { return last_error.what.c_str(); }
uint32_t lockstep_last_error_line(void) { return last_error.line; }
uint32_t lockstep_last_error_column(void) { return last_error.column; }
const char* lockstep_last_error_pointer(void) { return last_error.pointer ? last_error.pointer->c_str() : nullptr; }
int64_t lockstep_last_error_byte_offset(void) { return last_error.byte_offset; }
const char* lockstep_version(void) { return LOCKSTEP_VERSION; }

lockstep_status lockstep_set_limit(const char* assignment) {
  LOCKSTEP_NEED(assignment);
  return guarded([&] {
    lockstep::EngineLimits limits = lockstep::engine_limits();
    lockstep::set_engine_limit(limits, assignment);
    lockstep::set_engine_limits(limits);
  });
}

lockstep_status lockstep_tokenizer_from_file(const char* path, size_t vocab_size, const int32_t* stop_ids,
                                             size_t n_stop, lockstep_tokenizer** out) {
  LOCKSTEP_NEED(path);
  LOCKSTEP_NEED(out);
  *out = nullptr;
  return guarded([&] {
    std::optional<std::vector<int32_t>> stop;
    if (stop_ids != nullptr) stop.emplace(stop_ids, stop_ids + n_stop);
    *out = new lockstep_tokenizer{lockstep::TokenizerInfo::from_file(
        path, vocab_size ? std::optional<size_t>(vocab_size) : std::nullopt, stop)};
  });
}

lockstep_status lockstep_tokenizer_from_tokens(const char* const* tokens, const size_t* lengths, size_t n_tokens,
                                               const int32_t* stop_ids, size_t n_stop, const int32_t* special_ids,
                                               size_t n_special, size_t vocab_size, lockstep_tokenizer** out) {
  LOCKSTEP_NEED(out);
  *out = nullptr;
  if (n_tokens > 0) {
    LOCKSTEP_NEED(tokens);
    LOCKSTEP_NEED(lengths);
  }
  if (n_stop > 0) LOCKSTEP_NEED(stop_ids);
  if (n_special > 0) LOCKSTEP_NEED(special_ids);
  return guarded([&] {
    std::vector<std::string> bytes;
    bytes.reserve(n_tokens);
    for (size_t i = 0; i < n_tokens; ++i) {
      if (tokens[i] == nullptr && lengths[i] != 0) throw std::invalid_argument("tokens[" + std::to_string(i) + "] is NULL");
      bytes.emplace_back(tokens[i] ? tokens[i] : "", lengths[i]);
    }
    *out = new lockstep_tokenizer{lockstep::TokenizerInfo::from_tokens(
        std::move(bytes), std::vector<int32_t>(stop_ids, stop_ids + n_stop),
        std::vector<int32_t>(special_ids, special_ids + n_special),
        vocab_size ? std::optional<size_t>(vocab_size) : std::nullopt)};
  });
}

size_t lockstep_tokenizer_vocab_size(const lockstep_tokenizer* t) { return t ? t->info.vocab_size() : 0; }
size_t lockstep_tokenizer_bitmask_words(const lockstep_tokenizer* t) { return t ? t->info.bitmask_words() : 0; }

lockstep_status lockstep_tokenize(const lockstep_tokenizer* t, const char* text, size_t length, int32_t* ids,
                                  size_t capacity, size_t* n_ids) {
  LOCKSTEP_NEED(t);
  LOCKSTEP_NEED(n_ids);
  if (length > 0) LOCKSTEP_NEED(text);
  if (capacity > 0) LOCKSTEP_NEED(ids);
  return guarded([&] {
    const auto out = t->info.encode_continuation(std::string_view(text ? text : "", length));
    for (size_t i = 0; i < out.size() && i < capacity; ++i) ids[i] = out[i];
    *n_ids = out.size();
  });
}

lockstep_status lockstep_tokenizer_token_bytes(const lockstep_tokenizer* t, int32_t token_id, const char** bytes,
                                               size_t* length) {
  LOCKSTEP_NEED(t);
  LOCKSTEP_NEED(bytes);
  LOCKSTEP_NEED(length);
  return guarded([&] {
    const std::string_view b = t->info.token_bytes(token_id);
    *bytes = b.data();
    *length = b.size();
  });
}

void lockstep_tokenizer_free(lockstep_tokenizer* t) { delete t; }

lockstep_status lockstep_compiler_new(const lockstep_tokenizer* t, lockstep_compiler** out) {
  LOCKSTEP_NEED(t);
  LOCKSTEP_NEED(out);
  *out = nullptr;
  return guarded([&] { *out = new lockstep_compiler{lockstep::GrammarCompiler(t->info)}; });
}

void lockstep_compiler_free(lockstep_compiler* c) { delete c; }

void lockstep_json_schema_options_init(lockstep_json_schema_options* o) {
  if (o == nullptr) return;
  *o = lockstep_json_schema_options{0, 0, 0, 0, 0, 2};
}

lockstep_status lockstep_compile_json_schema(lockstep_compiler* c, const char* schema, size_t length,
                                             const lockstep_json_schema_options* options, lockstep_grammar** out) {
  LOCKSTEP_NEED(schema);
  return compile(c, out, [&](lockstep::GrammarCompiler& gc) {
    return gc.compile_json_schema(std::string_view(schema, length), schema_options(options));
  });
}

lockstep_status lockstep_compile_tools(lockstep_compiler* c, const char* tools, size_t length,
                                       const lockstep_json_schema_options* options, int parallel,
                                       lockstep_grammar** out) {
  LOCKSTEP_NEED(tools);
  return compile(c, out, [&](lockstep::GrammarCompiler& gc) {
    return gc.compile_tools(std::string_view(tools, length), schema_options(options), parallel != 0);
  });
}

lockstep_status lockstep_compile_regex(lockstep_compiler* c, const char* pattern, size_t length,
                                       lockstep_grammar** out) {
  LOCKSTEP_NEED(pattern);
  return compile(c, out, [&](lockstep::GrammarCompiler& gc) { return gc.compile_regex(std::string_view(pattern, length)); });
}

lockstep_status lockstep_compile_grammar(lockstep_compiler* c, const char* gbnf, size_t length, const char* root_rule,
                                         lockstep_grammar** out) {
  LOCKSTEP_NEED(gbnf);
  return compile(c, out, [&](lockstep::GrammarCompiler& gc) {
    return gc.compile_grammar(std::string_view(gbnf, length), root_rule ? root_rule : "root");
  });
}

void lockstep_grammar_free(lockstep_grammar* g) { delete g; }

lockstep_status lockstep_matcher_new(const lockstep_grammar* g, size_t max_tokens, lockstep_matcher** out) {
  LOCKSTEP_NEED(g);
  LOCKSTEP_NEED(out);
  *out = nullptr;
  return guarded([&] { *out = new lockstep_matcher{lockstep::GrammarMatcher(g->grammar, max_tokens ? max_tokens : SIZE_MAX)}; });
}

void lockstep_matcher_free(lockstep_matcher* m) { delete m; }

lockstep_status lockstep_matcher_fill_next_token_bitmask(lockstep_matcher* m, uint32_t* words, size_t n_words) {
  LOCKSTEP_NEED(m);
  LOCKSTEP_NEED(words);
  return guarded([&] {
    const size_t vocab = m->matcher.compiled_grammar().tokenizer_info().vocab_size();
    m->matcher.fill_next_token_bitmask(lockstep::TokenBitmask({words, n_words}, vocab));
  });
}

lockstep_status lockstep_matcher_accept_token(lockstep_matcher* m, int32_t token_id, int* accepted) {
  LOCKSTEP_NEED(m);
  LOCKSTEP_NEED(accepted);
  return guarded([&] { *accepted = m->matcher.accept_token(token_id) ? 1 : 0; });
}

lockstep_status lockstep_matcher_accept_string(lockstep_matcher* m, const char* bytes, size_t length, int* accepted) {
  LOCKSTEP_NEED(m);
  LOCKSTEP_NEED(accepted);
  if (length > 0) LOCKSTEP_NEED(bytes);
  return guarded([&] { *accepted = m->matcher.accept_string(std::string_view(bytes ? bytes : "", length)) ? 1 : 0; });
}

lockstep_status lockstep_matcher_validate_tokens(lockstep_matcher* m, const int32_t* ids, size_t n_ids,
                                                 size_t* n_accepted) {
  LOCKSTEP_NEED(m);
  LOCKSTEP_NEED(n_accepted);
  if (n_ids > 0) LOCKSTEP_NEED(ids);
  return guarded([&] { *n_accepted = m->matcher.validate_tokens(std::span<const int32_t>(ids, n_ids)); });
}

lockstep_status lockstep_matcher_rollback(lockstep_matcher* m, size_t n_steps) {
  LOCKSTEP_NEED(m);
  return guarded([&] { m->matcher.rollback(n_steps); });
}

lockstep_status lockstep_matcher_reset(lockstep_matcher* m) {
  LOCKSTEP_NEED(m);
  return guarded([&] { m->matcher.reset(); });
}

lockstep_status lockstep_matcher_jump_forward(lockstep_matcher* m, char* buffer, size_t capacity, size_t* length) {
  LOCKSTEP_NEED(m);
  LOCKSTEP_NEED(length);
  if (capacity > 0) LOCKSTEP_NEED(buffer);
  return guarded([&] {
    const std::string s = m->matcher.find_jump_forward_string();
    for (size_t i = 0; i < s.size() && i < capacity; ++i) buffer[i] = s[i];
    *length = s.size();
  });
}

int lockstep_matcher_is_accepting(const lockstep_matcher* m) { return m && m->matcher.is_accepting() ? 1 : 0; }
int lockstep_matcher_is_terminated(const lockstep_matcher* m) { return m && m->matcher.is_terminated() ? 1 : 0; }

}  // extern "C"
