// runtime/gguf.cpp — see gguf.h.
#include "runtime/gguf.h"

#include <cmath>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "runtime/errors.h"

namespace lockstep {

namespace {

constexpr uint64_t kDefaultAlignment = 32;
// Limits on what a GGUF file may declare, so that no size computed from them overflows
// (they will move into a central EngineLimits): general.alignment (ggml writes 32), and
// each tensor dimension (below 2^32: a dimension is at most an int32 in the model anyway).
constexpr uint64_t kMaxAlignment = uint64_t{1} << 20;
constexpr uint64_t kMaxTensorDimension = UINT32_MAX;

// a · b, or nullopt when it does not fit in 64 bits.
std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

size_t scalar_size(GgufType t) {
  switch (t) {
    case GgufType::kU8: case GgufType::kI8: case GgufType::kBool: return 1;
    case GgufType::kU16: case GgufType::kI16: return 2;
    case GgufType::kU32: case GgufType::kI32: case GgufType::kF32: return 4;
    case GgufType::kU64: case GgufType::kI64: case GgufType::kF64: return 8;
    default: return 0;
  }
}

// Bytes of a tensor of `n` elements in ggml type `type`, or 0 for types lockstep does not
// know the layout of. `row` (ne[0]) must be a multiple of the block size.
// The caller bounds `n` (by the file size) so that the products cannot overflow.
uint64_t tensor_bytes(uint32_t type, uint64_t n) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32: return n * 4;
    case GgmlType::kF16: case GgmlType::kBF16: return n * 2;
    case GgmlType::kQ8_0: return n / 32 * 34;
  }
  return 0;
}

class Reader {
 public:
  Reader(const uint8_t* p, size_t n, const std::string& path) : p_(p), n_(n), path_(path) {}
  uint64_t pos() const { return pos_; }
  void need(uint64_t bytes, const char* what) {
    if (bytes > n_ || pos_ > n_ - bytes) {
      throw ModelFormatError(path_, pos_, fmt::format("file ends inside {} (truncated GGUF?)", what));
    }
  }
  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string read_string(const char* what) {
    const uint64_t len = read<uint64_t>(what);
    need(len, what);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), len);
    pos_ += len;
    return s;
  }
  void skip(uint64_t bytes, const char* what) {
    need(bytes, what);
    pos_ += bytes;
  }
  size_t size() const { return n_; }

 private:
  const uint8_t* p_;
  size_t n_;
  const std::string& path_;
  uint64_t pos_ = 0;
};

double read_number(Reader& r, GgufType t) {
  switch (t) {
    case GgufType::kU8: return r.read<uint8_t>("a value");
    case GgufType::kI8: return r.read<int8_t>("a value");
    case GgufType::kBool: return r.read<uint8_t>("a value") != 0;
    case GgufType::kU16: return r.read<uint16_t>("a value");
    case GgufType::kI16: return r.read<int16_t>("a value");
    case GgufType::kU32: return r.read<uint32_t>("a value");
    case GgufType::kI32: return r.read<int32_t>("a value");
    case GgufType::kF32: return r.read<float>("a value");
    case GgufType::kU64: return static_cast<double>(r.read<uint64_t>("a value"));
    case GgufType::kI64: return static_cast<double>(r.read<int64_t>("a value"));
    case GgufType::kF64: return r.read<double>("a value");
    default: return 0;
  }
}

}  // namespace

uint64_t GgufTensorInfo::elements() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;  // GgufFile checked that the product fits in the file
  return n;
}

const char* ggml_type_name(uint32_t type) {
  static const char* const names[] = {
      "F32",  "F16",  "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0",    "Q5_1",    "Q8_0",  "Q8_1",
      "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS",  "IQ3_XXS",
      "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M",
      "BF16"};
  return type < std::size(names) ? names[type] : "unknown";
}

void GgufFile::fail(uint64_t offset, const std::string& message) const {
  throw ModelFormatError(file_.path(), offset, message);
}

