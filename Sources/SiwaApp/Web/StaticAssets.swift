/// The pages' stylesheet and script, served from `/static/` because the pages' CSP allows no
/// inline style or script.
enum StaticAssets {
    static let stylesheet = """
        :root { color-scheme: light; }
        * { box-sizing: border-box; }
        body { margin: 0; background: #f5f5f7; color: #1d1d1f;
          font: 16px/1.5 -apple-system, BlinkMacSystemFont, "Helvetica Neue", system-ui, "Segoe UI", Roboto, sans-serif; }
        main { max-width: 760px; margin: 0 auto; padding: 48px 20px; }
        h1 { font-size: 32px; line-height: 1.15; margin: 0 0 8px; letter-spacing: -0.02em; }
        h2 { font-size: 20px; margin: 0 0 12px; }
        p { margin: 0 0 12px; }
        .lead { color: #6e6e73; font-size: 18px; margin-bottom: 28px; }
        .card { background: #fff; border-radius: 14px; padding: 24px; margin: 0 0 20px; box-shadow: 0 1px 3px rgba(0, 0, 0, 0.08); }
        .notice { border-radius: 10px; padding: 12px 16px; margin: 0 0 20px; background: #fff4e5; color: #6b3d00; }
        .notice--ok { background: #e8f5ec; color: #1b5e20; }
        .muted { color: #6e6e73; font-size: 14px; }
        .badge { display: inline-block; border-radius: 6px; padding: 0 8px; font-size: 13px; background: #e8e8ed; color: #1d1d1f; }
        .badge--warn { background: #fde7e9; color: #8a1c24; }
        dl.profile { display: grid; grid-template-columns: max-content 1fr; gap: 6px 20px; margin: 0; }
        dl.profile dt { color: #6e6e73; }
        dl.profile dd { margin: 0; overflow-wrap: anywhere; }
        table { width: 100%; border-collapse: collapse; font-size: 14px; }
        th, td { text-align: left; padding: 8px 6px; border-bottom: 1px solid #e8e8ed; vertical-align: middle; }
        th { color: #6e6e73; font-weight: 500; }
        form.inline { display: inline; margin: 0; }
        .actions { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; }
        button { font: inherit; font-size: 15px; border-radius: 8px; border: 1px solid #d2d2d7; background: #fff; color: #1d1d1f;
          padding: 7px 14px; cursor: pointer; }
        button:hover { background: #f5f5f7; }
        button.danger { border-color: #d70015; color: #d70015; }
        button.small, a.button.small { font-size: 13px; padding: 3px 10px; }
        a.button { display: inline-block; font-size: 15px; border-radius: 8px; border: 1px solid #d2d2d7; background: #fff;
          color: #1d1d1f; padding: 7px 14px; text-decoration: none; }
        a.button:hover { background: #f5f5f7; }
        label.confirm { font-size: 14px; color: #6e6e73; }
        .sign-in { display: flex; flex-direction: column; align-items: flex-start; gap: 8px; }
        form.stack { display: flex; flex-direction: column; align-items: flex-start; gap: 10px; margin: 8px 0 0; }
        form.stack label { display: flex; flex-direction: column; gap: 4px; font-size: 14px; color: #6e6e73; width: 100%; max-width: 360px; }
        input[type=email], input[type=password], input[type=text] { font: inherit; font-size: 15px; padding: 7px 10px;
          border: 1px solid #d2d2d7; border-radius: 8px; color: #1d1d1f; }
        details summary { cursor: pointer; font-weight: 500; }
        ul.methods { list-style: none; margin: 0 0 12px; padding: 0; display: flex; flex-direction: column; gap: 14px; }
        nav.languages { display: flex; justify-content: flex-end; gap: 12px; font-size: 14px; margin: -28px 0 12px; }
        nav.languages a { color: #0066cc; text-decoration: none; }
        nav.languages a[aria-current] { color: #1d1d1f; font-weight: 500; }
        html:lang(ko) body { word-break: keep-all; }

        /* Sign in with Apple (Apple's Human Interface Guidelines): black, white, white with a
           black outline; title at 43 % of the height in the system font; the logo artwork at
           the full height; a clear space of a tenth of the height all round; at least 140 × 30. */
        .siwa-button { display: inline-flex; align-items: center; justify-content: center; min-width: 140px;
          border: 1px solid transparent; border-radius: 8px; text-decoration: none; white-space: nowrap;
          font-family: -apple-system, BlinkMacSystemFont, "Helvetica Neue", system-ui, sans-serif; font-weight: 500;
          letter-spacing: -0.01em; -webkit-font-smoothing: antialiased; padding: 0 6% 0 2%; cursor: pointer; }
        .siwa-button--black { background: #000; color: #fff; }
        .siwa-button--white { background: #fff; color: #000; }
        .siwa-button--white-outline { background: #fff; color: #000; border-color: #000; }
        .siwa-button:focus-visible { outline: 3px solid #0071e3; outline-offset: 2px; }
        .siwa-button__logo { display: block; flex: none; }
        .siwa-button--small { height: 32px; font-size: 14px; margin: 4px; }
        .siwa-button--small .siwa-button__logo { height: 32px; width: 17.5px; }
        .siwa-button--medium { height: 44px; font-size: 19px; margin: 5px; min-width: 200px; }
        .siwa-button--medium .siwa-button__logo { height: 44px; width: 24px; }
        .siwa-button--large { height: 56px; font-size: 24px; margin: 6px; min-width: 260px; }
        .siwa-button--large .siwa-button__logo { height: 56px; width: 30.5px; }
        .siwa-button--logo { min-width: 0; padding: 0; }
        .siwa-button--logo.siwa-button--small { width: 32px; }
        .siwa-button--logo.siwa-button--medium { width: 44px; }
        .siwa-button--logo.siwa-button--large { width: 56px; }
        .siwa-button--logo .siwa-button__logo { width: 100%; height: 100%; }
        """

    /// Sign in with Apple JS in popup mode (loaded only when the server talks to the real Apple):
    /// Apple's page opens in a popup and hands the result back to this page, which forwards it
    /// to `POST /api/auth/apple`; a same-origin call also gets the session cookie. The nonce is
    /// fetched when the page loads, so the click itself calls `signIn()` at once (a popup
    /// opened after an await is blocked). Without Apple's script the button stays a link to
    /// the redirect flow.
    static let script = """
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
        """
}
