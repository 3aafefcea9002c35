// python/src/module.cpp — the `lockstep._core` extension: nanobind bindings of the public
// C++ API (include/lockstep/). Python-level conveniences (Hugging Face tokenizers, torch,
// logits masking) live in python/lockstep/.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "lockstep/lockstep.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using lockstep::CompiledGrammar;
using lockstep::GrammarCompiler;
using lockstep::GrammarMatcher;
using lockstep::JsonSchemaOptions;
using lockstep::TokenizerInfo;

namespace {

// A bitmask argument: int32 (or uint32) words, C-contiguous, on the CPU; 1-D (one row) or
// 2-D (batch × words). NumPy arrays and torch CPU tensors both arrive through DLPack.
using Bitmask = nb::ndarray<nb::c_contig, nb::device::cpu>;

std::span<uint32_t> row_of(Bitmask& bitmask, size_t index, size_t* stride_out = nullptr) {
  if (bitmask.dtype() != nb::dtype<int32_t>() && bitmask.dtype() != nb::dtype<uint32_t>()) {
    throw nb::type_error("the token bitmask must hold int32 words (allocate_token_bitmask makes one)");
  }
  if (bitmask.ndim() != 1 && bitmask.ndim() != 2) {
    throw nb::value_error("the token bitmask must be 1-D (words) or 2-D (batch × words)");
  }
  const size_t rows = bitmask.ndim() == 2 ? bitmask.shape(0) : 1;
  const size_t stride = bitmask.ndim() == 2 ? bitmask.shape(1) : bitmask.shape(0);
  if (index >= rows) {
    throw nb::index_error(("index " + std::to_string(index) + " is outside the bitmask's " + std::to_string(rows) +
                           " rows").c_str());
  }
  if (stride_out) *stride_out = stride;
  auto* words = static_cast<uint32_t*>(bitmask.data());
  return {words + index * stride, stride};
}

std::string json_text(nb::handle value) {
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  if (nb::isinstance<nb::bytes>(value)) return nb::cast<std::string>(nb::str(nb::handle(value)));
  return nb::cast<std::string>(nb::module_::import_("json").attr("dumps")(value));
}

JsonSchemaOptions schema_options(const std::string& whitespace, const std::string& property_order, bool strict,
                                 uint32_t indent, std::optional<uint32_t> max_whitespace, bool lenient,
                                 bool formats_as_annotations, const std::string& default_draft,
                                 bool canonical_numbers) {
  JsonSchemaOptions o;
  if (whitespace == "flexible") o.whitespace = JsonSchemaOptions::Whitespace::kFlexible;
  else if (whitespace == "compact") o.whitespace = JsonSchemaOptions::Whitespace::kCompact;
  else if (whitespace == "pretty") o.whitespace = JsonSchemaOptions::Whitespace::kPretty;
  else throw nb::value_error(("whitespace must be 'flexible', 'compact' or 'pretty', not '" + whitespace + "'").c_str());
  if (property_order == "schema") o.property_order = JsonSchemaOptions::PropertyOrder::kSchema;
  else if (property_order == "any") o.property_order = JsonSchemaOptions::PropertyOrder::kAny;
  else throw nb::value_error(("property_order must be 'schema' or 'any', not '" + property_order + "'").c_str());
  o.forbid_additional_properties = strict;
  o.indent = indent;
  if (max_whitespace) o.max_whitespace = *max_whitespace;
  o.lenient = lenient;
  o.assert_formats = !formats_as_annotations;
  o.default_draft = default_draft;
  o.canonical_numbers = canonical_numbers;
  return o;
}

// lockstep errors become the Python classes of lockstep.errors, with their location.
void raise_error(const lockstep::Error& e, const char* cls) {
  nb::object errors = nb::module_::import_("lockstep.errors");
  nb::object type = errors.attr(cls);
  const lockstep::ErrorLocation& at = e.location();
  nb::object line = nb::none(), column = nb::none(), pointer = nb::none(), offset = nb::none(), file = nb::none();
  if (!at.file.empty()) file = nb::str(at.file.c_str());
  if (at.source) line = nb::int_(at.source->line), column = nb::int_(at.source->column);
  if (at.pointer) pointer = nb::str(at.pointer->c_str());
  if (at.byte_offset) offset = nb::int_(*at.byte_offset);
  nb::object value = type(e.what(), "message"_a = e.message(), "file"_a = file,
                          "line"_a = line, "column"_a = column, "pointer"_a = pointer, "byte_offset"_a = offset);
  PyErr_SetObject(type.ptr(), value.ptr());
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const lockstep::SchemaError& e) {
    raise_error(e, "SchemaError");
  } catch (const lockstep::GrammarError& e) {
    raise_error(e, "GrammarError");
  } catch (const lockstep::TokenizerError& e) {
    raise_error(e, "TokenizerError");
  } catch (const lockstep::FileFormatError& e) {
    raise_error(e, "FileFormatError");
  } catch (const lockstep::LimitError& e) {
    raise_error(e, "LimitError");
  } catch (const lockstep::Error& e) {
    raise_error(e, "LockstepError");
  }
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "lockstep's engine (see the lockstep package for the documented API)";
  nb::register_exception_translator(translate);

