// Pre-request script of the 409 variation of POST /v1.0/codegen/{id}/codes: an inactive code
// generator ({{inactiveGeneratorId}}), which must refuse to issue codes.
pm.sendRequest(
  {
    url: `${pm.variables.get('baseUrl')}/v1.0/codegen`,
    method: 'POST',
    header: { 'X-Auth-Token': pm.variables.get('token'), 'Content-Type': 'application/json', Accept: 'application/json' },
    body: {
      mode: 'raw',
      raw: JSON.stringify({
        code_generator: { generation_type: 'numeric', code_length: 6, store_id: 42, status: 'inactive', description: 'Contract run, inactive' },
      }),
    },
  },
  (error, response) => {
    if (error || response.code !== 201) throw new Error(`could not create an inactive generator: ${error ?? response.code}`);
    pm.variables.set('inactiveGeneratorId', response.json().code_generator.id);
  },
);