GgufFile::GgufFile(const std::string& path) : file_(path) {
  Reader r(file_.data(), file_.size(), file_.path());
  if (file_.size() < 4 || std::memcmp(file_.data(), "GGUF", 4) != 0) {
    fail(0, "wrong magic: not a GGUF file (expected the bytes \"GGUF\")");
  }
  r.skip(4, "the magic");
  version_ = r.read<uint32_t>("the version");
  if (version_ != 2 && version_ != 3) {
    fail(4, fmt::format("GGUF version {} is not supported (2 and 3 are)", version_));
  }
  const uint64_t n_tensors = r.read<uint64_t>("the tensor count");
  const uint64_t n_kv = r.read<uint64_t>("the metadata count");
  // Every entry takes at least 8 bytes: counts beyond the file size are corrupt.
  if (n_kv > file_.size() / 8 || n_tensors > file_.size() / 8) {
    fail(8, fmt::format("implausible counts: {} tensors, {} metadata entries in a {}-byte file",
                        n_tensors, n_kv, file_.size()));
  }
  for (uint64_t i = 0; i < n_kv; ++i) {
    const uint64_t at = r.pos();
    std::string key = r.read_string("a metadata key");
    GgufValue v;
    v.offset = at;
    const uint64_t type_at = r.pos();
    v.type = static_cast<GgufType>(r.read<uint32_t>("a metadata type"));
    if (v.type == GgufType::kString) {
      v.scalar = r.read_string("a string value");
    } else if (v.type == GgufType::kArray) {
      const uint64_t et_at = r.pos();
      v.element_type = static_cast<GgufType>(r.read<uint32_t>("an array type"));
      const uint64_t count = r.read<uint64_t>("an array length");
      if (v.element_type == GgufType::kString) {
        if (count > (r.size() - r.pos()) / 8) fail(r.pos(), fmt::format("array '{}' is longer than the file", key));
        v.strings.reserve(count);
        for (uint64_t k = 0; k < count; ++k) v.strings.push_back(r.read_string("a string array"));
      } else if (const size_t es = scalar_size(v.element_type); es != 0) {
        if (count > (r.size() - r.pos()) / es) fail(r.pos(), fmt::format("array '{}' is longer than the file", key));
        v.numbers.reserve(count);
        for (uint64_t k = 0; k < count; ++k) v.numbers.push_back(read_number(r, v.element_type));
      } else {
        fail(et_at, fmt::format("metadata '{}': unknown array element type {}", key,
                                static_cast<uint32_t>(v.element_type)));
      }
    } else if (scalar_size(v.type) != 0) {
      // Integers are read as they are (not through a double, which loses 64-bit values).
      switch (v.type) {
        case GgufType::kF32: case GgufType::kF64: v.scalar = read_number(r, v.type); break;
        case GgufType::kBool: v.scalar = r.read<uint8_t>("a value") != 0; break;
        case GgufType::kI8: v.scalar = int64_t{r.read<int8_t>("a value")}; break;
        case GgufType::kI16: v.scalar = int64_t{r.read<int16_t>("a value")}; break;
        case GgufType::kI32: v.scalar = int64_t{r.read<int32_t>("a value")}; break;
        case GgufType::kI64: v.scalar = r.read<int64_t>("a value"); break;
        case GgufType::kU8: v.scalar = uint64_t{r.read<uint8_t>("a value")}; break;
        case GgufType::kU16: v.scalar = uint64_t{r.read<uint16_t>("a value")}; break;
        case GgufType::kU32: v.scalar = uint64_t{r.read<uint32_t>("a value")}; break;
        default: v.scalar = r.read<uint64_t>("a value"); break;
      }
    } else {
      fail(type_at, fmt::format("metadata '{}': unknown value type {}", key,
                                static_cast<uint32_t>(v.type)));
    }
    kv_[std::move(key)] = std::move(v);
  }
  for (uint64_t i = 0; i < n_tensors; ++i) {
    const uint64_t at = r.pos();
    GgufTensorInfo t;
    t.name = r.read_string("a tensor name");
    const uint32_t n_dims = r.read<uint32_t>("a tensor's dimension count");
    if (n_dims == 0 || n_dims > 4) fail(at, fmt::format("tensor '{}' has {} dimensions", t.name, n_dims));
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const uint64_t dim_at = r.pos();
      t.dims.push_back(r.read<uint64_t>("a tensor dimension"));
      if (t.dims.back() == 0 || t.dims.back() > kMaxTensorDimension) {
        fail(dim_at, fmt::format("tensor '{}' has dimension {} (allowed: 1..2^32 - 1)", t.name, t.dims.back()));
      }
      // Every element takes at least one byte of the file (Q8_0: 34 bytes per 32).
      const auto product = checked_mul(elements, t.dims.back());
      if (!product || *product > file_.size()) {
        fail(dim_at, fmt::format("tensor '{}' has more elements than the file has bytes ({}{})", t.name,
                                 product ? fmt::format("{}", *product) : std::string("over 2^64"),
                                 product ? fmt::format(" > {}", file_.size()) : std::string()));
      }
      elements = *product;
    }
    const uint64_t type_at = r.pos();
    t.type = r.read<uint32_t>("a tensor type");
    t.offset = r.read<uint64_t>("a tensor offset");
    t.nbytes = tensor_bytes(t.type, elements);
    if (t.nbytes == 0) {
      fail(type_at, fmt::format("tensor '{}' has type {} ({}); lockstep reads F32, F16, BF16 and "
                                "Q8_0", t.name, ggml_type_name(t.type), t.type));
    }
    if (static_cast<GgmlType>(t.type) == GgmlType::kQ8_0 && t.dims[0] % 32 != 0) {
      fail(at, fmt::format("Q8_0 tensor '{}' has rows of {} values, not a multiple of 32", t.name,
                           t.dims[0]));
    }
    tensors_.push_back(std::move(t));
  }
  uint64_t alignment = kDefaultAlignment;
  if (auto a = get_int_opt("general.alignment")) {
    if (*a <= 0 || (*a & (*a - 1)) != 0 || static_cast<uint64_t>(*a) > kMaxAlignment) {
      fail(find("general.alignment")->offset,
           fmt::format("general.alignment {} is not a power of two up to {}", *a, kMaxAlignment));
    }
    alignment = static_cast<uint64_t>(*a);
  }
  const uint64_t data_start = (r.pos() + alignment - 1) / alignment * alignment;
  for (auto& t : tensors_) {
    if (t.offset % alignment != 0) {
      fail(data_start, fmt::format("tensor '{}' data offset {} is not aligned to {}", t.name,
                                   t.offset, alignment));
    }
    // Compared without adding: an offset near 2^64 must not wrap around into the file.
    if (data_start > file_.size() || t.offset > file_.size() - data_start ||
        t.nbytes > file_.size() - data_start - t.offset) {
      fail(std::min<uint64_t>(data_start, file_.size()),
           fmt::format("tensor '{}' ({} bytes at data offset {}) runs past the end of the file ({} "
                       "bytes; truncated?)", t.name, t.nbytes, t.offset, file_.size()));
    }
    t.offset += data_start;
  }
}