  nb::class_<TokenizerInfo>(m, "TokenizerInfo")
      .def_static("from_file", &TokenizerInfo::from_file, "path"_a, "vocab_size"_a = nb::none(),
                  "stop_token_ids"_a = nb::none(), nb::call_guard<nb::gil_scoped_release>())
      .def_static("from_tokenizer_json", &TokenizerInfo::from_tokenizer_json, "json_text"_a, "vocab_size"_a = nb::none(),
                  "stop_token_ids"_a = nb::none(), "name"_a = "tokenizer.json", nb::call_guard<nb::gil_scoped_release>())
      .def_static(
          "from_tokens",
          [](const std::vector<nb::bytes>& tokens, std::vector<int32_t> stop, std::vector<int32_t> special,
             std::optional<size_t> vocab_size) {
            std::vector<std::string> bytes;
            bytes.reserve(tokens.size());
            for (const nb::bytes& t : tokens) bytes.emplace_back(t.c_str(), t.size());
            return TokenizerInfo::from_tokens(std::move(bytes), std::move(stop), std::move(special), vocab_size);
          },
          "token_bytes"_a, "stop_token_ids"_a, "special_token_ids"_a = std::vector<int32_t>{}, "vocab_size"_a = nb::none())
      .def_prop_ro("vocab_size", &TokenizerInfo::vocab_size)
      .def_prop_ro("tokenizer_size", &TokenizerInfo::tokenizer_size)
      .def_prop_ro("bitmask_words", &TokenizerInfo::bitmask_words)
      .def_prop_ro("stop_token_ids", &TokenizerInfo::stop_token_ids)
      .def_prop_ro("fingerprint", &TokenizerInfo::fingerprint)
      .def_prop_ro("can_encode", &TokenizerInfo::can_encode)
      .def("is_special", &TokenizerInfo::is_special, "token_id"_a)
      .def("token_bytes", [](const TokenizerInfo& t, int32_t id) {
             const std::string_view b = t.token_bytes(id);
             return nb::bytes(b.data(), b.size());
           }, "token_id"_a)
      .def("encode", &TokenizerInfo::encode, "text"_a, "add_bos"_a = false)
      .def("encode_continuation", &TokenizerInfo::encode_continuation, "text"_a)
      .def("decode", [](const TokenizerInfo& t, const std::vector<int32_t>& ids) {
             const std::string s = t.decode(ids);
             return nb::bytes(s.data(), s.size());
           }, "ids"_a);

  nb::class_<CompiledGrammar>(m, "CompiledGrammar")
      .def_prop_ro("kind", [](const CompiledGrammar& g) { return CompiledGrammar::kind_name(g.kind()); })
      .def_prop_ro("source", &CompiledGrammar::source)
      .def_prop_ro("tokenizer_info", &CompiledGrammar::tokenizer_info)
      .def_prop_ro("warnings", &CompiledGrammar::warnings)
      .def_prop_ro("memory_bytes", &CompiledGrammar::memory_bytes)
      .def_prop_ro("num_states", &CompiledGrammar::num_states)
      .def_prop_ro("num_computed_masks", &CompiledGrammar::num_computed_masks)
      .def("serialize", &CompiledGrammar::serialize)
      .def("__getstate__", &CompiledGrammar::serialize);

