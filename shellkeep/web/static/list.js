// The session list of `shellkeep serve`: while a listed session is live, its badge (working,
// waiting, idle) follows /api/sessions every few seconds, and turns into the stored status
// (finished, killed...) with its exit code once the session ends. No build step, no network.
(function () {
  "use strict";
  var LIVE = ["working", "waiting", "idle"];
  var EVERY_MS = 3000;
  function badges() {
    var found = {};
    document.querySelectorAll("#sessions tr[data-session]").forEach(function (row) {
      var badge = row.querySelector("span.status");
      if (badge) found[row.dataset.session] = badge;
    });
    return found;
  }
  function anyLive(found) {
    return Object.keys(found).some(function (id) { return LIVE.indexOf(found[id].textContent) >= 0; });
  }
  function show(badge, row) {
    var text = row.state || row.status;
    if (badge.textContent === text) return;
    badge.textContent = text;
    badge.className = "status " + text;
    var code = badge.parentNode.querySelector(".exit");
    if (!row.state && row.exit_code !== null && row.exit_code !== 0 && !code) {
      code = document.createElement("span");
      code.className = "muted exit";
      code.textContent = "exit " + row.exit_code;
      badge.parentNode.appendChild(document.createTextNode(" "));
      badge.parentNode.appendChild(code);
    }
  }
  function refresh() {
    var found = badges();
    if (!anyLive(found)) return; // nothing left to follow
    var query = new URLSearchParams(location.search);
    query.set("all", "1"); // a session that just ended stays findable whatever its length
    fetch("/api/sessions?" + query.toString(), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : []; })
      .then(function (rows) {
        rows.forEach(function (row) { if (found[row.id]) show(found[row.id], row); });
      })
      .catch(function () {})
      .then(function () { setTimeout(refresh, EVERY_MS); });
  }
  setTimeout(refresh, EVERY_MS);
})();
