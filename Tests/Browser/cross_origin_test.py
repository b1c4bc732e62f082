#!/usr/bin/env python3
"""A web app on another origin (docs/guides/connecting-your-app.md), in headless Chromium: `siwa-server demo` lists
http://localhost:APP in `cors_origins`, and a page served from there (by a tiny static server of
this test's own) calls `/api/me` with `fetch(…, {credentials: "include"})` after the person
signed in through the simulator, signs in natively with what the simulator's phone would hold
and calls `/api/me` with the bearer token, then signs out with the cookie. The same page served
from an unlisted origin reads nothing, and its cookie write changes nothing.

    python3 Tests/Browser/cross_origin_test.py --server .build/debug/siwa-server [--screenshots DIR]
"""
import argparse
import http.server
import json
import sys
import threading
import unittest
import urllib.parse
import urllib.request

from selenium.webdriver.common.by import By

import web_flow_test as flow

# Reads its parameters, makes each call, and shows each answer (status and body) in a <pre>;
# a call the browser does not let it read shows "blocked".
PAGE = b"""<!doctype html>
<html lang="en"><meta charset="utf-8"><title>A web app on another origin</title>
<h1>A web app on another origin</h1>
<h2>GET /api/me with the cookie</h2><pre id="cookie-me">...</pre>
<h2>POST /api/auth/apple, then GET /api/me with the bearer token</h2><pre id="native">...</pre><pre id="bearer-me">...</pre>
<h2>POST /api/logout with the cookie, then GET /api/me with it</h2><pre id="cookie-logout">...</pre><pre id="after-logout">...</pre>
<p id="done" hidden>done</p>
<script>
const server = new URLSearchParams(location.search).get("server");
const phone = new URLSearchParams(location.hash.slice(1));

async function call(id, path, init) {
  const out = document.getElementById(id);
  try {
    const response = await fetch(server + path, init);
    const body = await response.text();
    out.textContent = response.status + " " + body;
    out.dataset.requestId = response.headers.get("X-Request-Id") || "";
    return body;
  } catch (error) {
    out.textContent = "blocked: " + error.name;
    return null;
  }
}

(async () => {
  await call("cookie-me", "/api/me", {credentials: "include"});
  const signedIn = await call("native", "/api/auth/apple", {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({identity_token: phone.get("id_token"), authorization_code: phone.get("code"), nonce: phone.get("nonce"),
                          user: {name: {firstName: "Ada", lastName: "Lovelace"}}})});
  let token = "none";
  try { token = JSON.parse(signedIn).session.token; } catch (error) {}
  await call("bearer-me", "/api/me", {headers: {"Authorization": "Bearer " + token}});
  await call("cookie-logout", "/api/logout", {method: "POST", credentials: "include"});
  await call("after-logout", "/api/me", {credentials: "include"});
  document.getElementById("done").hidden = false;
})();
</script>
</html>
"""


class StaticPage:
    """One page on a loopback port of its own: another origin than the demo's."""

    def __init__(self):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the standard library's name
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(PAGE)))
                self.end_headers()
                self.wfile.write(PAGE)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://localhost:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class CrossOriginTest(unittest.TestCase):
    # The web flow test's own steps: the same browser, demo and simulator pages.
    new_browser = flow.WebFlowTest.new_browser
    wait = flow.WebFlowTest.wait
    screenshot = flow.WebFlowTest.screenshot
    sign_in = flow.WebFlowTest.sign_in
    consent = flow.WebFlowTest.consent

    @classmethod
    def setUpClass(cls):
        cls.listed = StaticPage()
        cls.unlisted = StaticPage()
        cls.demo = flow.Demo(OPTIONS.server, "--cors-origins", cls.listed.origin)
        cls.drivers = []

    @classmethod
    def tearDownClass(cls):
        for driver in cls.drivers:
            driver.quit()
        cls.listed.stop()
        cls.unlisted.stop()
        status = cls.demo.stop()
        assert status == 0, "demo exited %s:\n%s" % (status, "".join(cls.demo.output))

    def phone_credential(self, sub, nonce):
        """What ASAuthorizationAppleIDCredential would hold, minted by the simulator."""
        request = urllib.request.Request(
            self.demo.simulator_url + "/sim/codes", method="POST", headers={"Content-Type": "application/json"},
            data=json.dumps({"sub": sub, "client_id": "com.example.app", "nonce": nonce}).encode())
        with urllib.request.urlopen(request, timeout=10) as response:
            minted = json.load(response)
        return {"id_token": minted["id_token"], "code": minted["code"], "nonce": nonce}

    def open_page(self, driver, page, credential, shot):
        fragment = urllib.parse.urlencode(credential)
        driver.get(f"{page.origin}/app.html?server={urllib.parse.quote(self.demo.url)}#{fragment}")
        self.wait(driver).until(lambda d: d.find_element(By.ID, "done").is_displayed())
        self.screenshot(driver, shot)
        return {element: driver.find_element(By.ID, element).text
                for element in ("cookie-me", "native", "bearer-me", "cookie-logout", "after-logout")}

    def test_a_page_on_another_origin_calls_the_api_with_the_cookie_and_with_a_bearer_token(self):
        driver = self.new_browser()
        self.sign_in(driver, "Grace", "Hopper", hide_email=True)

        # An unlisted origin: the browser lets the page read nothing, and the sign-out it sends
        # (a "simple" POST, not preflighted) is refused by the Origin check.
        shown = self.open_page(driver, self.unlisted, self.phone_credential("002390.unlisted.origin", "n-unlisted"), "cors-1-unlisted")
        for element, text in shown.items():
            self.assertEqual(text, "blocked: TypeError", element)
        driver.get(self.demo.url + "/account")
        self.wait(driver).until(lambda d: d.find_element(By.ID, "greeting").text == "Hello, Grace Hopper")

        # The listed origin: every answer is readable.
        shown = self.open_page(driver, self.listed, self.phone_credential("002391.listed.origin", "n-listed"), "cors-2-listed")
        status, body = shown["cookie-me"].split(" ", 1)
        self.assertEqual(status, "200", shown["cookie-me"])
        self.assertEqual(json.loads(body)["name"], {"given": "Grace", "family": "Hopper"})
        self.assertTrue(shown["native"].startswith("201 ") or shown["native"].startswith("200 "), shown["native"])
        status, body = shown["bearer-me"].split(" ", 1)
        self.assertEqual(status, "200", shown["bearer-me"])
        self.assertEqual(json.loads(body)["name"], {"given": "Ada", "family": "Lovelace"})
        self.assertEqual(json.loads(body)["apple_sub"], "002391.listed.origin")
        # A cookie write from a listed origin passes the Origin check; the session ends.
        self.assertEqual(shown["cookie-logout"].strip(), "204")
        self.assertTrue(shown["after-logout"].startswith("401 "), shown["after-logout"])
        self.assertIn("unauthenticated", shown["after-logout"])
        driver.get(self.demo.url + "/account")
        self.wait(driver).until(lambda d: d.current_url == self.demo.url + "/")


OPTIONS = flow.OPTIONS

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default=OPTIONS.server)
    parser.add_argument("--screenshots")
    OPTIONS, rest = parser.parse_known_args()
    flow.OPTIONS = OPTIONS
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
