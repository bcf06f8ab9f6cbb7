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
        var current = document.getElementById("page");
        current.replaceWith(document.adoptNode(fresh));
        main = fresh;
        live = main.getAttribute("data-live") || "";
        document.body.setAttribute("data-reloaded", String(Date.now()));
      })
      .catch(function () {})
      .then(function () {
        busy = false;
        if (again) { again = false; reload(); }
      });
  }

  var source = new EventSource("/live");
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
