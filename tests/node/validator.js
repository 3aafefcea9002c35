// An ajv validator for a JSON Schema, as the JSON Schema specifications have it:
//   - the draft its $schema names (4, 6, 7; otherwise 2020-12, where the draft-4 "id" is an
//     unknown keyword like any other, not an error);
//   - only the formats JSON Schema defines (ajv-formats also knows "url", "int32", …, which
//     a validator must treat as unknown, that is as annotations);
//   - strict mode off (annotations such as "title" abound);
//   - a pattern that is not a valid ECMAScript regular expression in Unicode mode (identity
//     escapes such as \' or \- outside a class) compiled in non-Unicode mode, as ECMA-262
//     without the u flag reads it.
'use strict';
const Ajv2020 = require('ajv/dist/2020').default;
const AjvDraft7 = require('ajv').default;
const AjvDraft4 = require('ajv-draft-04').default;
const addFormats = require('ajv-formats').default;
const draft6 = require('ajv/dist/refs/json-schema-draft-06.json');

const kFormats = ['date', 'time', 'date-time', 'duration', 'uri', 'uri-reference', 'uri-template', 'email', 'hostname',
                  'ipv4', 'ipv6', 'regex', 'uuid', 'json-pointer', 'relative-json-pointer'];

function compile(schema, options, formats) {
  const name = typeof schema.$schema === 'string' ? schema.$schema : '';
  const Ajv = /draft-04/.test(name) ? AjvDraft4 : /draft-0[67]/.test(name) ? AjvDraft7 : Ajv2020;
  const ajv = new Ajv({strict: false, logger: false, ...options});
  if (Ajv === AjvDraft7) ajv.addMetaSchema(draft6);
  if (Ajv === Ajv2020) {
    ajv.removeKeyword('id');
    ajv.addKeyword({keyword: 'id'});
  }
  if (formats) {
    addFormats(ajv, kFormats);
  } else {
    for (const f of kFormats) ajv.addFormat(f, true);  // annotations only
  }
  return {ajv, validate: ajv.compile(schema)};
}

// validatorFor(schema, {formats: false}) treats "format" as an annotation.
function validatorFor(schema, {formats = true} = {}) {
  let c;
  try {
    c = compile(schema, {}, formats);
  } catch (e) {
    if (!/regular expression/i.test(e.message)) throw e;
    c = compile(schema, {unicodeRegExp: false}, formats);
  }
  return (data) => (c.validate(data) ? null : c.ajv.errorsText(c.validate.errors));
}

// A validator of tool calls for a tools document: an MCP tools/list result
// ({"tools":[{"name","inputSchema"}]}) or an OpenAI tools array
// ([{"type":"function","function":{"name","parameters"}}]). The returned function takes a
// parsed call — {"name", "arguments"} or, with parallel calls, a non-empty array of them —
// and returns null when every call names a tool and its arguments are valid, else why not.
function callValidatorFor(toolsDoc, options = {}) {
  const validators = new Map();
  const list = Array.isArray(toolsDoc) ? toolsDoc : toolsDoc.tools;
  for (const t of list) {
    const f = t.function || t;
    validators.set(f.name, validatorFor(f.inputSchema || f.parameters || {type: 'object'}, options));
  }
  return (call) => {
    const calls = Array.isArray(call) ? call : [call];
    if (calls.length === 0) return 'an empty array of calls';
    for (const c of calls) {
      if (typeof c !== 'object' || c === null || Array.isArray(c)) return 'a call is not an object';
      const keys = Object.keys(c).sort().join(',');
      if (keys !== 'arguments,name') return `a call has members ${keys}, expected name and arguments`;
      if (!validators.has(c.name)) return `unknown tool ${JSON.stringify(c.name)}`;
      const error = validators.get(c.name)(c.arguments);
      if (error) return `arguments of ${c.name} invalid: ${error}: ${JSON.stringify(c.arguments).slice(0, 300)}`;
    }
    return null;
  };
}

module.exports = {validatorFor, callValidatorFor};
