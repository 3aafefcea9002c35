// Twenty prompts in the bundled model's domain (short children's stories), for the decoding
// methods' tests.
#pragma once

namespace lockstep::test_prompts {

inline constexpr const char* kPrompts[20] = {
    "Once upon a time",  "One day",           "The cat",          "Lily and Ben",     "Tom had a",
    "There was a big",   "The sun was",       "Mom said",         "The little bird",  "In the park",
    "Sara wanted to",    "The dog ran",       "Tim and his mom",  "It was a rainy",   "The boy saw a",
    "Anna liked to",     "A small fish",      "The tree was",     "Ben found a",      "At night, the",
};

}  // namespace lockstep::test_prompts
