// interviewd web app: small progressive enhancements for the people pages. Every page
// works without it; nothing here is inline (the Content-Security-Policy forbids that).
(function () {
  'use strict';

  // Copy buttons: <button data-copy="#id"> copies the value (or text) of the element.
  function copyText(target) {
    var text = 'value' in target && target.tagName === 'INPUT' ? target.value : target.innerText;
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    // Plain http (a self-hoster's LAN): select and use the legacy command.
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.className = 'visually-hidden';
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
      document.body.removeChild(area);
      if (ok) { resolve(); } else { reject(new Error('copy refused')); }
    });
  }

  document.addEventListener('click', function (ev) {
    var btn = ev.target.closest('[data-copy]');
    if (!btn) { return; }
    var target = document.querySelector(btn.getAttribute('data-copy'));
    if (!target) { return; }
    var status = document.getElementById(btn.getAttribute('aria-describedby') || '');
    copyText(target).then(function () {
      btn.dataset.copied = '1';
      if (status) { status.textContent = 'Copied to the clipboard.'; }
    }, function () {
      if (target.select) { target.select(); }
      if (status) { status.textContent = 'Select the text and copy it with your keyboard.'; }
    });
  });

  // Read-only secrets select themselves on focus, so keyboard users can copy at once.
  document.addEventListener('focusin', function (ev) {
    if (ev.target.matches && ev.target.matches('[data-select-on-focus]')) { ev.target.select(); }
  });

  // Forms with data-confirm ask before they do something that cannot be undone.
  document.addEventListener('submit', function (ev) {
    var form = ev.target;
    var question = form.getAttribute && form.getAttribute('data-confirm');
    if (question && !window.confirm(question)) { ev.preventDefault(); }
  }, true);

  // After a failed form, move focus to the problems so a screen reader reads them.
  var errors = document.getElementById('form-errors');
  if (errors) {
    errors.setAttribute('tabindex', '-1');
    errors.focus();
  }
})();
