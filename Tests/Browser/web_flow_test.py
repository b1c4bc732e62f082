#!/usr/bin/env python3
"""The web flow in a real browser (docs/reference/http-api.md "Web flow"): headless Chromium against
`siwa-server demo`, whose Apple ID simulator serves the consent page on another origin, as
Apple does. A person signs in hiding their email, signs out and in again (the name they shared
the first time stays), ends a session of a second browser, and deletes the account. Another
walks the Juice story (docs/guides/passwords-and-email.md): an account with a password, signed out and in with it, upgraded
by adding Sign in with Apple at the simulator, signed in with Apple into the same account, the
password removed, and Apple refused as the last way in.

    python3 Tests/Browser/web_flow_test.py --server .build/debug/siwa-server --screenshots DIR

Screenshots of every page land in DIR (docs/screenshots takes the home and account pages).
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

OPTIONS = argparse.Namespace(server=".build/debug/siwa-server", screenshots=None)
WAIT_SECONDS = 30


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Demo:
    """`siwa-server demo` as a child process; its banner names the site and the simulator."""

    def __init__(self, server, *arguments):
        self.port = free_port()
        self.process = subprocess.Popen(
            [server, "demo", "--port", str(self.port), *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output = []
        self.simulator_url = None
        self.admin_token = None
        ready = threading.Event()

        def read():
            for line in self.process.stdout:
                self.output.append(line)
                console = re.search(r"sign in with the admin token (\S+)\)", line)
                if console:
                    self.admin_token = console.group(1)
                found = re.search(r"Simulator: (http://[0-9.:]+)/sim/log", line)
                if found:
                    self.simulator_url = found.group(1)
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(WAIT_SECONDS) or self.simulator_url is None:
            self.stop()
            raise RuntimeError("the demo did not start:\n" + "".join(self.output))
        self.url = f"http://localhost:{self.port}"

    def simulator_calls(self, endpoint):
        with urllib.request.urlopen(self.simulator_url + "/sim/log", timeout=10) as response:
            calls = json.load(response)
        calls = calls.get("calls", calls) if isinstance(calls, dict) else calls
        return [call for call in calls if call.get("endpoint") == endpoint]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


def browser():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1100,900",
                     "--no-first-run", "--disable-gpu", f"--user-data-dir={tempfile.mkdtemp(prefix='siwa-chrome-')}"):
        options.add_argument(argument)
    if os.path.exists("/usr/bin/chromium"):
        options.binary_location = "/usr/bin/chromium"
    service = Service("/usr/bin/chromedriver") if os.path.exists("/usr/bin/chromedriver") else Service()
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(WAIT_SECONDS)
    return driver


class Waiting:
    """WebDriverWait whose timeout says where the browser was and what it showed."""

    def __init__(self, driver):
        self.driver = driver

    def until(self, condition):
        try:
            # A condition that reads the page while it navigates away finds a node of the old
            # document ("does not belong to the document", stale element): poll again.
            return WebDriverWait(self.driver, WAIT_SECONDS, ignored_exceptions=(WebDriverException,)).until(condition)
        except TimeoutException:
            try:
                text = self.driver.find_element(By.CSS_SELECTOR, "body").text
            except Exception as error:  # noqa: BLE001 - the page may be gone; say so
                text = f"(no body: {error})"
            raise AssertionError(f"timed out at {self.driver.current_url}, page text:\n{text}") from None


class WebFlowTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.demo = Demo(OPTIONS.server)
        cls.drivers = []

    @classmethod
    def tearDownClass(cls):
        for driver in cls.drivers:
            driver.quit()
        status = cls.demo.stop()
        # A graceful stop is part of the contract (docs/RELIABILITY.md).
        assert status == 0, "demo exited %s:\n%s" % (status, "".join(cls.demo.output))

    def new_browser(self):
        driver = browser()
        self.drivers.append(driver)
        return driver

    def wait(self, driver):
        return Waiting(driver)

    def screenshot(self, driver, name):
        if OPTIONS.screenshots:
            os.makedirs(OPTIONS.screenshots, exist_ok=True)
            driver.save_screenshot(os.path.join(OPTIONS.screenshots, name + ".png"))

    def sign_in(self, driver, first_name, last_name, hide_email, shot=None, apple_id=None):
        """From the sign-in page through the simulator's consent page to the account page."""
        driver.get(self.demo.url + "/")
        button = self.wait(driver).until(EC.element_to_be_clickable((By.ID, "sign-in-with-apple")))
        if shot:
            self.screenshot(driver, shot + "-home")
        button.click()
        self.consent(driver, first_name, last_name, hide_email, shot, apple_id)
        self.wait(driver).until(EC.url_to_be(self.demo.url + "/account"))
        self.wait(driver).until(EC.presence_of_element_located((By.ID, "greeting")))
        if shot:
            self.screenshot(driver, shot + "-account")

    def consent(self, driver, first_name, last_name, hide_email, shot=None, apple_id=None):
        """The simulator's consent page, answered; its form_post goes back cross-site."""
        self.wait(driver).until(EC.presence_of_element_located((By.ID, "consent")))
        self.assertTrue(driver.current_url.startswith(self.demo.simulator_url + "/auth/authorize?"),
                        "the button leads to the simulator's authorize page, got " + driver.current_url)
        self.assertEqual(driver.find_element(By.ID, "client").text, "com.example.web")
        fields = [("first-name", first_name), ("last-name", last_name)]
        if apple_id:
            fields.append(("email", apple_id))
        for field, value in fields:
            element = driver.find_element(By.ID, field)
            element.clear()
            element.send_keys(value)
        driver.find_element(By.ID, "hide-email" if hide_email else "share-email").click()
        if shot:
            self.screenshot(driver, shot + "-consent")
        driver.find_element(By.ID, "continue").click()
        # The simulator's form_post page submits itself to /auth/apple/callback, cross-site.

    def session_rows(self, driver):
        return driver.find_elements(By.CSS_SELECTOR, "#sessions tbody tr")

    def test_the_whole_web_flow(self):
        first = self.new_browser()

        # 1. First sign-in, hiding the email: the name shared once is shown, and the relay address.
        self.sign_in(first, "Grace", "Hopper", hide_email=True, shot="1")
        self.assertEqual(first.find_element(By.ID, "greeting").text, "Hello, Grace Hopper")
        email = first.find_element(By.ID, "profile-email").text
        self.assertRegex(email, r"@private\.icloud\.com\b")
        self.assertIn("Hide My Email relay", email)
        self.assertEqual(len(self.session_rows(first)), 1)
        cookies = {cookie["name"]: cookie for cookie in first.get_cookies()}
        self.assertTrue(cookies["siwa_session"]["httpOnly"], "the session cookie is HttpOnly")
        self.assertEqual(cookies["siwa_session"]["sameSite"], "Lax")
        self.assertNotIn("siwa_auth", cookies, "the binding cookie is spent by the callback")

        # 2. Sign out: the account page is gone, back to the sign-in page.
        first.find_element(By.ID, "sign-out").click()
        self.wait(first).until(EC.presence_of_element_located((By.ID, "sign-in-with-apple")))
        self.assertIn("You are signed out.", first.page_source)
        first.get(self.demo.url + "/account")
        self.wait(first).until(EC.url_to_be(self.demo.url + "/"))

        # 3. Sign in again typing another name: Apple sends the name only the first time, so the
        #    stored one stays.
        self.sign_in(first, "Someone", "Else", hide_email=True)
        self.assertEqual(first.find_element(By.ID, "greeting").text, "Hello, Grace Hopper")

        # 4. A second browser signs in to the same account; the first ends its session.
        second = self.new_browser()
        self.sign_in(second, "Grace", "Hopper", hide_email=True)
        first.refresh()
        self.wait(first).until(lambda driver: len(self.session_rows(driver)) == 2)
        self.screenshot(first, "2-account-two-sessions")
        other = [row for row in self.session_rows(first) if "this browser" not in row.text]
        self.assertEqual(len(other), 1)
        other[0].find_element(By.CSS_SELECTOR, "button").click()
        self.wait(first).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "body"), "The session has ended."))
        self.assertEqual(len(self.session_rows(first)), 1)
        second.get(self.demo.url + "/account")
        self.wait(second).until(EC.url_to_be(self.demo.url + "/"))

        # 5. Delete the account: the confirmation is required, the grant is revoked at Apple.
        revocations_before = len(self.demo.simulator_calls("revoke"))
        before = first.current_url
        first.find_element(By.ID, "delete-account").click()
        self.assertEqual(first.current_url, before, "an unticked confirmation submits nothing")
        self.assertIn("The session has ended.", first.page_source)
        first.find_element(By.ID, "confirm-delete").click()
        first.find_element(By.ID, "delete-account").click()
        self.wait(first).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "body"), "Your account was deleted."))
        self.screenshot(first, "3-deleted")
        first.get(self.demo.url + "/account")
        self.wait(first).until(EC.url_to_be(self.demo.url + "/"))
        deadline = time.time() + WAIT_SECONDS
        while len(self.demo.simulator_calls("revoke")) <= revocations_before and time.time() < deadline:
            time.sleep(0.2)
        self.assertGreater(len(self.demo.simulator_calls("revoke")), revocations_before, "the grant is revoked at Apple")

        # 6. The next sign-in is a new account: the consent's name is taken again.
        self.sign_in(first, "Ada", "Lovelace", hide_email=False)
        self.assertEqual(first.find_element(By.ID, "greeting").text, "Hello, Ada Lovelace")
        self.assertIn("ada.lovelace@example.com", first.find_element(By.ID, "profile-email").text)

    def fill(self, driver, fields):
        for field, value in fields:
            element = self.wait(driver).until(EC.presence_of_element_located((By.ID, field)))
            element.clear()
            element.send_keys(value)

    def verify_from_mailbox(self, driver, email):
        """Opens the simulator's mailbox for `email`, follows the link of the newest
        verification mail (delivered in the background: polled, with a bound), and confirms."""
        deadline = time.time() + WAIT_SECONDS
        link = None
        while link is None and time.time() < deadline:
            driver.get(self.demo.simulator_url + "/mailbox?to=" + urllib.parse.quote(email))
            links = [a for a in driver.find_elements(By.CSS_SELECTOR, "ul.links a")
                     if "/verify-email?code=" in (a.get_attribute("href") or "")]
            if links:
                link = links[0]
            else:
                time.sleep(0.2)
        if link is None:
            raise AssertionError("no verification mail for %s in the simulator's mailbox" % email)
        self.assertIn("Confirm your email address", driver.page_source)
        self.screenshot(driver, "juice-2-mailbox")
        self.assertTrue(link.get_attribute("href").startswith(self.demo.url + "/verify-email?code="))
        link.click()
        self.wait(driver).until(EC.element_to_be_clickable((By.ID, "verify"))).click()
        self.wait(driver).until(EC.presence_of_element_located((By.ID, "verified")))

    def methods(self, driver):
        return driver.find_element(By.ID, "sign-in-methods").text

    def test_the_juice_story_password_then_sign_in_with_apple(self):
        driver = self.new_browser()
        email, password = "juice.fan@example.com", "squeeze the oranges daily"

        # 1. Create an account with a password on the sign-in page.
        driver.get(self.demo.url + "/")
        self.fill(driver, [("sign-up-given-name", "Jules"), ("sign-up-email", email), ("sign-up-password", password)])
        self.screenshot(driver, "juice-1-home")
        driver.find_element(By.ID, "sign-up").click()
        self.wait(driver).until(EC.text_to_be_present_in_element((By.ID, "greeting"), "Hello, Jules"))
        self.assertIn("Your account is ready.", driver.page_source)
        self.assertIn("not added", driver.find_element(By.ID, "method-apple").text)
        self.assertIn("set", driver.find_element(By.ID, "method-password").text)
        self.screenshot(driver, "juice-2-account")

        # The address is proven before it may carry an Apple ID: the demo mails the link
        # through the simulator, whose mailbox shows it.
        self.verify_from_mailbox(driver, email)
        driver.get(self.demo.url + "/account")
        self.wait(driver).until(EC.text_to_be_present_in_element((By.ID, "greeting"), "Hello, Jules"))

        # 2. Sign out, and a wrong password is refused.
        driver.find_element(By.ID, "sign-out").click()
        self.wait(driver).until(EC.presence_of_element_located((By.ID, "password-sign-in")))
        self.fill(driver, [("sign-in-email", email), ("sign-in-password", "not the password at all")])
        driver.find_element(By.ID, "password-sign-in").click()
        self.wait(driver).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "body"), "The email or password is wrong."))

        # Sign in with Apple with the same, now proven, email is refused: the account exists,
        # and accounts are never merged silently.
        driver.get(self.demo.url + "/")
        self.wait(driver).until(EC.element_to_be_clickable((By.ID, "sign-in-with-apple"))).click()
        self.consent(driver, "Jules", "Verne", hide_email=False, apple_id=email)
        self.wait(driver).until(EC.text_to_be_present_in_element(
            (By.CSS_SELECTOR, "body"), "An account with a password uses this email."))
        self.assertNotIn("greeting", driver.page_source)
        self.screenshot(driver, "juice-3-account-exists")

        # 3. Sign in with the password.
        driver.get(self.demo.url + "/")
        self.fill(driver, [("sign-in-email", email.upper()), ("sign-in-password", password)])
        driver.find_element(By.ID, "password-sign-in").click()
        self.wait(driver).until(EC.text_to_be_present_in_element((By.ID, "greeting"), "Hello, Jules"))

        # 4. The upgrade: Add Sign in with Apple, at the simulator, back on the account page.
        driver.find_element(By.ID, "add-apple").click()
        self.consent(driver, "Jules", "Verne", hide_email=False, shot="juice-3", apple_id=email)
        self.wait(driver).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "body"), "Sign in with Apple was added"))
        self.assertEqual(driver.current_url, self.demo.url + "/account?linked=1")
        self.assertIn("added", driver.find_element(By.ID, "method-apple").text)
        self.assertNotIn("not added", driver.find_element(By.ID, "method-apple").text)
        self.screenshot(driver, "juice-4-linked")

        # 5. Sign out, then Sign in with Apple: the same account.
        driver.find_element(By.ID, "sign-out").click()
        self.wait(driver).until(EC.presence_of_element_located((By.ID, "sign-in-with-apple")))
        self.sign_in(driver, "Jules", "Verne", hide_email=False, apple_id=email)
        # The family name Apple sent with the link filled in the one the sign-up lacked.
        self.assertEqual(driver.find_element(By.ID, "greeting").text, "Hello, Jules Verne")
        self.assertIn("Password", self.methods(driver))

        # 6. Remove the password: Sign in with Apple is left.
        driver.find_element(By.ID, "remove-password").click()
        self.wait(driver).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "body"), "Your password was removed."))
        self.assertIn("not set", driver.find_element(By.ID, "method-password").text)

        # 7. Try to remove Apple too: refused, it is the last way in.
        driver.find_element(By.ID, "remove-apple").click()
        self.wait(driver).until(EC.presence_of_element_located((By.ID, "account-problem")))
        self.assertIn("This is your only way to sign in", driver.find_element(By.ID, "account-problem").text)
        self.assertNotIn("not added", driver.find_element(By.ID, "method-apple").text)
        self.screenshot(driver, "juice-5-last-method")

        # The password no longer signs in.
        driver.find_element(By.ID, "sign-out").click()
        self.wait(driver).until(EC.presence_of_element_located((By.ID, "password-sign-in")))
        self.fill(driver, [("sign-in-email", email), ("sign-in-password", password)])
        driver.find_element(By.ID, "password-sign-in").click()
        self.wait(driver).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "body"), "The email or password is wrong."))

    def test_the_console_signs_in_finds_a_user_and_ends_their_sessions(self):
        # A person signs in on one browser; their session cookie is also a bearer token.
        person = self.new_browser()
        self.sign_in(person, "Ada", "Lovelace", hide_email=False, apple_id="ada.console@example.com")
        email = person.find_element(By.ID, "profile-email").text.split()[0]
        token = {cookie["name"]: cookie for cookie in person.get_cookies()}["siwa_session"]["value"]
        self.assertEqual(self.api_me(token), 200)

        # The operator's browser: the console asks for the admin token the demo printed.
        self.assertIsNotNone(self.demo.admin_token, "the demo prints the console's admin token")
        operator = self.new_browser()
        operator.get(self.demo.url + "/console")
        self.wait(operator).until(EC.presence_of_element_located((By.ID, "token")))
        self.screenshot(operator, "console-1-sign-in")
        operator.find_element(By.ID, "token").send_keys("not-the-token")
        operator.find_element(By.CSS_SELECTOR, "form[action='/console/session'] button").click()
        self.wait(operator).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "body"), "That is not the admin token."))
        operator.find_element(By.ID, "token").send_keys(self.demo.admin_token)
        operator.find_element(By.CSS_SELECTOR, "form[action='/console/session'] button").click()
        self.wait(operator).until(EC.presence_of_element_located((By.CSS_SELECTOR, ".stats")))
        cookie = {cookie["name"]: cookie for cookie in operator.get_cookies()}["siwa_console"]
        self.assertTrue(cookie["httpOnly"])
        self.assertEqual(cookie["sameSite"], "Strict")
        self.assertEqual(cookie["path"], "/console")
        self.assertNotIn("<script", operator.page_source)
        self.screenshot(operator, "console-2-overview")

        # Every console page sends the console's CSP; no page loads a script.
        for path in ("/console", "/console/users", "/console/webhooks", "/console/email"):
            request = urllib.request.Request(self.demo.url + path, headers={"Cookie": "siwa_console=" + cookie["value"]})
            with urllib.request.urlopen(request, timeout=10) as response:
                self.assertEqual(response.headers["Content-Security-Policy"],
                                 "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'", path)
                self.assertNotIn(b"<script", response.read(), path)

        # Search by the person's email, open their page, end every session.
        operator.find_element(By.LINK_TEXT, "Users").click()
        search = self.wait(operator).until(EC.presence_of_element_located((By.ID, "q")))
        search.send_keys(email.upper())
        operator.find_element(By.CSS_SELECTOR, "form.search button").click()
        self.wait(operator).until(EC.presence_of_element_located((By.CSS_SELECTOR, "table.data a[href^='/console/users/usr_']")))
        rows = operator.find_elements(By.CSS_SELECTOR, "table.data tbody tr")
        self.assertEqual(len(rows), 1, "the search finds exactly the person")
        self.screenshot(operator, "console-3-users")
        rows[0].find_element(By.CSS_SELECTOR, "a").click()
        self.wait(operator).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "h1"), "Ada Lovelace"))
        self.assertIn("Apple's view", operator.find_element(By.CSS_SELECTOR, "body").text)
        self.screenshot(operator, "console-4-user")
        operator.find_element(By.CSS_SELECTOR, "form[action$='/sessions/end'] button").click()
        self.wait(operator).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "p.notice"), "Every session of this user has ended."))
        self.assertEqual(self.api_me(token), 401, "the ended session's bearer token is refused")

        # The person's timeline shows the operator's action; the events page lists the trail.
        self.assertIn("session.ended", operator.find_element(By.CSS_SELECTOR, "body").text)
        operator.find_element(By.LINK_TEXT, "Events").click()
        self.wait(operator).until(EC.presence_of_element_located((By.CSS_SELECTOR, "table.events")))
        self.assertIn("admin.signed_in", operator.find_element(By.CSS_SELECTOR, "table.events").text)
        self.screenshot(operator, "console-5-events")
        for section, shot in (("Webhooks", "console-6-webhooks"), ("Email", "console-7-email")):
            operator.find_element(By.LINK_TEXT, section).click()
            self.wait(operator).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "h1"), section))
            self.screenshot(operator, shot)

        # Sign out: the console asks for the token again, and the old cookie opens nothing.
        operator.find_element(By.CSS_SELECTOR, ".console-signout button").click()
        self.wait(operator).until(EC.presence_of_element_located((By.ID, "token")))
        request = urllib.request.Request(self.demo.url + "/console/users", headers={"Cookie": "siwa_console=" + cookie["value"]})
        with urllib.request.urlopen(request, timeout=10) as response:
            self.assertIn(b'id="token"', response.read(), "the signed-out cookie leads back to the sign-in form")

    def api_me(self, token):
        request = urllib.request.Request(self.demo.url + "/api/me", headers={"Authorization": "Bearer " + token})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def test_cancel_on_the_consent_page_returns_to_sign_in(self):
        driver = self.new_browser()
        driver.get(self.demo.url + "/")
        self.wait(driver).until(EC.element_to_be_clickable((By.ID, "sign-in-with-apple"))).click()
        self.wait(driver).until(EC.element_to_be_clickable((By.ID, "cancel"))).click()
        self.wait(driver).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "body"), "You cancelled signing in with Apple."))
        self.assertEqual(driver.current_url, self.demo.url + "/?error=cancelled")
        self.assertNotIn("siwa_session", {cookie["name"] for cookie in driver.get_cookies()})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default=OPTIONS.server)
    parser.add_argument("--screenshots")
    OPTIONS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
