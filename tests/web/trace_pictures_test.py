#!/usr/bin/python3
"""The trace pictures as a person sees them: rendered to PNG in Debian's headless chromium.

Usage: tests/web/trace_pictures_test.py --softwire build/cli/softwire [--pictures DIR]
  --pictures DIR   also keep the PNGs there (docs/traces/ holds the committed ones:
                   tests/web/trace_pictures_test.py --softwire build/cli/softwire
                   --pictures docs/traces)

Two traced runs of the flagship transformer (data from demos/charlm/prepare.py), each of a
window of steps 2-5 of six (`--trace-steps 2:6`: step 2 the warm-up band, 3-4 steady):
  - flagship_pp4: demos/charlm/charlm_pipelined.pbtxt pipeline parallel over 4 cpu devices
    (the plan the 4-node demo runs), and
  - pipeline_8_stages: demos/charlm/charlm.pbtxt pipeline parallel over 8 simulated devices
    with 16 micro-batches.
Each run's SVG timeline is opened in chromium, which lays out its text: no two text elements
may overlap, every one must lie inside the picture, the warm-up step must be on its own band,
each row must say its busy share, and the critical path must be drawn. Then the picture is
saved as PNG and checked to be a non-trivial image of the SVG's size. Skipped (exit 77, saying
why) without chromium or python3-websocket.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from browser import Browser, chromium_missing_reason  # noqa: E402

SKIP = 77
WINDOW = ["--steps", "6", "--trace-steps", "2:6"]
RUNS = {
    "flagship_pp4": [os.path.join("demos", "charlm", "charlm_pipelined.pbtxt"),
                     "--cluster", "4x1cpu", "--pp", "4"] + WINDOW,
    "pipeline_8_stages": [os.path.join("demos", "charlm", "charlm.pbtxt"),
                          "--cluster", "8sim", "--pp", "8", "--micro-batches", "16"] + WINDOW,
}

# Every <text>'s box as the browser laid it out, and the pairs that overlap by more than a pixel
# either way (boxes that merely touch are fine).
LAYOUT_CHECK = r"""
(() => {
  const svg = document.querySelector('svg');
  const width = svg.width.baseVal.value, height = svg.height.baseVal.value;
  const boxes = [...svg.querySelectorAll('text')].map(t => {
    const b = t.getBBox();
    return {text: t.textContent, x: b.x, y: b.y, w: b.width, h: b.height};
  });
  const overlaps = [], outside = [];
  for (let i = 0; i < boxes.length; ++i) {
    const a = boxes[i];
    if (a.x < -1 || a.y < -1 || a.x + a.w > width + 1 || a.y + a.h > height + 1) outside.push(a.text);
    for (let j = i + 1; j < boxes.length; ++j) {
      const b = boxes[j];
      const dx = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
      const dy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
      if (dx > 1 && dy > 1) overlaps.push(a.text + ' | ' + b.text);
    }
  }
  return {width, height, texts: boxes.length, overlaps, outside,
          warmup: svg.querySelectorAll('path.warmup').length,
          critical_path: svg.querySelectorAll('path.critical-path').length,
          busy_labels: boxes.filter(b => / \d+% busy$/.test(b.text)).length};
})()
"""


def png_facts(path):
    """(width, height, distinct colours) of an 8-bit RGB or RGBA PNG, every row unfiltered."""
    with open(path, "rb") as png:
        data = png.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(path + " is not a PNG")
    at, idat, header = 8, b"", None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace != 0:
        raise AssertionError("%s: depth %d, colour type %d, interlace %d: not an 8-bit RGB(A) PNG"
                             % (path, depth, colour, interlace))
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    for row in range(height):
        kind = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1:(row + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                estimate = left + up - corner
                pa, pb, pc = abs(estimate - left), abs(estimate - up), abs(estimate - corner)
                nearest = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                line[i] = (line[i] + nearest) & 255
        colours.update(bytes(line[i:i + 3]) for i in range(0, stride, channels))
        previous = line
    return width, height, len(colours)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--softwire", required=True)
    parser.add_argument("--pictures", help="keep the PNGs in this folder")
    args = parser.parse_args()
    reason = chromium_missing_reason()
    if reason:
        print("SKIP: " + reason)
        return SKIP
    if not os.path.exists(os.path.join(ROOT, "data", "licenses.txt")):
        subprocess.run([sys.executable, os.path.join(ROOT, "demos", "charlm", "prepare.py")],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL, timeout=120)
    scratch = tempfile.mkdtemp(prefix="softwire_trace_pictures_")
    failures = []
    try:
        for name, (job, *flags) in RUNS.items():
            trace = os.path.join(scratch, name + ".json")
            subprocess.run([os.path.abspath(args.softwire), "run", job, "--quiet", "--trace", trace]
                           + flags, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, timeout=240)
            svg = trace + ".svg"
            with open(svg) as picture:
                first = picture.read(400)
            width = int(first.split('width="', 1)[1].split('"', 1)[0])
            height = int(first.split('height="', 1)[1].split('"', 1)[0])
            png = os.path.join(scratch, name + ".png")
            with Browser(width=width, height=height) as browser:
                # The page's viewport exactly the picture's size (the window's includes none of
                # a headless browser's chrome, but its default viewport is smaller).
                browser.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                             deviceScaleFactor=1, mobile=False)
                browser.open("file://" + svg)
                layout = browser.evaluate(LAYOUT_CHECK)
                browser.screenshot(png)
            print("%s: %dx%d, %d texts, %d rows saying their busy share, warm-up band %d, "
                  "overlapping %d, outside %d" % (name, layout["width"], layout["height"],
                                                  layout["texts"], layout["busy_labels"],
                                                  layout["warmup"], len(layout["overlaps"]),
                                                  len(layout["outside"])))
            if layout["overlaps"]:
                failures.append("%s: text over text: %s" % (name, layout["overlaps"][:5]))
            if layout["outside"]:
                failures.append("%s: text outside the picture: %s" % (name, layout["outside"][:5]))
            if layout["warmup"] != 1:
                failures.append("%s: %d warm-up bands, not 1" % (name, layout["warmup"]))
            if layout["critical_path"] != 1:
                failures.append("%s: %d critical path lines, not 1" % (name, layout["critical_path"]))
            if layout["busy_labels"] < 4:
                failures.append("%s: only %d rows say their busy share" % (name, layout["busy_labels"]))
            png_width, png_height, colours = png_facts(png)
            if (png_width, png_height) != (width, height):
                failures.append("%s: PNG %dx%d, picture %dx%d" % (name, png_width, png_height,
                                                                   width, height))
            if colours < 8:
                failures.append("%s: the PNG has only %d colours: nothing drawn?" % (name, colours))
            if args.pictures:
                os.makedirs(args.pictures, exist_ok=True)
                shutil.copyfile(png, os.path.join(args.pictures, name + ".png"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for failure in failures:
        print("FAIL: " + failure)
    print("trace pictures: %s" % ("ok" if not failures else "%d problems" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
