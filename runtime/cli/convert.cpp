// runtime/cli/convert.cpp — `lockstep convert`: llama2.c checkpoint → GGUF, or a llama
// GGUF of any shape with random weights (for measuring the forward pass).
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "runtime/cli/commands.h"
#include "runtime/model.h"
#include "runtime/tokenizer.h"

namespace lockstep::cli {

namespace {

// "dim=768,hidden=2048,layers=8,heads=12,kv_heads=4,context=1024" (every key optional);
// the vocabulary is the tokenizer's.
LlamaConfig parse_shape(const std::string& spec, int32_t vocab_size) {
  LlamaConfig c;
  std::map<std::string, int32_t*> keys = {{"dim", &c.dim},         {"hidden", &c.hidden_dim}, {"layers", &c.n_layers},
                                          {"heads", &c.n_heads},   {"kv_heads", &c.n_kv_heads},
                                          {"context", &c.seq_len}};
  c.dim = 768, c.hidden_dim = 2048, c.n_layers = 8, c.n_heads = 12, c.n_kv_heads = 4, c.seq_len = 1024;
  std::stringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    const auto eq = item.find('=');
    const auto key = keys.find(item.substr(0, eq));
    int32_t value = 0;
    try {
      if (eq == std::string::npos || key == keys.end()) throw std::invalid_argument("key");
      size_t used = 0;
      value = std::stoi(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1 || value <= 0) throw std::invalid_argument("value");
    } catch (const std::logic_error&) {
      throw std::runtime_error(fmt::format("--random-llama '{}': expected KEY=N items (N > 0) separated by commas, "
                                           "keys dim, hidden, layers, heads, kv_heads, context",
                                           item));
    }
    *key->second = value;
  }
  c.vocab_size = vocab_size;
  return c;
}

}  // namespace

void add_convert(CLI::App& app) {
  struct Args {
    std::string model, tokenizer, out, type = "f32", random;
    uint64_t seed = 1;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("convert", "Write a llama2.c checkpoint and its tokenizer as GGUF, or a "
                                                "random-weight llama model (--random-llama)");
  auto* model = cmd->add_option("--model,-m", args->model, "llama2.c checkpoint (.bin)");
  cmd->add_option("--tokenizer", args->tokenizer, "its llama2.c tokenizer.bin (for --random-llama: the vocabulary)")
      ->required();
  cmd->add_option("--out,-o", args->out, "GGUF file to write")->required();
  cmd->add_option("--type", args->type, "Weight type: f32, f16 or q8_0")
      ->check(CLI::IsMember({"f32", "f16", "q8_0"}))
      ->capture_default_str();
  auto* random = cmd->add_option("--random-llama", args->random,
                                 "Instead of a checkpoint: random weights of this shape, e.g. "
                                 "dim=768,hidden=2048,layers=8,heads=12,kv_heads=4,context=1024 (those are the "
                                 "defaults of the keys left out)");
  cmd->add_option("--seed", args->seed, "Seed of --random-llama's weights")->capture_default_str();
  model->excludes(random);
  cmd->callback([args] {
    const WeightType type = args->type == "q8_0" ? WeightType::kQ8_0
                            : args->type == "f16" ? WeightType::kF16
                                                  : WeightType::kF32;
    if (!args->random.empty()) {
      const auto vocab = read_llama2c_vocab(args->tokenizer);
      const LlamaConfig c = parse_shape(args->random, static_cast<int32_t>(vocab.pieces.size()));
      write_llama_gguf(*random_llama_model(c, args->seed), args->tokenizer,
                       fmt::format("random-llama-{}", args->random), args->out, type);
    } else if (args->model.empty()) {
      throw std::runtime_error("give the checkpoint to convert (--model) or a shape (--random-llama)");
    } else {
      convert_llama2c_to_gguf(args->model, args->tokenizer, args->out, type);
    }
    std::fprintf(stderr, "lockstep: wrote %s (%s)\n", args->out.c_str(), args->type.c_str());
  });
}

}  // namespace lockstep::cli
