#!/usr/bin/python3
"""The web view's costs (BENCHMARKS.md, "Web view"):

  1. time to first render of the timeline for about 10,000 and 100,000 firings in headless
     chromium: from navigation to the first finished draw (timelinePage.ready), in a fresh
     navigation: the first look the moment the job ended (cold: the server reads the Chrome
     trace file and builds the timeline), later looks (the server's cache), and the first look
     at a second such job 10 s after it ended (built by then in the background);
  2. the server's CPU for serving the live feeds to 10 open pages while a job trains: the CPU
     time of the web view's threads (named sw:web*, read from /proc) over a window, as a share
     of one core. Each "page" is the feed a page holds open: 5 jobs pages (/api/jobs/feed) and
     5 job pages (/api/jobs/ID/events), read by client threads of this script.

The traced jobs are the MLP of tests/compiler/jobs/mlp.pbtxt (46 actors) with enough steps
for the firing counts. Usage:
  bench/web/web_bench.py --softwire build/cli/softwire [--rounds 5] [--feed-seconds 20]
"""
import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "web"))

from browser import Browser, chromium_missing_reason  # noqa: E402
from web_server_process import ServeProcess  # noqa: E402

MLP_JOB = os.path.join(ROOT, "tests", "compiler", "jobs", "mlp.pbtxt")


def traced_job(server, steps):
    job = server.submit(MLP_JOB, steps=steps, trace=True)
    done = server.wait_for_state(job["job_id"], ("succeeded", "failed"), timeout=600)
    if done["state"] != "succeeded":
        raise RuntimeError("%s failed: %s" % (job["job_id"], done["error"]))
    return job["job_id"]


def first_render(server, job_id, browser):
    """Milliseconds from navigation to the first finished draw, and the page's own split."""
    browser.open("about:blank")
    browser.call("Page.navigate", url=server.web_url + "timeline.html?job=" + job_id)
    browser.wait_for("window.timelinePage && (timelinePage.ready || timelinePage.error)", timeout=300)
    error = browser.evaluate("timelinePage.error")
    if error:
        raise RuntimeError(error)
    return browser.evaluate("""({
        total: timelinePage.readyAt,
        fetch: timelinePage.loadMs.fetch, draw: timelinePage.renderMs,
        firings: timelinePage.data.firings.actor.length})""")


