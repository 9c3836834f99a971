// Highlighting in a transcript: selecting words in a participant's message fills the
// page's "Highlight a passage" form (the message, the words, and where they stand in
// characters, as the server counts them) and offers a button that takes the keyboard
// to the form's tags. Without this script the form works on its own: choose the
// message and type the words.
(function () {
  "use strict";
  var form = document.getElementById("annotate");
  var bar = document.getElementById("select-bar");
  var button = document.getElementById("select-tag");
  var status = document.getElementById("select-status");
  if (!form || !bar || !button) {
    return;
  }
  var message = document.getElementById("annotate-message");
  var quote = document.getElementById("annotate-quote");
  var start = document.getElementById("annotate-start");
  var end = document.getElementById("annotate-end");

  // The characters (code points) of s: the server counts positions in them, where
  // JavaScript strings count UTF-16 units.
  function chars(s) {
    return Array.from(s).length;
  }

  // The message text of p as stored: its text nodes, without the labels written for
  // screen readers after each highlight.
  function textNodes(p) {
    var out = [];
    var walk = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
    for (var n = walk.nextNode(); n; n = walk.nextNode()) {
      if (!n.parentElement.closest(".visually-hidden")) {
        out.push(n);
      }
    }
    return out;
  }

  // offset returns how many stored characters of p come before (node, at), or -1
  // when the point is not in p's text.
  function offset(p, node, at) {
    var before = "";
    var nodes = textNodes(p);
    if (node.nodeType !== Node.TEXT_NODE) {
      // A point between elements: take the text of the children before it.
      var range = document.createRange();
      range.setStart(p, 0);
      range.setEnd(node, at);
      for (var i = 0; i < nodes.length; i++) {
        if (range.intersectsNode(nodes[i]) && !(range.endContainer === nodes[i])) {
          before += nodes[i].data;
        }
      }
      return chars(before);
    }
    for (var j = 0; j < nodes.length; j++) {
      if (nodes[j] === node) {
        return chars(before + node.data.slice(0, at));
      }
      before += nodes[j].data;
    }
    return -1;
  }

  function messageOf(node) {
    var el = node.nodeType === Node.TEXT_NODE ? node.parentElement : node;
    var p = el && el.closest(".msg-participant p");
    if (!p) {
      return null;
    }
    var li = p.closest("li.msg");
    var index = li && /^m(\d+)$/.exec(li.id);
    return index ? { p: p, index: index[1] } : null;
  }

  function clear() {
    bar.hidden = true;
  }

  function onSelection() {
    var sel = window.getSelection();
    if (!sel || sel.rangeCount === 0 || sel.isCollapsed) {
      clear();
      return;
    }
    var r = sel.getRangeAt(0);
    var a = messageOf(r.startContainer);
    var b = messageOf(r.endContainer);
    if (!a || !b || a.p !== b.p) {
      clear();
      return;
    }
    var from = offset(a.p, r.startContainer, r.startOffset);
    var to = offset(a.p, r.endContainer, r.endOffset);
    if (from < 0 || to <= from) {
      clear();
      return;
    }
    var stored = textNodes(a.p).map(function (n) { return n.data; }).join("");
    var words = Array.from(stored).slice(from, to).join("");
    if (!words.trim()) {
      clear();
      return;
    }
    message.value = a.index;
    quote.value = words;
    start.value = String(from);
    end.value = String(to);
    bar.hidden = false;
    if (status) {
      status.textContent = "Selected “" + words + "”. The highlight form below is filled in.";
    }
  }

  // Typing in the form's own fields means the words are the person's, not a
  // selection's: the server finds them in the message.
  function forget() {
    start.value = "";
    end.value = "";
  }
  quote.addEventListener("input", forget);
  message.addEventListener("change", forget);
  // In the form, the bar has done its work (and must not cover the form's buttons).
  form.addEventListener("focusin", clear);

  document.addEventListener("selectionchange", function () {
    window.clearTimeout(onSelection.timer);
    onSelection.timer = window.setTimeout(onSelection, 150);
  });
  button.addEventListener("click", function () {
    bar.hidden = true;
    var first = form.querySelector("input[type=checkbox], #annotate-new-tag");
    form.scrollIntoView({ block: "start" });
    (first || quote).focus();
  });
})();