  nb::class_<GrammarCompiler>(m, "GrammarCompiler")
      .def("__init__",
           [](GrammarCompiler* self, const TokenizerInfo& info, unsigned max_threads, size_t cache_limit_bytes,
              bool precompute) {
             lockstep::CompilerOptions o;
             o.max_threads = max_threads;
             o.cache_limit_bytes = cache_limit_bytes;
             o.precompute = precompute;
             new (self) GrammarCompiler(info, o);
           },
           "tokenizer_info"_a, "max_threads"_a = 1, "cache_limit_bytes"_a = size_t{256} << 20, "precompute"_a = false)
      .def(
          "compile_json_schema",
          [](GrammarCompiler& c, nb::handle schema, const std::string& whitespace, const std::string& property_order,
             bool strict, uint32_t indent, std::optional<uint32_t> max_whitespace, bool lenient,
             bool formats_as_annotations, const std::string& default_draft, bool canonical_numbers) {
            const std::string text = json_text(schema);
            const JsonSchemaOptions o = schema_options(whitespace, property_order, strict, indent, max_whitespace,
                                                       lenient, formats_as_annotations, default_draft, canonical_numbers);
            nb::gil_scoped_release release;
            return c.compile_json_schema(text, o);
          },
          "schema"_a, "whitespace"_a = "flexible", "property_order"_a = "schema", "strict"_a = false, "indent"_a = 2,
          "max_whitespace"_a = nb::none(), "lenient"_a = false, "formats_as_annotations"_a = false,
          "default_draft"_a = "2020-12", "canonical_numbers"_a = false)
      .def(
          "compile_builtin_json",
          [](GrammarCompiler& c, const std::string& whitespace, std::optional<uint32_t> max_whitespace) {
            const JsonSchemaOptions o =
                schema_options(whitespace, "schema", false, 2, max_whitespace, false, false, "2020-12", false);
            nb::gil_scoped_release release;
            return c.compile_builtin_json(o);
          },
          "whitespace"_a = "flexible", "max_whitespace"_a = nb::none())
      .def(
          "compile_tools",
          [](GrammarCompiler& c, nb::handle tools, bool parallel, const std::string& whitespace,
             const std::string& property_order, bool strict, std::optional<uint32_t> max_whitespace, bool lenient) {
            const std::string text = json_text(tools);
            const JsonSchemaOptions o = schema_options(whitespace, property_order, strict, 2, max_whitespace, lenient,
                                                       false, "2020-12", false);
            nb::gil_scoped_release release;
            return c.compile_tools(text, o, parallel);
          },
          "tools"_a, "parallel"_a = false, "whitespace"_a = "flexible", "property_order"_a = "schema",
          "strict"_a = false, "max_whitespace"_a = nb::none(), "lenient"_a = false)
      .def("compile_regex", &GrammarCompiler::compile_regex, "pattern"_a, nb::call_guard<nb::gil_scoped_release>())
      .def("compile_grammar", &GrammarCompiler::compile_grammar, "grammar"_a, "root_rule"_a = "root",
           nb::call_guard<nb::gil_scoped_release>())
      .def("deserialize", &GrammarCompiler::deserialize, "serialized"_a, nb::call_guard<nb::gil_scoped_release>())
      .def_prop_ro("tokenizer_info", &GrammarCompiler::tokenizer_info)
      .def_prop_ro("cache_size_bytes", &GrammarCompiler::cache_size_bytes)
      .def_prop_ro("cache_entries", &GrammarCompiler::cache_entries)
      .def("clear_cache", &GrammarCompiler::clear_cache);

