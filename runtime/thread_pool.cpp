// runtime/thread_pool.cpp — see thread_pool.h.
#include "runtime/thread_pool.h"

#include <algorithm>

namespace lockstep {

namespace {

// Polls before sleeping (workers) or yielding (the caller): about 50 µs on a current core.
constexpr int kSpins = 1 << 11;
constexpr uint64_t kField = (uint64_t{1} << 20) - 1;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

ThreadPool::ThreadPool(int threads) : size_(std::max(1, threads)) {
  workers_.reserve(static_cast<size_t>(size_ - 1));
  for (int i = 1; i < size_; ++i) workers_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunks() {
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    const uint64_t next = c & kField, count = (c >> 20) & kField;
    if (next >= count) return;
    if (!claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // The chunk is ours: the dispatch cannot end (nor task_ change) before done_ counts it.
    const int begin = static_cast<int>(next) * chunk_;
    task_(ctx_, begin, std::min(n_, begin + chunk_));
    done_.fetch_add(1, std::memory_order_release);
    c = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::dispatch(int n, int grain, Task task, void* ctx) {
  // About four chunks per thread, whole grains each, at most 2^20 chunks.
  const int64_t grains = (int64_t{n} + grain - 1) / grain;
  const int64_t per_chunk = std::max<int64_t>((grains + 4 * size_ - 1) / (4 * size_), (grains + kField - 1) / kField);
  chunk_ = static_cast<int>(per_chunk * grain);
  const uint64_t count = static_cast<uint64_t>((int64_t{n} + chunk_ - 1) / chunk_);
  task_ = task;
  ctx_ = ctx;
  n_ = n;
  done_.store(0, std::memory_order_relaxed);
  dispatches_ = (dispatches_ + 1) & 0xFFFFFF;
  claim_.store(uint64_t{dispatches_} << 40 | count << 20, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  run_chunks();
  for (int spin = 0; done_.load(std::memory_order_acquire) != count; ++spin) {
    if (spin < kSpins) {
      cpu_relax();
    } else {
      std::this_thread::yield();  // a worker holds a chunk but not a core
    }
  }
}

void ThreadPool::worker() {
  uint32_t seen = 0;
  for (;;) {
    uint32_t now = generation_.load(std::memory_order_acquire);
    for (int spin = 0; now == seen; ++spin) {
      if (spin < kSpins) {
        cpu_relax();
      } else {
        generation_.wait(seen, std::memory_order_acquire);
      }
      now = generation_.load(std::memory_order_acquire);
    }
    seen = now;
    if (stop_.load(std::memory_order_relaxed)) return;
    run_chunks();
  }
}

int forward_threads(int requested, size_t weights_per_layer) {
  if (requested > 0) return requested;
  // Below about a million weights per layer (a 256-wide model), one matrix takes a few
  // microseconds on one core: waking a second thread costs as much as it saves.
  if (weights_per_layer < (size_t{1} << 20)) return 1;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace lockstep
