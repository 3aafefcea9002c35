// runtime/cli/tokenize.cpp — `lockstep tokenize`: text → token ids with any tokenizer file.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "grammar/utf8.h"
#include "runtime/cli/commands.h"
#include "runtime/tokenizer.h"
#include "runtime/vocab_tokenizer.h"

namespace lockstep::cli {

namespace {

struct TokenizeArgs {
  std::string tokenizer, text;
  bool ids = false, bos = false, special = false;
};

// Bytes shown on one line: valid UTF-8 text as is (controls as \n, \t, \xNN); a token
// that is not valid UTF-8 by itself (part of a character) with \xNN for its high bytes.
std::string printable(std::string_view bytes) {
  const bool text = utf8::is_valid(bytes);
  std::string out;
  for (char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\\') out += "\\\\";
    else if (b < 0x20 || b == 0x7F || (b >= 0x80 && !text)) out += fmt::format("\\x{:02X}", b);
    else out += c;
  }
  return out;
}

void run(const TokenizeArgs& a) {
  const auto tok = load_tokenizer(a.tokenizer);
  std::vector<int32_t> ids;
  if (const auto* v = dynamic_cast<const VocabTokenizer*>(tok.get())) {
    ids = v->encode(a.text, a.bos, a.special);
  } else {
    ids = tok->encode(a.text, a.bos);
  }
  if (a.ids) {
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) line += (i ? " " : "") + std::to_string(ids[i]);
    std::printf("%s\n", line.c_str());
    return;
  }
  for (int32_t id : ids) {
    const std::string shown = tok->vocabulary().is_control(id) ? tok->token_name(id)
                                                               : printable(tok->token_bytes(id));
    std::printf("%d\t%s\n", id, shown.c_str());
  }
}

}  // namespace

void add_tokenize(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Split text into tokens (id<TAB>bytes per line)");
  cmd->add_option("--tokenizer,-t", args->tokenizer,
                  "tokenizer.json, encoder.json (+ vocab.bpe), *.gguf or llama2.c tokenizer.bin")
      ->required();
  cmd->add_flag("--ids", args->ids, "Print only the ids, on one line");
  cmd->add_flag("--bos", args->bos, "Put the BOS token first (as prompts do)");
  cmd->add_flag("--special", args->special, "Match control tokens written in the text");
  cmd->add_option("text", args->text, "The text")->required();
  cmd->callback([args] { run(*args); });
}

}  // namespace lockstep::cli
