// interviewd participant chat. Plain JavaScript, no dependencies, no build step.
//
// The page talks to the link's JSON API (data-api="/i/TOKEN"):
//   POST /i/TOKEN/session   start or resume: {state, session, status, messages, progress, rehearsal}
//                           ({"consent": true} when the study asks for consent; state
//                           consent_required without it; completion once completed)
//   POST /i/TOKEN/messages  answer: {status, messages, progress} (+ completion)
//   POST /i/TOKEN/skip      pass on the current question: as messages
// The session secret lives in an HttpOnly cookie the server sets; the page also keeps
// the value it was given in memory and sends it as X-Interview-Session, so the interview
// continues while the page is open even where cookies are blocked.
(function () {
  'use strict';

  var app = document.getElementById('app');
  if (!app) { return; }

  var api = app.getAttribute('data-api');
  var $ = function (id) { return document.getElementById(id); };
  var main = $('main'), log = $('log'), typing = $('typing'), welcome = $('welcome');
  var start = $('start'), composer = $('composer'), answer = $('answer'), send = $('send');
  var mic = $('mic'), micLabel = $('mic-label'), speak = $('speak'), count = $('count');
  var hint = $('hint'), startError = $('start-error'), statusLine = $('status'), skip = $('skip');
  var progressText = $('progress-text'), progressBar = $('progress-bar'), rehearsal = $('rehearsal');
  var consent = $('consent'), consentBox = $('consent-box');

  var MAX = 10000;
  var reduceMotion = window.matchMedia && window.matchMedia('(prefers-reduced-motion: reduce)').matches;
  var session = null;
  var busy = false;
  var spoken = false;      // the current answer came (at least partly) from speech
  var readAloud = false;   // interviewer messages are spoken
  var SKIPPED = '(skipped)'; // what the transcript records for a skipped question

  function setPhase(p) { app.setAttribute('data-phase', p); }

  // The header says what is happening now, and nothing else: "Connecting…" only while
  // the page waits for the server, "Typing…" while the interviewer's messages arrive.
  function setStatus(text) { statusLine.textContent = text; }

  // showProgress shows "Question 3 of 8" (scripted questions only; follow-ups keep the
  // number), or hides it when the server gives none (not started, or finished).
  function showProgress(p, status) {
    if (p && p.total > 0) {
      progressText.textContent = 'Question ' + p.question + ' of ' + p.total;
      progressText.hidden = false;
      progressBar.max = p.total;
      progressBar.value = p.question - 1;
      progressBar.hidden = false;
      return;
    }
    progressText.hidden = true;
    if (status === 'completed') { progressBar.value = progressBar.max; } else { progressBar.hidden = true; }
  }

  // ---- Talking to the server ----

  function post(path, body) {
    var headers = { 'Content-Type': 'application/json', 'Accept': 'application/json' };
    if (session) { headers['X-Interview-Session'] = session; }
    return fetch(api + path, {
      method: 'POST', headers: headers, body: JSON.stringify(body || {}),
      credentials: 'same-origin', cache: 'no-store', referrerPolicy: 'no-referrer'
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) {
        return { status: r.status, data: data, retry: r.headers.get('Retry-After') };
      });
    });
  }

  function problem(res) {
    if (res.status === 429) {
      var s = parseInt(res.retry, 10) || 30;
      return 'Lots of messages in a short time. Please wait ' + s + ' second' + (s === 1 ? '' : 's') + ' and try again.';
    }
    if (res.status === 422 && res.data && res.data.detail && res.data.detail[0]) {
      return res.data.detail[0].msg;
    }
    if (res.status === 401) { return 'This page lost track of your interview. Please reload it to continue.'; }
    if (res.data && typeof res.data.detail === 'string') { return res.data.detail; }
    return 'Something went wrong. Please try again.';
  }

  // tell shows a problem where the participant is looking: beside the answer box (in
  // its own row, never over it) while answering, under the Start button before. It
  // stays until the participant acts again, so it cannot vanish before it is read.
  function tell(text) {
    if (!composer.hidden) {
      hint.textContent = text;
      hint.classList.add('shown');
      return;
    }
    startError.textContent = text;
    startError.hidden = false;
  }

  function clearHint() {
    hint.textContent = '';
    hint.classList.remove('shown');
    answer.removeAttribute('aria-invalid');
  }

  // ---- The conversation ----

  function scrollDown() {
    main.scrollTo({ top: main.scrollHeight, behavior: reduceMotion ? 'auto' : 'smooth' });
  }

  function addMessage(m, extra) {
    var li = document.createElement('li');
    var mine = m.speaker === 'participant';
    li.className = 'msg ' + (mine ? 'participant' : 'interviewer') + (extra ? ' ' + extra : '');
    li.textContent = m.text;
    if (mine && m.text === SKIPPED) { li.classList.add('skipped'); li.textContent = 'Skipped'; }
    if (m.at) { li.title = new Date(m.at).toLocaleString(); }
    log.appendChild(li);
    scrollDown();
    return li;
  }

  function say(text) {
    if (!readAloud || !window.speechSynthesis) { return; }
    var u = new SpeechSynthesisUtterance(text);
    u.lang = document.documentElement.lang || 'en';
    window.speechSynthesis.speak(u);
  }

  function wait(ms) { return new Promise(function (done) { setTimeout(done, reduceMotion ? 0 : ms); }); }

  // Interviewer messages arrive one after another, as a person would type them.
  function playInterviewer(msgs) {
    var chain = Promise.resolve();
    msgs.forEach(function (m, i) {
      chain = chain.then(function () {
        if (i === 0) { return; }
        setStatus('Typing…');
        typing.hidden = false;
        scrollDown();
        return wait(Math.min(900, 250 + m.text.length * 6));
      }).then(function () {
        typing.hidden = true;
        addMessage(m);
        say(m.text);
      });
    });
    return chain;
  }

  // showCompletion fills in the completion code and the way back to the panel, when
  // the study issues them.
  function showCompletion(c) {
    var box = $('completion');
    if (!box || !c || !c.code) { return; }
    $('completion-code').textContent = c.code;
    var link = $('completion-link');
    if (c.redirect_url) {
      link.href = c.redirect_url;
      link.hidden = false;
    }
    box.hidden = false;
  }

  function settle(status, progress, completion) {
    typing.hidden = true;
    showProgress(progress, status);
    if (status === 'completed') {
      showCompletion(completion);
      composer.hidden = true;
      setStatus('Interview complete');
      $('end').hidden = false;
      setPhase('done');
      scrollDown();
      $('end').focus({ preventScroll: true });
      return;
    }
    if (status === 'failed') {
      composer.hidden = true;
      setStatus('Interview stopped');
      $('failed').hidden = false;
      setPhase('failed');
      scrollDown();
      $('failed').focus({ preventScroll: true });
      return;
    }
    composer.hidden = false;
    setComposer(true);
    setPhase('ready');
    setStatus('Your turn');
    scrollDown();
    if (!('ontouchstart' in window)) { answer.focus({ preventScroll: true }); }
  }

  function showNotice(state) {
    setStatus(state === 'paused' ? 'Paused' : state === 'closed' ? 'Closed' : 'Not available');
    showProgress(null);
    welcome.hidden = true;
    composer.hidden = true;
    var notice = document.querySelector('[data-notice="' + state + '"]');
    if (notice) { notice.hidden = false; notice.focus({ preventScroll: true }); }
    setPhase('notice');
  }

  function backToWelcome(text) {
    setStatus('Ready when you are');
    start.disabled = false;
    start.textContent = 'Start the interview';
    welcome.hidden = false;
    composer.hidden = true;
    setPhase('welcome');
    tell(text);
  }

  function open() {
    // The study asks for consent first: nothing starts until the box is ticked (the
    // server refuses too). An interview already under way was consented to.
    if (consent && !consentBox.checked && app.getAttribute('data-resume') !== '1') {
      consent.classList.add('missing');
      consentBox.setAttribute('aria-invalid', 'true');
      tell('Please tick the box to agree before you start.');
      consentBox.focus();
      return Promise.resolve();
    }
    setPhase('starting');
    // Re-reading an interview already on screen (it moved on in another tab) is not
    // connecting: the conversation stays in view until the fresh copy replaces it.
    setStatus(log.children.length ? 'Catching up…' : 'Connecting…');
    startError.hidden = true;
    start.disabled = true;
    start.textContent = 'Starting…';
    return post('/session', consentBox && consentBox.checked ? { consent: true } : {}).then(function (res) {
      if (res.status !== 200) { backToWelcome(problem(res)); return; }
      var d = res.data;
      if (d.state === 'consent_required') {
        // The study began asking for consent after this page loaded: show it.
        if (!consent) { window.location.reload(); return; }
        backToWelcome('Please tick the box to agree before you start.');
        return;
      }
      if (d.state !== 'open') { showNotice(d.state); return; }
      session = d.session;
      rehearsal.hidden = !d.rehearsal;
      welcome.hidden = true;
      log.textContent = '';
      setStatus('Typing…');
      var msgs = d.messages || [];
      var fresh = msgs.length > 0 && msgs.every(function (m) { return m.speaker === 'interviewer'; });
      if (fresh && app.getAttribute('data-resume') !== '1') {
        lastProgress = d.progress;
        return playInterviewer(msgs).then(function () { settle(d.status, d.progress, d.completion); });
      }
      msgs.forEach(function (m) { addMessage(m); });
      lastProgress = d.progress;
      settle(d.status, d.progress, d.completion);
    }, function () {
      backToWelcome('Couldn\'t reach the interview. Check your connection and try again.');
    });
  }

  function setComposer(on) {
    answer.disabled = !on;
    send.disabled = !on;
    mic.disabled = !on;
    skip.disabled = !on;
  }

  var lastProgress = null;

  // turn sends one answer (or a skip) and plays the interviewer's reply. On failure the
  // answer goes back into the box and the reason shows beside it.
  function turn(path, body, shown, extra) {
    stopListening();
    busy = true;
    clearHint();
    var pending = addMessage({ speaker: 'participant', text: shown }, 'pending' + (extra ? ' ' + extra : ''));
    var kept = answer.value;
    if (path === '/messages') { answer.value = ''; }
    updateCount();
    setComposer(false);
    setPhase('sending');
    setStatus('Sending…');
    typing.hidden = false;
    scrollDown();
    function failed(text) {
      busy = false;
      pending.remove();
      typing.hidden = true;
      answer.value = kept;
      updateCount();
      settle('in_progress', lastProgress);
      tell(text);
    }
    post(path, body).then(function (res) {
      if (res.status === 200) {
        busy = false;
        spoken = false;
        pending.classList.remove('pending');
        lastProgress = res.data.progress;
        setStatus('Typing…');
        typing.hidden = false;
        scrollDown();
        var replies = (res.data.messages || []).filter(function (m) { return m.speaker !== 'participant'; });
        return wait(350).then(function () { return playInterviewer(replies); }).then(function () { settle(res.data.status, res.data.progress, res.data.completion); });
      }
      if (res.status === 409) { // the interview moved on elsewhere (another tab or device)
        busy = false;
        typing.hidden = true;
        return open();
      }
      failed(problem(res));
    }, function () {
      failed(path === '/skip' ? 'The question wasn\'t skipped. Check your connection and try again.' : 'Your answer wasn\'t sent. Check your connection and try again.');
    });
  }

  function submit(ev) {
    if (ev) { ev.preventDefault(); }
    if (busy) { return; }
    var text = answer.value.trim();
    if (!text) {
      tell('Please write an answer first, or skip this question.');
      answer.setAttribute('aria-invalid', 'true');
      answer.focus();
      return;
    }
    if (text.length > MAX) { tell('Please keep your answer under 10,000 characters.'); return; }
    turn('/messages', { text: text, modality: spoken ? 'voice' : 'text' }, text, spoken ? 'spoken' : '');
  }

  function skipQuestion() {
    if (busy) { return; }
    turn('/skip', {}, SKIPPED, '');
  }

  function updateCount() {
    var n = answer.value.length;
    if (!window.CSS || !CSS.supports || !CSS.supports('field-sizing', 'content')) {
      answer.style.height = 'auto';
      answer.style.height = Math.min(answer.scrollHeight + 2, window.innerHeight * 0.4) + 'px';
    }
    if (n > 0) { clearHint(); }
    if (n < MAX - 1000) { count.hidden = true; return; }
    count.hidden = false;
    count.textContent = n.toLocaleString() + ' / ' + MAX.toLocaleString();
    count.classList.toggle('over', n > MAX);
  }

  // ---- Voice ----

  var Recognition = window.SpeechRecognition || window.webkitSpeechRecognition;
  var recognizer = null;

  function stopListening() {
    if (recognizer) { recognizer.stop(); }
  }

  function listen() {
    if (recognizer) { recognizer.stop(); return; }
    if (window.speechSynthesis) { window.speechSynthesis.cancel(); }
    var before = answer.value.trim();
    var r;
    try { r = new Recognition(); } catch (e) { tell('Voice input isn\'t available in this browser.'); return; }
    r.lang = document.documentElement.lang || 'en';
    r.interimResults = true;
    r.continuous = true;
    r.onresult = function (e) {
      var said = '';
      for (var i = 0; i < e.results.length; i++) { said += e.results[i][0].transcript; }
      said = said.trim();
      if (said) {
        spoken = true;
        answer.value = (before ? before + ' ' : '') + said;
        updateCount();
      }
    };
    r.onerror = function (e) {
      if (e.error === 'not-allowed' || e.error === 'service-not-allowed') {
        tell('Microphone access is blocked. You can allow it in your browser settings, or type your answer.');
      } else if (e.error !== 'no-speech' && e.error !== 'aborted') {
        tell('Voice input stopped (' + e.error + '). You can try again or type your answer.');
      }
    };
    r.onend = function () {
      recognizer = null;
      mic.setAttribute('aria-pressed', 'false');
      micLabel.textContent = 'Answer by voice';
      setStatus('Your turn');
      if (answer.value.trim()) { send.focus({ preventScroll: true }); }
    };
    recognizer = r;
    mic.setAttribute('aria-pressed', 'true');
    micLabel.textContent = 'Stop listening';
    setStatus('Listening… tap the microphone when you\'re done');
    if (!readAloud && window.speechSynthesis && !speak.hidden) { setReadAloud(true); }
    try { r.start(); } catch (e) { r.onend(); }
  }

  function setReadAloud(on) {
    readAloud = on;
    speak.setAttribute('aria-pressed', on ? 'true' : 'false');
    if (!on && window.speechSynthesis) { window.speechSynthesis.cancel(); }
  }

  if (Recognition) {
    mic.hidden = false;
    Array.prototype.forEach.call(document.querySelectorAll('.voice-only'), function (el) { el.hidden = false; });
    mic.addEventListener('click', listen);
  }
  if (window.speechSynthesis && window.SpeechSynthesisUtterance) {
    speak.hidden = false;
    speak.addEventListener('click', function () {
      setReadAloud(!readAloud);
      var all = log.querySelectorAll('.msg.interviewer');
      if (readAloud && all.length) { say(all[all.length - 1].textContent); }
    });
  }

  // ---- Wiring ----

  composer.addEventListener('submit', submit);
  skip.addEventListener('click', skipQuestion);
  answer.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { submit(e); }
  });
  answer.addEventListener('input', function () {
    if (!answer.value.trim()) { spoken = false; }
    updateCount();
  });
  start.addEventListener('click', open);
  if (consentBox) {
    consentBox.addEventListener('change', function () {
      if (!consentBox.checked) { return; }
      consent.classList.remove('missing');
      consentBox.removeAttribute('aria-invalid');
      startError.hidden = true;
    });
  }

  if (app.getAttribute('data-resume') === '1') { open(); }
}());
