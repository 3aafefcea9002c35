// runtime/cli/generate_speculative.cpp — `generate`'s speculative-decoding flags.
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/cli/commands.h"
#include "runtime/cli/generate_args.h"

namespace lockstep::cli {

void add_speculative_options(CLI::App& cmd, GenerateArgs& args) {
  cmd.add_option("--draft", args.draft_model,
                 "Speculative decoding with this draft model (same vocabulary; e.g. the model converted to Q8_0): the "
                 "output is distributed exactly as without it");
  cmd.add_option("--draft-layers", args.draft_layers,
                 "Speculative decoding with the model's own first L layers as the draft (self-speculation)")
      ->check(in_range(1, 1 << 20, ""));
  cmd.add_option("--lookup-ngram", args.lookup_ngram,
                 "Speculative decoding by prompt lookup: propose what followed the last N tokens the previous time")
      ->check(in_range(1, 1 << 20, ""));
  cmd.add_option("--draft-tokens", args.draft_tokens, "Speculative decoding: tokens the draft proposes per round")
      ->check(in_range(1, 256, ""))
      ->capture_default_str();
}

void add_guidance_options(CLI::App& cmd, GenerateArgs& args) {
  cmd.add_option("--cfg-scale", args.cfg_scale,
                 "Classifier-free guidance: z = z_uncond + s·(z − z_uncond), z_uncond from --negative-prompt's "
                 "context (1: off)")
      ->check(in_range(-100, 100, "1: off"))
      ->capture_default_str();
  cmd.add_option("--negative-prompt", args.negative_prompt,
                 "Classifier-free guidance: the context to steer away from (default: the BOS token alone)");
  cmd.add_option("--contrast-model", args.contrast_model,
                 "Contrastive decoding against this weaker model (same vocabulary): score log p − log p_weak");
  cmd.add_option("--contrast-alpha", args.contrast_alpha,
                 "Contrastive decoding: keep tokens with p >= alpha · the best allowed p")
      ->check(in_range(0, 1, ""))
      ->capture_default_str();
  cmd.add_option("--penalty-alpha", args.penalty_alpha,
                 "Contrastive search: pick among the --top-k tokens (default 4 here) by (1 − α)·p − α·(max cosine "
                 "similarity to the context's hidden states)")
      ->check(in_range(0, 1, ""));
}

void apply_guidance(const GenerateArgs& a, const LoadedModel& model, GenerateOptions& o) {
  o.cfg_scale = a.cfg_scale;
  o.negative_prompt = a.negative_prompt;
  o.contrast_alpha = a.contrast_alpha;
  if (!a.contrast_model.empty()) {
    const LoadedModel amateur = load_model(a.contrast_model);
    if (amateur.tokenizer->size() != model.tokenizer->size()) {
      throw std::runtime_error(fmt::format("--contrast-model {}: its vocabulary has {} tokens and the model's {}",
                                           a.contrast_model, amateur.tokenizer->size(), model.tokenizer->size()));
    }
    o.contrast_model = amateur.model;
  }
  if (a.penalty_alpha >= 0) {
    for (const CLI::Option* opt : a.sampling.sampling) {
      if (opt->count() > 0 && opt != a.top_k && opt->get_name().find("penalty") == std::string::npos &&
          opt->get_name() != "--repeat-last-n") {
        throw std::runtime_error(fmt::format("{} has no effect with --penalty-alpha: contrastive search picks among "
                                             "the --top-k tokens and draws nothing (drop one of them)",
                                             opt->get_name()));
      }
    }
    if (a.top_k && a.top_k->count() == 0) o.sampling.top_k = 4;
  }
}

std::optional<SpeculativeOptions> speculative_options(const GenerateArgs& a, const LoadedModel& target) {
  const int drafts = !a.draft_model.empty() + (a.draft_layers > 0) + (a.lookup_ngram > 0);
  if (drafts == 0) return std::nullopt;
  if (a.penalty_alpha >= 0) {
    throw std::runtime_error("--penalty-alpha (contrastive search) does not combine with a draft: drop one of them");
  }
  if (drafts > 1) {
    throw std::runtime_error("--draft, --draft-layers and --lookup-ngram each choose the draft: give one of them");
  }
  SpeculativeOptions s;
  s.draft_tokens = a.draft_tokens;
  if (a.draft_layers > 0) {
    s.kind = DraftKind::kLayers;
    s.draft_layers = a.draft_layers;
    const int32_t n = target.model->config().n_layers;
    if (a.draft_layers > n) {
      throw std::runtime_error(fmt::format("--draft-layers {}: the model has {} layers", a.draft_layers, n));
    }
  } else if (a.lookup_ngram > 0) {
    s.kind = DraftKind::kLookup;
    s.ngram = a.lookup_ngram;
  } else {
    s.kind = DraftKind::kModel;
    const LoadedModel draft = load_model(a.draft_model);
    const Vocabulary& tv = target.tokenizer->vocabulary();
    const Vocabulary& dv = draft.tokenizer->vocabulary();
    if (tv.size() != dv.size()) {
      throw std::runtime_error(fmt::format("--draft {}: its vocabulary has {} tokens and the model's {}: a draft must "
                                           "share the target's vocabulary, token for token",
                                           a.draft_model, dv.size(), tv.size()));
    }
    for (size_t i = 0; i < tv.size(); ++i) {
      const auto id = static_cast<int32_t>(i);
      // Control tokens have no text; their names differ between formats.
      if (tv.is_control(id) != dv.is_control(id) || (!tv.is_control(id) && tv.token_bytes(id) != dv.token_bytes(id))) {
        throw std::runtime_error(fmt::format("--draft {}: token {} is {:?} there and {:?} in the model's vocabulary: a "
                                             "draft must share the target's vocabulary, token for token",
                                             a.draft_model, i, std::string(dv.token_bytes(id)),
                                             std::string(tv.token_bytes(id))));
      }
    }
    s.draft_model = draft.model;
  }
  return s;
}

}  // namespace lockstep::cli
