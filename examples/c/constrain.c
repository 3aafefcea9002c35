/* examples/c/constrain.c — lockstep's C API in one program.
 *
 *   constrain TOKENIZER --schema FILE [--check TEXT] [--max-tokens N]
 *   constrain TOKENIZER --regex PATTERN [--check TEXT] [--max-tokens N]
 *
 * With --check, TEXT is tokenized and fed to the matcher token by token, each token tested
 * against the step's bitmask first: prints "accepted" (exit 0), or the first token the
 * grammar forbids (exit 1). Without it, a stand-in for a model picks at each step the
 * allowed token with the longest text (the lowest id among equals), under length-aware
 * closing (--max-tokens, default 64), and prints the output: it is complete when the
 * stop token ends it. Errors print lockstep's message and location, exit 2.
 * Build: cc constrain.c $(pkg-config --cflags --libs lockstep)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lockstep/lockstep.h>

static int fail(const char* what) {
  fprintf(stderr, "constrain: %s: %s", what, lockstep_last_error());
  if (lockstep_last_error_line() != 0) fprintf(stderr, " (line %u, column %u)", lockstep_last_error_line(), lockstep_last_error_column());
  if (lockstep_last_error_pointer() != NULL) fprintf(stderr, " (at \"%s\")", lockstep_last_error_pointer());
  fprintf(stderr, "\n");
  return 2;
}

static char* read_all(const char* path, size_t* length) {
  FILE* f = fopen(path, "rb");
  char* text = NULL;
  long n;
  if (f == NULL) return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
    text = malloc((size_t)n + 1);
    if (text != NULL && fread(text, 1, (size_t)n, f) == (size_t)n) {
      text[n] = '\0';
      *length = (size_t)n;
    } else {
      free(text);
      text = NULL;
    }
  }
  fclose(f);
  return text;
}

static int allowed(const uint32_t* words, int32_t id) { return (int)((words[id / 32] >> (id % 32)) & 1u); }

int main(int argc, char** argv) {
  const char *schema_file = NULL, *regex = NULL, *check = NULL;
  size_t max_tokens = 64, words_n, vocab, length = 0, i;
  lockstep_tokenizer* tok = NULL;
  lockstep_compiler* compiler = NULL;
  lockstep_grammar* grammar = NULL;
  lockstep_matcher* matcher = NULL;
  lockstep_status st;
  uint32_t* words;
  int a, code = 0;
  if (argc < 4) {
    fprintf(stderr, "usage: constrain TOKENIZER (--schema FILE | --regex PATTERN) [--check TEXT] [--max-tokens N]\n");
    return 2;
  }
  for (a = 2; a + 1 < argc; a += 2) {
    if (strcmp(argv[a], "--schema") == 0) schema_file = argv[a + 1];
    else if (strcmp(argv[a], "--regex") == 0) regex = argv[a + 1];
    else if (strcmp(argv[a], "--check") == 0) check = argv[a + 1];
    else if (strcmp(argv[a], "--max-tokens") == 0) max_tokens = (size_t)strtoul(argv[a + 1], NULL, 10);
    else {
      fprintf(stderr, "constrain: unknown option %s\n", argv[a]);
      return 2;
    }
  }
  if (lockstep_tokenizer_from_file(argv[1], 0, NULL, 0, &tok) != LOCKSTEP_OK) return fail(argv[1]);
  if (lockstep_compiler_new(tok, &compiler) != LOCKSTEP_OK) return fail("compiler");
  if (schema_file != NULL) {
    lockstep_json_schema_options options;
    char* schema = read_all(schema_file, &length);
    if (schema == NULL) {
      fprintf(stderr, "constrain: cannot read %s\n", schema_file);
      return 2;
    }
    lockstep_json_schema_options_init(&options);
    options.whitespace = 1; /* compact */
    st = lockstep_compile_json_schema(compiler, schema, length, &options, &grammar);
    free(schema);
  } else if (regex != NULL) {
    st = lockstep_compile_regex(compiler, regex, strlen(regex), &grammar);
  } else {
    fprintf(stderr, "constrain: give --schema or --regex\n");
    return 2;
  }
  if (st != LOCKSTEP_OK) return fail(schema_file != NULL ? schema_file : "--regex");
  if (lockstep_matcher_new(grammar, check != NULL ? 0 : max_tokens, &matcher) != LOCKSTEP_OK) return fail("matcher");
  vocab = lockstep_tokenizer_vocab_size(tok);
  words_n = lockstep_tokenizer_bitmask_words(tok);
  words = malloc(words_n * sizeof *words);
  if (words == NULL) return 2;

  if (check != NULL) {
    size_t n_ids = 0;
    int32_t* ids;
    int accepted;
    lockstep_tokenize(tok, check, strlen(check), NULL, 0, &n_ids);
    ids = malloc((n_ids + 1) * sizeof *ids);
    if (ids == NULL || lockstep_tokenize(tok, check, strlen(check), ids, n_ids, &n_ids) != LOCKSTEP_OK) return fail("tokenize");
    for (i = 0; i < n_ids; ++i) {
      if (lockstep_matcher_fill_next_token_bitmask(matcher, words, words_n) != LOCKSTEP_OK) return fail("mask");
      if (!allowed(words, ids[i])) {
        printf("token %zu (id %d) is not allowed\n", i, ids[i]);
        code = 1;
        break;
      }
      if (lockstep_matcher_accept_token(matcher, ids[i], &accepted) != LOCKSTEP_OK || !accepted) return fail("accept");
    }
    if (code == 0) printf(lockstep_matcher_is_accepting(matcher) ? "accepted\n" : "accepted so far (incomplete)\n");
    free(ids);
  } else {
    /* The stand-in model: the allowed token with the longest text. Stop tokens have no text,
     * so one is chosen once nothing else is allowed (length-aware closing sees to it). */
    while (!lockstep_matcher_is_terminated(matcher)) {
      int32_t best = -1, id;
      size_t best_len = 0;
      int accepted;
      if (lockstep_matcher_fill_next_token_bitmask(matcher, words, words_n) != LOCKSTEP_OK) return fail("mask");
      for (id = 0; (size_t)id < vocab; ++id) {
        const char* bytes;
        size_t n;
        if (!allowed(words, id)) continue;
        if (lockstep_tokenizer_token_bytes(tok, id, &bytes, &n) != LOCKSTEP_OK) return fail("token bytes");
        if (best < 0 || n > best_len) best = id, best_len = n;
      }
      if (best < 0) {
        fprintf(stderr, "constrain: no token is allowed\n");
        return 1;
      }
      if (lockstep_matcher_accept_token(matcher, best, &accepted) != LOCKSTEP_OK || !accepted) return fail("accept");
      if (best_len > 0) {
        const char* bytes;
        size_t n;
        lockstep_tokenizer_token_bytes(tok, best, &bytes, &n);
        fwrite(bytes, 1, n, stdout);
      }
    }
    printf("\n");
  }
  free(words);
  lockstep_matcher_free(matcher);
  lockstep_grammar_free(grammar);
  lockstep_compiler_free(compiler);
  lockstep_tokenizer_free(tok);
  return code;
}
