#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How wide a page lays out in a browser window: page_width.py [--width PX] URL...

Starts chromium-headless-shell with a DevTools port, sets a window WIDTH CSS pixels wide (1280 by
default, 900 high), loads each URL in turn (pictures included: it waits for the load event) and
prints one line per URL: "<document.documentElement.scrollWidth> <cut> <URL>". A page wider than
its window scrolls sideways: its scrollWidth is more than WIDTH. <cut> is how many pixels of the
page's own tables are hidden in their scrolling boxes (div.t; the boxes of TSV views, div.v, may
scroll): the widest such overflow, 0 when every one fits. The pages of the index have no
script; the width is asked from outside, through the Chrome DevTools Protocol (Runtime.evaluate)
over a WebSocket written here with the standard library alone (RFC 6455: a client's frames
masked, a server's not). Exits 1 when the browser cannot be started or a page does not load."""
import base64
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse


class WebSocket:
    def __init__(self, url, timeout):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                           % (u.path, u.hostname, u.port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise OSError("page_width: the browser closed the WebSocket handshake")
            head += chunk
        head, self.rest = head.split(b"\r\n\r\n", 1)
        if not head.startswith(b"HTTP/1.1 101"):
            raise OSError("page_width: no WebSocket upgrade: %r" % head[:80])

    def _read(self, n):
        while len(self.rest) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("page_width: the browser closed the WebSocket")
            self.rest += chunk
        data, self.rest = self.rest[:n], self.rest[n:]
        return data

    def send(self, text):
        data = text.encode()
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                struct.pack(">BH", 0x80 | 126, n) if n < 65536 else
                                struct.pack(">BQ", 0x80 | 127, n))
        mask = os.urandom(4)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 8:
                raise OSError("page_width: the browser closed the WebSocket")
            if opcode in (0, 1, 2):
                message += payload
                if b0 & 0x80:
                    return json.loads(message)


MEASURE = """[document.documentElement.scrollWidth,
  Math.max(0, ...Array.from(document.querySelectorAll("div.t:not(.v)"), d => d.scrollWidth - d.clientWidth))]"""


class Browser:
    def __init__(self, width, height, timeout=60):
        self.profile = tempfile.mkdtemp(prefix="page_width.")
        self.proc = subprocess.Popen(
            ["chromium-headless-shell", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--remote-debugging-port=0", "--user-data-dir=" + self.profile,
             "--window-size=%d,%d" % (width, height), "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        deadline, url = time.monotonic() + timeout, None
        while url is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            url = m.group(1) if m else None
        if url is None:
            self.close()
            raise OSError("page_width: chromium-headless-shell gave no DevTools address")
        self.ws = WebSocket(url, timeout)
        self.next_id, self.events = 0, []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def call(self, method, session=False, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = self.ws.recv()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise OSError("page_width: %s: %s" % (method, reply["error"]))
                return reply["result"]
            self.events.append(reply)

    def width_of(self, url):
        self.events = []
        nav = self.call("Page.navigate", session=True, url=url)
        if nav.get("errorText"):
            raise OSError("page_width: %s: %s" % (url, nav["errorText"]))
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            self.events.append(self.ws.recv())
        r = self.call("Runtime.evaluate", session=True, returnByValue=True, expression=MEASURE)
        return r["result"]["value"]

    def close(self):
        # /usr/bin/chromium-headless-shell is a script that starts the browser as its child, which
        # starts more: the whole process group (its own session) goes
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def main(argv):
    width = 1280
    if argv[:1] == ["--width"]:
        width, argv = int(argv[1]), argv[2:]
    b = Browser(width, 900)
    try:
        for url in argv:
            width, cut = b.width_of(url)
            print(width, cut, url, flush=True)
    finally:
        b.close()


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except OSError as e:
        sys.exit(str(e))
