// Validates many texts against one JSON Schema or tools document with ajv, independently of
// lockstep (`lockstep fuzz` re-checks its finished walks with it).
//   node validate_texts.js schema|tools SOURCE.json TEXTS.jsonl [--formats-as-annotations]
// TEXTS.jsonl: one JSON string per line (the text of one walk). Prints one line per text
// ajv refuses, {"index": line number from 0, "error": why}, then {"checked": texts}; or, when
// ajv cannot compile the source, the single line {"unavailable": why}. Exit 0 in each case;
// 2 on a usage error.
'use strict';
const fs = require('fs');
const {validatorFor, callValidatorFor} = require('./validator');

const [kind, sourceFile, textsFile, ...rest] = process.argv.slice(2);
if (!['schema', 'tools'].includes(kind) || !sourceFile || !textsFile) {
  console.error('usage: node validate_texts.js schema|tools SOURCE.json TEXTS.jsonl [--formats-as-annotations]');
  process.exit(2);
}
const options = {formats: !rest.includes('--formats-as-annotations')};
let validate;
try {
  const source = JSON.parse(fs.readFileSync(sourceFile, 'utf8'));
  validate = kind === 'schema' ? validatorFor(source, options) : callValidatorFor(source, options);
} catch (e) {
  console.log(JSON.stringify({unavailable: `ajv cannot compile the ${kind}: ${e.message}`}));
  process.exit(0);
}
const lines = fs.readFileSync(textsFile, 'utf8').split('\n').filter((l) => l.length > 0);
lines.forEach((line, index) => {
  const text = JSON.parse(line);
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    console.log(JSON.stringify({index, error: `not JSON: ${e.message}`}));
    return;
  }
  const error = validate(doc);
  if (error) console.log(JSON.stringify({index, error}));
});
console.log(JSON.stringify({checked: lines.length}));
