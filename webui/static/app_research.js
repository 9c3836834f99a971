// interviewd web app: the research pages' live parts. Every page works without it (a
// "Check again" link reloads); nothing here is inline, as the Content-Security-Policy
// forbids that. Copy buttons come from app.js (data-copy).
(function () {
  'use strict';
  document.documentElement.classList.add('js');

  // Uploads (a study's documents, a plugin) post multipart bodies, whose CSRF token
  // travels in the X-CSRF-Token header: the form is sent from here, then the browser
  // follows the answer (a redirect) or shows the refusal in place.
  document.addEventListener('submit', function (ev) {
    var form = ev.target;
    if (!form.hasAttribute || !form.hasAttribute('data-upload') || ev.defaultPrevented) { return; }
    ev.preventDefault();
    var token = form.querySelector('input[name=csrf]');
    var button = form.querySelector('button[type=submit]');
    if (button) { button.disabled = true; }
    fetch(form.action, {
      method: 'POST', body: new FormData(form), credentials: 'same-origin',
      headers: { 'X-CSRF-Token': token ? token.value : '' }
    }).then(function (r) {
      if (r.redirected && r.ok) { window.location.assign(r.url); return null; }
      return r.text().then(function (html) {
        var doc = new DOMParser().parseFromString(html, 'text/html');
        var main = doc.getElementById('main');
        var here = document.getElementById('main');
        if (main && here) {
          here.innerHTML = main.innerHTML;
          document.title = doc.title;
          var problem = here.querySelector('.field-error, .form-errors, h1');
          if (problem) { problem.setAttribute('tabindex', '-1'); problem.focus(); }
        }
      });
    }).catch(function () {
      if (button) { button.disabled = false; }
      window.alert('The upload did not reach the server. Check the connection and try again.');
    });
  });

  var pollEvery = 1200; // ms between polls of a job's status
  var box = document.querySelector('[data-poll]');
  if (!box || !box.getAttribute('data-poll')) { return; }
  var url = box.getAttribute('data-poll');
  var kind = box.getAttribute('data-kind');
  var failures = 0;

  function setStatus(id, text, state, busy) {
    var el = document.getElementById(id);
    if (!el) { return; }
    el.className = 'job-status status-' + state;
    el.textContent = '';
    if (busy) {
      var s = document.createElement('span');
      s.className = 'spinner';
      s.setAttribute('aria-hidden', 'true');
      el.appendChild(s);
      el.appendChild(document.createTextNode(' '));
    }
    el.appendChild(document.createTextNode(text));
    return el;
  }

  // authoring: working → ready (open the study) or failed: the page is loaded again,
  // as the server renders a failure, with why and the guidance back in a form.
  function authoring(s) {
    if (s.status === 'ready' && s.study_url) {
      setStatus('authoring-status', 'Ready. Opening the study…', 'ready', false);
      window.location.assign(s.study_url);
      return true;
    }
    if (s.status === 'failed') {
      setStatus('authoring-status', 'That did not work out; showing why…', 'failed', false);
      window.location.reload();
      return true;
    }
    return false;
  }

  // simulation: append the turns not shown yet; stop when it has finished.
  function simulation(s) {
    var list = document.getElementById('sim-transcript');
    var turns = s.turns || [];
    for (var i = list.children.length; i < turns.length; i++) {
      var t = turns[i];
      var li = document.createElement('li');
      li.className = 'msg msg-' + (t.speaker === 'interviewer' ? 'interviewer' : 'participant');
      var who = document.createElement('span');
      who.className = 'who';
      who.textContent = t.speaker === 'interviewer' ? 'Interviewer' : 'Participant';
      var turn = document.createElement('span');
      turn.className = 'turn muted small';
      turn.textContent = 'turn ' + t.turn_number;
      var p = document.createElement('p');
      p.textContent = t.text;
      li.appendChild(who);
      li.appendChild(document.createTextNode(' '));
      li.appendChild(turn);
      li.appendChild(p);
      list.appendChild(li);
    }
    if (s.status === 'completed') { setStatus('sim-status', s.notice || 'Finished.', 'completed', false); return true; }
    if (s.status === 'failed') {
      setStatus('sim-status', 'Failed: ' + (s.error || 'the simulation did not complete.'), 'failed', false).setAttribute('role', 'alert');
      return true;
    }
    setStatus('sim-status', s.status === 'queued' ? 'Waiting to start…' : 'Running: the transcript grows turn by turn.', s.status, true);
    return false;
  }

  // export: queued → running → completed (offer the download) or failed.
  function exportJob(s) {
    if (s.ready) {
      setStatus('export-status', 'Ready to download.', 'completed', false);
      var dl = document.getElementById('export-download');
      dl.hidden = false;
      var a = dl.querySelector('a');
      if (a) { a.focus(); }
      return true;
    }
    if (s.status === 'failed') {
      setStatus('export-status', 'The export failed. Start a new one.', 'failed', false).setAttribute('role', 'alert');
      return true;
    }
    setStatus('export-status', s.status === 'running' ? 'Building the file…' : 'Queued…', s.status, true);
    return false;
  }

  // analysis: queued → running → completed (show the new version) or failed (say why;
  // the findings on the page stay those of the previous version).
  function analysis(s) {
    if (s.status === 'completed') {
      setStatus('analysis-status', 'Done. Showing the new findings…', 'completed', false);
      if (s.findings_url) { window.location.assign(s.findings_url); }
      return true;
    }
    if (s.status === 'failed') {
      setStatus('analysis-status', 'The analysis failed: ' + (s.error || 'it did not complete.') +
        ' The findings shown are the previous version.', 'failed', false).setAttribute('role', 'alert');
      return true;
    }
    setStatus('analysis-status', s.status === 'running' ? 'An analysis is running…' : 'An analysis is queued: it starts shortly…', s.status, true);
    return false;
  }

  var handlers = { authoring: authoring, simulation: simulation, export: exportJob, analysis: analysis };
  var handle = handlers[kind];
  if (!handle) { return; }

  function poll() {
    fetch(url, { credentials: 'same-origin', headers: { Accept: 'application/json' }, cache: 'no-store' })
      .then(function (r) {
        if (r.status === 401 || r.status === 403 || r.status === 404 || r.status === 410) {
          // Gone, or no longer ours to see (signed out, another workspace): stop and
          // say so rather than poll for ever. Any other refusal (a timeout, a rate
          // limit, a busy server) is a blip and is retried below.
          var ids = { authoring: 'authoring-status', simulation: 'sim-status', export: 'export-status', analysis: 'analysis-status' };
          var el = setStatus(ids[kind], 'This can no longer be followed here. Reload the page to see where it stands.', 'failed', false);
          if (el) { el.setAttribute('role', 'alert'); }
          return null;
        }
        if (!r.ok) { throw new Error('status ' + r.status); }
        return r.json();
      })
      .then(function (s) {
        if (s === null) { return; }
        failures = 0;
        if (!handle(s)) { window.setTimeout(poll, pollEvery); }
      })
      .catch(function () {
        // A blip (a restart, a network change): keep trying, more slowly.
        failures++;
        window.setTimeout(poll, Math.min(pollEvery * Math.pow(2, failures), 15000));
      });
  }
  window.setTimeout(poll, pollEvery);
})();
