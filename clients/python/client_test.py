"""The Python client against a real `softwire serve`: the example conversation, and the error
codes a foreign client sees. Bounded by ctest's TIMEOUT and its own deadlines; the server is
ended in every case.

    /usr/bin/python3 clients/python/client_test.py --softwire build/cli/softwire
"""

import argparse
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import example  # noqa: E402
import softwire_client  # noqa: E402


class Server:
    """`softwire serve` on a free loopback port; its output is collected by a thread."""

    def __init__(self, softwire, state_dir, token_file):
        self.process = subprocess.Popen(
            [softwire, "serve", "--listen", "127.0.0.1:0", "--state-dir", state_dir,
             "--token-file", token_file],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        self.lines = []
        self.address = None
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(60) or self.address is None:
            self.stop()
            raise RuntimeError("the server did not say where it listens:\n" + self.output())

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line)
            match = re.search(r"listening on (\S+)", line)
            if match and self.address is None:
                self.address = match.group(1)
                self.ready.set()
        self.ready.set()

    def output(self):
        return "".join(self.lines)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)


def expect_code(code, call):
    try:
        call()
    except grpc.RpcError as error:
        if error.code() != code:
            raise AssertionError("expected %s, got %s: %s" % (code, error.code(), error.details()))
        return error.details()
    raise AssertionError("expected %s, the call succeeded" % code)


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def run_checks(stubs, address, token):
    client = softwire_client.JobClient(address, stubs, token=token)
    seen = example.converse(client, log=lambda line: None)

    # The feed: compiled, queued, started, one event per step, finished last; numbered 1, 2, ...
    events = seen["events"]
    kinds = [event.WhichOneof("kind") for event in events]
    check([event.sequence for event in events] == list(range(1, len(events) + 1)),
          "events are numbered without gaps: %s" % [e.sequence for e in events])
    check(kinds[-1] == "finished", "the last event is 'finished', not %s" % kinds[-1])
    steps = [event.step for event in events if event.WhichOneof("kind") == "step"]
    check([step.step for step in steps] == list(range(60)), "60 step events in order")
    check(steps[-1].loss < steps[0].loss * 0.5,
          "the loss fell: %.4f -> %.4f" % (steps[0].loss, steps[-1].loss))
    check(seen["accuracy"] > 0.9, "the fetched weights classify: %.3f" % seen["accuracy"])

    # Results match the feed; the trace is Chrome JSON with a summary.
    results = seen["results"]
    check([s.loss for s in results["steps"]] == [s.loss for s in steps],
          "fetched metrics equal the streamed ones")
    check(results["variables"]["w"].shape == (8, 2), "w has its logical shape")
    check(results["trace"].lstrip().startswith(b"{") and b"traceEvents" in results["trace"],
          "the trace is Chrome trace JSON")
    check(len(results["trace_summary"]) > 0, "the trace has a summary")

    # A watcher that reconnects from an event number misses nothing and sees nothing twice.
    job_id = seen["job"].job_id
    tail = list(client.watch(job_id, from_sequence=len(events) - 2))
    check([e.sequence for e in tail] == [len(events) - 2, len(events) - 1, len(events)],
          "a resumed watch replays from the number asked")

    # The job is listed and its record is whole.
    info = client.get_job(job_id)
    check(info.state == stubs.jobs.JOB_STATE_SUCCEEDED, "the job succeeded")
    check(info.completed_steps == 60, "60 steps completed")
    check(any(job.job_id == job_id for job in client.list_jobs()), "the job is listed")

    # A retried submission with the same idempotency key runs nothing twice.
    x, y = seen["points"]
    data = {"data/x.npy": example.npy_bytes(x), "data/y.npy": example.npy_bytes(y)}
    first, existing = client.submit(example.JOB_TEXT, data_files=data, idempotency_key="k-1")
    again, existing_again = client.submit(example.JOB_TEXT, data_files=data,
                                          idempotency_key="k-1")
    check(not existing and existing_again and first.job_id == again.job_id,
          "the same key names the same job")
    list(client.watch(first.job_id))

    # Errors a foreign client sees, by code.
    message = expect_code(grpc.StatusCode.INVALID_ARGUMENT, lambda: client.submit(
        example.JOB_TEXT.replace('input: "b" output: "logits"', 'input: "nope" output: "logits"'),
        file_name="broken.pbtxt", data_files=data))
    check("logits" in message and "nope" in message,
          "the error names the op and the input: %s" % message)
    outside = example.JOB_TEXT.replace("data/x.npy", "../../etc/passwd")
    message = expect_code(grpc.StatusCode.INVALID_ARGUMENT,
                          lambda: client.submit(outside, data_files=data))
    check("../../etc/passwd" in message, "the refused path is named: %s" % message)
    expect_code(grpc.StatusCode.NOT_FOUND, lambda: client.get_job("job-999999"))
    expect_code(grpc.StatusCode.NOT_FOUND, lambda: client.cancel("job-999999"))
    client.close()

    stranger = softwire_client.JobClient(address, stubs, token=None)
    expect_code(grpc.StatusCode.UNAUTHENTICATED, stranger.list_devices)
    wrong = softwire_client.JobClient(address, stubs, token="not-the-token")
    expect_code(grpc.StatusCode.UNAUTHENTICATED, lambda: wrong.get_job(job_id))
    stranger.close()
    wrong.close()
    check(not math.isnan(seen["accuracy"]), "accuracy is a number")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", required=True)
    parser.add_argument("--protoc", default="protoc")
    parser.add_argument("--grpc-python-plugin", default="grpc_python_plugin")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        stubs = softwire_client.generate_stubs(example.SOURCE_ROOT, os.path.join(scratch, "stubs"),
                                               args.protoc, args.grpc_python_plugin)
        token = "python-client-test-token"
        token_file = os.path.join(scratch, "token")
        with open(token_file, "w") as out:
            out.write(token + "\n")
        server = Server(os.path.abspath(args.softwire), os.path.join(scratch, "state"),
                        token_file)
        try:
            run_checks(stubs, server.address, token)
        except Exception:
            print(server.output(), file=sys.stderr)
            raise
        finally:
            server.stop()
    print("python client test passed in %.1f s" % (time.monotonic() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main())
