// runtime/cli/fuzz_ajv.h — the ajv re-check of `lockstep fuzz`: finished walks of a schema or
// a tools document validated by ajv (the npm JSON Schema validator, run by node), a
// validator lockstep did not write.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace lockstep::cli {

struct AjvVerdicts {
  bool ran = false;
  std::string skipped;  ///< why ajv did not run (node or ajv missing, ajv cannot compile the source)
  std::vector<std::pair<size_t, std::string>> refused;  ///< index into the texts, ajv's reason
};

/// Validates `texts` against the schema (kind "schema") or tools document (kind "tools") in
/// `source_file` with `node DIR/validate_texts.js`, where DIR is $LOCKSTEP_AJV_DIR or the
/// source tree's tests/node (ajv installed there by scripts/install-deps.sh). Never throws
/// for a missing node or ajv: the result says why it was skipped. Runs one node process for
/// all texts (about 0.3 s plus ~0.1 ms per text).
AjvVerdicts ajv_recheck(const std::string& kind, const std::string& source_file, const std::vector<std::string>& texts,
                        bool formats_as_annotations);

}  // namespace lockstep::cli
