// runtime/cli/fuzz.cpp — `lockstep fuzz`: a grammar against a vocabulary, before it meets a
// model. Walks the compiled grammar with random legal tokens (uniform, or weighted by
// --model), covers its parse configurations breadth-first, and reports where a model would
// be stuck or stopped, rules that can never be used or never finish, tokens never allowed,
// texts the grammar only accepts in a spelling the tokenizer would not produce, and any
// finished walk an independent checker refuses. docs/fuzz.md explains each finding.
#include "runtime/cli/fuzz.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "automata/earley.h"
#include "automata/token_bitmask.h"
#include "grammar/diagnostics.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/fuzz_ajv.h"
#include "runtime/cli/grammar_source.h"
#include "runtime/generator.h"
#include "runtime/model.h"

namespace lockstep::cli {

namespace {

struct FuzzArgs {
  GrammarSourceArgs grammar;
  std::string tokenizer, model;
  size_t walks = 200, max_steps = 256, max_configurations = 2000, examples = 3;
  int32_t threads = 0;
  uint64_t seed = 1;
  double time_limit = 60;
  bool json = false, strict = false, no_ajv = false;
};

std::string source_name(const GrammarSourceArgs& g) {
  if (!g.grammar_file.empty()) return g.grammar_file;
  if (g.regex_given) return "--regex " + g.regex;
  if (!g.schema_file.empty()) return g.schema_file;
  return g.tools_file;
}

// Re-checks a finished walk with what did not produce it: the Earley parser fed one byte at
// a time (not the mask path), RE2 for a regex, nlohmann/json for schemas and tools (ajv, run
// once over all walks, follows in ajv()).
void recheck(const FuzzArgs& a, const GrammarAutomaton& g, const RE2* re, const std::vector<int32_t>& tokens,
             const std::string& bytes, FuzzFindings& f) {
  EarleyParser p(g);
  size_t i = 0;
  while (i < bytes.size() && p.advance(static_cast<uint8_t>(bytes[i]))) ++i;
  if (i < bytes.size() || !p.accepting()) {
    f.disagreements.push_back({tokens, bytes, "earley",
                               i < bytes.size() ? fmt::format("byte {} refused", i) : "the text is incomplete"});
  }
  if (re != nullptr && !RE2::FullMatch(bytes, *re)) {
    f.disagreements.push_back({tokens, bytes, "re2", "RE2 finds no full match"});
  }
  if (!a.grammar.schema_file.empty() || !a.grammar.tools_file.empty()) {
    try {
      const auto doc = nlohmann::json::parse(bytes);
      (void)doc;
    } catch (const nlohmann::json::parse_error& e) {
      f.disagreements.push_back({tokens, bytes, "json", e.what()});
    }
  }
}

// Validates the finished walks of a schema or tools document with ajv (fuzz_ajv.h).
void ajv(const FuzzArgs& a, const std::vector<std::vector<int32_t>>& walks, const std::vector<std::string>& texts,
         FuzzFindings& f) {
  if (a.no_ajv) {
    f.ajv_skipped = "--no-ajv";
    return;
  }
  if (a.grammar.lenient) {  // keywords lockstep does not enforce: ajv would rightly refuse walks
    f.ajv_skipped = "--lenient compiles keywords lockstep does not enforce";
    return;
  }
  const bool schema = !a.grammar.schema_file.empty();
  const AjvVerdicts v = ajv_recheck(schema ? "schema" : "tools", schema ? a.grammar.schema_file : a.grammar.tools_file,
                                    texts, a.grammar.formats_as_annotations);
  if (!v.ran) {
    f.ajv_skipped = v.skipped;
    return;
  }
  f.rechecks.push_back("ajv");
  for (const auto& [i, why] : v.refused) f.disagreements.push_back({walks[i], texts[i], "ajv", why});
}

// The tokenizer's own spelling of a finished walk's text; when it differs and the grammar
// refuses it, a model writing the text its own way is turned away.
// Text a Hugging Face tokenizer spells as a special token by default (split_special_tokens
// off): a model writes it as that control token, which no grammar allows.
// The control tokens whose names are text a tokenizer would match (3 bytes or more).
std::vector<std::pair<int32_t, std::string>> special_names(const Tokenizer& tok) {
  std::vector<std::pair<int32_t, std::string>> out;
  const Vocabulary& vocab = tok.vocabulary();
  for (size_t id = 0; id < vocab.size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    if (vocab.is_control(i) && tok.token_name(i).size() >= 3) out.emplace_back(i, tok.token_name(i));
  }
  return out;
}

void check_spelling(const std::shared_ptr<TokenMaskCache>& cache, const Tokenizer& tok,
                    const std::vector<std::pair<int32_t, std::string>>& specials, const std::vector<int32_t>& tokens,
                    const std::string& bytes, FuzzFindings& f) {
  const std::vector<int32_t> canonical = tok.encode_continuation(bytes);
  if (canonical != tokens) ++f.non_canonical_walks;
  if (f.non_canonical.size() >= 64) return;
  for (const auto& [i, name] : specials) {
    if (const size_t at = bytes.find(name); at != std::string::npos) {
      for (const auto& seen : f.non_canonical) {
        if (seen.canonical.size() == 1 && seen.canonical[0] == i) return;  // one report per special token
      }
      f.non_canonical.push_back({tokens, {i}, 0, bytes,
                                 fmt::format("byte {}: the text '{}' is special token {}: a model writes it as that "
                                             "control token, which the grammar refuses",
                                             at, name, i)});
      return;
    }
  }
  if (canonical == tokens) return;
  EarleyMatcher m(cache);
  for (size_t i = 0; i < canonical.size(); ++i) {
    if (!m.accept_token(canonical[i])) {
      f.non_canonical.push_back({tokens, canonical, i, bytes,
                                 fmt::format("the grammar refuses the tokenizer's own spelling at its token {}", i)});
      return;
    }
  }
}

// Walks weighted by the model: the allowed tokens' softmax at temperature 1.
class ModelChooser {
 public:
  ModelChooser(const LoadedModel& model, int32_t threads) : model_(model), state_(model.model, 0, threads) {}
  int32_t operator()(std::span<const int32_t> tokens, std::span<const uint32_t> mask, std::mt19937_64& rng) {
    const int32_t pos = static_cast<int32_t>(tokens.size());
    const int32_t first = model_.tokenizer->bos_id() >= 0 ? model_.tokenizer->bos_id() : 0;
    if (pos + 1 >= state_.context_length()) return -1;
    const std::span<const float> logits = pos == 0 ? state_.forward(first, 0) : state_.forward(tokens.back(), pos);
    float top = -INFINITY;
    for (size_t id = 0; id < logits.size() && id < mask.size() * 32; ++id) {
      if (test_bit(mask, id)) top = std::max(top, logits[id]);
    }
    double total = 0;
    weights_.assign(logits.size(), 0.0);
    for (size_t id = 0; id < logits.size() && id < mask.size() * 32; ++id) {
      if (test_bit(mask, id)) total += weights_[id] = std::exp(static_cast<double>(logits[id] - top));
    }
    if (!(total > 0)) return -1;
    double r = std::uniform_real_distribution<double>(0, total)(rng);
    for (size_t id = 0; id < weights_.size(); ++id) {
      if (weights_[id] <= 0) continue;
      if ((r -= weights_[id]) <= 0) return static_cast<int32_t>(id);
    }
    for (size_t id = weights_.size(); id-- > 0;) {
      if (weights_[id] > 0) return static_cast<int32_t>(id);
    }
    return -1;
  }

