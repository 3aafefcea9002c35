// runtime/cli/maskbench.cpp — `lockstep bench maskbench`: JSON Schema coverage and mask
// latency the way MaskBench (guidance-ai/jsonschemabench) measures them.
//
// For each file {"schema", "tests": [{"valid", "data"}]}: compile the schema (time to first
// mask = compile + first mask), then feed every test instance, serialized as MaskBench does
// (separators ", " and ": ", UTF-8 kept) and compactly, token by token through the matcher:
// a valid instance must pass every mask and end accepted; an invalid one must be stopped.
// Schemas run in forked worker processes, so a crash or a timeout costs one schema, not the
// run. Two modes: `shared` keeps each worker's process-wide caches from one schema to the
// next (a long-running service); `fresh` forks a child per schema from a worker that has
// loaded and indexed the vocabulary, so no grammar-level cache is carried over (a new process,
// or a service meeting a schema unlike any before).
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "automata/matcher.h"
#include "automata/token_bitmask.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/json_files.h"
#include "runtime/json_warm_start.h"
#include "runtime/mapped_file.h"
#include "runtime/tokenizer.h"
#include "schemas/json_schema.h"

namespace lockstep::cli {

namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

struct Args {
  std::vector<std::string> inputs;
  std::string tokenizer = LOCKSTEP_SHARED_DIR "/vocab/llama3-hf/tokenizer.json";
  std::string jsonl;
  std::string property_order = "any";
  double timeout_s = 60;
  unsigned workers = 0;
  std::string mode = "both";
  bool prepare = true;
};

// Python's repr(float), which json.dumps writes: the shortest round-trip digits, in fixed
// notation with at least one fractional digit when the decimal exponent is in [-4, 16),
// else d.ddd e±XX (at least two exponent digits).
std::string python_float(double d) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string sci(buf, r.ptr);  // "-d.ddde+XX"
  const size_t e = sci.find('e');
  const bool negative = sci[0] == '-';
  std::string digits;
  for (size_t i = negative ? 1 : 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exponent = std::stoi(sci.substr(e + 1));
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
      out += digits + std::string(static_cast<size_t>(exponent) + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(exponent) + 1) + "." + digits.substr(static_cast<size_t>(exponent) + 1);
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02}", exponent < 0 ? '-' : '+', std::abs(exponent));
  }
  return out;
}

// Python's json.dumps(value, ensure_ascii=False): separators ", " and ": " (MaskBench's
// form), or "," and ":" with `compact`.
void dump_python(const ojson& v, std::string& out, bool compact) {
  const char* comma = compact ? "," : ", ";
  const char* colon = compact ? ":" : ": ";
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [k, x] : v.items()) {
      if (!first) out += comma;
      first = false;
      out += ojson(k).dump(-1, ' ', false, ojson::error_handler_t::replace);
      out += colon;
      dump_python(x, out, compact);
    }
    out += '}';
  } else if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += comma;
      dump_python(v[i], out, compact);
    }
    out += ']';
  } else if (v.is_number_float()) {
    out += python_float(v.get<double>());
  } else {
    out += v.dump(-1, ' ', false, ojson::error_handler_t::replace);
  }
}

struct Result {
  std::string status = "pass";
  double ttfm_us = 0;
  double schema_us = 0;   // JSON Schema → grammar
  double grammar_us = 0;  // grammar → compiled automata
  size_t tokens = 0;
  double mask_us_max = 0;
  std::string error;
  std::vector<float> mask_us;
};

// One test instance, serialized and tokenized before any clock starts (as every engine's
// benchmark does: tokenization is not the grammar engine's work).
struct Instance {
  bool valid = false;
  std::string text;
  std::vector<int32_t> ids;
};

