/**
 * The pages' static files besides the stylesheet: the favicon and the one script. Served from
 * `/assets/…` (same origin), so the Content Security Policy stays `script-src 'self'` with no
 * inline script; every page works without the script.
 *
 * @see docs/decisions/0009-pages.md
 */

/** The favicon: the brand's "P" on the accent colour, as SVG (every current browser takes it). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#1f5fbf"/>
<path d="M11 25V7h7.2c3.9 0 6.3 2.1 6.3 5.6s-2.4 5.7-6.3 5.7H14.6V25z M14.6 15.3h3.3c1.9 0 3-1 3-2.7s-1.1-2.6-3-2.6h-3.3z" fill="#fff"/>
</svg>
`;

/**
 * `/assets/one-time-token.js`: a field marked `data-select-on-click` selects its whole value on
 * click or focus, and a button marked `data-copy-from="<id>"` copies that field to the
 * clipboard and says so. Without the script the field is still a read-only text field a person
 * can select and copy by hand.
 */
export const ONE_TIME_TOKEN_SCRIPT = `'use strict';
document.querySelectorAll('[data-select-on-click]').forEach(function (field) {
  var select = function () { field.select(); field.setSelectionRange(0, field.value.length); };
  field.addEventListener('click', select);
  field.addEventListener('focus', select);
});
document.querySelectorAll('[data-copy-from]').forEach(function (button) {
  var field = document.getElementById(button.getAttribute('data-copy-from'));
  var status = document.getElementById(button.getAttribute('data-copy-status'));
  if (!field || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener('click', function () {
    navigator.clipboard.writeText(field.value).then(
      function () { if (status) status.textContent = 'Copied. Store it in your secret manager now.'; },
      function () { field.select(); if (status) status.textContent = 'Press Ctrl+C (or Cmd+C) to copy.'; }
    );
  });
});
`;
