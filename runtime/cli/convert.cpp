// runtime/cli/convert.cpp — `lockstep convert`: llama2.c checkpoint → GGUF.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "runtime/cli/commands.h"
#include "runtime/model.h"

namespace lockstep::cli {

void add_convert(CLI::App& app) {
  struct Args {
    std::string model, tokenizer, out, type = "f32";
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("convert", "Write a llama2.c checkpoint and its tokenizer as GGUF");
  cmd->add_option("--model,-m", args->model, "llama2.c checkpoint (.bin)")->required();
  cmd->add_option("--tokenizer", args->tokenizer, "its llama2.c tokenizer.bin")->required();
  cmd->add_option("--out,-o", args->out, "GGUF file to write")->required();
  cmd->add_option("--type", args->type, "Weight type: f32, f16 or q8_0")
      ->check(CLI::IsMember({"f32", "f16", "q8_0"}))
      ->capture_default_str();
  cmd->callback([args] {
    const WeightType type = args->type == "q8_0" ? WeightType::kQ8_0
                            : args->type == "f16" ? WeightType::kF16
                                                  : WeightType::kF32;
    convert_llama2c_to_gguf(args->model, args->tokenizer, args->out, type);
    std::fprintf(stderr, "lockstep: wrote %s (%s)\n", args->out.c_str(), args->type.c_str());
  });
}

}  // namespace lockstep::cli
