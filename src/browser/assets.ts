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

/**
 * `/assets/inbox.js`: keeps `/inbox` current without a reload. It opens the page's server-sent
 * event stream (`data-events` of `#inbox-list`); a `change` event names conversation ids only,
 * and the script fetches the fragments it shows (`data-fragment`): the list always, the open
 * thread (`#inbox-thread`) when its conversation is named (or `all`), at most one fetch of each
 * per 150 ms. The fragments are the server's own HTML (same origin, rendered and escaped
 * there), parsed with DOMParser; focus in the list stays on the same conversation, and a
message's open choice (a `<details>`, e.g. its reactions) stays open. Once the
 * stream is open `<html data-inbox-live>` is set. After a drop the browser reconnects by itself
 * (sending `Last-Event-ID`, so the server replays what changed meanwhile); on every reconnect the
 * script also reloads the list and the open thread, and sets `data-inbox-reconnected` to the
 * count of reconnects. Without the script the page is complete and a reload shows what is new.
 * When the shown thread has unread messages it carries a hidden form (`data-mark-read`): the
 * script posts it (the server marks the conversation read if the portal's `autoMarkRead` is on)
 * and reloads the list, on opening and after each reload of the thread; reads never write.
 * When the agent types in the reply box, the script posts its hidden typing form
 * (`data-typing`), at most once per 20 seconds: the person sees the business typing.
 */
export const INBOX_SCRIPT = `'use strict';
(function () {
  var list = document.getElementById('inbox-list');
  var thread = document.getElementById('inbox-thread');
  var status = document.getElementById('inbox-status');
  if (thread && !location.hash) {
    var last = thread.querySelector('.bubble:last-child');
    if (last) last.scrollIntoView({ block: 'nearest' });
  }
  if (!list || !window.EventSource || !window.fetch || !window.DOMParser) return;
  var current = thread ? thread.getAttribute('data-conversation') : null;
  var want = { list: false, thread: false };
  var timer = null;
  function replace(el, html) {
    var doc = new DOMParser().parseFromString('<!doctype html><body>' + html, 'text/html');
    var nodes = Array.prototype.slice.call(doc.body.childNodes).map(function (n) {
      return document.adoptNode(n);
    });
    el.replaceChildren.apply(el, nodes);
  }
  function load(el) {
    return fetch(el.getAttribute('data-fragment'), {
      credentials: 'same-origin',
      headers: { accept: 'text/html' },
      cache: 'no-store'
    }).then(function (r) {
      if (!r.ok) throw new Error('HTTP ' + r.status);
      return r.text();
    }).then(function (html) {
      var focused = document.activeElement;
      var href = focused && el.contains(focused) ? focused.getAttribute('href') : null;
      var opened = Array.prototype.map.call(el.querySelectorAll('details[open]'), function (d) {
        var owner = d.parentElement && d.parentElement.closest('[id]');
        return owner ? owner.id : null;
      });
      replace(el, html);
      if (el === thread) markRead();
      opened.forEach(function (id) {
        var owner = id && document.getElementById(id);
        var again = owner && owner.querySelector('details');
        if (again) again.open = true;
      });
      if (href) {
        var again = el.querySelector('a[href="' + href + '"]');
        if (again) again.focus();
      }
    });
  }
  function markRead() {
    var form = thread && thread.querySelector('form[data-mark-read]');
    if (!form) return;
    form.removeAttribute('data-mark-read');
    fetch(form.getAttribute('action'), {
      method: 'POST',
      credentials: 'same-origin',
      body: new URLSearchParams(new FormData(form)),
      redirect: 'manual'
    }).then(function () {
      want.list = true;
      schedule();
    }, function () {});
  }
  function refresh() {
    timer = null;
    var jobs = [];
    if (want.list) jobs.push(load(list));
    if (want.thread && thread) jobs.push(load(thread));
    var newInThread = want.thread;
    want = { list: false, thread: false };
    Promise.all(jobs).then(function () {
      document.documentElement.setAttribute('data-inbox-updated', String(Date.now()));
      if (status) status.textContent = newInThread ? 'New messages in this conversation.' : 'Conversations updated.';
      if (newInThread && thread) {
        var last = thread.querySelector('.bubble:last-child');
        if (last) last.scrollIntoView({ block: 'nearest' });
      }
    }, function () {});
  }
  function schedule() {
    if (!timer) timer = setTimeout(refresh, 150);
  }
  markRead();
  var typedAt = 0;
  document.addEventListener('input', function (e) {
    var form = document.querySelector('form[data-typing]');
    var box = e.target && e.target.closest ? e.target.closest('#reply') : null;
    if (!form || !box || Date.now() - typedAt < 20000) return;
    typedAt = Date.now();
    fetch(form.getAttribute('action'), {
      method: 'POST',
      credentials: 'same-origin',
      body: new URLSearchParams(new FormData(form)),
      redirect: 'manual'
    }).catch(function () {});
  });
  var source = new EventSource(list.getAttribute('data-events'));
  var opened = 0;
  source.addEventListener('ready', function () {
    document.documentElement.setAttribute('data-inbox-live', 'yes');
    if (opened++ === 0) return;
    // A reconnect: what happened while the stream was down may not all be replayed.
    document.documentElement.setAttribute('data-inbox-reconnected', String(opened - 1));
    want.list = true;
    if (current) want.thread = true;
    schedule();
  });
  source.addEventListener('error', function () {
    document.documentElement.removeAttribute('data-inbox-live');
  });
  source.addEventListener('change', function (e) {
    var data;
    try { data = JSON.parse(e.data); } catch (_) { return; }
    want.list = true;
    var ids = data.conversationIds || [];
    if (current && (data.all || ids.indexOf(current) >= 0)) want.thread = true;
    schedule();
  });
})();
`;
