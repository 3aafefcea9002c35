// runtime/thread_pool.cpp — see thread_pool.h.
#include "runtime/thread_pool.h"

#include <algorithm>

namespace lockstep {

namespace {

// Polls before sleeping: about 50 µs on a current x86 core.
constexpr int kSpins = 1 << 11;

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
  for (int i = 1; i < size_; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_ = true;
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_share(int index) {
  const int64_t n = n_, t = size_;
  const int begin = static_cast<int>(n * index / t), end = static_cast<int>(n * (index + 1) / t);
  if (begin < end) task_(ctx_, begin, end);
}

void ThreadPool::dispatch(int n, Task task, void* ctx) {
  task_ = task;
  ctx_ = ctx;
  n_ = n;
  pending_.store(size_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);  // publishes task_, ctx_, n_
  generation_.notify_all();
  run_share(0);
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kSpins) {
      cpu_relax();
    } else {
      const int left = pending_.load(std::memory_order_acquire);
      if (left != 0) pending_.wait(left, std::memory_order_acquire);
    }
  }
}

void ThreadPool::worker(int index) {
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
    if (stop_) return;
    run_share(index);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
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
