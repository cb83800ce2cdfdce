// live.js: a page open in the browser follows its playbook's changes
// (Server-Sent Events from GET /live, see package web) and, within a
// moment of one, fetches itself again and swaps the parts marked
// data-live, keeping what a person is typing and the comment threads
// they opened. Without it (or without JavaScript) the page is whole; a
// reload shows the same.
(function () {
  'use strict';
  if (!window.EventSource || !window.fetch || !window.DOMParser) return;
  // A page with no part to follow (a dry run's answer to its form, which
  // a fetch of its address would not give again) opens no stream.
  if (!document.querySelector('[data-live]')) return;
  var pb = document.body.getAttribute('data-live-playbook') || '';
  var src = '/live' + (pb ? '?playbook=' + encodeURIComponent(pb) : '');
  var timer = null, busy = false, again = false;
  // Each part's HTML as the server last sent it: a part is swapped only
  // when that changed, since a part whose charts are drawn never equals
  // the server's HTML. live.js runs before charts.js (the page's scripts
  // are deferred, in order), so the parts are still as the server sent them.
  var sent = {};
  document.querySelectorAll('[data-live]').forEach(function (el) {
    sent[el.getAttribute('data-live')] = el.innerHTML;
  });

  function typing(el) {
    var a = document.activeElement;
    return a && el.contains(a) && (a.tagName === 'TEXTAREA' || a.tagName === 'INPUT' || a.tagName === 'SELECT') && a.value !== '';
  }

  function swap(doc) {
    var parts = document.querySelectorAll('[data-live]');
    for (var i = 0; i < parts.length; i++) {
      var el = parts[i];
      var name = el.getAttribute('data-live');
      var fresh = doc.querySelector('[data-live="' + name + '"]');
      if (!fresh || fresh.innerHTML === sent[name]) continue;
      // A comment being typed keeps its thread, text and focus, while the
      // rest of the part (its figures, the runs table) is swapped around
      // it; a part typed into elsewhere waits.
      var a = document.activeElement, kept = null;
      if (typing(el)) {
        kept = a.closest('details[id]');
        if (!kept || !fresh.querySelector('details[id="' + CSS.escape(kept.id) + '"]')) continue;
      }
      sent[name] = fresh.innerHTML;
      var open = {};
      el.querySelectorAll('details[open][id]').forEach(function (d) { open[d.id] = true; });
      fresh.querySelectorAll('details[id]').forEach(function (d) { if (open[d.id]) d.setAttribute('open', ''); });
      var node = document.importNode(fresh, true);
      if (kept) {
        var from = a.selectionStart, to = a.selectionEnd;
        node.querySelector('details[id="' + CSS.escape(kept.id) + '"]').replaceWith(kept);
      }
      el.replaceWith(node);
      if (kept) {
        a.focus();
        try { if (typeof from === 'number') a.setSelectionRange(from, to); } catch (e) { /* a field without a selection */ }
      }
      // charts.js draws the figures of a part swapped in.
      document.dispatchEvent(new CustomEvent('quire:updated', { detail: { root: node } }));
      if (window.quireCharts && typeof window.quireCharts.draw === 'function') window.quireCharts.draw(node);
    }
    document.body.setAttribute('data-live-at', String(Date.now()));
  }

  function refresh() {
    timer = null;
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html) swap(new DOMParser().parseFromString(html, 'text/html')); })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  var es = new EventSource(src);
  es.addEventListener('change', function () {
    if (!timer) timer = setTimeout(refresh, 100);
  });
})();
