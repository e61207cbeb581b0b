"""A headless Debian chromium driven over its DevTools protocol, for the web view's tests.

    with Browser(screenshot_dir) as browser:
        browser.open("http://127.0.0.1:8080/")
        browser.wait_for("document.querySelectorAll('#jobs tbody tr').length > 0")
        browser.click(400, 120)
        browser.screenshot("jobs.png")

Only Debian packages: /usr/bin/chromium and python3-websocket. Chromium runs in a process group
of its own with a profile in a temporary folder, both removed on close (also when a test fails);
its debugging port is a free loopback port it picks itself (--remote-debugging-port=0).
"""
import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request

CHROMIUM = "/usr/bin/chromium"


def chromium_missing_reason():
    """None when the browser tests can run, else why not."""
    if not os.access(CHROMIUM, os.X_OK):
        return "Debian's chromium is not installed (/usr/bin/chromium): apt-get install chromium"
    try:
        import websocket  # noqa: F401
    except ImportError:
        return "python3-websocket is not installed: apt-get install python3-websocket"
    return None


class BrowserError(Exception):
    pass


class Browser:
    def __init__(self, width=1400, height=900, timeout=60):
        self.width, self.height, self.timeout = width, height, timeout
        self.profile = tempfile.mkdtemp(prefix="softwire-chromium-")
        self.process = None
        self.socket = None
        self.next_id = 0
        self.console = []

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        import websocket
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--metrics-recording-only",
             "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
             "--user-data-dir=" + self.profile,
             "--window-size=%d,%d" % (self.width, self.height), "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if self.process.poll() is not None:
                raise BrowserError("chromium exited with %d before it listened" % self.process.returncode)
            if time.time() > deadline:
                raise BrowserError("chromium did not open its debugging port in 30 s")
            time.sleep(0.05)
        port = int(open(port_file).read().split()[0])
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10))
        pages = [t for t in targets if t.get("type") == "page"]
        if not pages:
            raise BrowserError("chromium shows no page")
        self.socket = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=self.timeout,
                                                  suppress_origin=True)
        self.call("Page.enable")
        self.call("Runtime.enable")

    def close(self):
        if self.socket is not None:
            try:
                self.socket.close()
            except Exception:  # noqa: BLE001 - closing anyway
                pass
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method, **params):
        """Sends one DevTools command and returns its result; events that come first are kept
        (console messages) or dropped."""
        self.next_id += 1
        my_id = self.next_id
        self.socket.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == my_id:
                if "error" in message:
                    raise BrowserError("%s: %s" % (method, message["error"]))
                return message.get("result", {})
            if message.get("method") == "Runtime.consoleAPICalled":
                args = message["params"].get("args", [])
                self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in args))
            if message.get("method") == "Runtime.exceptionThrown":
                details = message["params"]["exceptionDetails"]
                self.console.append("exception: " + details.get("exception", {}).get("description", details.get("text", "")))

    def open(self, url):
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def evaluate(self, expression):
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError("%s: %s" % (expression, result["exceptionDetails"].get("exception", {}).get("description")))
        return result["result"].get("value")

    def wait_for(self, expression, timeout=30, what=None):
        """Polls `expression` until it is truthy; its value. BrowserError after `timeout`."""
        deadline = time.time() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.time() > deadline:
                raise BrowserError("waited %d s for %s; console: %s" % (timeout, what or expression, self.console[-5:]))
            time.sleep(0.1)

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def screenshot(self, path):
        data = self.call("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as out:
            out.write(base64.b64decode(data))
