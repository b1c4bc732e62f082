(function () {
  "use strict";
  var button = document.getElementById("sign-in-with-apple");
  var message = document.getElementById("sign-in-message");
  if (!button || !window.AppleID || !window.fetch) return;
  var nonce = null;

  // The page's words for a failure, in its language, are in the message's data-failed.
  function say(text) { if (message) { message.textContent = text || ""; message.hidden = !text; } }

  function prepare() {
    nonce = null;
    return fetch("/api/auth/apple/nonce", { method: "POST", credentials: "same-origin" })
      .then(function (reply) { return reply.json(); })
      .then(function (body) {
        nonce = body.nonce;
        AppleID.auth.init({ clientId: button.dataset.clientId, scope: "name email",
          redirectURI: button.dataset.redirectUri, state: nonce, nonce: nonce, usePopup: true });
      })
      .catch(function () { nonce = null; });
  }

  button.addEventListener("click", function (event) {
    if (!nonce) return; // not ready: the link's redirect flow still works
    event.preventDefault();
    var used = nonce;
    AppleID.auth.signIn().then(function (result) {
      var authorization = result.authorization || (result.detail && result.detail.authorization) || {};
      return fetch("/api/auth/apple", { method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ identity_token: authorization.id_token, authorization_code: authorization.code,
          nonce: used, user: result.user || null, device_name: "Web browser" }) });
    }).then(function (reply) {
      if (reply.ok) { window.location.assign("/account"); return; }
      say(message && message.dataset.failed);
      prepare();
    }).catch(function (failure) {
      var code = failure && failure.error;
      if (code === "popup_blocked_by_browser") { window.location.assign(button.href); return; }
      if (code !== "popup_closed_by_user" && code !== "user_cancelled_authorize") {
        say(message && message.dataset.failed);
      }
      prepare();
    });
  });
  prepare();
})();