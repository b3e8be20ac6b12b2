// The session page of `shellkeep serve`: the player (a recording or the live stream), the
// timeline links that seek it (on a live session they open the recording so far there), and
// the input box (--allow-input). No build step, no network.
(function () {
  "use strict";
  followState(document.getElementById("state"));
  var el = document.getElementById("player");
  if (!el || !window.AsciinemaPlayer) return;
  var id = el.dataset.session;
  var live = el.dataset.mode === "live";
  var fit = "width";
  var player;
  if (live) {
    var scheme = location.protocol === "https:" ? "wss:" : "ws:";
    player = AsciinemaPlayer.create(
      { driver: "websocket", url: scheme + "//" + location.host + "/ws/s/" + encodeURIComponent(id), bufferTime: 0 },
      el,
      { fit: fit, autoPlay: true, cols: Number(el.dataset.cols), rows: Number(el.dataset.rows) }
    );
  } else {
    var start = Number(new URLSearchParams(location.search).get("t") || "0");
    player = AsciinemaPlayer.create("/api/sessions/" + encodeURIComponent(id) + "/cast", el, {
      fit: fit,
      autoPlay: true,
      idleTimeLimit: 2,
      startAt: start > 0 ? start : undefined,
      markers: undefined
    });
  }
  window.shellkeepPlayer = player;
  if (live) {
    player.addEventListener("ended", function () {
      var note = document.getElementById("live-status");
      if (note) note.textContent = "the session ended; reload the page to replay it";
    });
  }
  player.addEventListener("play", function () { el.dataset.playing = "1"; });
  player.addEventListener("playing", function () { el.dataset.playing = "1"; });
  player.addEventListener("pause", function () { el.dataset.playing = "0"; });
  player.addEventListener("ended", function () { el.dataset.playing = "0"; });
  document.querySelectorAll("a.seek").forEach(function (link) {
    link.addEventListener("click", function (event) {
      if (live) return; // the link opens the recording so far at that point (a live stream cannot seek)
      event.preventDefault();
      var t = Number(link.dataset.t);
      var wasPlaying = el.dataset.playing === "1";
      Promise.resolve(player.seek(t)).then(function () { if (wasPlaying) player.play(); });
      el.scrollIntoView({ block: "nearest" });
    });
  });
  var form = document.getElementById("typing");
  if (form) {
    var box = document.getElementById("typed");
    var enter = document.getElementById("enter");
    var status = document.getElementById("typing-status");
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var text = box.value + (enter.checked ? "\r" : "");
      if (!text) return;
      fetch("/api/sessions/" + encodeURIComponent(id) + "/input", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: text }),
        credentials: "same-origin"
      }).then(function (r) {
        return r.json().then(function (body) {
          status.textContent = r.ok ? "sent" : body.error || "not sent";
          if (r.ok) box.value = "";
        });
      }).catch(function () { status.textContent = "not sent: the server is unreachable"; });
    });
  }

  // The state badge of a session still running (working, waiting, idle) follows
  // /api/sessions every few seconds, as the list's do, and turns into the stored status
  // (finished, killed...) with its exit code once the session ends.
  function followState(badge) {
    var LIVE = ["working", "waiting", "idle", "running"];
    var EVERY_MS = 3000;
    if (!badge || LIVE.indexOf(badge.textContent) < 0) return;
    var query = new URLSearchParams({ all: "1", project: badge.dataset.project || "" });
    function refresh() {
      fetch("/api/sessions?" + query.toString(), { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : []; })
        .then(function (rows) {
          rows.forEach(function (row) {
            if (row.id !== badge.dataset.session) return;
            var text = row.state || row.status;
            if (badge.textContent !== text) {
              badge.textContent = text;
              badge.className = "status " + text;
            }
            if (!row.state && row.exit_code !== null && !document.getElementById("exit-code")) {
              var code = document.createElement("span");
              code.id = "exit-code";
              code.textContent = "exit " + row.exit_code;
              badge.parentNode.insertBefore(code, badge.nextSibling);
              badge.parentNode.insertBefore(document.createTextNode(" · "), code);
            }
          });
        })
        .catch(function () {})
        .then(function () { if (LIVE.indexOf(badge.textContent) >= 0) setTimeout(refresh, EVERY_MS); });
    }
    setTimeout(refresh, EVERY_MS);
  }
})();
