// runtime/cli/closing_bench.cpp — `lockstep bench closing`: length-aware closing on real
// schemas, with the bundled model (or any): outputs at budgets from each grammar's minimum.
//
// For each MaskBench file ({"schema", ...}), compiled as `generate --schema` compiles it:
// the minimum budget (the shortest output's tokens and end of generation), then for every
// budget from the minimum to the minimum + --extra, one generation with a seed of its own —
// with closing, and again without it (same seed) to count the outputs the budget would have
// cut. One JSON line per generation (--jsonl) lets an independent validator check every
// output against its schema (tests/node/validate_jsonl.js; bench/closing.sh runs both).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "automata/matcher.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/json_files.h"
#include "runtime/cli/grammar_source.h"
#include "runtime/generator.h"
#include "runtime/mapped_file.h"

namespace lockstep::cli {

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

struct ClosingArgs {
  std::vector<std::string> inputs;
  std::string model, prompt = "Once upon a time";
  uint32_t extra = 20;
  uint64_t seed = 1;
  std::string jsonl;
  unsigned workers = 0;
  size_t limit = 0;
};

struct Counts {
  size_t files = 0, compiled = 0, runs = 0, complete = 0, cut_without = 0, budget_errors = 0;
};

void run(const ClosingArgs& a) {
  std::vector<fs::path> files = json_files(a.inputs);
  if (a.limit > 0 && files.size() > a.limit) files.resize(a.limit);
  const LoadedModel model = load_model(a.model);
  GrammarSourceArgs ga;
  ga.purpose = GrammarPurpose::kGenerate;
  const JsonSchemaOptions options = schema_options(ga);
  std::ofstream out;
  if (!a.jsonl.empty()) {
    out.open(a.jsonl);
    if (!out) throw std::runtime_error(fmt::format("{}: cannot write", a.jsonl));
  }
  Counts total;
  std::mutex mutex;
  std::atomic<size_t> next{0};
  const auto t0 = std::chrono::steady_clock::now();
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < files.size();) {
      Counts c;
      c.files = 1;
      std::vector<std::string> lines;
      std::shared_ptr<const GrammarAutomaton> grammar;
      try {
        const ojson doc = ojson::parse(read_file(files[i].string()));
        grammar = GrammarAutomaton::compile(compile_json_schema(doc.at("schema"), options).grammar);
      } catch (const std::exception&) {
        grammar = nullptr;
      }
      if (grammar) {
        ++c.compiled;
        EarleyMatcher m(std::make_shared<TokenMaskCache>(grammar, model.tokenizer->shared_vocabulary()));
        const size_t text = m.min_tokens_to_accept();
        const size_t minimum = text == SIZE_MAX ? SIZE_MAX : text + m.eog_tokens();
        for (size_t b = minimum; minimum != SIZE_MAX && b <= minimum + a.extra; ++b) {
          GenerateOptions o;
          o.prompt = a.prompt;
          o.max_tokens = static_cast<int32_t>(b);
          o.grammar = grammar;
          o.threads = 1;  // the workers are the parallelism
          o.sampling.seed = a.seed * 1000003u + i * 1009u + b;
          ojson line = {{"file", files[i].string()}, {"budget", b}, {"minimum", minimum}, {"seed", o.sampling.seed}};
          try {
            const GenerateResult r = generate(model, o);
            o.length_aware_closing = false;
            const GenerateResult without = generate(model, o);
            ++c.runs;
            c.complete += r.complete;
            c.cut_without += !without.complete;
            line["complete"] = r.complete;
            line["stop"] = to_string(r.stop);
            line["tokens"] = r.tokens.size();
            line["text"] = r.text;
            line["complete_without_closing"] = without.complete;
          } catch (const BudgetError& e) {
            ++c.budget_errors;  // the context is smaller than the budget's minimum
            line["error"] = e.what();
          }
          lines.push_back(line.dump(-1, ' ', false, ojson::error_handler_t::replace));
        }
      }
      std::lock_guard lock(mutex);
      total.files += c.files;
      total.compiled += c.compiled;
      total.runs += c.runs;
      total.complete += c.complete;
      total.cut_without += c.cut_without;
      total.budget_errors += c.budget_errors;
      for (const auto& l : lines) out << l << '\n';
      if (total.files % 50 == 0 || total.files == files.size()) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "\r%zu of %zu files, %zu generations, %.0f s", total.files, files.size(), total.runs, s);
      }
    }
  };
  const unsigned workers = a.workers ? a.workers : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::fprintf(stderr, "\n");
  std::printf("files %zu · compiled %zu · generations %zu (budgets from each minimum to +%u)\n", total.files,
              total.compiled, total.runs, a.extra);
  std::printf("with closing: %zu complete, %zu incomplete\n", total.complete, total.runs - total.complete);
  std::printf("without closing: %zu cut at the budget (incomplete)\n", total.cut_without);
  if (total.budget_errors) std::printf("budget above the context: %zu\n", total.budget_errors);
  if (total.complete != total.runs) throw CommandExit{kExitIncomplete, ""};
}

}  // namespace

void add_closing_bench(CLI::App& bench) {
  auto args = std::make_shared<ClosingArgs>();
  CLI::App* cmd = bench.add_subcommand("closing", "Length-aware closing on MaskBench schemas: outputs at budgets "
                                                  "from each grammar's minimum (exit 0: every output complete)");
  cmd->add_option("inputs", args->inputs, "MaskBench files or folders")->required();
  cmd->add_option("--model,-m", args->model, "Model file or folder (default: the bundled stories260K)");
  cmd->add_option("--prompt,-p", args->prompt, "Prompt")->capture_default_str();
  cmd->add_option("--extra", args->extra, "Budgets from the minimum to the minimum + EXTRA")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seeds derive from it")->capture_default_str();
  cmd->add_option("--jsonl", args->jsonl, "One JSON line per generation (for tests/node/validate_jsonl.js)");
  cmd->add_option("--workers", args->workers, "Threads (0: one per core)");
  cmd->add_option("--limit", args->limit, "Only the first N files (sorted by name)");
  cmd->callback([args] { run(*args); });
}

}  // namespace lockstep::cli
