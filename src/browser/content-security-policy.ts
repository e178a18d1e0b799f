/**
 * Content-Security-Policy of the pages.
 *
 * @see https://www.w3.org/TR/CSP3/
 */

/**
 * The Content-Security-Policy directives of the pages: nothing but our own stylesheet, images
 * and script files (`'self'`: no inline script, no `eval`), requests from script only to
 * ourselves (the inbox's event stream and fragments), no framing, forms only to ourselves
 * (plus `formTarget` when given).
 * Registered globally through helmet; `/connect` widens form-action by the provider's origin.
 */
export function cspDirectives(
  isProduction: boolean,
  formTarget: string | null = null,
): Record<string, string[]> {
  const directives: Record<string, string[]> = {
    'default-src': ["'none'"],
    'style-src': ["'self'"],
    'script-src': ["'self'"],
    'img-src': ["'self'"],
    'connect-src': ["'self'"],
    'form-action': formTarget ? ["'self'", formTarget] : ["'self'"],
    'frame-ancestors': ["'none'"],
    'base-uri': ["'none'"],
  };
  if (isProduction) directives['upgrade-insecure-requests'] = [];
  return directives;
}

/** `cspDirectives` as the header value. */
export function pageCsp(isProduction: boolean, formTarget: string | null = null): string {
  return Object.entries(cspDirectives(isProduction, formTarget))
    .map(([name, values]) => [name, ...values].join(' '))
    .join('; ');
}
