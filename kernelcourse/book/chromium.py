"""A small headless-Chromium driver for the book (its PDF and its tests), standard library only.

It speaks the Chrome DevTools Protocol over ``--remote-debugging-pipe`` (Chromium reads
commands from fd 3 and writes answers to fd 4, as NUL-terminated JSON), so it needs no
websocket client, no WebDriver and no port.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

# Network is closed in CI: keep Chromium from phoning home and from waiting on it.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-extensions",
    "--mute-audio",
    "--hide-scrollbars",
)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class CDPError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium with one page (tab) attached in flat session mode."""

    def __init__(self, executable, width=1280, height=900, timeout=60.0):
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="kernelcourse-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Park the child's ends above fd 4 so that moving them onto 3 and 4 cannot clobber.
        child_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        child_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)

        def onto_3_and_4():
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)

        args = [
            executable,
            *FLAGS,
            f"--user-data-dir={self._profile}",
            f"--window-size={width},{height}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=onto_3_and_4,
            pass_fds=(3, 4),
        )
        os.close(child_r)
        os.close(child_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        self.session = None
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.set_viewport(width, height)

    # -- protocol -----------------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                if not chunk:
                    raise CDPError(f"Chromium exited (code {self.proc.poll()})")
                self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def call(self, method, timeout=None, **params):
        """Send one command to the page session (or the browser before attaching)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if self.session and not method.startswith(("Target.", "Browser.")):
            message["sessionId"] = self.session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._read_message(deadline)
            if msg.get("id") == self._next_id:
                if "error" in msg:
                    raise CDPError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_for(self, method, timeout=None):
        """Wait for (and consume) the first event ``method`` not seen yet."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, event in enumerate(self.events):
                if event["method"] == method:
                    return self.events.pop(i)
            self.events.append(self._read_message(deadline))

    def evaluate(self, expression, timeout=None):
        """Evaluate JavaScript in the page, awaiting a returned promise; return its value."""
        result = self.call(
            "Runtime.evaluate",
            timeout=timeout,
            expression=expression,
            awaitPromise=True,
            returnByValue=True,
        )
        if "exceptionDetails" in result:
            raise CDPError(f"JavaScript failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    # -- pages --------------------------------------------------------------------
    def open(self, url, timeout=None):
        """Navigate and wait for the load event; events of the previous page are dropped."""
        self.events.clear()
        result = self.call("Page.navigate", url=url)
        if result.get("errorText"):
            raise CDPError(f"cannot open {url}: {result['errorText']}")
        self.wait_for("Page.loadEventFired", timeout=timeout)

    def set_viewport(self, width, height, mobile=False):
        """Emulate a screen ``width`` x ``height`` CSS pixels (a phone with ``mobile``)."""
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=mobile)  # fmt: skip
        self.viewport = (width, height, mobile)

    def screenshot(self, path, max_height=12000):
        """Save a PNG of the whole page (cut at ``max_height`` CSS pixels).

        The viewport is made as tall as the page for the capture, so that the page is laid out
        as the reader scrolls through it (capturing beyond a short viewport lets sticky
        sidebars and scroll-dependent layout drift)."""
        width, height, mobile = self.viewport
        metrics = self.call("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        if not size["width"] or not size["height"]:
            raise CDPError("the page has no content to take a screenshot of")
        full = int(min(max(size["height"], height), max_height))
        self.set_viewport(width, full, mobile)
        try:
            self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            data = self.call("Page.captureScreenshot", format="png",
                             clip={"x": 0, "y": 0, "width": width, "height": full,
                                   "scale": 1})["data"]  # fmt: skip
        finally:
            self.set_viewport(width, height, mobile)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.call("Browser.close", timeout=10)
                except (CDPError, TimeoutError, OSError):
                    pass
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for fd in (self._to_child, self._from_child):
                try:
                    os.close(fd)
                except OSError:
                    pass
            shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
