/* include/lockstep/lockstep.h — lockstep's C API (C99).
 *
 * Opaque handles over the C++ API (lockstep/lockstep.hpp): a tokenizer (a vocabulary as
 * the engine sees it), a compiler, a compiled grammar, a matcher. Every call returns a
 * lockstep_status; on failure lockstep_last_error() describes it and says where the problem
 * is (lockstep_last_error_line/column/pointer/byte_offset). The error is per thread and
 * valid until the thread's next lockstep call.
 *
 * Token bitmasks are uint32_t[ceil(vocab_size / 32)]: bit (id % 32) of word id / 32 set
 * means token id is allowed.
 *
 * Thread-safety: tokenizers, compilers and grammars may be used from any thread; a matcher
 * from one thread at a time. Free each handle once with its _free function (NULL is
 * accepted); a grammar stays valid while matchers made from it exist, whatever order the
 * handles are freed in.
 *
 *   lockstep_tokenizer* tok; lockstep_compiler* c; lockstep_grammar* g; lockstep_matcher* m;
 *   lockstep_tokenizer_from_file("tokenizer.json", 0, NULL, 0, &tok);
 *   lockstep_compiler_new(tok, &c);
 *   lockstep_compile_regex(c, "[0-9]+", 6, &g);
 *   lockstep_matcher_new(g, 0, &m);
 *   lockstep_matcher_fill_next_token_bitmask(m, words, n_words);
 */
#ifndef LOCKSTEP_LOCKSTEP_H
#define LOCKSTEP_LOCKSTEP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lockstep_status {
  LOCKSTEP_OK = 0,
  LOCKSTEP_INVALID_ARGUMENT = 1, /* a NULL handle, an id out of range, a short buffer */
  LOCKSTEP_GRAMMAR_ERROR = 2,    /* GBNF or regex: line and column */
  LOCKSTEP_SCHEMA_ERROR = 3,     /* JSON Schema or tools: JSON pointer */
  LOCKSTEP_FILE_ERROR = 4,       /* tokenizer file: byte offset or JSON pointer */
  LOCKSTEP_LIMIT_ERROR = 5,      /* an engine limit (lockstep_set_limit) */
  LOCKSTEP_ERROR = 6,            /* any other error */
} lockstep_status;

typedef struct lockstep_tokenizer lockstep_tokenizer;
typedef struct lockstep_compiler lockstep_compiler;
typedef struct lockstep_grammar lockstep_grammar;
typedef struct lockstep_matcher lockstep_matcher;

/* The last error of this thread: "<location>: <message>" ("" after success). */
const char* lockstep_last_error(void);
/* Its line and column (1-based; 0 when it has none), JSON pointer (NULL when none) and byte
 * offset (-1 when none). */
uint32_t lockstep_last_error_line(void);
uint32_t lockstep_last_error_column(void);
const char* lockstep_last_error_pointer(void);
int64_t lockstep_last_error_byte_offset(void);

/* "0.1.0". */
const char* lockstep_version(void);

/* Sets one engine limit, "name=value" (docs/limits.md; e.g. "nesting_depth=64"). Process-
 * wide: call before compiling. */
lockstep_status lockstep_set_limit(const char* assignment);

/* ---- tokenizer ---------------------------------------------------------------------- */

/* Any tokenizer file lockstep reads (tokenizer.json, GGUF, GPT-2 encoder.json/vocab.bpe,
 * llama2.c tokenizer.bin). vocab_size: the logits width (0: the tokenizer's size).
 * stop_ids/n_stop: the ids that end generation (stop_ids NULL: the file's own). */
lockstep_status lockstep_tokenizer_from_file(const char* path, size_t vocab_size, const int32_t* stop_ids,
                                             size_t n_stop, lockstep_tokenizer** out);
/* A vocabulary token by token: token i's output bytes are tokens[i][0 .. lengths[i]).
 * Special ids never match grammar text; stop ids end generation. vocab_size 0: n_tokens. */
lockstep_status lockstep_tokenizer_from_tokens(const char* const* tokens, const size_t* lengths, size_t n_tokens,
                                               const int32_t* stop_ids, size_t n_stop, const int32_t* special_ids,
                                               size_t n_special, size_t vocab_size, lockstep_tokenizer** out);
/* Logits width, and uint32 words per bitmask (ceil(vocab_size / 32)). 0 for NULL. */
size_t lockstep_tokenizer_vocab_size(const lockstep_tokenizer* tokenizer);
size_t lockstep_tokenizer_bitmask_words(const lockstep_tokenizer* tokenizer);
/* Token ids whose bytes concatenate to exactly text[0 .. length), as the text appears in
 * generated output (no SentencePiece dummy space; tokenizers read from a file only); writes
 * at most capacity ids to ids and the count to *n_ids (more than capacity: call again). */
