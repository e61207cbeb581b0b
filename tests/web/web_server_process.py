"""A `softwire serve --http` process for the web view's tests and benchmarks: free loopback
ports (port 0), a state directory of the caller's, ended in every case (its own process group,
SIGKILL on close).

    with ServeProcess(softwire, state_dir, ["--cluster", "2cpu"]) as server:
        print(server.web_url)          # "http://127.0.0.1:40123/"
        server.submit(job_path, steps=30, trace=True)
"""
import json
import os
import re
import signal
import subprocess
import time
import urllib.request
import uuid


class ServeProcess:
    def __init__(self, softwire, state_dir, args=(), http="127.0.0.1:0", listen="127.0.0.1:0"):
        self.command = [softwire, "serve", "--listen", listen, "--http", http,
                        "--state-dir", state_dir] + list(args)
        self.log_path = os.path.join(state_dir + ".log")
        self.process = None
        self.web_url = None
        self.address = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self, timeout=60):
        log = open(self.log_path, "w")
        self.process = subprocess.Popen(self.command, stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            text = open(self.log_path).read()
            web = re.search(r"^softwire serve: web view on (\S+)$", text, re.M)
            grpc = re.search(r"^softwire serve: listening on (\S+)$", text, re.M)
            if web and grpc:
                self.web_url, self.address = web.group(1), grpc.group(1)
                return
            if self.process.poll() is not None:
                raise RuntimeError("softwire serve exited with %d:\n%s" % (self.process.returncode, text))
            time.sleep(0.05)
        raise RuntimeError("softwire serve did not start in %d s:\n%s" % (timeout, self.output()))

    def output(self):
        return open(self.log_path).read() if os.path.exists(self.log_path) else ""

    def close(self):
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()

    def get(self, path, headers=None):
        request = urllib.request.Request(self.web_url + path.lstrip("/"), headers=headers or {})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)

    def submit(self, job_path, steps=None, trace=False, trace_steps=None, pp=None):
        """Posts the job file as the jobs page's form does; the answer's job."""
        boundary = uuid.uuid4().hex
        parts = []

        def field(name, value, file_name=None):
            disposition = 'form-data; name="%s"' % name
            if file_name:
                disposition += '; filename="%s"' % file_name
            parts.append(("--%s\r\nContent-Disposition: %s\r\n\r\n" % (boundary, disposition)).encode()
                         + value + b"\r\n")

        field("job", open(job_path, "rb").read(), os.path.basename(job_path))
        if steps:
            field("steps", str(steps).encode())
        if pp:
            field("pp", str(pp).encode())
        if trace:
            field("trace", b"1")
        if trace_steps:
            field("trace_steps", trace_steps.encode())
        body = b"".join(parts) + ("--%s--\r\n" % boundary).encode()
        request = urllib.request.Request(
            self.web_url + "api/jobs", data=body, method="POST",
            headers={"Content-Type": "multipart/form-data; boundary=" + boundary,
                     "X-Softwire-Request": "1"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.load(response)["job"]

    def wait_for_state(self, job_id, states, timeout=180):
        deadline = time.time() + timeout
        while time.time() < deadline:
            job = self.get("api/jobs/" + job_id)
            if job["state"] in states:
                return job
            time.sleep(0.2)
        raise RuntimeError("%s did not reach %s in %d s" % (job_id, states, timeout))
