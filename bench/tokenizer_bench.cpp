// bench/tokenizer_bench.cpp — tokenizer load time and encoding throughput (MB/s) on real
// vocabularies, over the text of JSONSchemaBench documents.
//   build/bench/lockstep_bench --benchmark_filter=Tokenizer
#include <filesystem>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "runtime/mapped_file.h"
#include "runtime/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using namespace lockstep;

std::string shared(const std::string& rel) { return (fs::path(LOCKSTEP_SHARED_DIR) / rel).string(); }

// About 1 MB of real JSON text: valid instances of the Github_medium schemas, one per line.
const std::string& corpus() {
  static const std::string text = [] {
    std::string out;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(shared("schemas/jsonschemabench/Github_medium"))) {
      files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      const auto j = nlohmann::json::parse(read_file(f.string()), nullptr, false);
      if (j.is_discarded()) continue;
      for (const auto& t : j.value("tests", nlohmann::json::array())) {
        if (t.value("valid", false)) out += t["data"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      }
      if (out.size() > (1 << 20)) break;
    }
    return out;
  }();
  return text;
}

void encode(benchmark::State& state, const std::string& rel) {
  const auto tok = load_tokenizer(shared(rel));
  const std::string& text = corpus();
  size_t tokens = 0;
  for (auto _ : state) {
    const auto ids = tok->encode(text, false);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
  state.counters["bytes/token"] = static_cast<double>(text.size()) / static_cast<double>(tokens);
}

void BM_TokenizerEncodeLlama3(benchmark::State& s) { encode(s, "vocab/llama3-hf/tokenizer.json"); }
void BM_TokenizerEncodeQwen3(benchmark::State& s) { encode(s, "vocab/qwen3-hf/tokenizer.json"); }
void BM_TokenizerEncodeGpt2(benchmark::State& s) { encode(s, "vocab/gpt2/encoder.json"); }
void BM_TokenizerEncodeLlamaSpm(benchmark::State& s) {
  encode(s, "vocab/llama.cpp-ggml-vocab/ggml-vocab-llama-spm.gguf");
}

void BM_TokenizerLoadLlama3Json(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(load_tokenizer(shared("vocab/llama3-hf/tokenizer.json")));
}

BENCHMARK(BM_TokenizerEncodeLlama3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TokenizerEncodeQwen3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TokenizerEncodeGpt2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TokenizerEncodeLlamaSpm)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TokenizerLoadLlama3Json)->Unit(benchmark::kMillisecond);

}  // namespace
