// runtime/llama_kernels_base.cpp — the kernel table of the build's own instruction set, and
// the choice among the tables (llama_kernel_table.h).
#include "runtime/llama_kernel_table.h"
#include "runtime/llama_kernels.h"

namespace lockstep::kernels {

#if defined(LOCKSTEP_KERNELS_AVX2)
extern const KernelTable kAvx2Kernels;  // llama_kernels_avx2.cpp
#endif

namespace {

const KernelTable kBase = {"base",        kRows, &matmul_rows<>, &dots<>, &weighted_sum, &exp_shifted_sum,
                           &swiglu};

}  // namespace

const KernelTable& base_kernels() { return kBase; }

const KernelTable* avx2_kernels() {
#if defined(LOCKSTEP_KERNELS_AVX2)
  static const bool has = __builtin_cpu_supports("avx2");
  return has ? &kAvx2Kernels : nullptr;
#else
  return nullptr;
#endif
}

const KernelTable& best_kernels() {
  static const KernelTable& best = avx2_kernels() ? *avx2_kernels() : kBase;
  return best;
}

}  // namespace lockstep::kernels
