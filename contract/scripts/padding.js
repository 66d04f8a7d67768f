// Pre-request script of the 413 variations: {{padding}} is 17 KiB, so the body that carries it is
// over the 16 KiB the hosts accept.
pm.variables.set('padding', 'x'.repeat(17 * 1024));
