// Validates a JSON document against a JSON Schema with ajv, independently of lockstep.
//   node validate_json.js SCHEMA.json DOC.json      exit 0 when valid
'use strict';
const fs = require('fs');
const Ajv2020 = require('ajv/dist/2020').default;
const AjvDraft7 = require('ajv').default;
const addFormats = require('ajv-formats').default;

const schema = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const text = fs.readFileSync(process.argv[3], 'utf8');
let doc;
try {
  doc = JSON.parse(text);
} catch (e) {
  console.error(`not JSON: ${e.message}: ${text.slice(0, 200)}`);
  process.exit(1);
}
const draft7 = typeof schema.$schema === 'string' && /draft-0[67]/.test(schema.$schema);
const ajv = draft7 ? new AjvDraft7({strict: false}) : new Ajv2020({strict: false});
addFormats(ajv);
const validate = ajv.compile(schema);
if (!validate(doc)) {
  console.error(`invalid: ${ajv.errorsText(validate.errors)}`);
  process.exit(1);
}
console.log('valid');
