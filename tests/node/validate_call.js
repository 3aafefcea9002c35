// Validates a generated tool call with ajv, independently of lockstep.
//   node validate_call.js TOOLS.json CALL.json
// TOOLS.json: an MCP tools/list result ({"tools":[{"name","inputSchema"}]}) or an OpenAI
// tools array ([{"type":"function","function":{"name","parameters"}}]).
// CALL.json: {"name": ..., "arguments": {...}} or, for parallel calls, an array of them.
// Exit 0 when every call names a tool and its arguments are valid against that tool's
// schema; otherwise prints why and exits 1.
'use strict';
const fs = require('fs');
const {validatorFor} = require('./validator');

function fail(message) {
  console.error(message);
  process.exit(1);
}

const toolsDoc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
let text = fs.readFileSync(process.argv[3], 'utf8');
let call;
try {
  call = JSON.parse(text);
} catch (e) {
  fail(`not JSON: ${e.message}: ${text.slice(0, 200)}`);
}

const schemas = new Map();
const list = Array.isArray(toolsDoc) ? toolsDoc : toolsDoc.tools;
for (const t of list) {
  const f = t.function || t;
  schemas.set(f.name, f.inputSchema || f.parameters || {type: 'object'});
}

const calls = Array.isArray(call) ? call : [call];
if (calls.length === 0) fail('an empty array of calls');
for (const c of calls) {
  if (typeof c !== 'object' || c === null) fail('a call is not an object');
  const keys = Object.keys(c).sort().join(',');
  if (keys !== 'arguments,name') fail(`a call has members ${keys}, expected name and arguments`);
  if (!schemas.has(c.name)) fail(`unknown tool ${JSON.stringify(c.name)}`);
  const error = validatorFor(schemas.get(c.name))(c.arguments);
  if (error) fail(`arguments of ${c.name} invalid: ${error}: ${JSON.stringify(c.arguments).slice(0, 300)}`);
}
console.log(`valid: ${calls.map((c) => c.name).join(', ')}`);
