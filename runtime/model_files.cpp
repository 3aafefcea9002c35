// runtime/model_files.cpp — finding the model and tokenizer files to load.
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "runtime/errors.h"
#include "runtime/generator.h"
#include "runtime/gguf.h"

namespace lockstep {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBundledModel = "stories260K.bin";
constexpr const char* kBundledTokenizer = "tok512.bin";

bool is_tokenizer_name(const std::string& name) {
  return name == "tokenizer.bin" || name == "tokenizer.json" ||
         (name.rfind("tok", 0) == 0 && name.size() > 4 && name.ends_with(".bin"));
}

// A tokenizer file beside the model: tokenizer.json, tokenizer.bin, or tok*.bin.
std::string find_tokenizer_in(const fs::path& dir) {
  for (const char* name : {"tokenizer.json", "tokenizer.bin", kBundledTokenizer}) {
    if (fs::is_regular_file(dir / name)) return (dir / name).string();
  }
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && is_tokenizer_name(name)) return e.path().string();
  }
  return "";
}

// The model file in a directory: stories260K.bin, or the only *.gguf / *.bin that is not a
// tokenizer.
std::string find_model_in(const fs::path& dir) {
  if (fs::is_regular_file(dir / kBundledModel)) return (dir / kBundledModel).string();
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && (name.ends_with(".gguf") || (name.ends_with(".bin") && !is_tokenizer_name(name)))) {
      found.push_back(e.path().string());
    }
  }
  if (found.size() > 1) {
    throw std::runtime_error(fmt::format("{}: holds {} model files; name one with --model FILE",
                                         dir.string(), found.size()));
  }
  return found.empty() ? "" : found[0];
}

bool is_gguf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

}  // namespace

std::vector<std::string> bundled_model_dirs() {
  std::vector<std::string> dirs;
  auto add = [&](const fs::path& p) {
    const std::string s = p.lexically_normal().string();
    for (const auto& d : dirs) {
      if (d == s) return;
    }
    dirs.push_back(s);
  };
  add(fs::path(LOCKSTEP_SHARED_DIR) / "models" / "stories260K");
  add(fs::absolute("../shared/models/stories260K"));
  if (const char* env = std::getenv("LOCKSTEP_MODEL_DIR"); env && *env) {
    add(fs::path(env));
    add(fs::path(env) / "stories260K");
  }
  fs::path cache;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    cache = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    cache = fs::path(home) / ".cache";
  }
  if (!cache.empty()) add(cache / "lockstep" / "stories260K");
  return dirs;
}

LoadedModel load_model(const std::string& model_arg, const std::string& tokenizer_arg) {
  std::string model_path;
  if (model_arg.empty()) {
    const auto dirs = bundled_model_dirs();
    for (const auto& d : dirs) {
      if (fs::is_regular_file(fs::path(d) / kBundledModel) &&
          fs::is_regular_file(fs::path(d) / kBundledTokenizer)) {
        model_path = (fs::path(d) / kBundledModel).string();
        break;
      }
    }
    if (model_path.empty()) {
      std::string where;
      for (const auto& d : dirs) where += "\n  " + d;
      throw std::runtime_error(fmt::format(
          "the bundled model (stories260K.bin + tok512.bin) was not found; looked in:{}\n"
          "Get it from its public origin, karpathy's tinyllamas "
          "(https://huggingface.co/karpathy/tinyllamas/tree/main/stories260K), into one of "
          "those folders, e.g. with: scripts/fetch-model.sh (downloads into "
          "$LOCKSTEP_MODEL_DIR or ~/.cache/lockstep/stories260K)",
          where));
    }
  } else if (fs::is_directory(model_arg)) {
    model_path = find_model_in(model_arg);
    if (model_path.empty()) {
      throw std::runtime_error(fmt::format("{}: no model file (*.gguf, *.bin) in this folder", model_arg));
    }
  } else if (fs::is_regular_file(model_arg)) {
    model_path = model_arg;
  } else {
    throw std::runtime_error(fmt::format("{}: {}", model_arg,
                                         fs::exists(model_arg) ? "not a regular file or folder" : "no such model file or folder"));
  }

  LoadedModel out;
  out.model_path = model_path;
  if (const uintmax_t size = fs::file_size(model_path); size < 4) {
    throw ModelFormatError(model_path, size, fmt::format("file too short ({} bytes) to be a GGUF or llama2.c model", size));
  }
  // A *.gguf without the magic gets GGUF's "wrong magic" error, not llama2.c's.
  if (is_gguf(model_path) || model_path.ends_with(".gguf")) {
    auto file = std::make_shared<const GgufFile>(model_path);
    out.model = load_gguf_model(file);
    if (tokenizer_arg.empty()) {
      out.tokenizer = load_gguf_tokenizer(*file);
      out.tokenizer_path = model_path;
    } else {
      out.tokenizer = load_tokenizer(tokenizer_arg);
      out.tokenizer_path = tokenizer_arg;
    }
    return out;
  }

  std::string tokenizer_path = tokenizer_arg;
  if (tokenizer_path.empty()) {
    tokenizer_path = find_tokenizer_in(fs::path(model_path).parent_path().empty()
                                           ? fs::path(".")
                                           : fs::path(model_path).parent_path());
    if (tokenizer_path.empty()) {
      throw std::runtime_error(fmt::format(
          "{}: no tokenizer beside the model (looked for tokenizer.json, tokenizer.bin, "
          "tok*.bin in its folder); name one with --tokenizer FILE",
          model_path));
    }
  } else if (!fs::is_regular_file(tokenizer_path)) {
    throw std::runtime_error(fmt::format("{}: {}", tokenizer_path,
                                         fs::exists(tokenizer_path) ? "not a regular file" : "no such tokenizer file"));
  }

  out.tokenizer_path = tokenizer_path;
  out.model = load_llama2c_model(model_path);
  if (tokenizer_path.ends_with(".bin") && !is_gguf(tokenizer_path)) {
    out.tokenizer = load_llama2c_tokenizer(tokenizer_path, out.model->config().vocab_size);
  } else {
    out.tokenizer = load_tokenizer(tokenizer_path);
  }
  return out;
}

}  // namespace lockstep
