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

function compile(schema, options) {
  const name = typeof schema.$schema === 'string' ? schema.$schema : '';
  const Ajv = /draft-04/.test(name) ? AjvDraft4 : /draft-0[67]/.test(name) ? AjvDraft7 : Ajv2020;
  const ajv = new Ajv({strict: false, logger: false, ...options});
  if (Ajv === AjvDraft7) ajv.addMetaSchema(draft6);
  if (Ajv === Ajv2020) {
    ajv.removeKeyword('id');
    ajv.addKeyword({keyword: 'id'});
  }
  addFormats(ajv, kFormats);
  return {ajv, validate: ajv.compile(schema)};
}

function validatorFor(schema) {
  let c;
  try {
    c = compile(schema, {});
  } catch (e) {
    if (!/regular expression/i.test(e.message)) throw e;
    c = compile(schema, {unicodeRegExp: false});
  }
  return (data) => (c.validate(data) ? null : c.ajv.errorsText(c.validate.errors));
}

module.exports = {validatorFor};
