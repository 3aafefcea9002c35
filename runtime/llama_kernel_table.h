// runtime/llama_kernel_table.h — the forward pass's kernels (llama_kernels.h) for the CPU
// it runs on: the build's own, or AVX2 ones that a portable x86-64 build carries and picks
// at run time. Every table computes the same bits (the float order is in the code, not the
// instruction set), so the choice changes speed only.
#pragma once

#include <cstddef>

namespace lockstep::kernels {

struct KernelTable {
  const char* name;  ///< "base" (the build's own instruction set) or "avx2"
  int rows;          ///< rows a product interleaves: ranges split at multiples run fastest
  /// xout[b·d + i] = W[i] · x[b] for b < batch, i in [begin, end); W (d, n)
  void (*matmul_rows)(float* xout, const float* x, const float* w, int n, int d, int batch, int begin, int end);
  /// out[i] = w[i·stride .. + n) · x for i in [begin, end)
  void (*dots)(float* out, const float* w, size_t stride, const float* x, int n, int begin, int end);
  /// out[i] = Σ_t (a[t] · scale) · v[t · stride + i], i < n, t < count
  void (*weighted_sum)(float* out, const float* a, float scale, const float* v, size_t stride, int count, int n);
  /// x[i] = exp(x[i] - shift), i < n; returns their sum
  float (*exp_shifted_sum)(float* x, int n, float shift);
  /// g[i] = silu(g[i]) · u[i], i < n
  void (*swiglu)(float* g, const float* u, int n);
};

/// The build's own kernels.
const KernelTable& base_kernels();
/// The AVX2 kernels when this build carries them and the CPU has AVX2, else null.
const KernelTable* avx2_kernels();
/// The fastest table this CPU runs.
const KernelTable& best_kernels();

}  // namespace lockstep::kernels
