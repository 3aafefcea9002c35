// Guidance worked by hand on the example logits (6, 5, 4.5, 3.5, 2, 0).
#include <cmath>

#include <gtest/gtest.h>

#include "sampler/guidance.h"

namespace lockstep {
namespace {

const std::vector<float> kLogits = {6.0f, 5.0f, 4.5f, 3.5f, 2.0f, 0.0f};

TEST(Guidance, ClassifierFreeGuidanceWorkedExample) {
  // Unconditional logits all 5; s = 1.5: z + 0.5·(z − 5) = 6.5, 5, 4.25, 2.75, 0.5, −2.5.
  std::vector<float> z = kLogits;
  const std::vector<float> uncond(6, 5.0f);
  classifier_free_guidance(z, uncond, 1.5f);
  const std::vector<float> expected = {6.5f, 5.0f, 4.25f, 2.75f, 0.5f, -2.5f};
  EXPECT_EQ(z, expected);
  // s = 1 leaves the conditional logits bit for bit, whatever the unconditional ones.
  std::vector<float> same = kLogits;
  classifier_free_guidance(same, {{0.1f, 9.0f, -3.0f, 7.7f, 1e6f, -1e6f}}, 1.0f);
  EXPECT_EQ(same, kLogits);
  // s = 0 gives the unconditional logits.
  std::vector<float> u = kLogits;
  classifier_free_guidance(u, uncond, 0.0f);
  EXPECT_EQ(u, uncond);
}

TEST(Guidance, ContrastiveDecodingWorkedExample) {
  // Amateur logits 6, 0, 0, 0, 0, 0: log p_a = −0.01232 for token 0 and −6.01232 for the rest
  // (log-sum-exp 6 + ln(1 + 5e−6) = 6.01232). α = 0.1: the cut is 6 + ln 0.1 = 3.6974, so
  // 3.5, 2 and 0 go. Scores z_e − log p_a: 6.0123, 11.0123, 10.5123 — the amateur's
  // favourite loses to the tokens only the expert likes.
  const std::vector<float> amateur = {6.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  auto cd = make_contrastive_decoding(&amateur, 0.1f);
  Candidates c;
  c.assign(kLogits);
  cd->apply(c);
  ASSERT_EQ(c.data.size(), 3u);
  std::map<int32_t, float> score;
  for (const auto& t : c.data) score[t.id] = t.logit;
  EXPECT_NEAR(score[0], 6.01232f, 1e-4f);
  EXPECT_NEAR(score[1], 11.01232f, 1e-4f);
  EXPECT_NEAR(score[2], 10.51232f, 1e-4f);
  auto greedy = make_greedy();
  greedy->apply(c);
  EXPECT_EQ(c.selected, 1);
  // The cut is relative to the best token left (by the grammar): with token 0 gone, the
  // threshold is 5 + ln 0.1 = 2.697, and 3.5 stays.
  Candidates masked;
  masked.assign(kLogits);
  masked.data.erase(masked.data.begin());
  cd->apply(masked);
  EXPECT_EQ(masked.data.size(), 3u);
  EXPECT_THROW(make_contrastive_decoding(&amateur, 1.5f), std::invalid_argument);
}

TEST(Guidance, ContrastiveSearchScoreWorkedExample) {
  // Context hidden states (1, 0) and (0, 1); α = 0.5, p = 0.6.
  const std::vector<float> context = {1.0f, 0.0f, 0.0f, 1.0f};
  // (1, 0) repeats the first: cosine 1 → 0.5·0.6 − 0.5·1 = −0.2.
  EXPECT_NEAR(contrastive_search_score(0.6, std::vector<float>{1.0f, 0.0f}, context, 0.5f), -0.2, 1e-12);
  // (1, 1): cosine 1/√2 with both → 0.3 − 0.35355 = −0.05355.
  EXPECT_NEAR(contrastive_search_score(0.6, std::vector<float>{1.0f, 1.0f}, context, 0.5f), 0.3 - 0.5 / std::sqrt(2.0),
              1e-12);
  // (−1, 0): cosines −1 and 0, the maximum 0 → 0.3.
  EXPECT_NEAR(contrastive_search_score(0.6, std::vector<float>{-1.0f, 0.0f}, context, 0.5f), 0.3, 1e-12);
  // α = 0: the probability alone.
  EXPECT_DOUBLE_EQ(contrastive_search_score(0.6, std::vector<float>{1.0f, 0.0f}, context, 0.0f), 0.6);
}

}  // namespace
}  // namespace lockstep
