/**
 * The sandbox's pages over real HTTP: the stylesheet reaches the browser as written (a style
 * element's text is raw text: quotes, not `&quot;`, so the font list holds), and the icon a
 * browser asks for is not an error.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startTestProvider } from '../helpers/provider.ts';

describe('sandbox pages', () => {
  test('the stylesheet is not escaped; /favicon.ico is no error', async (t) => {
    const p = await startTestProvider(t);
    for (const path of ['/sandbox/apps', '/sandbox/phone']) {
      const res = await fetch(`${p.sandbox.url}${path}`);
      assert.equal(res.status, 200, path);
      const html = await res.text();
      const style = /<style>([^]*?)<\/style>/.exec(html)?.[1] ?? '';
      assert.match(style, /"Segoe UI"/, path);
      assert.doesNotMatch(style, /&quot;|&gt;|&amp;/, path);
    }
    const icon = await fetch(`${p.sandbox.url}/favicon.ico`);
    assert.equal(icon.status, 204);
  });
});
