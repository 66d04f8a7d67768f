// Pre-request script of the pos collection's first request (portman.pos.json): the codes a till
// scans must exist, so a code generator is created and three codes are issued on the core host
// ({{coreBaseUrl}}, with the run's token, of scope all). Sets posCode1 (checked, redeemed, then
// released by the void of the documents' example transaction), posCode2 (redeemed here by
// transaction contract-T2, so that another transaction is refused it) and posCode3.
const core = pm.variables.get('coreBaseUrl');
const headers = { 'X-Auth-Token': pm.variables.get('token'), 'Content-Type': 'application/json', Accept: 'application/json' };
const post = (url, body, done) =>
  pm.sendRequest({ url, method: 'POST', header: headers, body: { mode: 'raw', raw: JSON.stringify(body) } }, (error, response) => {
    if (error || response.code >= 300) throw new Error(`setup: POST ${url} answered ${error ?? `${response.code} ${response.text()}`}`);
    done(response.json());
  });
const generator = { code_generator: { generation_type: 'tillgate', code_length: 8, prefix: 'POS-', store_id: 7, description: 'Contract run (pos)' } };
post(`${core}/v1.0/codegen`, generator, ({ code_generator }) => {
  post(`${core}/v1.0/codegen/${code_generator.id}/codes`, { count: 3 }, ({ codes }) => {
    codes.forEach((code, index) => pm.collectionVariables.set(`posCode${index + 1}`, code));
    const redemption = { transaction: { site_id: 'contract-site', pos_transaction_id: 'contract-T2', codes: [codes[1]] } };
    post(`${pm.variables.get('baseUrl')}/v2.0/redeemed_codes`, redemption, () => undefined);
  });
});