// Runs one file in this process.
Result run_file(const fs::path& path, const Tokenizer& tok, const JsonSchemaOptions& options) {
  Result r;
  const ojson file = ojson::parse(read_file(path.string()));
  std::vector<Instance> instances;
  for (const auto& t : file.value("tests", ojson::array())) {
    std::string spaced, compact;
    dump_python(t["data"], spaced, false);
    dump_python(t["data"], compact, true);
    for (std::string* text : {&spaced, &compact}) {
      std::vector<int32_t> ids = tok.encode_continuation(*text);
      instances.push_back({t.value("valid", false), std::move(*text), std::move(ids)});
    }
  }
  const auto t0 = Clock::now();
  std::shared_ptr<TokenMaskCache> cache;
  try {
    CompiledSchema cs = compile_json_schema(file.at("schema"), options);
    const auto t1 = Clock::now();
    cache = std::make_shared<TokenMaskCache>(GrammarAutomaton::compile(std::move(cs.grammar)), tok.shared_vocabulary());
    r.schema_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
    r.grammar_us = std::chrono::duration<double, std::micro>(Clock::now() - t1).count();
  } catch (const std::exception& e) {
    r.status = "compile_error";
    r.error = e.what();
    return r;
  }
  std::vector<uint32_t> mask(tok.vocabulary().bitmask_words());
  bool first = true;
  for (const Instance& instance : instances) {
    EarleyMatcher m(cache);
    const std::vector<int32_t>& ids = instance.ids;
    bool rejected = false;
    for (size_t i = 0; i <= ids.size() && !rejected; ++i) {
      const auto tm = Clock::now();
      m.fill_next_token_bitmask(mask);
      const double us = std::chrono::duration<double, std::micro>(Clock::now() - tm).count();
      if (first) {
        r.ttfm_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
        first = false;
      }
      r.mask_us.push_back(static_cast<float>(us));
      r.mask_us_max = std::max(r.mask_us_max, us);
      if (i == ids.size()) {
        rejected = !m.is_accepting();
        break;
      }
      ++r.tokens;
      const int32_t id = ids[i];
      if (!test_bit(mask, static_cast<size_t>(id)) || !m.accept_token(id)) rejected = true;
    }
    if (instance.valid && rejected) {
      r.status = "validation_error";
      r.error = "valid instance rejected: " + instance.text.substr(0, 200);
      return r;
    }
    if (!instance.valid && !rejected) {
      r.status = "invalidation_error";
      r.error = "invalid instance accepted: " + instance.text.substr(0, 200);
      return r;
    }
  }
  if (first) {
    // No instances: time to first mask still measured.
    EarleyMatcher m(cache);
    m.fill_next_token_bitmask(mask);
    r.ttfm_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  }
  return r;
}

std::string encode_result(const Result& r) {
  ojson j = {{"status", r.status}, {"ttfm_us", r.ttfm_us}, {"schema_us", r.schema_us},
             {"grammar_us", r.grammar_us}, {"tokens", r.tokens},
             {"mask_us_max", r.mask_us_max}, {"error", r.error}, {"mask_us", r.mask_us}};
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace) + "\n";
}

Result decode_result(const std::string& line) {
  const ojson j = ojson::parse(line);
  Result r;
  r.status = j["status"];
  r.ttfm_us = j["ttfm_us"];
  r.schema_us = j["schema_us"];
  r.grammar_us = j["grammar_us"];
  r.tokens = j["tokens"];
  r.mask_us_max = j["mask_us_max"];
  r.error = j["error"];
  r.mask_us = j["mask_us"].get<std::vector<float>>();
  return r;
}

// A forked worker: reads file paths (one per line) on `in`, writes one result line on `out`.
struct Worker {
  pid_t pid = -1;
  int to = -1, from = -1;
  std::string buffer;
  size_t file = SIZE_MAX;
  Clock::time_point started;
};

