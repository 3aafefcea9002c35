// An ajv validator for a JSON Schema: draft 2020-12 unless the schema's $schema names draft
// 6 or 7; formats from ajv-formats; strict mode off (annotations such as "title" abound).
'use strict';
const Ajv2020 = require('ajv/dist/2020').default;
const AjvDraft7 = require('ajv').default;
const addFormats = require('ajv-formats').default;

function validatorFor(schema) {
  const draft7 = typeof schema.$schema === 'string' && /draft-0[67]/.test(schema.$schema);
  const ajv = draft7 ? new AjvDraft7({strict: false}) : new Ajv2020({strict: false});
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return (data) => (validate(data) ? null : ajv.errorsText(validate.errors));
}

module.exports = {validatorFor};
