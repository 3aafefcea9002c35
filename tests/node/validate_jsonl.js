// Validates the outputs `lockstep bench closing --jsonl` wrote, each against its own
// schema, with ajv — independently of lockstep.
//   node validate_jsonl.js OUT.jsonl        exit 0 when every output is a valid document
// Each line: {"file": MaskBench file, "text": output, "complete", "complete_without_closing", ...}.
'use strict';
const fs = require('fs');
const readline = require('readline');
const {validatorFor} = require('./validator');

const validators = new Map();
function validatorOf(file) {
  if (!validators.has(file)) {
    const schema = JSON.parse(fs.readFileSync(file, 'utf8')).schema;
    let v;
    try {
      v = validatorFor(schema);
    } catch (e) {
      v = {error: `ajv cannot compile the schema: ${e.message}`};
    }
    validators.set(file, v);
  }
  return validators.get(file);
}

async function main() {
  const counts = {lines: 0, valid: 0, invalid: 0, not_json: 0, no_ajv: 0, errors: 0, cut_without: 0};
  const failures = [];
  const rl = readline.createInterface({input: fs.createReadStream(process.argv[2]), crlfDelay: Infinity});
  for await (const line of rl) {
    if (!line) continue;
    const r = JSON.parse(line);
    counts.lines++;
    if (r.error) {
      counts.errors++;
      continue;
    }
    if (r.complete_without_closing === false) counts.cut_without++;
    const v = validatorOf(r.file);
    if (v.error) {
      counts.no_ajv++;
      continue;
    }
    let doc;
    try {
      doc = JSON.parse(r.text);
    } catch (e) {
      counts.not_json++;
      failures.push(`${r.file} budget ${r.budget}: not JSON: ${r.text.slice(0, 120)}`);
      continue;
    }
    const error = v(doc);
    if (error) {
      counts.invalid++;
      failures.push(`${r.file} budget ${r.budget}: ${error}: ${r.text.slice(0, 120)}`);
    } else {
      counts.valid++;
    }
  }
  console.log(JSON.stringify(counts));
  for (const f of failures.slice(0, 20)) console.log(f);
  process.exit(counts.invalid + counts.not_json === 0 ? 0 : 1);
}

main();
