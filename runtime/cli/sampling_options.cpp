// runtime/cli/sampling_options.cpp — see sampling_options.h.
#include "runtime/cli/sampling_options.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/cli/commands.h"

namespace lockstep::cli {

void add_sampling_options(CLI::App& cmd, SamplingArgs& args) {
  const size_t before = cmd.get_options().size();
  auto& s = args.params;
  const double inf = HUGE_VAL;
  cmd.add_option("--temperature", s.temperature, "Temperature (0: greedy)")
      ->check(in_range(0, inf, "0: greedy"))
      ->capture_default_str();
  args.truncation.push_back(
      cmd.add_option("--top-k", s.top_k, "Top-k (0: off)")->check(in_range(0, 1 << 30, "0: off"))->capture_default_str());
  args.truncation.push_back(cmd.add_option("--top-p", s.top_p, "Top-p / nucleus (1: off)")
                                ->check(in_range(0, 1, "1: off", true))
                                ->capture_default_str());
  args.truncation.push_back(
      cmd.add_option("--min-p", s.min_p, "Min-p (0: off)")->check(in_range(0, 1, "0: off"))->capture_default_str());
  args.truncation.push_back(cmd.add_option("--typical-p", s.typical_p,
                                           "Locally typical sampling: keep the tokens closest to the expected "
                                           "surprise up to this mass (1: off)")
                                ->check(in_range(0, 1, "1: off", true))
                                ->capture_default_str());
  args.truncation.push_back(
      cmd.add_option("--epsilon-cutoff", s.epsilon_cutoff, "ε-sampling: drop tokens with probability below ε (0: off)")
          ->check(in_range(0, 0.999999, "0: off"))
          ->capture_default_str());
  args.truncation.push_back(cmd.add_option("--eta-cutoff", s.eta_cutoff,
                                           "η-sampling: drop tokens below min(ε, √ε·exp(−entropy)) (0: off)")
                                ->check(in_range(0, 0.999999, "0: off"))
                                ->capture_default_str());
  args.mirostat = cmd.add_option("--mirostat", s.mirostat,
                                 "Mirostat version 1 or 2 (0: off); replaces top-k, typical, top-p, min-p and the "
                                 "cut-offs, and holds the surprise near --mirostat-tau")
                      ->check(CLI::IsMember({0, 1, 2}))
                      ->capture_default_str();
  cmd.add_option("--mirostat-tau", s.mirostat_tau, "Mirostat target surprise, bits")
      ->check(in_range(0, 1e6, "", true))
      ->capture_default_str();
  cmd.add_option("--mirostat-eta", s.mirostat_eta, "Mirostat learning rate")
      ->check(in_range(0, 1e6, "", true))
      ->capture_default_str();
  cmd.add_option("--repeat-penalty", s.repeat_penalty, "Repetition penalty (1: off)")
      ->check(in_range(0, inf, "1: off", true))
      ->capture_default_str();
  cmd.add_option("--repeat-last-n", s.penalty_last_n, "Tokens the penalties look back (-1: all)")
      ->check(in_range(-1, 1 << 30, "-1: all"))
      ->capture_default_str();
  cmd.add_option("--frequency-penalty", s.frequency_penalty, "Frequency penalty (0: off)")
      ->check(in_range(-inf, inf, ""))
      ->capture_default_str();
  cmd.add_option("--presence-penalty", s.presence_penalty, "Presence penalty (0: off)")
      ->check(in_range(-inf, inf, ""))
      ->capture_default_str();
  const std::vector<CLI::Option*> options = cmd.get_options();
  args.sampling.assign(options.begin() + static_cast<std::ptrdiff_t>(before), options.end());
  cmd.add_option("--logit-bias", args.logit_bias,
                 "TOKEN_ID=BIAS or TEXT=BIAS added to logits (repeatable, a token's biases add up; -inf bans). A TEXT "
                 "names every token "
                 "spelled exactly so (' Paris=-inf'); quote it as a JSON string when it is all digits "
                 "('\"42\"=2')");
}

namespace {

// "TOKEN_ID=BIAS" / "TEXT=BIAS" / "\"TEXT\"=BIAS": the ids it names and the bias.
std::pair<std::vector<int32_t>, float> parse_bias(const std::string& b, const Vocabulary& vocab) {
  const auto eq = b.rfind('=');
  const auto malformed = [&](const std::string& why) {
    return std::runtime_error(fmt::format("--logit-bias '{}': {} (expected TOKEN_ID=BIAS or TEXT=BIAS)", b, why));
  };
  if (eq == std::string::npos) throw malformed("no '='");
  const std::string key = b.substr(0, eq), value = b.substr(eq + 1);
  float bias;
  try {
    size_t used = 0;
    bias = std::stof(value, &used);
    if (used != value.size()) throw std::invalid_argument("trailing");
  } catch (const std::logic_error&) {
    throw malformed(fmt::format("'{}' is not a number", value));
  }
  // NaN or +inf would make every probability NaN; -inf bans the token.
  if (std::isnan(bias) || bias == HUGE_VALF) throw malformed("a bias is a finite number or -inf");
  if (key.empty()) throw malformed("the token is empty");
  if (key.find_first_not_of("0123456789") == std::string::npos) {
    long long id = -1;
    try {
      id = std::stoll(key);
    } catch (const std::out_of_range&) {
    }
    if (id < 0 || static_cast<unsigned long long>(id) >= vocab.size()) {
      throw std::runtime_error(fmt::format("--logit-bias '{}': token id {} is outside the vocabulary (0..{})", b, key,
                                           vocab.size() - 1));
    }
    return {{static_cast<int32_t>(id)}, bias};
  }
  std::string text = key;
  if (key.size() >= 2 && key.front() == '"' && key.back() == '"') {
    try {
      text = nlohmann::json::parse(key).get<std::string>();
    } catch (const nlohmann::json::exception&) {
      throw malformed(fmt::format("{} is not a JSON string", key));
    }
  }
  std::vector<int32_t> ids = tokens_spelled(vocab, text);
  if (ids.empty()) {
    throw std::runtime_error(fmt::format("--logit-bias '{}': no token of the vocabulary is spelled {} (a text "
                                         "names whole tokens; `lockstep tokenize` shows how a text splits)",
                                         b, nlohmann::json(text).dump(-1, ' ', false,
                                                                      nlohmann::json::error_handler_t::replace)));
  }
  return {ids, bias};
}

}  // namespace

SamplerParams resolve_sampling(const SamplingArgs& args, const Vocabulary& vocab) {
  SamplerParams p = args.params;
  if (p.mirostat != 0) {
    for (const CLI::Option* o : args.truncation) {
      if (o->count() > 0) {
        throw std::runtime_error(fmt::format("{} has no effect with --mirostat {}: mirostat chooses its own "
                                             "truncation (drop one of them)",
                                             o->get_name(), p.mirostat));
      }
    }
  }
  for (const auto& b : args.logit_bias) {
    const auto [ids, bias] = parse_bias(b, vocab);
    for (const int32_t id : ids) p.logit_bias[id] += bias;
  }
  return p;
}

}  // namespace lockstep::cli
