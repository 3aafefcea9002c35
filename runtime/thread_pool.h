// runtime/thread_pool.h — a small persistent pool that splits a loop over threads, for the
// forward pass (runtime/llama_model.cpp) to spread a matrix's output rows.
//
// One dispatch costs no allocation: the caller's function is called by reference. The range
// is cut into chunks that the threads claim from an atomic counter, so a worker the system
// has not scheduled yet delays nothing: the caller and the other workers take its chunks.
// Workers spin briefly after each dispatch (the next matrix of the same token usually
// follows within microseconds), then sleep on an atomic wait until the next one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace lockstep {

class ThreadPool {
 public:
  /// `threads` >= 1 threads in all: the calling thread and threads - 1 workers.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return size_; }

  /// Calls f(begin, end) on disjoint ranges covering [0, n), each range a multiple of
  /// `grain` long but the last, any thread running any range; returns when all are done.
  /// f must not throw. Not reentrant: one caller at a time.
  template <class F>
  void parallel_for(int n, F&& f, int grain = 1) {
    if (size_ == 1 || n <= grain) {
      f(0, n);
      return;
    }
    dispatch(n, grain, [](void* ctx, int begin, int end) { (*static_cast<std::remove_reference_t<F>*>(ctx))(begin, end); },
             const_cast<void*>(static_cast<const void*>(&f)));
  }

 private:
  using Task = void (*)(void*, int, int);
  void dispatch(int n, int grain, Task task, void* ctx);
  // Claims and runs chunks of the current dispatch until none is left.
  void run_chunks();
  void worker();

  int size_;
  std::vector<std::thread> workers_;
  std::atomic<uint32_t> generation_{0};  // bumped once per dispatch (workers wait on it)
  // (dispatch number mod 2^24) << 40 | chunk count << 20 | next chunk: a claim is one
  // compare-and-swap that cannot take a chunk of an earlier dispatch.
  std::atomic<uint64_t> claim_{0};
  std::atomic<uint32_t> done_{0};  // chunks of the current dispatch finished
  // Set before the dispatch is published; read by a thread only after it claimed a chunk.
  Task task_ = nullptr;
  void* ctx_ = nullptr;
  int n_ = 0, chunk_ = 1;
  uint32_t dispatches_ = 0;
  std::atomic<bool> stop_{false};
};

/// Threads for the forward pass when the caller asks for `requested` (0: automatic, the
/// hardware's threads; but one thread for a model whose matrices are too small for the
/// dispatch to pay off, such as the bundled stories260K). `weights_per_layer`: float
/// weights of one layer.
int forward_threads(int requested, size_t weights_per_layer);

}  // namespace lockstep
