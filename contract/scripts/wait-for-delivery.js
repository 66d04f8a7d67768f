// Pre-request script of GET /v1.0/webhook_endpoints/{id}/deliveries (portman.core.json): the
// deliveries are written by the fan-out from DynamoDB Local's stream, a moment after the event.
// Polls the list until the endpoint has one, so that the request and the retry after it see it.
const url = `${pm.variables.get('baseUrl')}/v1.0/webhook_endpoints/${pm.variables.get('webhookEndpointId')}/deliveries`;
const token = pm.variables.get('token');
const deadline = Date.now() + 15000;
function poll() {
  pm.sendRequest({ url, method: 'GET', header: { 'X-Auth-Token': token, Accept: 'application/json' } }, (error, response) => {
    const deliveries = !error && response.code === 200 ? response.json().deliveries : [];
    if (deliveries.length > 0 || Date.now() > deadline) return;
    setTimeout(poll, 100);
  });
}
poll();
