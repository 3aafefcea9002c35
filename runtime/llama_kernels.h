// runtime/llama_kernels.h — the inner loops of the forward pass (runtime/llama_model.cpp):
// rows · vector, attention's weighted sum, exp over an array, in a fixed float order.
//
// The loops use the compiler's generic vectors (GCC / Clang `vector_size`): SSE2 in the
// portable build, AVX2 in its llama_kernels_avx2.cpp, the CPU's own in a native build
// (LOCKSTEP_NATIVE). The order of every
// sum is written here — 8 lane accumulators, a fixed pairwise reduction, then the
// remaining elements in order — so every build, every thread count and every batch size
// computes the same bits (floating-point contraction is off for this code: CMakeLists.txt).
//
// Each translation unit that includes it names its instruction set (LOCKSTEP_KERNELS_ISA,
// default `base`): the functions land in a namespace of that name, so a unit compiled for
// AVX2 (llama_kernels_avx2.cpp) never lends its code to another. Include it only from the
// units that build a KernelTable (llama_kernel_table.h) and from tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#ifndef LOCKSTEP_KERNELS_ISA
#define LOCKSTEP_KERNELS_ISA base
#endif

namespace lockstep::kernels {
inline namespace LOCKSTEP_KERNELS_ISA {

// Sums run in 8 lanes in every build: lane k adds elements k, k + 8, k + 16, …; a build
// holds the 8 lanes in 2 SSE registers or 1 AVX one.
constexpr int kLanes = 8;
#if defined(__AVX__)
constexpr int kWidth = 8;
#else
constexpr int kWidth = 4;
#endif
constexpr int kParts = kLanes / kWidth;
using Vec = float __attribute__((vector_size(kWidth * sizeof(float))));
using UVec = uint32_t __attribute__((vector_size(kWidth * sizeof(uint32_t))));
using Vec4 = float __attribute__((vector_size(4 * sizeof(float))));

// Rows a product interleaves (each row's own order does not depend on it): enough
// independent accumulators to hide the add latency without spilling registers.
constexpr int kRows = kParts == 1 ? 8 : 4;

#define LOCKSTEP_LOAD(v, p) std::memcpy(&(v), (p), sizeof(v))

/// Lanes k and k + 4 added: 8 lanes → 4.
inline Vec4 fold(const Vec* parts) {
  if constexpr (kParts == 2) {
    Vec4 a, b;
    std::memcpy(&a, &parts[0], sizeof a);
    std::memcpy(&b, &parts[1], sizeof b);
    return a + b;
  } else {
    return __builtin_shufflevector(parts[0], parts[0], 0, 1, 2, 3) +
           __builtin_shufflevector(parts[0], parts[0], 4, 5, 6, 7);
  }
}

/// (l[0] + l[2]) + (l[1] + l[3]).
inline float reduce4(Vec4 l) {
  float t[4];
  std::memcpy(t, &l, sizeof t);
  return (t[0] + t[2]) + (t[1] + t[3]);
}

/// reduce4 of four vectors at once: {reduce4(a), reduce4(b), reduce4(c), reduce4(d)}.
inline Vec4 reduce4x4(Vec4 a, Vec4 b, Vec4 c, Vec4 d) {
  const Vec4 ab = __builtin_shufflevector(a, b, 0, 4, 1, 5) + __builtin_shufflevector(a, b, 2, 6, 3, 7);
  const Vec4 cd = __builtin_shufflevector(c, d, 0, 4, 1, 5) + __builtin_shufflevector(c, d, 2, 6, 3, 7);
  // ab = {a0 + a2, b0 + b2, a1 + a3, b1 + b3}, cd likewise
  return __builtin_shufflevector(ab, cd, 0, 1, 4, 5) + __builtin_shufflevector(ab, cd, 2, 3, 6, 7);
}

/// out[r] = w[r·stride .. r·stride + n) · x for r < R: 8 lanes, folded to 4, reduced
/// pairwise, then the last n mod 8 products in order.
template <int R>
inline void dot_rows(float* out, const float* w, size_t stride, const float* x, int n) {
  Vec acc[R][kParts];
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 2
    for (int q = 0; q < kParts; q++) acc[r][q] = Vec{};
  }
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
#pragma GCC unroll 2
    for (int q = 0; q < kParts; q++) {
      Vec xv;
      LOCKSTEP_LOAD(xv, x + j + q * kWidth);
#pragma GCC unroll 8
      for (int r = 0; r < R; r++) {
        Vec wv;
        LOCKSTEP_LOAD(wv, w + r * stride + j + q * kWidth);
        acc[r][q] += wv * xv;
      }
    }
  }
  float sums[R];
  if constexpr (R % 4 == 0) {
#pragma GCC unroll 2
    for (int g = 0; g < R; g += 4) {
      const Vec4 s = reduce4x4(fold(acc[g]), fold(acc[g + 1]), fold(acc[g + 2]), fold(acc[g + 3]));
      std::memcpy(sums + g, &s, sizeof s);
    }
  } else {
#pragma GCC unroll 2
    for (int r = 0; r < R; r++) sums[r] = reduce4(fold(acc[r]));
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; r++) {
    const float* row = w + r * stride;
    for (int k = j; k < n; k++) sums[r] += row[k] * x[k];
    out[r] = sums[r];
  }
}