// Runs `run` (an exception is a crash of the schema) and writes its result line to `fd`;
// a process whose reader is gone exits.
template <typename Run>
void write_result(int fd, Run run) {
  Result r;
  try {
    r = run();
  } catch (const std::exception& e) {
    r.status = "crash";
    r.error = e.what();
  }
  const std::string s = encode_result(r);
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n <= 0) _exit(1);
    done += static_cast<size_t>(n);
  }
}

// A forked child shares the worker's memory copy-on-write: its first write to each page the
// worker had written (the heap that loading the vocabulary left, free chunks that the
// allocator hands out again) costs a page fault and a page copy that a process which loaded
// the vocabulary itself would not pay. Before any clock, the child makes its own the private
// writable mappings the worker wrote to ("Anonymous" above 0 in smaps), up to
// kMaxPopulatedMapping each: larger ones are reservations (a sanitizer's shadow memory) that
// populating would commit whole. MADV_POPULATE_WRITE is Linux 5.14; on an older kernel
// nothing is done. docs/masks.md, "Cold start", has the measurement.
constexpr unsigned long kMaxPopulatedMapping = 1ul << 30;

void own_private_memory() {
#ifdef MADV_POPULATE_WRITE
  std::ifstream smaps("/proc/self/smaps");
  unsigned long lo = 0, hi = 0;
  bool writable = false;
  for (std::string line; std::getline(smaps, line);) {
    char perms[5] = {};
    unsigned long a = 0, b = 0, kb = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &a, &b, perms) == 3) {
      lo = a, hi = b;
      writable = perms[0] == 'r' && perms[1] == 'w' && perms[3] == 'p';
    } else if (writable && std::sscanf(line.c_str(), "Anonymous: %lu kB", &kb) == 1 && kb > 0 &&
               hi - lo <= kMaxPopulatedMapping) {
      madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
    }
  }
#endif
}

