// bench/mask_bench.cpp — micro-benchmarks of the token-mask engine on the Llama 3
// vocabulary (128,256 tokens) and llama.cpp's json.gbnf:
//   state walk     classifying the whole vocabulary for one automaton state (trie walk)
//   compose        a mask from cached per-state sets and suffix probes (no configuration cache)
//   cached         a mask served by the configuration cache
//   accept/rollback one token
//   build/bench/lockstep_bench --benchmark_filter=Mask
#include <filesystem>

#include <benchmark/benchmark.h>

#include "automata/matcher.h"
#include "runtime/mapped_file.h"
#include "runtime/tokenizer.h"

namespace {

namespace fs = std::filesystem;
using namespace lockstep;

std::string shared(const std::string& rel) { return (fs::path(LOCKSTEP_SHARED_DIR) / rel).string(); }

struct Setup {
  std::shared_ptr<const Tokenizer> tok = load_tokenizer(shared("vocab/llama3-hf/tokenizer.json"));
  std::shared_ptr<const GrammarAutomaton> grammar =
      GrammarAutomaton::compile(parse_gbnf(read_file(shared("grammars/llama.cpp/json.gbnf"))));
  std::shared_ptr<TokenMaskCache> cache = [this] {
    auto c = std::make_shared<TokenMaskCache>(grammar, tok->shared_vocabulary());
    c->precompute();
    return c;
  }();
  // A prefix that ends inside a string value: the heaviest configuration.
  std::string prefix = "{\"name\": \"lockstep\", \"tags\": [\"fast\", \"exa";
};

Setup& setup() {
  static Setup s;
  return s;
}

// The automaton state the matcher is in after `prefix` (its single kernel item).
uint32_t state_after(const std::string& prefix) {
  EarleyParser p(*setup().grammar);
  p.advance(prefix);
  return p.current_items()[0].state;
}

void BM_MaskStateWalk(benchmark::State& state) {
  const std::string prefix = state.range(0) == 0 ? "{" : setup().prefix;
  const uint32_t s = state_after(prefix);
  for (auto _ : state) {
    TokenMaskCache fresh(setup().grammar, setup().tok->shared_vocabulary());
    benchmark::DoNotOptimize(&fresh.get(s));
  }
  state.SetLabel(state.range(0) == 0 ? "after '{'" : "inside a string");
}

void mask_fill(benchmark::State& state, bool configurations) {
  EarleyMatcher m(setup().cache);
  m.set_configuration_cache(configurations);
  m.accept_bytes(setup().prefix);
  std::vector<uint32_t> mask(setup().tok->vocabulary().bitmask_words());
  for (auto _ : state) {
    m.fill_next_token_bitmask(mask);
    benchmark::DoNotOptimize(mask.data());
  }
}
void BM_MaskCompose(benchmark::State& state) { mask_fill(state, false); }
void BM_MaskCachedConfiguration(benchmark::State& state) { mask_fill(state, true); }

void BM_MaskAcceptAndRollback(benchmark::State& state) {
  EarleyMatcher m(setup().cache);
  m.accept_bytes(setup().prefix);
  const std::vector<int32_t> ids = setup().tok->encode("mple text, ok", false);
  for (auto _ : state) {
    for (int32_t id : ids) m.accept_token(id);
    m.rollback(ids.size());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * ids.size()));
}

BENCHMARK(BM_MaskStateWalk)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MaskCompose)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MaskCachedConfiguration)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MaskAcceptAndRollback)->Unit(benchmark::kMicrosecond);

}  // namespace
