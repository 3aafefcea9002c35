// runtime/gguf.h — reading and writing GGUF files (ggml's model container, versions 2 and 3).
//
// Layout (ggml docs/gguf.md): magic "GGUF", uint32 version, uint64 tensor count, uint64
// metadata count; metadata key/value pairs (typed, arrays allowed); tensor infos (name,
// dimensions ne[0] innermost, ggml type, offset); padding to `general.alignment` (default
// 32); tensor data. All integers little-endian.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runtime/mapped_file.h"

namespace lockstep {

enum class GgufType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};

/// ggml tensor types lockstep reads (others are rejected with their name).
enum class GgmlType : uint32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8, kBF16 = 30 };

/// A metadata value: a scalar, a string, or an array of scalars / strings.
struct GgufValue {
  GgufType type = GgufType::kU8;
  GgufType element_type = GgufType::kU8;  ///< for arrays
  std::variant<uint64_t, int64_t, double, bool, std::string> scalar;
  std::vector<std::string> strings;  ///< string arrays
  std::vector<double> numbers;       ///< numeric / bool arrays
  uint64_t offset = 0;               ///< byte offset of the value in the file
};

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  ///< ne[0] (innermost, contiguous) first
  uint32_t type = 0;
  uint64_t offset = 0;  ///< absolute byte offset of the data in the file
  uint64_t nbytes = 0;
  uint64_t elements() const;
};

/// Name of a ggml type id ("F32", "Q4_K", …) or "unknown".
const char* ggml_type_name(uint32_t type);

class GgufFile {
 public:
  /// Maps and parses `path`. Throws ModelFormatError with the byte offset for a wrong
  /// magic, an unsupported version, a truncated file, an unknown value type, an unknown
  /// tensor type, or tensor data outside the file.
  explicit GgufFile(const std::string& path);

  const std::string& path() const { return file_.path(); }
  uint32_t version() const { return version_; }
  const std::map<std::string, GgufValue>& metadata() const { return kv_; }
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }

  bool has(const std::string& key) const { return kv_.count(key) != 0; }
  const GgufValue* find(const std::string& key) const;
  /// Typed getters: throw ModelFormatError naming the key when it is missing (required
  /// variants) or has another type.
  std::string get_string(const std::string& key) const;
  std::optional<std::string> get_string_opt(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  std::optional<int64_t> get_int_opt(const std::string& key) const;
  std::optional<double> get_float_opt(const std::string& key) const;
  std::optional<bool> get_bool_opt(const std::string& key) const;
  const std::vector<std::string>& get_string_array(const std::string& key) const;
  const std::vector<double>& get_number_array(const std::string& key) const;

  const GgufTensorInfo* find_tensor(const std::string& name) const;
  const uint8_t* data(const GgufTensorInfo& t) const { return file_.data() + t.offset; }

 private:
  [[noreturn]] void fail(uint64_t offset, const std::string& message) const;
  MappedFile file_;
  uint32_t version_ = 0;
  std::map<std::string, GgufValue> kv_;
  std::vector<GgufTensorInfo> tensors_;
};

/// Builds a GGUF file in memory and writes it (version 3, alignment 32).
class GgufWriter {
 public:
  void set_string(const std::string& key, const std::string& value);
  void set_u32(const std::string& key, uint32_t value);
  void set_i32(const std::string& key, int32_t value);
  void set_u64(const std::string& key, uint64_t value);
  void set_f32(const std::string& key, float value);
  void set_bool(const std::string& key, bool value);
  void set_string_array(const std::string& key, const std::vector<std::string>& values);
  void set_f32_array(const std::string& key, const std::vector<float>& values);
  void set_i32_array(const std::string& key, const std::vector<int32_t>& values);
  /// Adds a tensor; `dims` ne[0] first; `data` already in `type`'s encoding.
  void add_tensor(const std::string& name, std::vector<uint64_t> dims, GgmlType type,
                  std::vector<uint8_t> data);
  /// Writes the file. Throws std::runtime_error naming the path on I/O failure.
  void write(const std::string& path) const;

 private:
  struct Kv {
    std::string key;
    std::vector<uint8_t> bytes;  // type + value, encoded
  };
  struct Tensor {
    std::string name;
    std::vector<uint64_t> dims;
    GgmlType type;
    std::vector<uint8_t> data;
  };
  void put(const std::string& key, std::vector<uint8_t> bytes);
  std::vector<Kv> kv_;
  std::vector<Tensor> tensors_;
};

/// IEEE half ↔ float, bfloat16 → float.
float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
float bf16_to_float(uint16_t h);

/// Q8_0 (ggml): blocks of 32 values, each an f16 scale d then 32 int8 q; value = d · q.
/// `n` must be a multiple of 32.
std::vector<uint8_t> quantize_q8_0(const float* x, size_t n);
void dequantize_q8_0(const uint8_t* blocks, float* out, size_t n);

}  // namespace lockstep
