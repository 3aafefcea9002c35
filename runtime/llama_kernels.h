// runtime/llama_kernels.h — the inner loops of the forward pass (runtime/llama_model.cpp):
// matrix rows · vector, exp over an array, in a fixed float evaluation order.
//
// The loops use the compiler's generic vectors (GCC / Clang `vector_size`): SSE2 in the
// portable build, AVX2 or AVX-512 in a native one (LOCKSTEP_NATIVE). The order of every
// sum is written here — 16 lane accumulators, a fixed pairwise reduction, then the
// remaining elements in order — so every build, every thread count and every batch size
// computes the same bits (floating-point contraction is off for this code: CMakeLists.txt).
#pragma once

#include <cstdint>
#include <cstring>

namespace lockstep::kernels {

// Sums run in 16 lanes in every build: lane k adds elements k, k + 16, k + 32, …; a build
// holds the 16 lanes in 4 SSE, 2 AVX or 1 AVX-512 register(s).
constexpr int kLanes = 16;
#if defined(__AVX512F__)
constexpr int kWidth = 16;
#elif defined(__AVX__)
constexpr int kWidth = 8;
#else
constexpr int kWidth = 4;
#endif
constexpr int kParts = kLanes / kWidth;
using Vec = float __attribute__((vector_size(kWidth * sizeof(float))));
using UVec = uint32_t __attribute__((vector_size(kWidth * sizeof(uint32_t))));

// Rows a matrix-vector product interleaves (each row's own order does not depend on it):
// enough independent accumulators to hide the add latency without spilling registers.
constexpr int kRows = kParts >= 4 ? 2 : kParts == 2 ? 4 : 8;

#define LOCKSTEP_LOAD(v, p) std::memcpy(&(v), (p), sizeof(Vec))

using Vec4 = float __attribute__((vector_size(4 * sizeof(float))));

/// (l[0] + l[2]) + (l[1] + l[3]): the last two steps of every pairwise reduction.
inline float reduce4(const Vec4& l) {
  float t[4];
  std::memcpy(t, &l, sizeof t);
  return (t[0] + t[2]) + (t[1] + t[3]);
}

/// The sum of 16 lanes (held in kParts vectors): halves added pairwise, 8 + 8, 4 + 4, …
inline float reduce_lanes(const Vec* parts) {
  Vec4 a[4];
  std::memcpy(a, parts, sizeof a);
  return reduce4((a[0] + a[2]) + (a[1] + a[3]));
}

/// out[r] = w[r·n .. r·n + n) · x, r < R.
template <int R>
inline void dot_rows(float* out, const float* w, const float* x, int n) {
  Vec acc[R][kParts];
#pragma GCC unroll 16
  for (int r = 0; r < R; r++) {
#pragma GCC unroll 16
    for (int q = 0; q < kParts; q++) acc[r][q] = Vec{};
  }
  int j = 0;
  for (; j + kLanes <= n; j += kLanes) {
#pragma GCC unroll 16
    for (int q = 0; q < kParts; q++) {
      Vec xv;
      LOCKSTEP_LOAD(xv, x + j + q * kWidth);
#pragma GCC unroll 16
      for (int r = 0; r < R; r++) {
        Vec wv;
        LOCKSTEP_LOAD(wv, w + static_cast<size_t>(r) * n + j + q * kWidth);
        acc[r][q] += wv * xv;
      }
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; r++) {
    float sum = reduce_lanes(acc[r]);
    const float* row = w + static_cast<size_t>(r) * n;
    for (int k = j; k < n; k++) sum += row[k] * x[k];
    out[r] = sum;
  }
}

/// For each of `batch` inputs b and rows i in [begin, end): xout[b·d + i] = W[i] · x[b],
/// W (d, n) row-major, x[b] (n). A block of R rows is read once for the whole batch; the
/// rows left over go in blocks of R / 2, R / 4, …
template <int R = kRows>
inline void matmul_rows(float* xout, const float* x, const float* w, int n, int d, int batch, int begin,
                        int end) {
  int i = begin;
  for (; i + R <= end; i += R) {
    const float* wi = w + static_cast<size_t>(i) * n;
    for (int b = 0; b < batch; b++) {
      dot_rows<R>(xout + static_cast<size_t>(b) * d + i, wi, x + static_cast<size_t>(b) * n, n);
    }
  }
  if constexpr (R > 1) {
    if (i < end) matmul_rows<R / 2>(xout, x, w, n, d, batch, i, end);
  }
}

// Attention works on heads of a few dozen floats: 8 lanes, in 8- or 4-wide vectors.
constexpr int kWidth8 = kWidth < 8 ? kWidth : 8;
using Vec8 = float __attribute__((vector_size(kWidth8 * sizeof(float))));

/// q · k, n floats: element i in lane i mod 8, the lanes added pairwise, then the last
/// n mod 8 elements in order.
inline float dot8(const float* q, const float* k, int n) {
  constexpr int kP = 8 / kWidth8;
  Vec8 acc[kP];
  for (int p = 0; p < kP; p++) acc[p] = Vec8{};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
#pragma GCC unroll 2
    for (int p = 0; p < kP; p++) {
      Vec8 a, b;
      std::memcpy(&a, q + i + p * kWidth8, sizeof a);
      std::memcpy(&b, k + i + p * kWidth8, sizeof b);
      acc[p] += a * b;
    }
  }
  Vec4 h[2];
  std::memcpy(h, acc, sizeof h);
  float sum = reduce4(h[0] + h[1]);
  for (; i < n; i++) sum += q[i] * k[i];
  return sum;
}

/// out[i] = Σ_t (a[t] · scale) · v[t · stride + i] for i < n, summed in order of t; C
/// vectors of out at a time.
template <int C>
inline void weighted_sum_chunks(float* out, const float* a, float scale, const float* v, size_t stride, int count) {
  Vec8 acc[C];
  for (int c = 0; c < C; c++) acc[c] = Vec8{};
  for (int t = 0; t < count; t++) {
    const float at = a[t] * scale;
    const float* vt = v + t * stride;
#pragma GCC unroll 8
    for (int c = 0; c < C; c++) {
      Vec8 x;
      std::memcpy(&x, vt + kWidth8 * c, sizeof x);
      acc[c] += at * x;
    }
  }
  std::memcpy(out, acc, sizeof acc);
}

inline void weighted_sum(float* out, const float* a, float scale, const float* v, size_t stride, int count, int n) {
  constexpr int kBlock = 4 * kWidth8;
  int i = 0;
  for (; i + kBlock <= n; i += kBlock) weighted_sum_chunks<4>(out + i, a, scale, v + i, stride, count);
  for (; i + kWidth8 <= n; i += kWidth8) weighted_sum_chunks<1>(out + i, a, scale, v + i, stride, count);
  for (; i < n; i++) {
    float sum = 0.0f;
    for (int t = 0; t < count; t++) sum += (a[t] * scale) * v[t * stride + i];
    out[i] = sum;
  }
}

/// x = exp(x) lane by lane (in place: a vector return value would depend on the ABI):
/// Cody–Waite range reduction x = k·ln 2 + r, |r| <= ln 2 / 2, and Cephes' degree-6
/// polynomial for exp(r) (within 2 ulp of exp for x in [-87.3, 88.3]; clamped outside,
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

/// x[i] = exp(x[i] - shift), i < n; returns the sum of the results (16 lane sums reduced
/// pairwise, then the last n mod 16 in order).
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
  float sum = reduce_lanes(acc);
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

}  // namespace lockstep::kernels
