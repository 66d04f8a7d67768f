// Pre-request script of DELETE /v1.0/webhook_endpoints/{id} (portman.core.json): the delete
// removes an endpoint registered for it here, so that the variations after it still find
// {{webhookEndpointId}}.
pm.sendRequest(
  {
    url: `${pm.variables.get('baseUrl')}/v1.0/webhook_endpoints`,
    method: 'POST',
    header: { 'X-Auth-Token': pm.variables.get('token'), 'Content-Type': 'application/json', Accept: 'application/json' },
    body: {
      mode: 'raw',
      raw: JSON.stringify({ webhook_endpoint: { url: `${pm.variables.get('receiverUrl')}/disposable`, description: 'deleted by the contract run' } }),
    },
  },
  (error, response) => {
    if (error || response.code !== 201) throw new Error(`could not register the endpoint to delete: ${error ?? response.code}`);
    pm.collectionVariables.set('disposableWebhookEndpointId', response.json().webhook_endpoint.id);
  },
);