/// out[i] = w[i·stride .. i·stride + n) · x for i in [begin, end): blocks of R rows, the
/// rows left over in blocks of R / 2, R / 4, …
template <int R = kRows>
inline void dots(float* out, const float* w, size_t stride, const float* x, int n, int begin, int end) {
  int i = begin;
  for (; i + R <= end; i += R) dot_rows<R>(out + i, w + i * stride, stride, x, n);
  if constexpr (R > 1) {
    if (i < end) dots<R / 2>(out, w, stride, x, n, i, end);
  }
}

/// For each of `batch` inputs b and rows i in [begin, end): xout[b·d + i] = W[i] · x[b],
/// W (d, n) row-major, x[b] (n). A block of R rows is read once for the whole batch.
template <int R = kRows>
inline void matmul_rows(float* xout, const float* x, const float* w, int n, int d, int batch, int begin,
                        int end) {
  const size_t un = static_cast<size_t>(n);
  int i = begin;
  for (; i + R <= end; i += R) {
    for (int b = 0; b < batch; b++) {
      dot_rows<R>(xout + static_cast<size_t>(b) * d + i, w + i * un, un, x + b * un, n);
    }
  }
  if constexpr (R > 1) {
    if (i < end) matmul_rows<R / 2>(xout, x, w, n, d, batch, i, end);
  }
}

/// out[i] = Σ_t (a[t] · scale) · v[t · stride + i] for i < n, summed in order of t; C
/// vectors of out at a time.
template <int C>
inline void weighted_sum_chunks(float* out, const float* a, float scale, const float* v, size_t stride, int count) {
  Vec acc[C];
  for (int c = 0; c < C; c++) acc[c] = Vec{};
  for (int t = 0; t < count; t++) {
    const float at = a[t] * scale;
    const float* vt = v + t * stride;
#pragma GCC unroll 8
    for (int c = 0; c < C; c++) {
      Vec x;
      LOCKSTEP_LOAD(x, vt + kWidth * c);
      acc[c] += at * x;
    }
  }
  std::memcpy(out, acc, sizeof acc);
}

inline void weighted_sum(float* out, const float* a, float scale, const float* v, size_t stride, int count, int n) {
  constexpr int kBlock = 4 * kWidth;
  int i = 0;
  for (; i + kBlock <= n; i += kBlock) weighted_sum_chunks<4>(out + i, a, scale, v + i, stride, count);
  for (; i + kWidth <= n; i += kWidth) weighted_sum_chunks<1>(out + i, a, scale, v + i, stride, count);
  for (; i < n; i++) {
    float sum = 0.0f;
    for (int t = 0; t < count; t++) sum += (a[t] * scale) * v[t * stride + i];
    out[i] = sum;
  }
}

