// Twenty prompts in the bundled model's domain (short children's stories), and the greedy
// settings the decoding methods' tests compare against.
#pragma once

#include <memory>
#include <utility>

#include "runtime/generator.h"

namespace lockstep::test_prompts {

inline constexpr const char* kPrompts[20] = {
    "Once upon a time",  "One day",           "The cat",          "Lily and Ben",     "Tom had a",
    "There was a big",   "The sun was",       "Mom said",         "The little bird",  "In the park",
    "Sara wanted to",    "The dog ran",       "Tim and his mom",  "It was a rainy",   "The boy saw a",
    "Anna liked to",     "A small fish",      "The tree was",     "Ben found a",      "At night, the",
};

// Greedy decoding of `n` tokens after `prompt`, under `g` (none: unconstrained), without
// jump-forward: the methods compared with it choose forced text like any other token.
inline GenerateOptions greedy_options(const char* prompt, std::shared_ptr<const GrammarAutomaton> g, int32_t n) {
  GenerateOptions o;
  o.prompt = prompt;
  o.max_tokens = n;
  o.sampling.temperature = 0;
  o.grammar = std::move(g);
  o.jump_forward = false;
  return o;
}

}  // namespace lockstep::test_prompts
