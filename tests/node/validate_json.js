// Validates a JSON document against a JSON Schema with ajv, independently of lockstep.
//   node validate_json.js SCHEMA.json DOC.json      exit 0 when valid
'use strict';
const fs = require('fs');
const {validatorFor} = require('./validator');

const schema = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const text = fs.readFileSync(process.argv[3], 'utf8');
let doc;
try {
  doc = JSON.parse(text);
} catch (e) {
  console.error(`not JSON: ${e.message}: ${text.slice(0, 200)}`);
  process.exit(1);
}
const error = validatorFor(schema)(doc);
if (error) {
  console.error(`invalid: ${error}`);
  process.exit(1);
}
console.log('valid');