lockstep_status lockstep_tokenize(const lockstep_tokenizer* tokenizer, const char* text, size_t length,
                                  int32_t* ids, size_t capacity, size_t* n_ids);
/* The exact output bytes of token_id: *bytes (not NUL-terminated; valid while the tokenizer
 * lives) and *length (0 for special tokens and padding). */
lockstep_status lockstep_tokenizer_token_bytes(const lockstep_tokenizer* tokenizer, int32_t token_id,
                                               const char** bytes, size_t* length);
void lockstep_tokenizer_free(lockstep_tokenizer* tokenizer);

/* ---- compiler ----------------------------------------------------------------------- */

lockstep_status lockstep_compiler_new(const lockstep_tokenizer* tokenizer, lockstep_compiler** out);
void lockstep_compiler_free(lockstep_compiler* compiler);

typedef struct lockstep_json_schema_options {
  int whitespace;          /* 0 flexible (default), 1 compact, 2 pretty */
  int any_property_order;  /* 0: the order of `properties` (default); 1: any order */
  int strict;              /* 1: objects as if "additionalProperties": false */
  int lenient;             /* 1: compile keywords it cannot enforce, unenforced */
  uint32_t max_whitespace; /* longest whitespace run (0: unbounded, JSON's own) */
  uint32_t indent;         /* pretty: spaces per level (default 2) */
} lockstep_json_schema_options;
/* The defaults. */
void lockstep_json_schema_options_init(lockstep_json_schema_options* options);

/* Each source is source[0 .. length) (not necessarily NUL-terminated). options may be NULL
 * (the defaults). */
lockstep_status lockstep_compile_json_schema(lockstep_compiler* compiler, const char* schema, size_t length,
                                             const lockstep_json_schema_options* options, lockstep_grammar** out);
lockstep_status lockstep_compile_tools(lockstep_compiler* compiler, const char* tools, size_t length,
                                       const lockstep_json_schema_options* options, int parallel,
                                       lockstep_grammar** out);
lockstep_status lockstep_compile_regex(lockstep_compiler* compiler, const char* pattern, size_t length,
                                       lockstep_grammar** out);
/* root_rule NULL: "root". */
lockstep_status lockstep_compile_grammar(lockstep_compiler* compiler, const char* gbnf, size_t length,
                                         const char* root_rule, lockstep_grammar** out);
void lockstep_grammar_free(lockstep_grammar* grammar);

/* ---- matcher ------------------------------------------------------------------------ */

/* max_tokens: length-aware closing (the sequence, stop token included, ends complete within
 * that many tokens); 0: none. */
lockstep_status lockstep_matcher_new(const lockstep_grammar* grammar, size_t max_tokens, lockstep_matcher** out);
void lockstep_matcher_free(lockstep_matcher* matcher);
/* words: uint32_t[n_words], n_words >= lockstep_tokenizer_bitmask_words(). */
lockstep_status lockstep_matcher_fill_next_token_bitmask(lockstep_matcher* matcher, uint32_t* words, size_t n_words);
/* *accepted = 1 when the token (or the bytes) was accepted, 0 when rejected (state unchanged). */
lockstep_status lockstep_matcher_accept_token(lockstep_matcher* matcher, int32_t token_id, int* accepted);
lockstep_status lockstep_matcher_accept_string(lockstep_matcher* matcher, const char* bytes, size_t length,
                                               int* accepted);
/* *n_accepted: how many leading ids the matcher would accept (state unchanged). */
lockstep_status lockstep_matcher_validate_tokens(lockstep_matcher* matcher, const int32_t* ids, size_t n_ids,
                                                 size_t* n_accepted);
lockstep_status lockstep_matcher_rollback(lockstep_matcher* matcher, size_t n_steps);
lockstep_status lockstep_matcher_reset(lockstep_matcher* matcher);
/* The bytes the grammar forces next: writes min(length, capacity) bytes to buffer and the
 * full length to *length (call again with a larger buffer when it is more). */
lockstep_status lockstep_matcher_jump_forward(lockstep_matcher* matcher, char* buffer, size_t capacity,
                                              size_t* length);
int lockstep_matcher_is_accepting(const lockstep_matcher* matcher);
int lockstep_matcher_is_terminated(const lockstep_matcher* matcher);

#ifdef __cplusplus
}
#endif

#endif /* LOCKSTEP_LOCKSTEP_H */