// Runs one file in a child forked for it (fresh mode): the child dies with the worker, and a
// child that dies without a result is reported as a crash.
Result run_file_in_child(const std::string& path, const Tokenizer& tok, const JsonSchemaOptions& options) {
  int up[2];
  if (pipe(up) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(up[0]);
    own_private_memory();
    write_result(up[1], [&] { return run_file(path, tok, options); });
    _exit(0);
  }
  close(up[1]);
  std::string text;
  char buf[65536];
  for (ssize_t n; (n = read(up[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  close(up[0]);
  waitpid(pid, nullptr, 0);
  if (text.empty() || text.back() != '\n') {
    Result r;
    r.status = "crash";
    r.error = "the process of this schema died";
    return r;
  }
  return decode_result(text);
}

Worker spawn(const Tokenizer& tok, const JsonSchemaOptions& options, bool fresh) {
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // Keep only this worker's two pipe ends: a copy of another worker's pipe held here would
    // keep that worker from ever seeing end of input.
    for (int fd = 3; fd < 4096; ++fd) {
      if (fd != down[0] && fd != up[1]) close(fd);
    }
    FILE* in = fdopen(down[0], "r");
    char line[8192];
    while (fgets(line, sizeof line, in)) {
      std::string p(line);
      if (!p.empty() && p.back() == '\n') p.pop_back();
      write_result(up[1], [&] { return fresh ? run_file_in_child(p, tok, options) : run_file(p, tok, options); });
    }
    _exit(0);
  }
  close(down[0]);
  close(up[1]);
  return {pid, down[1], up[0], "", SIZE_MAX, {}};
}

double pct(std::vector<float>& v, double q) {
  if (v.empty()) return 0;
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(i), v.end());
  return v[i];
}

// Runs every file in `a.workers` worker processes: returns one result per file.
std::vector<Result> run_mode(const Args& a, const std::vector<fs::path>& files, const Tokenizer& tok,
                             const JsonSchemaOptions& options, bool fresh) {
  std::vector<Result> results(files.size());
  const unsigned n_workers = a.workers ? a.workers : std::max(1u, std::thread::hardware_concurrency());
  std::vector<Worker> workers;
  for (unsigned i = 0; i < n_workers; ++i) workers.push_back(spawn(tok, options, fresh));
  size_t next = 0, done = 0;
  auto assign = [&](Worker& w) {
    if (next >= files.size()) return;
    w.file = next++;
    w.started = Clock::now();
    const std::string line = files[w.file].string() + "\n";
    if (write(w.to, line.data(), line.size()) != static_cast<ssize_t>(line.size())) w.file = SIZE_MAX;
  };
  auto finish = [&](Worker& w, Result r) {
    results[w.file] = std::move(r);
    ++done;
    w.file = SIZE_MAX;
    if (done % 500 == 0) std::fprintf(stderr, "maskbench (%s): %zu / %zu\n", fresh ? "fresh" : "shared", done, files.size());
  };
  auto restart = [&](Worker& w) {
    kill(w.pid, SIGKILL);
    waitpid(w.pid, nullptr, 0);
    close(w.to);
    close(w.from);
    w = spawn(tok, options, fresh);
  };
  for (auto& w : workers) assign(w);
  while (done < files.size()) {
    std::vector<pollfd> fds;
    for (auto& w : workers) fds.push_back({w.from, POLLIN, 0});
    poll(fds.data(), fds.size(), 100);
    for (size_t i = 0; i < workers.size(); ++i) {
      Worker& w = workers[i];
      if (w.file == SIZE_MAX) continue;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char buf[65536];
        const ssize_t n = read(w.from, buf, sizeof buf);
        if (n <= 0) {
          // The worker died: the schema crashed it.
          Result r;
          r.status = "crash";
          r.error = "the worker process died";
          finish(w, std::move(r));
          restart(w);
          assign(w);
          continue;
        }
        w.buffer.append(buf, static_cast<size_t>(n));
        const size_t nl = w.buffer.find('\n');
        if (nl != std::string::npos) {
          Result r = decode_result(w.buffer.substr(0, nl));
          w.buffer.erase(0, nl + 1);
          finish(w, std::move(r));
          assign(w);
        }
      } else if (std::chrono::duration<double>(Clock::now() - w.started).count() > a.timeout_s) {
        Result r;
        r.status = "timeout";
        r.error = fmt::format("no result within {} s", a.timeout_s);
        finish(w, std::move(r));
        restart(w);
        assign(w);
      }
    }
  }
  for (auto& w : workers) close(w.to);
  for (auto& w : workers) {
    close(w.from);
    waitpid(w.pid, nullptr, 0);
  }

  return results;
}

// Prints the summary of one mode and appends its lines to `jsonl`.
void report(const char* mode, const std::vector<fs::path>& files, const std::vector<Result>& results, std::ofstream* jsonl) {
  std::map<std::string, size_t> counts;
  std::vector<float> masks, ttfm;
  size_t tokens = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const Result& r = results[i];
    ++counts[r.status];
    tokens += r.tokens;
    masks.insert(masks.end(), r.mask_us.begin(), r.mask_us.end());
    if (r.status != "compile_error" && r.status != "crash" && r.status != "timeout") ttfm.push_back(static_cast<float>(r.ttfm_us));
    if (jsonl) {
      ojson j = {{"file", files[i].filename().string()}, {"mode", mode}, {"status", r.status}, {"ttfm_us", r.ttfm_us},
                 {"schema_us", r.schema_us}, {"grammar_us", r.grammar_us},
                 {"tokens", r.tokens}, {"mask_us_max", r.mask_us_max}};
      if (!r.error.empty()) j["error"] = r.error;
      *jsonl << j.dump(-1, ' ', false, ojson::error_handler_t::replace) << "\n";
    }
  }
  double mean = 0;
  for (float x : masks) mean += x;
  mean /= std::max<size_t>(1, masks.size());
  double tmean = 0;
  for (float x : ttfm) tmean += x;
  tmean /= std::max<size_t>(1, ttfm.size());
  auto row = [&](const char* name, std::vector<float>& v, double avg) {
    std::printf("%-20s avg %8.1f  p25 %8.1f  p50 %8.1f  p75 %8.1f  p90 %8.1f  p95 %8.1f  p99 %8.1f  p99.9 %9.1f  max %9.1f\n",
                name, avg, pct(v, .25), pct(v, .5), pct(v, .75), pct(v, .9), pct(v, .95), pct(v, .99), pct(v, .999), pct(v, 1));
  };
  std::printf("%s\n", std::string(mode) == "fresh" ? "fresh: a new process per schema (no cache carried over from another schema)"
                                                   : "shared: one process per worker, its caches kept from schema to schema");
  row("mask time (µs)", masks, mean);
  row("time to 1st mask", ttfm, tmean);
  std::printf("tokens %zu   schemas %zu   passing %zu (%.1f%%)   compile error %zu   crash %zu   timeout %zu   "
              "validation error %zu   invalidation error %zu\n",
              tokens, files.size(), counts["pass"], 100.0 * static_cast<double>(counts["pass"]) / std::max<size_t>(1, files.size()),
              counts["compile_error"], counts["crash"], counts["timeout"], counts["validation_error"],
              counts["invalidation_error"]);
}