  nb::class_<GrammarMatcher>(m, "GrammarMatcher")
      .def(nb::init<const CompiledGrammar&, size_t>(), "compiled_grammar"_a, "max_tokens"_a = SIZE_MAX)
      .def("accept_token", &GrammarMatcher::accept_token, "token_id"_a)
      .def("accept_string", [](GrammarMatcher& m, nb::handle s) {
             if (nb::isinstance<nb::bytes>(s)) {
               nb::bytes b = nb::borrow<nb::bytes>(s);
               return m.accept_string(std::string_view(b.c_str(), b.size()));
             }
             return m.accept_string(nb::cast<std::string>(s));
           }, "text"_a)
      .def("validate_tokens", [](GrammarMatcher& m, const std::vector<int32_t>& ids) { return m.validate_tokens(ids); },
           "token_ids"_a)
      .def("fill_next_token_bitmask",
           [](GrammarMatcher& m, Bitmask bitmask, size_t index) {
             std::span<uint32_t> row = row_of(bitmask, index);
             const size_t vocab = m.compiled_grammar().tokenizer_info().vocab_size();
             if (row.size() < lockstep::bitmask_words(vocab)) {
               throw nb::value_error(("the bitmask has " + std::to_string(row.size()) + " words per row; the vocabulary of " +
                                      std::to_string(vocab) + " tokens needs " +
                                      std::to_string(lockstep::bitmask_words(vocab))).c_str());
             }
             nb::gil_scoped_release release;
             m.fill_next_token_bitmask({row, vocab});
           },
           "bitmask"_a, "index"_a = 0)
      .def("rollback", &GrammarMatcher::rollback, "num_tokens"_a = 1)
      .def_prop_ro("num_steps", &GrammarMatcher::num_steps)
      .def("reset", &GrammarMatcher::reset)
      .def("fork", &GrammarMatcher::fork)
      .def("is_terminated", &GrammarMatcher::is_terminated)
      .def("is_accepting", &GrammarMatcher::is_accepting)
      .def("find_jump_forward_string", [](GrammarMatcher& m, size_t max_bytes) {
             const std::string s = m.find_jump_forward_string(max_bytes);
             return nb::bytes(s.data(), s.size());
           }, "max_bytes"_a = 4096)
      .def("set_max_tokens", &GrammarMatcher::set_max_tokens, "max_tokens"_a)
      .def("min_tokens_to_accept", [](GrammarMatcher& m) -> std::optional<size_t> {
             const size_t n = m.min_tokens_to_accept();
             if (n == SIZE_MAX) return std::nullopt;
             return n;
           })
      .def_prop_ro("compiled_grammar", &GrammarMatcher::compiled_grammar);

  m.def(
      "fill_next_token_bitmasks",
      [](const std::vector<GrammarMatcher*>& matchers, Bitmask bitmask, std::optional<std::vector<int64_t>> indices,
         unsigned max_threads) {
        size_t stride = 0;
        row_of(bitmask, 0, &stride);
        const size_t rows = bitmask.ndim() == 2 ? bitmask.shape(0) : 1;
        auto* base = static_cast<uint32_t*>(bitmask.data());
        if (indices && indices->size() != matchers.size()) throw nb::value_error("indices and matchers differ in length");
        std::vector<GrammarMatcher*> by_row(rows, nullptr);
        for (size_t i = 0; i < matchers.size(); ++i) {
          const int64_t row = indices ? (*indices)[i] : static_cast<int64_t>(i);
          if (row < 0 || static_cast<size_t>(row) >= rows) {
            throw nb::index_error(("row " + std::to_string(row) + " is outside the bitmask's " + std::to_string(rows) +
                                   " rows").c_str());
          }
          by_row[static_cast<size_t>(row)] = matchers[i];
        }
        nb::gil_scoped_release release;
        lockstep::fill_next_token_bitmasks(by_row, std::span<uint32_t>(base, rows * stride), stride, max_threads);
      },
      "matchers"_a, "bitmask"_a, "indices"_a = nb::none(), "max_threads"_a = 0);

  m.attr("__version__") = LOCKSTEP_VERSION;
}
