// Validates a generated tool call with ajv, independently of lockstep.
//   node validate_call.js TOOLS.json CALL.json
// TOOLS.json: an MCP tools/list result ({"tools":[{"name","inputSchema"}]}) or an OpenAI
// tools array ([{"type":"function","function":{"name","parameters"}}]).
// CALL.json: {"name": ..., "arguments": {...}} or, for parallel calls, an array of them.
// Exit 0 when every call names a tool and its arguments are valid against that tool's
// schema; otherwise prints why and exits 1.
'use strict';
const fs = require('fs');
const {callValidatorFor} = require('./validator');

function fail(message) {
  console.error(message);
  process.exit(1);
}

const toolsDoc = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const text = fs.readFileSync(process.argv[3], 'utf8');
let call;
try {
  call = JSON.parse(text);
} catch (e) {
  fail(`not JSON: ${e.message}: ${text.slice(0, 200)}`);
}
const error = callValidatorFor(toolsDoc)(call);
if (error) fail(error);
console.log(`valid: ${(Array.isArray(call) ? call : [call]).map((c) => c.name).join(', ')}`);
