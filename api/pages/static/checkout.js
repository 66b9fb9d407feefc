/* global document, window */
// The hosted checkout's only script (served from our origin; the CSP allows no inline code).
(function () {
  'use strict';

  // Expiry countdown.
  var countdown = document.getElementById('countdown');
  if (countdown) {
    var until = Date.parse(countdown.getAttribute('data-expires-at'));
    var en = countdown.getAttribute('data-lang') === 'en';
    var tick = function () {
      var left = Math.max(0, Math.floor((until - Date.now()) / 1000));
      var d = Math.floor(left / 86400), h = Math.floor((left % 86400) / 3600), m = Math.floor((left % 3600) / 60), s = left % 60;
      var parts = [];
      if (d) parts.push(d + (en ? 'd' : ' hari'));
      if (d || h) parts.push(h + (en ? 'h' : ' jam'));
      parts.push(m + (en ? 'm' : ' mnt'));
      if (!d) parts.push(s + (en ? 's' : ' dtk'));
      countdown.textContent = left === 0 ? (en ? 'expired' : 'kedaluwarsa') : (en ? '' : 'sisa ') + parts.join(' ') + (en ? ' left' : '');
    };
    tick();
    setInterval(tick, 1000);
  }

  // Copy buttons.
  var state = document.getElementById('poll-state');
  Array.prototype.forEach.call(document.querySelectorAll('button[data-copy]'), function (button) {
    button.addEventListener('click', function () {
      var value = button.getAttribute('data-copy');
      if (navigator.clipboard) {
        navigator.clipboard.writeText(value).then(function () {
          var label = button.textContent;
          button.textContent = state ? state.getAttribute('data-copied') : '✓';
          setTimeout(function () { button.textContent = label; }, 1500);
        }, function () {});
      }
    });
  });

  // One submission per pay form (a second click would only ask for the same link).
  Array.prototype.forEach.call(document.querySelectorAll('form[method="post"]'), function (form) {
    form.addEventListener('submit', function () {
      Array.prototype.forEach.call(form.querySelectorAll('button[type="submit"]'), function (b) { b.disabled = true; });
    });
  });

  // Payment status: every 5 s, stop on paid / failed / expired, at most 2 minutes per round.
  var panel = document.getElementById('payment');
  if (!panel) return;
  var url = panel.getAttribute('data-status-url');
  var stopped = document.getElementById('poll-stopped');
  var again = document.getElementById('check-again');
  var INTERVAL = 5000, CAP = 120000;
  var started = 0, timer = null;

  function finish() { window.location.reload(); }

  var answered = 0;
  // Each answered poll is counted on the panel (data-polls) once the next one is scheduled.
  function counted() {
    answered += 1;
    panel.setAttribute('data-polls', String(answered));
  }

  function poll() {
    fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' }, cache: 'no-store' })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (body) {
        var status = body && body.data && body.data.status;
        if (status) panel.setAttribute('data-status', status);
        if (status === 'paid' || status === 'failed' || status === 'expired') return finish();
        schedule();
        counted();
      }, function () { schedule(); counted(); });
  }

  function schedule() {
    if (Date.now() - started >= CAP) {
      if (stopped) stopped.hidden = false;
      return;
    }
    timer = setTimeout(poll, INTERVAL);
  }

  function round() {
    if (timer) clearTimeout(timer);
    if (stopped) stopped.hidden = true;
    started = Date.now();
    poll();
  }

  if (again) again.addEventListener('click', round);
  started = Date.now();
  schedule();
})();
