// runtime/cli/fuzz_ajv.cpp — see fuzz_ajv.h.
#include "runtime/cli/fuzz_ajv.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace lockstep::cli {

namespace {

std::string quoted(const std::string& s) {  // for /bin/sh
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string ajv_dir() {
  if (const char* d = std::getenv("LOCKSTEP_AJV_DIR"); d != nullptr && *d != '\0') return d;
  return std::string(LOCKSTEP_SOURCE_DIR) + "/tests/node";
}

}  // namespace

AjvVerdicts ajv_recheck(const std::string& kind, const std::string& source_file, const std::vector<std::string>& texts,
                        bool formats_as_annotations) {
  namespace fs = std::filesystem;
  AjvVerdicts v;
  const std::string dir = ajv_dir();
  if (!fs::exists(dir + "/validate_texts.js") || !fs::exists(dir + "/node_modules/ajv/package.json")) {
    v.skipped = fmt::format("ajv is not installed in {} (scripts/install-deps.sh installs it; $LOCKSTEP_AJV_DIR names "
                            "another place)",
                            dir);
    return v;
  }
  char tmpl[] = "/tmp/lockstep-fuzz-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    v.skipped = "no temporary folder for the texts";
    return v;
  }
  const fs::path tmp = tmpl;
  {
    std::ofstream out(tmp / "texts.jsonl", std::ios::binary);
    for (const auto& t : texts) {
      out << nlohmann::json(t).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    }
  }
  const std::string cmd = fmt::format("node {} {} {} {}{} 2>&1", quoted(dir + "/validate_texts.js"), kind,
                                      quoted(source_file), quoted((tmp / "texts.jsonl").string()),
                                      formats_as_annotations ? " --formats-as-annotations" : "");
  std::string output;
  if (FILE* p = popen(cmd.c_str(), "r"); p != nullptr) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
    const int status = pclose(p);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      const std::string first = output.substr(0, output.find('\n'));
      v.skipped = WIFEXITED(status) && WEXITSTATUS(status) == 127
                      ? "node is not installed (scripts/install-deps.sh installs it)"
                      : fmt::format("node exited with status {}: {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1, first);
    }
  } else {
    v.skipped = "cannot start node";
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (!v.skipped.empty()) return v;

  size_t pos = 0;
  while (pos < output.size()) {
    const size_t end = std::min(output.find('\n', pos), output.size());
    const std::string line = output.substr(pos, end - pos);
    pos = end + 1;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) continue;
    if (j.contains("unavailable")) {
      v.skipped = j["unavailable"].get<std::string>();
      return v;
    }
    if (j.contains("checked")) v.ran = j["checked"].get<size_t>() == texts.size();
    if (j.contains("index") && j.contains("error")) v.refused.emplace_back(j["index"].get<size_t>(), j["error"].get<std::string>());
  }
  if (!v.ran) v.skipped = "the validator did not report on every text: " + output.substr(0, 200);
  return v;
}

}  // namespace lockstep::cli
