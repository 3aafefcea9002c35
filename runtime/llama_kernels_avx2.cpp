// runtime/llama_kernels_avx2.cpp — the kernels compiled for AVX2 (-mavx2, contraction off:
// CMakeLists.txt), which a portable x86-64 build picks at run time on a CPU that has it.
// Nothing else may live here: code of this unit must not run on an older CPU.
#define LOCKSTEP_KERNELS_ISA avx2
#include "runtime/llama_kernel_table.h"
#include "runtime/llama_kernels.h"

#if !defined(__AVX2__)
#error "llama_kernels_avx2.cpp is compiled with -mavx2"
#endif

namespace lockstep::kernels {

extern const KernelTable kAvx2Kernels;
const KernelTable kAvx2Kernels = {"avx2",        kRows, &matmul_rows<>, &dots<>, &weighted_sum, &exp_shifted_sum,
                                  &swiglu};

}  // namespace lockstep::kernels
