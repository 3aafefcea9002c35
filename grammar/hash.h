// grammar/hash.h — the in-process hashes of the engine: FNV-1a over uint32 sequences,
// a 64-bit multiplicative mix, and a 128-bit running digest.
//
// None of these values leaves the process (no file, no wire format): they key hash tables
// and the process-wide caches of the mask engine. They are still deterministic, and each
// caller's variant (seed, final fold) is spelled out at its call site.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>

namespace lockstep {

inline constexpr uint64_t kFnvOffsetBasis = 1469598103934665603ull;  ///< FNV-1a 64-bit offset basis
inline constexpr uint64_t kFnvPrime = 1099511628211ull;              ///< FNV-1a 64-bit prime
inline constexpr uint64_t kGoldenRatio64 = 0x9E3779B97F4A7C15ull;    ///< 2^64 / φ, odd

/// One FNV-1a step on a whole value (not byte by byte): (h ^ x) × prime.
constexpr uint64_t fnv1a_step(uint64_t h, uint64_t x) { return (h ^ x) * kFnvPrime; }

/// FNV-1a over a sequence of uint32 values, one step per value, from `seed` (the offset
/// basis by default; some tables seed with kFnvOffsetBasis ^ length).
constexpr uint64_t fnv1a_u32(std::span<const uint32_t> values, uint64_t seed = kFnvOffsetBasis) {
  uint64_t h = seed;
  for (const uint32_t x : values) h = fnv1a_step(h, x);
  return h;
}

/// Folds the high bits of a hash into the low ones (h ^ h >> 29), for tables indexed by
/// the low bits of an FNV hash.
constexpr uint64_t fold29(uint64_t h) { return h ^ (h >> 29); }

/// Fibonacci hashing: x × 2^64/φ. The high bits depend on every bit of x (take them, not
/// the low ones).
constexpr uint64_t mix64(uint64_t x) { return x * kGoldenRatio64; }

/// MurmurHash3's 64-bit finalizer (fmix64, A. Appleby, public domain): every output bit
/// depends on every input bit, for tables that take a slot from the top bits of a key made
/// of packed fields.
constexpr uint64_t fmix64(uint64_t x) {
  x = (x ^ (x >> 33)) * 0xFF51AFD7ED558CCDull;
  x = (x ^ (x >> 33)) * 0xC4CEB9FE1A85EC53ull;
  return x ^ (x >> 33);
}

/// Hasher for std::vector<uint32_t> keys of unordered containers: fnv1a_u32.
/// SeedWithLength: the seed is kFnvOffsetBasis ^ length. Fold: the hash is fold29()ed.
template <bool SeedWithLength = false, bool Fold = false>
struct U32SeqHash {
  size_t operator()(std::span<const uint32_t> v) const {
    const uint64_t h = fnv1a_u32(v, SeedWithLength ? kFnvOffsetBasis ^ v.size() : kFnvOffsetBasis);
    return static_cast<size_t>(Fold ? fold29(h) : h);
  }
};

/// A 128-bit running hash of a sequence of 64-bit values (two independent mixes: FNV-1a,
/// and an add-multiply-xorshift step).
class Digest128 {
 public:
  void mix(uint64_t v) {
    h1_ = fnv1a_step(h1_, v);
    h2_ = (h2_ + v + 1) * 0xbf58476d1ce4e5b9ull;
    h2_ ^= h2_ >> 31;
  }
  /// Appends the 16 bytes of the value (host byte order) to `out`.
  void append_to(std::string& out) const {
    out.append(reinterpret_cast<const char*>(&h1_), sizeof h1_);
    out.append(reinterpret_cast<const char*>(&h2_), sizeof h2_);
  }
  std::pair<uint64_t, uint64_t> value() const { return {h1_, h2_}; }

 private:
  uint64_t h1_ = kFnvOffsetBasis, h2_ = kGoldenRatio64;
};

}  // namespace lockstep
