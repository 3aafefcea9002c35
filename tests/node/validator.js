// An ajv validator for a JSON Schema: the draft its $schema names (4, 6, 7; otherwise
// 2020-12); formats from ajv-formats; strict mode off (annotations such as "title" abound).
// A pattern that is not a valid ECMAScript regular expression in Unicode mode (identity
// escapes such as \' or \- outside a class) is compiled in non-Unicode mode, as ECMA-262
// without the u flag reads it.
'use strict';
const Ajv2020 = require('ajv/dist/2020').default;
const AjvDraft7 = require('ajv').default;
const AjvDraft4 = require('ajv-draft-04').default;
const addFormats = require('ajv-formats').default;

function compile(schema, options) {
  const name = typeof schema.$schema === 'string' ? schema.$schema : '';
  const Ajv = /draft-04/.test(name) ? AjvDraft4 : /draft-0[67]/.test(name) ? AjvDraft7 : Ajv2020;
  const ajv = new Ajv({strict: false, logger: false, ...options});
  addFormats(ajv);
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