def thread_seconds(pid):
    """{(tid, name): CPU seconds} of the process's threads."""
    seconds = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as stat:
                text = stat.read()
        except FileNotFoundError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        seconds[(tid, name)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


def busiest_threads(before, after, elapsed, count=6):
    """'name 12.3%, ...': the threads that used the most CPU between two thread_seconds."""
    by_name = {}
    for key, value in after.items():
        by_name[key[1]] = by_name.get(key[1], 0) + value - before.get(key, 0)
    top = sorted(by_name.items(), key=lambda item: -item[1])[:count]
    return ", ".join("%s %.1f%%" % (name, 100 * value / elapsed) for name, value in top)


def web_thread_seconds(pid):
    """CPU seconds of the process's threads named sw:web*."""
    ticks = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/stat" % (pid, tid)) as stat:
                text = stat.read()
        except FileNotFoundError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        if name.startswith("sw:web"):
            fields = text[text.rindex(")") + 2:].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def process_seconds(pid):
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def feed_reader(url, stop, counts, index):
    with urllib.request.urlopen(urllib.request.Request(url), timeout=120) as response:
        while not stop.is_set():
            line = response.readline()
            if not line:
                return
            if line.startswith(b"id: "):
                counts[index] += 1


def feed_cost(server, seconds):
    job = server.submit(MLP_JOB, steps=1000000)
    job_id = job["job_id"]
    server.wait_for_state(job_id, ("running",))
    time.sleep(2)
    pid = server.process.pid
    # Baseline: no page open.
    web0, all0, t0 = web_thread_seconds(pid), process_seconds(pid), time.time()
    threads0 = thread_seconds(pid)
    time.sleep(seconds)
    top_idle = busiest_threads(threads0, thread_seconds(pid), time.time() - t0)
    idle = (web_thread_seconds(pid) - web0) / (time.time() - t0)
    all_idle = (process_seconds(pid) - all0) / (time.time() - t0)
    stop = threading.Event()
    counts = [0] * 10
    urls = [server.web_url + "api/jobs/feed"] * 5 + [server.web_url + "api/jobs/%s/events" % job_id] * 5
    readers = [threading.Thread(target=feed_reader, args=(url, stop, counts, i), daemon=True)
               for i, url in enumerate(urls)]
    for reader in readers:
        reader.start()
    time.sleep(2)  # Past the replay of the job's events so far.
    before = list(counts)
    web0, all0, t0 = web_thread_seconds(pid), process_seconds(pid), time.time()
    threads0 = thread_seconds(pid)
    time.sleep(seconds)
    elapsed = time.time() - t0
    top = busiest_threads(threads0, thread_seconds(pid), elapsed)
    busy = (web_thread_seconds(pid) - web0) / elapsed
    all_busy = (process_seconds(pid) - all0) / elapsed
    messages = sum(counts) - sum(before)
    stop.set()
    urllib.request.urlopen(urllib.request.Request(
        server.web_url + "api/jobs/%s/cancel" % job_id, data=b"", method="POST",
        headers={"X-Softwire-Request": "1"}), timeout=60).read()
    steps = server.get("api/jobs/" + job_id)["completed_steps"]
    return {"idle_share": idle, "share": busy, "messages": messages, "seconds": elapsed,
            "process_idle": all_idle, "process_busy": all_busy, "steps": steps,
            "top": top, "top_idle": top_idle}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--feed-seconds", type=float, default=20)
    parser.add_argument("--skip-render", action="store_true")
    parser.add_argument("--skip-feeds", action="store_true")
    args = parser.parse_args()
    reason = chromium_missing_reason()
    if reason and not args.skip_render:
        sys.exit("web_bench: " + reason)
    with tempfile.TemporaryDirectory(prefix="softwire-web-bench-") as work:
        with ServeProcess(args.softwire, os.path.join(work, "state"), ["--cluster", "1cpu"]) as server:
            if not args.skip_render:
                probe = traced_job(server, 10)
                per_step = server.get("api/jobs/%s/trace" % probe)["total_firings"] / 10.0
                with Browser() as browser:
                    for target in (10000, 100000):
                        steps = int(round(target / per_step))
                        job_id = traced_job(server, steps)
                        cold = first_render(server, job_id, browser)
                        warm = [first_render(server, job_id, browser) for _ in range(args.rounds)]
                        # A second job of the same size, first looked at 10 s after it ended: the
                        # server's warmer has built its timeline by then.
                        later_id = traced_job(server, steps)
                        time.sleep(10)
                        later = first_render(server, later_id, browser)
                        print("timeline, %d firings: first look 10 s after the job ended %.0f ms "
                              "(fetch %.0f, draw %.0f)" % (later["firings"], later["total"],
                                                            later["fetch"], later["draw"]))
                        print("timeline, %d firings (%d steps of the MLP): first render cold %.0f ms "
                              "(fetch %.0f, draw %.0f); warm median %.0f ms (fetch %.0f, draw %.0f) of %d"
                              % (cold["firings"], steps, cold["total"], cold["fetch"], cold["draw"],
                                 statistics.median(w["total"] for w in warm),
                                 statistics.median(w["fetch"] for w in warm),
                                 statistics.median(w["draw"] for w in warm), len(warm)))
                        sys.stdout.flush()
            if not args.skip_feeds:
                cost = feed_cost(server, args.feed_seconds)
                print("feeds: 10 open pages (5 jobs feeds, 5 job event feeds) over %.0f s while the MLP "
                      "trained (%d steps): web threads %.2f%% of a core (%.2f%% with no page open); "
                      "%d messages; whole server %.0f%% vs %.0f%% of a core"
                      % (cost["seconds"], cost["steps"], 100 * cost["share"], 100 * cost["idle_share"],
                         cost["messages"], 100 * cost["process_busy"], 100 * cost["process_idle"]))
                print("  busiest threads with the pages: %s\n  without: %s" % (cost["top"], cost["top_idle"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
