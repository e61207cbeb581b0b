#!/usr/bin/python3
"""The web view in a real browser: Debian's chromium, headless, against a real
`softwire serve --http` on free loopback ports.

  - the jobs page lists a job submitted through its own form, and its progress advances;
  - a finished job's loss curve has one point per step, with the values of its metrics;
  - the timeline renders the charlm demo's trace, and a click on a firing shows its actor;
  - the devices page lists the devices and draws a traced job's utilization;
  - with node agents (`serve --nodes 2` and two `softwire node`), the devices page lists each
    node with its devices, heartbeat age and clock offset, and a traced pipelined job's
    data-plane bytes per link between the nodes; the job's timeline has a row of each node.

Skipped (exit 77, saying why) where chromium or python3-websocket is not installed. Every
process it starts (the server, chromium) is killed at the end, also on failure.

Usage: tests/web/web_view_test.py --softwire build/cli/softwire [--screenshots DIR]
  --screenshots DIR   also write jobs.png, job.png, timeline.png, devices.png, nodes.png there
                      (docs/web/ holds the committed ones: docs/WEB.md says how they are made)
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from browser import Browser, chromium_missing_reason  # noqa: E402
from web_server_process import ServeProcess  # noqa: E402

SKIP = 77
MLP_JOB = os.path.join(ROOT, "tests", "compiler", "jobs", "mlp.pbtxt")
CHARLM_JOB = os.path.join(ROOT, "demos", "charlm", "charlm.pbtxt")


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def jobs_page_lists_a_submitted_job_whose_progress_advances(browser, server, shots):
    browser.open(server.web_url)
    browser.wait_for("document.getElementById('live').textContent.includes('live')", what="the jobs feed")
    # Submit through the page's own form: the file input gets the job file, as a user picks it.
    document = browser.call("DOM.getDocument")
    node = browser.call("DOM.querySelector", nodeId=document["root"]["nodeId"], selector="input[name=job]")
    browser.call("DOM.setFileInputFiles", nodeId=node["nodeId"], files=[MLP_JOB])
    browser.evaluate("document.querySelector('#submit input[name=steps]').value = '1500'")
    browser.evaluate("document.querySelector('#submit input[name=trace]').checked = false")
    browser.evaluate("document.querySelector('#submit input[type=submit]').click()")
    job_id = browser.wait_for("(document.querySelector('#submit-result a') || {}).textContent", timeout=60,
                              what="the submitted job's id")
    row = "document.querySelector('#jobs tr[data-job=\"%s\"]')" % job_id
    browser.wait_for(row + " !== null", what="the job's row")
    seen = []
    deadline = time.time() + 120
    while time.time() < deadline:
        state, step = browser.evaluate("[%s.dataset.state, Number(%s.dataset.step)]" % (row, row))
        if not seen or seen[-1] != step:
            seen.append(step)
        if state == "running" and 0 < step < 1500 and len(seen) >= 3 and shots and not os.path.exists(
                os.path.join(shots, "jobs.png")):
            browser.screenshot(os.path.join(shots, "jobs.png"))
        if state in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.05)
    check(state == "succeeded", "%s ended %s: %s" % (job_id, state, server.get("api/jobs/" + job_id)["error"]))
    running = [s for s in seen if 0 < s < 1500]
    check(len(running) >= 2 and running == sorted(running),
          "the row's progress did not advance while the job ran: steps seen %s" % seen)
    check(seen[-1] == 1500, "the row ends at step %s, not 1500" % seen[-1])
    check(browser.evaluate("%s.querySelector('.state').textContent" % row) == "succeeded", "the row's state")
    print("ok: the jobs page listed %s, its progress advanced through %d values to 1500" % (job_id, len(seen)))
    return job_id


def finished_jobs_loss_curve_has_one_point_per_step(browser, server, compare_id, shots):
    job = server.submit(MLP_JOB, steps=30)
    server.wait_for_state(job["job_id"], ("succeeded",))
    job_id = job["job_id"]
    browser.open(server.web_url + "job.html?id=%s&compare=%s" % (job_id, compare_id))
    browser.wait_for("window.jobPage && jobPage.jobs['%s'].steps.length === 30 && "
                     "document.querySelectorAll('#steps tbody tr').length === 30" % job_id,
                     what="30 steps on the job page")
    expected = server.get("api/jobs/%s/steps" % job_id)["steps"]
    drawn = browser.evaluate("jobPage.jobs['%s'].steps" % job_id)
    check([s["step"] for s in drawn] == list(range(30)), "steps drawn: %s" % [s["step"] for s in drawn])
    for mine, theirs in zip(drawn, expected):
        check(mine["loss"] == theirs["loss"], "step %d: loss %s drawn, %s recorded" % (mine["step"], mine["loss"], theirs["loss"]))
        check(mine["metrics"] == theirs["metrics"] and "train_accuracy" in mine["metrics"],
              "step %d: metrics %s drawn, %s recorded" % (mine["step"], mine["metrics"], theirs["metrics"]))
    table = browser.evaluate("[...document.querySelectorAll('#steps tbody tr')].map((r) => "
                             "[Number(r.dataset.step), r.querySelector('.metrics').textContent])")
    check(all("train_accuracy=" in text for _, text in table), "the step table lacks the metric: %s" % table[:2])
    check(browser.evaluate("document.querySelector('canvas[data-metric=\"train_accuracy\"]') !== null"),
          "no train_accuracy chart")
    browser.wait_for("jobPage.jobs['%s'] && jobPage.jobs['%s'].steps.length === 1500" % (compare_id, compare_id),
                     what="the overlaid job's steps")
    check(browser.evaluate("document.getElementById('plan').textContent.includes('actors')"), "no plan summary")
    if shots:
        browser.screenshot(os.path.join(shots, "job.png"))
    print("ok: %s's loss curve has 30 points, one per step, with loss and train_accuracy as recorded" % job_id)


def timeline_renders_the_demo_trace_and_a_click_shows_the_actor(browser, server, shots):
    # The demo's job in two pipeline stages, one per device: two rows and flows between them.
    job = server.submit(CHARLM_JOB, steps=4, trace=True, trace_steps="1:4", pp=2)
    finished = server.wait_for_state(job["job_id"], ("succeeded", "failed"), timeout=300)
    check(finished["state"] == "succeeded", "charlm failed: %s" % finished["error"])
    job_id = job["job_id"]
    browser.open(server.web_url + "timeline.html?job=" + job_id)
    browser.wait_for("window.timelinePage && (timelinePage.ready || timelinePage.error)", timeout=60,
                     what="the timeline")
    check(not browser.evaluate("timelinePage.error"), "timeline: %s" % browser.evaluate("timelinePage.error"))
    firings = browser.evaluate("timelinePage.data.firings.actor.length")
    rows = browser.evaluate("timelinePage.p.rows.length")
    check(firings > 100, "only %d firings drawn" % firings)
    devices = browser.evaluate("new Set(timelinePage.data.actors.map((a) => a.device)).size")
    check(devices == 2 and rows >= 2, "%d rows on %d devices; the 2 stages run on 2" % (rows, devices))
    # A compute firing in the middle, zoomed to be wide on screen, clicked like a user would.
    index = browser.evaluate("""(() => {
        const d = timelinePage.data, f = d.firings, n = f.actor.length;
        for (let i = Math.floor(n / 2); i < n; ++i) {
          if (d.actors[f.actor[i]].kind === 'compute' && f.end[i] - f.start[i] > 2000) return i;
        }
        return -1; })()""")
    check(index >= 0, "no compute firing of 2 us or more")
    actor = browser.evaluate("timelinePage.data.actors[timelinePage.data.firings.actor[%d]].name" % index)
    browser.evaluate("""(() => { const f = timelinePage.data.firings, i = %d, d = f.end[i] - f.start[i];
        timelinePage.zoomTo(f.start[i] - 3 * d, f.end[i] + 3 * d); })()""" % index)
    position = browser.evaluate("timelinePage.pagePositionOf(%d)" % index)
    browser.click(position["x"], position["y"])
    shown = browser.wait_for("(document.getElementById('firing-actor') || {}).textContent", what="the firing's details")
    check(shown == actor, "clicked a firing of %s, the page shows %s" % (actor, shown))
    check(browser.evaluate("timelinePage.selected") == index, "the selection is not the firing clicked")
    if shots:
        browser.evaluate("timelinePage.fit()")
        browser.screenshot(os.path.join(shots, "timeline.png"))
    print("ok: the timeline of %s drew %d firings on %d rows; a click showed actor %s" % (job_id, firings, rows, actor))
    return job_id


def devices_page_shows_devices_and_utilization(browser, server, traced_job, shots):
    browser.open(server.web_url + "devices.html?job=" + traced_job)
    browser.wait_for("document.querySelectorAll('#devices tbody tr').length === 2", what="two devices")
    browser.wait_for("window.devicesPage && devicesPage.utilization", what="the utilization chart")
    busiest = browser.evaluate("Math.max(...devicesPage.utilization.flatMap((s) => s.points.map((p) => p[1])))")
    check(0 < busiest <= 1.0000001, "utilization out of range: %s" % busiest)
    time.sleep(2.5)  # A few memory samples.
    if shots:
        browser.screenshot(os.path.join(shots, "devices.png"))
    print("ok: the devices page lists 2 devices; utilization of %s peaks at %.0f%%" % (traced_job, 100 * busiest))


def start_nodes(softwire, address, work, count):
    """`softwire node --join` processes node0..node(count-1), each in its own process group."""
    nodes = []
    for index in range(count):
        log = open(os.path.join(work, "node%d.log" % index), "w")
        nodes.append(subprocess.Popen([softwire, "node", "--join", address, "--name", "node%d" % index,
                                       "--devices", "1cpu"], stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))
    return nodes


def stop_nodes(nodes):
    for node in nodes:
        if node.poll() is None:
            try:
                os.killpg(node.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            node.wait()


def devices_page_shows_nodes_and_links(browser, server, shots):
    deadline = time.time() + 60
    while time.time() < deadline and len(server.get("api/nodes")["nodes"]) < 2:
        time.sleep(0.2)
    # Two pipeline stages, one per node: the stage boundary crosses the data plane.
    job = server.submit(MLP_JOB, steps=4, trace=True, pp=2)
    finished = server.wait_for_state(job["job_id"], ("succeeded", "failed"), timeout=180)
    check(finished["state"] == "succeeded", "the job on nodes failed: %s" % finished["error"])
    job_id = job["job_id"]
    browser.open(server.web_url + "devices.html?job=" + job_id)
    browser.wait_for("document.querySelectorAll('#nodes tbody tr').length === 2", what="two nodes")
    nodes = browser.evaluate("devicesPage.nodes")
    check(sorted(n["name"] for n in nodes) == ["node0", "node1"], "nodes listed: %s" % nodes)
    for node in nodes:
        check(node["devices"] == [node["name"] + "/cpu:0"], "devices of %s: %s" % (node["name"], node["devices"]))
        check(0 <= node["heartbeat_age_seconds"] < 2.5, "%s heard %s s ago" % (node["name"], node["heartbeat_age_seconds"]))
        check(node["clock_probes"] > 0 and node["clock_offset_seconds"] is not None,
              "%s has no clock offset: %s" % (node["name"], node))
        row = "document.querySelector('#nodes tr[data-node=\"%s\"]').textContent" % node["name"]
        check("s ago" in browser.evaluate(row) and "µs" in browser.evaluate(row),
              "the row of %s: %s" % (node["name"], browser.evaluate(row)))
    browser.wait_for("devicesPage.links && devicesPage.links.length > 0", what="the data plane's links")
    links = browser.evaluate("devicesPage.links")
    forward = [l for l in links if l["from"] == "node0" and l["to"] == "node1"]
    check(forward and forward[0]["bytes"] > 0 and forward[0]["sends"] > 0, "no bytes node0 -> node1: %s" % links)
    check(all(l["from"] != l["to"] for l in links), "a link from a node to itself: %s" % links)
    check(browser.evaluate("document.querySelectorAll('#links tbody tr').length") == len(links), "the links table")
    # The job's timeline: one axis, a row of each node's device.
    timeline = server.get("api/jobs/%s/trace" % job_id)
    names = sorted(d["name"] for d in timeline["devices"])
    check(names == ["node0/cpu:0", "node1/cpu:0"], "the timeline's devices: %s" % names)
    if shots:
        browser.screenshot(os.path.join(shots, "nodes.png"))
    print("ok: the devices page lists node0 and node1 with heartbeats and clock offsets; %s moved %s over %s"
          % (job_id, ", ".join("%d bytes %s->%s" % (l["bytes"], l["from"], l["to"]) for l in links), names))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", required=True)
    parser.add_argument("--screenshots", default="")
    args = parser.parse_args()
    reason = chromium_missing_reason()
    if reason:
        print("skipped: " + reason)
        return SKIP
    shots = os.path.abspath(args.screenshots) if args.screenshots else ""
    if shots:
        os.makedirs(shots, exist_ok=True)
        for name in ("jobs.png", "job.png", "timeline.png", "devices.png", "nodes.png"):
            if os.path.exists(os.path.join(shots, name)):
                os.remove(os.path.join(shots, name))
    with tempfile.TemporaryDirectory(prefix="softwire-web-test-") as work:
        data_root = os.path.join(work, "data-root")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "demos", "charlm", "prepare.py"),
                        "--output", os.path.join(data_root, "data", "licenses.txt")],
                       check=True, stdout=subprocess.DEVNULL)
        with ServeProcess(args.softwire, os.path.join(work, "state"),
                          ["--cluster", "2cpu", "--data-root", data_root]) as server, \
                Browser() as browser:
            try:
                first = jobs_page_lists_a_submitted_job_whose_progress_advances(browser, server, shots)
                finished_jobs_loss_curve_has_one_point_per_step(browser, server, first, shots)
                traced = timeline_renders_the_demo_trace_and_a_click_shows_the_actor(browser, server, shots)
                devices_page_shows_devices_and_utilization(browser, server, traced, shots)
            except Exception:
                print("server output:\n" + server.output()[-3000:])
                print("browser console: %s" % browser.console[-10:])
                raise
        with ServeProcess(args.softwire, os.path.join(work, "nodes-state"), ["--nodes", "2"]) as server, \
                Browser() as browser:
            nodes = start_nodes(args.softwire, server.address, work, 2)
            try:
                devices_page_shows_nodes_and_links(browser, server, shots)
            except Exception:
                print("server output:\n" + server.output()[-3000:])
                for index in range(2):
                    print("node%d output:\n%s" % (index, open(os.path.join(work, "node%d.log" % index)).read()[-2000:]))
                print("browser console: %s" % browser.console[-10:])
                raise
            finally:
                stop_nodes(nodes)
    print("web_view_test: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
