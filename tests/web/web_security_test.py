#!/usr/bin/python3
"""The web view's security with a real `softwire serve`, as plain HTTP requests (no browser):

  - `--http 0.0.0.0:0` without TLS and a token is refused before anything serves (exit 2);
  - with TLS (a self-signed certificate made here by openssl) and a token, a request to the
    non-loopback listener without the token is refused (401), one with the wrong token too,
    one with it answered; the page itself loads (it asks for the token) over HTTPS;
  - a loopback server without a token refuses a Host header that is not loopback (403).

The test connects only to 127.0.0.1 (a 0.0.0.0 listener answers there too). Skipped (exit 77)
without openssl. Every process it starts is killed at the end, also on failure.

Usage: tests/web/web_security_test.py --softwire build/cli/softwire
"""
import argparse
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from web_server_process import ServeProcess  # noqa: E402

SKIP = 77


def status_of(url, headers=None, context=None):
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30, context=context) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", required=True)
    args = parser.parse_args()
    if shutil.which("openssl") is None:
        print("skipped: openssl is not installed (it makes the test's certificate)")
        return SKIP
    with tempfile.TemporaryDirectory(prefix="softwire-web-security-") as work:
        # A wide address without TLS and a token: refused, exit 2, naming the flag.
        refused = subprocess.run([args.softwire, "serve", "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0",
                                  "--state-dir", os.path.join(work, "refused")],
                                 capture_output=True, text=True, timeout=60)
        check(refused.returncode == 2, "serve --http 0.0.0.0:0 without TLS exited %d" % refused.returncode)
        check("--http 0.0.0.0:0" in refused.stderr and "TLS" in refused.stderr, "message: " + refused.stderr)
        print("ok: --http 0.0.0.0:0 without TLS and a token is refused: " + refused.stderr.strip())

        cert, key, token_file = (os.path.join(work, name) for name in ("cert.pem", "key.pem", "token"))
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-keyout", key, "-out", cert], check=True, capture_output=True, timeout=60)
        with open(token_file, "w") as out:
            out.write("web-s3cret\n")
        context = ssl.create_default_context(cafile=cert)
        with ServeProcess(args.softwire, os.path.join(work, "tls"),
                          ["--tls-cert", cert, "--tls-key", key, "--token-file", token_file],
                          http="0.0.0.0:0", listen="0.0.0.0:0") as server:
            check(server.web_url.startswith("https://0.0.0.0:"), "web view at " + server.web_url)
            base = "https://127.0.0.1:%s/" % server.web_url.rsplit(":", 1)[1].rstrip("/")
            code, body = status_of(base + "api/jobs", context=context)
            check(code == 401 and "token" in body, "without the token: %d %s" % (code, body))
            code, body = status_of(base + "api/jobs", {"Authorization": "Bearer wrong"}, context)
            check(code == 401, "with a wrong token: %d %s" % (code, body))
            code, body = status_of(base + "api/devices", {"Authorization": "Bearer web-s3cret"}, context)
            check(code == 200 and "devices" in json.loads(body), "with the token: %d %s" % (code, body))
            code, body = status_of(base, context=context)
            check(code == 200 and "common.js" in body, "the page: %d" % code)
            try:
                status_of(base.replace("https", "http") + "api/jobs")
                check(False, "plain HTTP was answered on the TLS port")
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            print("ok: over TLS on 0.0.0.0, /api/ without the token or with a wrong one is 401; with it 200")

        with ServeProcess(args.softwire, os.path.join(work, "loopback")) as server:
            code, body = status_of(server.web_url + "api/jobs", {"Host": "rebound.example"})
            check(code == 403, "a foreign Host header: %d %s" % (code, body))
            code, _ = status_of(server.web_url + "api/jobs")
            check(code == 200, "loopback: %d" % code)
            print("ok: a loopback server without a token refuses a foreign Host header (403)")
    print("web_security_test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
