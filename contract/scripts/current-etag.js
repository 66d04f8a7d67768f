// Pre-request script of the variations that send a current ETag: reads the resource at the request's
// URL and sets {{currentEtag}}, for If-None-Match (a client revalidating its copy: 304) or If-Match
// (a client changing the version it read: 200).
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