 private:
  const LoadedModel& model_;
  InferenceState state_;
  std::vector<double> weights_;
};

void run(const FuzzArgs& a) {
  if (a.tokenizer.empty() && a.model.empty()) {
    throw std::runtime_error("give the vocabulary to fuzz against: --tokenizer FILE (or --model DIR)");
  }
  const auto grammar = compile_grammar_source(a.grammar);
  if (!grammar) {
    throw std::runtime_error("give the grammar to fuzz: --grammar FILE, --regex PATTERN, --schema FILE or --tools FILE");
  }
  std::unique_ptr<LoadedModel> model;
  std::unique_ptr<Tokenizer> own_tokenizer;
  if (!a.model.empty()) model = std::make_unique<LoadedModel>(load_model(a.model, a.tokenizer));
  if (!model) own_tokenizer = load_tokenizer(a.tokenizer);
  const Tokenizer& tok = model ? *model->tokenizer : *own_tokenizer;
  auto cache = std::make_shared<TokenMaskCache>(grammar, tok.shared_vocabulary());

  ExploreOptions o;
  o.walks = a.walks;
  o.max_steps = a.max_steps;
  o.seed = a.seed;
  o.time_limit_seconds = a.time_limit;
  o.max_configurations = a.max_configurations;
  std::unique_ptr<ModelChooser> chooser;
  if (model) {
    chooser = std::make_unique<ModelChooser>(*model, a.threads);
    o.choose = [&chooser](std::span<const int32_t> t, std::span<const uint32_t> m, std::mt19937_64& r) {
      return (*chooser)(t, m, r);
    };
  }
  const bool tty = isatty(STDERR_FILENO) != 0;
  bool progressed = false;
  size_t ticks = 0;
  o.progress = [&](const std::string& line) {  // each second on a terminal, each 10 s in a log
    if (!tty && ticks++ % 10 != 9) return;
    progressed = true;
    std::fprintf(stderr, tty ? "\r\033[Kfuzz: %s" : "fuzz: %s\n", line.c_str());
  };

  FuzzFindings f;
  f.source = source_name(a.grammar);
  f.tokenizer = a.tokenizer.empty() ? a.model : a.tokenizer;
  f.vocab_size = tok.size();
  f.explored = explore(cache, o);
  if (progressed && tty) std::fputs("\r\033[K", stderr);

  // Rules are the user's in a GBNF file only; a regex's or a schema's rules are lockstep's
  // own construction, where a rule left unused is no finding for the user.
  if (!a.grammar.grammar_file.empty()) {
    const GrammarDiagnostics rules = diagnose_rules(grammar->grammar());
    for (const auto& r : rules.unreachable) f.unreachable.push_back({r.name, r.where});
    for (const auto& r : rules.unproductive) f.unproductive.push_back({r.name, r.where});
  }

  const Vocabulary& vocab = tok.vocabulary();
  const ExploreReport& e = f.explored;
  f.never_allowed_exact = e.exhaustive || !e.possible.empty();
  for (size_t id = 0; id < vocab.size(); ++id) {
    const auto i = static_cast<int32_t>(id);
    if (vocab.is_control(i) || vocab.is_eog(i) || vocab.token_bytes(i).empty()) continue;
    const bool never = e.exhaustive ? !e.allowed[id] : (!e.possible.empty() ? !e.possible[id] : !e.allowed[id]);
    if (never) f.never_allowed.push_back(i);
  }
  if (e.possible.empty() && !e.exhaustive) f.never_allowed_exact = false;

  std::unique_ptr<RE2> re;
  if (a.grammar.regex_given) {
    RE2::Options ro;
    ro.set_log_errors(false);
    re = std::make_unique<RE2>(a.grammar.regex, ro);
    if (!re->ok()) re.reset();  // a pattern RE2 does not take (lockstep's syntax is wider)
  }
  f.rechecks = {"earley"};
  if (re) f.rechecks.push_back("re2");
  const bool json_source = !a.grammar.schema_file.empty() || !a.grammar.tools_file.empty();
  if (json_source) f.rechecks.push_back("json");
  const auto specials = special_names(tok);
  std::vector<std::string> texts;
  for (const auto& tokens : e.completed) {
    std::string& bytes = texts.emplace_back();
    for (int32_t id : tokens) bytes += vocab.token_bytes(id);
    recheck(a, *grammar, re.get(), tokens, bytes, f);
    check_spelling(cache, tok, specials, tokens, bytes, f);
  }
  if (json_source && !texts.empty()) ajv(a, e.completed, texts, f);

  const std::string report = a.json ? json_report(f, tok, a.examples) : human_report(f, tok, a.examples);
  std::fputs(report.c_str(), stdout);
  if (f.failed() || (a.strict && f.warned())) throw CommandExit{kExitRejected, ""};
}

}  // namespace

void add_fuzz(CLI::App& app) {
  auto args = std::make_shared<FuzzArgs>();
  CLI::App* cmd = app.add_subcommand(
      "fuzz",
      "Explore a grammar against a vocabulary: dead ends, end-of-generation traps, unused and unfinishable rules, "
      "tokens never allowed, spellings the tokenizer would not produce, and an independent re-check of every "
      "finished walk. Exit 1 when a model could be stuck or stopped or a re-check disagrees (with --strict: any "
      "finding), 0 otherwise, 2 on a usage or input error");
  add_grammar_source_options(*cmd, args->grammar, GrammarPurpose::kGenerate);
  cmd->add_option("--tokenizer", args->tokenizer,
                  "Vocabulary to fuzz against: tokenizer.json, tokenizer.bin, GGUF, GPT-2 encoder.json (no model needed)");
  cmd->add_option("--model", args->model, "Weight the walks by this model (llama2.c .bin, GGUF or a directory)");
  cmd->add_option("--threads", args->threads, "Threads of --model's forward pass (0: automatic, as generate)")
      ->check(in_range(0, 1024, "0: automatic"))
      ->capture_default_str();
  cmd->add_option("--walks", args->walks, "Random walks")->check(in_range(0, 1e9, ""))->capture_default_str();
  cmd->add_option("--max-steps", args->max_steps, "Tokens per walk at most")
      ->check(in_range(1, 1 << 20, ""))
      ->capture_default_str();
  cmd->add_option("--max-configurations", args->max_configurations,
                  "Parse configurations the breadth-first pass expands at most")
      ->check(in_range(0, 1e9, ""))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Random seed")->capture_default_str();
  cmd->add_option("--time-limit", args->time_limit, "Seconds for the exploration (walks and breadth-first pass)")
      ->check(in_range(0, 1e6, "", true))
      ->capture_default_str();
  cmd->add_option("--examples", args->examples, "Examples shown per finding")->check(in_range(0, 1e6, ""))->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the report as one JSON object");
  cmd->add_flag("--no-ajv", args->no_ajv,
               "Do not re-check a schema's or tools' finished walks with ajv (node; run when it is installed)");
  cmd->add_flag("--strict", args->strict, "Exit 1 on any finding, not only dead ends, traps and disagreements");
  cmd->callback([args] { run(*args); });
}

}  // namespace lockstep::cli