const GgufValue* GgufFile::find(const std::string& key) const {
  auto it = kv_.find(key);
  return it == kv_.end() ? nullptr : &it->second;
}

std::optional<std::string> GgufFile::get_string_opt(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (v->type != GgufType::kString) fail(v->offset, fmt::format("metadata '{}' is not a string", key));
  return std::get<std::string>(v->scalar);
}

std::string GgufFile::get_string(const std::string& key) const {
  auto v = get_string_opt(key);
  if (!v) fail(0, fmt::format("metadata '{}' is missing", key));
  return *v;
}

std::optional<int64_t> GgufFile::get_int_opt(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (auto* u = std::get_if<uint64_t>(&v->scalar); u && v->type != GgufType::kString) {
    if (*u > static_cast<uint64_t>(INT64_MAX)) fail(v->offset, fmt::format("metadata '{}' is {}: out of range", key, *u));
    return static_cast<int64_t>(*u);
  }
  if (auto* i = std::get_if<int64_t>(&v->scalar)) return *i;
  fail(v->offset, fmt::format("metadata '{}' is not an integer", key));
}

int64_t GgufFile::get_int(const std::string& key) const {
  auto v = get_int_opt(key);
  if (!v) fail(0, fmt::format("metadata '{}' is missing", key));
  return *v;
}

std::optional<double> GgufFile::get_float_opt(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (auto* d = std::get_if<double>(&v->scalar)) return *d;
  if (auto i = get_int_opt(key)) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<bool> GgufFile::get_bool_opt(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) return std::nullopt;
  if (auto* b = std::get_if<bool>(&v->scalar)) return *b;
  fail(v->offset, fmt::format("metadata '{}' is not a boolean", key));
}

const std::vector<std::string>& GgufFile::get_string_array(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) fail(0, fmt::format("metadata '{}' is missing", key));
  if (v->type != GgufType::kArray || v->element_type != GgufType::kString) {
    fail(v->offset, fmt::format("metadata '{}' is not an array of strings", key));
  }
  return v->strings;
}