void run(const Args& a) {
  std::vector<fs::path> files = json_files(a.inputs);
  const auto tok = load_tokenizer(a.tokenizer);
  if (a.prepare) {
    const auto t0 = Clock::now();
    prepare_json_building_blocks(tok->shared_vocabulary());
    std::fprintf(stderr, "maskbench: JSON building blocks prepared for the vocabulary in %.1f ms\n",
                 std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  JsonSchemaOptions options;
  if (a.property_order == "schema") options.property_order = JsonSchemaOptions::PropertyOrder::kSchema;
  else if (a.property_order == "any") options.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  else throw std::runtime_error("--property-order is 'any' or 'schema'");

  std::unique_ptr<std::ofstream> jsonl;
  if (!a.jsonl.empty()) {
    jsonl = std::make_unique<std::ofstream>(a.jsonl);
    if (!*jsonl) throw std::runtime_error(fmt::format("{}: cannot write", a.jsonl));
  }
  const bool shared = a.mode == "shared" || a.mode == "both";
  const bool fresh = a.mode == "fresh" || a.mode == "both";
  if (!shared && !fresh) throw std::runtime_error("--mode is 'shared', 'fresh' or 'both'");
  if (shared) {
    report("shared", files, run_mode(a, files, *tok, options, false), jsonl.get());
    std::fflush(stdout);
  }
  if (fresh) {
    if (shared) std::printf("\n");
    report("fresh", files, run_mode(a, files, *tok, options, true), jsonl.get());
  }
}

}  // namespace

void add_maskbench(CLI::App& bench) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = bench.add_subcommand("maskbench", "JSON Schema coverage and mask latency over MaskBench files");
  cmd->add_option("inputs", args->inputs, "MaskBench files or folders")->required();
  cmd->add_option("--tokenizer,-t", args->tokenizer, "Tokenizer file")->capture_default_str();
  cmd->add_option("--jsonl", args->jsonl, "Write one line per file here");
  cmd->add_option("--property-order", args->property_order, "any (JSON semantics) or schema")->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s, "Seconds allowed per schema")->capture_default_str();
  cmd->add_option("--workers", args->workers, "Worker processes (0: one per core)")->capture_default_str();
  cmd->add_option("--mode", args->mode,
                  "shared (caches kept from schema to schema), fresh (a new process per schema) or both")
      ->check(CLI::IsMember({"shared", "fresh", "both"}))
      ->capture_default_str();
  cmd->add_flag("!--no-prepare", args->prepare,
                "Skip preparing the generic JSON building blocks when the vocabulary is loaded (docs/masks.md)");
  cmd->callback([args] { run(*args); });
}

}  // namespace lockstep::cli
