// Pre-request script of the 304 variations: reads the resource as the request will, and sends its
// current ETag in If-None-Match, as a client revalidating its copy does.
let url = pm.request.url.toString();
pm.request.url.variables.each((variable) => {
  url = url.replace(new RegExp(`/:${variable.key}(?=/|\\?|$)`), `/${variable.value}`);
});
pm.sendRequest(
  { url: pm.variables.replaceIn(url), method: 'GET', header: { 'X-Auth-Token': pm.variables.get('token'), Accept: 'application/json' } },
  (error, response) => {
    if (error || response.code !== 200) throw new Error(`could not read the ETag of ${url}: ${error ?? response.code}`);
    pm.variables.set('currentEtag', response.headers.get('ETag'));
  },
);