const std::vector<double>& GgufFile::get_number_array(const std::string& key) const {
  const GgufValue* v = find(key);
  if (!v) fail(0, fmt::format("metadata '{}' is missing", key));
  if (v->type != GgufType::kArray || v->element_type == GgufType::kString) {
    fail(v->offset, fmt::format("metadata '{}' is not a numeric array", key));
  }
  return v->numbers;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  for (const auto& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------
// Writer

namespace {
template <typename T>
void put_raw(std::vector<uint8_t>& out, T v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}
void put_str(std::vector<uint8_t>& out, const std::string& s) {
  put_raw<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}
}  // namespace

void GgufWriter::put(const std::string& key, std::vector<uint8_t> bytes) {
  for (auto& kv : kv_) {
    if (kv.key == key) {
      kv.bytes = std::move(bytes);
      return;
    }
  }
  kv_.push_back({key, std::move(bytes)});
}

void GgufWriter::set_string(const std::string& key, const std::string& value) {
  std::vector<uint8_t> b;
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kString));
  put_str(b, value);
  put(key, std::move(b));
}
void GgufWriter::set_u32(const std::string& key, uint32_t value) {
  std::vector<uint8_t> b;
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kU32));
  put_raw(b, value);
  put(key, std::move(b));
}
void GgufWriter::set_i32(const std::string& key, int32_t value) {
  std::vector<uint8_t> b;
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kI32));
  put_raw(b, value);
  put(key, std::move(b));
}
void GgufWriter::set_u64(const std::string& key, uint64_t value) {
  std::vector<uint8_t> b;
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kU64));
  put_raw(b, value);
  put(key, std::move(b));
}
void GgufWriter::set_f32(const std::string& key, float value) {
  std::vector<uint8_t> b;
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kF32));
  put_raw(b, value);
  put(key, std::move(b));
}
void GgufWriter::set_bool(const std::string& key, bool value) {
  std::vector<uint8_t> b;
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kBool));
  put_raw<uint8_t>(b, value ? 1 : 0);
  put(key, std::move(b));
}
void GgufWriter::set_string_array(const std::string& key, const std::vector<std::string>& values) {
  std::vector<uint8_t> b;
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kArray));
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kString));
  put_raw<uint64_t>(b, values.size());
  for (const auto& s : values) put_str(b, s);
  put(key, std::move(b));
}
void GgufWriter::set_f32_array(const std::string& key, const std::vector<float>& values) {
  std::vector<uint8_t> b;
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kArray));
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kF32));
  put_raw<uint64_t>(b, values.size());
  for (float x : values) put_raw(b, x);
  put(key, std::move(b));
}
void GgufWriter::set_i32_array(const std::string& key, const std::vector<int32_t>& values) {
  std::vector<uint8_t> b;
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kArray));
  put_raw<uint32_t>(b, static_cast<uint32_t>(GgufType::kI32));
  put_raw<uint64_t>(b, values.size());
  for (int32_t x : values) put_raw(b, x);
  put(key, std::move(b));
}
void GgufWriter::add_tensor(const std::string& name, std::vector<uint64_t> dims, GgmlType type,
                            std::vector<uint8_t> data) {
  tensors_.push_back({name, std::move(dims), type, std::move(data)});
}

void GgufWriter::write(const std::string& path) const {
  std::vector<uint8_t> out;
  out.insert(out.end(), {'G', 'G', 'U', 'F'});
  put_raw<uint32_t>(out, 3);
  put_raw<uint64_t>(out, tensors_.size());
  put_raw<uint64_t>(out, kv_.size());
  for (const auto& kv : kv_) {
    put_str(out, kv.key);
    out.insert(out.end(), kv.bytes.begin(), kv.bytes.end());
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    put_str(out, t.name);
    put_raw<uint32_t>(out, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) put_raw(out, d);
    put_raw<uint32_t>(out, static_cast<uint32_t>(t.type));
    put_raw(out, offset);
    offset += (t.data.size() + kDefaultAlignment - 1) / kDefaultAlignment * kDefaultAlignment;
  }
  out.resize((out.size() + kDefaultAlignment - 1) / kDefaultAlignment * kDefaultAlignment, 0);
  for (const auto& t : tensors_) {
    out.insert(out.end(), t.data.begin(), t.data.end());
    out.resize((out.size() + kDefaultAlignment - 1) / kDefaultAlignment * kDefaultAlignment, 0);
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  if (!f) throw std::runtime_error(fmt::format("{}: cannot write", path));
}

// ---------------------------------------------------------------------------------
// Number formats

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant ? NAN : INFINITY;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFF;
  if (((x >> 23) & 0xFF) == 0xFF) return static_cast<uint16_t>(sign | 0x7C00 | (mant ? 0x200 : 0));
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;  // round to nearest even
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;  // may carry into the exponent: correct
  return static_cast<uint16_t>(sign | h);
}

float bf16_to_float(uint16_t h) {
  const uint32_t x = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

std::vector<uint8_t> quantize_q8_0(const float* x, size_t n) {
  std::vector<uint8_t> out;
  out.reserve(n / 32 * 34);
  for (size_t b = 0; b < n / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    const uint16_t dh = float_to_half(d);
    out.push_back(static_cast<uint8_t>(dh & 0xFF));
    out.push_back(static_cast<uint8_t>(dh >> 8));
    for (int i = 0; i < 32; ++i) {
      out.push_back(static_cast<uint8_t>(static_cast<int8_t>(std::lround(x[b * 32 + i] * id))));
    }
  }
  return out;
}

void dequantize_q8_0(const uint8_t* blocks, float* out, size_t n) {
  for (size_t b = 0; b < n / 32; ++b) {
    const uint8_t* blk = blocks + b * 34;
    const float d = half_to_float(static_cast<uint16_t>(blk[0] | (blk[1] << 8)));
    for (int i = 0; i < 32; ++i) out[b * 32 + i] = d * static_cast<int8_t>(blk[2 + i]);
  }
}

}  // namespace lockstep
