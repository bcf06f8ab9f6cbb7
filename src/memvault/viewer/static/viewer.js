// memvault viewer: live updates. The page is rendered (and escaped) by the server; when
// the server says that what the page shows changed, the page is fetched again and its
// <main> swapped in. No markup is built here from data.
"use strict";
(function () {
  var main = document.getElementById("page");
  var state = document.getElementById("live-state");
  if (!main || !window.EventSource) return;
  var live = main.getAttribute("data-live") || "";
  var busy = false, again = false;
  // A press and its release must land on the same element, or the browser makes no click:
  // a page fetched while a button is held is swapped in after the release.
  var pressed = false, held = null;

  function swap(fresh) {
    var current = document.getElementById("page");
    current.replaceWith(document.adoptNode(fresh));
    main = fresh;
    live = main.getAttribute("data-live") || "";
    document.body.removeAttribute("data-held");
    document.body.setAttribute("data-reloaded", String(Date.now()));
  }

  function release() {
    pressed = false;
    // After the click this release makes, which may leave the page.
    setTimeout(function () {
      if (held && !pressed) { var fresh = held; held = null; swap(fresh); }
    }, 0);
  }

  document.addEventListener("pointerdown", function () { pressed = true; }, true);
  document.addEventListener("pointerup", release, true);
  document.addEventListener("pointercancel", release, true);
  // A button released outside the window sends no pointerup here: leaving it ends the hold.
  window.addEventListener("blur", release);

  function concerns(kind, data) {
    if (!live) return false;
    if (kind === "board") return live === "board";
    if (live === "events") return true;
    if (live.indexOf("session:") === 0) {
      return (data.sessions || []).indexOf(live.slice(8)) >= 0;
    }
    return false;
  }

  function reload() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (answer) { return answer.ok ? answer.text() : null; })
      .then(function (html) {
        if (html === null) return;
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("page");
        if (!fresh) return;
        if (pressed) {
          held = fresh;
          document.body.setAttribute("data-held", "");
          return;
        }
        swap(fresh);
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; reload(); }
      });
  }

  // From what this page was rendered after: what lands before the stream opens is told.
  // (When the browser opens the stream again, it sends the last id it was given.)
  var seen = main.getAttribute("data-seen") || "";
  var source = new EventSource(seen ? "/live?seen=" + encodeURIComponent(seen) : "/live");
  source.addEventListener("open", function () { if (state) state.classList.add("on"); });
  source.addEventListener("error", function () { if (state) state.classList.remove("on"); });
  ["events", "board"].forEach(function (kind) {
    source.addEventListener(kind, function (message) {
      var data = {};
      try { data = JSON.parse(message.data); } catch (e) {}
      if (concerns(kind, data)) reload();
    });
  });
})();