/// x = exp(x) lane by lane (in place: a vector return value would depend on the ABI):
/// Cody–Waite range reduction x = k·ln 2 + r, |r| <= ln 2 / 2, and Cephes' degree-6
/// polynomial for exp(r) (within 3 ulp of std::exp on [-87, 88], tested; clamped outside,
/// so it never overflows to inf nor flushes to 0; NaN stays NaN).
inline void exp_lanes(Vec& x) {
  const Vec lo = Vec{} - 87.33f, hi = Vec{} + 88.37f;
  x = x < lo ? lo : x;
  x = x > hi ? hi : x;
  // k = round(x / ln 2) by the 1.5·2^23 shifter: k sits in the low bits of t.
  const Vec shifter = Vec{} + 12582912.0f;
  const Vec t = x * 1.44269504088896341f + shifter;
  const Vec k = t - shifter;
  const Vec r = (x - k * 0.693359375f) - k * -2.12194440e-4f;
  Vec p = Vec{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  UVec tb, shb;
  std::memcpy(&tb, &t, sizeof t);
  std::memcpy(&shb, &shifter, sizeof shifter);
  const UVec bits = (tb - shb + 127u) << 23;  // 2^k as a float (k in [-126, 127])
  Vec scale;
  std::memcpy(&scale, &bits, sizeof bits);
  x = p * scale;
}

/// x[i] = exp(x[i] - shift), i < n; returns the sum of the results (8 lane sums folded
/// and reduced pairwise, then the last n mod 8 in order).
inline float exp_shifted_sum(float* x, int n, float shift) {
  Vec acc[kParts];
  for (int q = 0; q < kParts; q++) acc[q] = Vec{};
  int i = 0;
  for (; i + kLanes <= n; i += kLanes) {
#pragma GCC unroll 16
    for (int q = 0; q < kParts; q++) {
      Vec v;
      LOCKSTEP_LOAD(v, x + i + q * kWidth);
      v -= shift;
      exp_lanes(v);
      std::memcpy(x + i + q * kWidth, &v, sizeof v);
      acc[q] += v;
    }
  }
  float sum = reduce4(fold(acc));
  for (; i < n; i += kWidth) {  // the rest, padded to a vector, then summed in order
    const int m = n - i < kWidth ? n - i : kWidth;
    float tail[kWidth] = {};
    std::memcpy(tail, x + i, sizeof(float) * static_cast<size_t>(m));
    Vec v;
    LOCKSTEP_LOAD(v, tail);
    v -= shift;
    exp_lanes(v);
    std::memcpy(tail, &v, sizeof v);
    for (int k = 0; k < m; k++) {
      x[i + k] = tail[k];
      sum += tail[k];
    }
  }
  return sum;
}

/// SwiGLU's gate, element by element: g[i] = silu(g[i]) · u[i], silu(v) = v / (1 + e^-v).
inline void swiglu(float* g, const float* u, int n) {
  for (int i = 0; i < n; i += kWidth) {
    const int m = n - i < kWidth ? n - i : kWidth;
    Vec gv, uv;
    if (m == kWidth) {
      LOCKSTEP_LOAD(gv, g + i);
      LOCKSTEP_LOAD(uv, u + i);
    } else {
      float gl[kWidth] = {}, ul[kWidth] = {};
      std::memcpy(gl, g + i, sizeof(float) * static_cast<size_t>(m));
      std::memcpy(ul, u + i, sizeof(float) * static_cast<size_t>(m));
      LOCKSTEP_LOAD(gv, gl);
      LOCKSTEP_LOAD(uv, ul);
    }
    Vec e = Vec{} - gv;
    exp_lanes(e);
    gv = gv / (1.0f + e) * uv;
    std::memcpy(g + i, &gv, sizeof(float) * static_cast<size_t>(m));
  }
}

#undef LOCKSTEP_LOAD

}  // namespace LOCKSTEP_KERNELS_ISA
}  // namespace lockstep::kernels
