// The SVG timeline and the HTML report: well-formed, one rectangle per firing, every section
// present; and, where Debian's chromium is installed, the report opens in a real browser and
// the timeline renders to a PNG of its size that shows what it should.
#include "trace/timeline_render.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "base/file.h"
#include "trace/testing/png_facts.h"
#include "trace/testing/synthetic_traces.h"

namespace softwire {
namespace trace {
namespace {

TraceModel PipelineModel() {
  StatusOr<TraceModel> model =
      BuildTraceModel(testing::BarrierPipeline(3, 4, 3, {2000000, 1000000, 3000000}));
  CHECK(model.ok()) << model.status();
  return std::move(*model);
}

// Checks XML well-formedness the way a parser would: every tag closed in order, attributes
// quoted, entities known, nothing after the root. Returns the first problem, or "".
std::string XmlProblem(const std::string& xml, int* elements_named_rect) {
  std::vector<std::string> open;
  bool root_closed = false;
  size_t i = 0;
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
           c == '.';
  };
  while (i < xml.size()) {
    if (xml[i] == '&') {
      size_t semicolon = xml.find(';', i);
      if (semicolon == std::string::npos) return "unterminated entity";
      const std::string entity = xml.substr(i, semicolon - i + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" &&
          entity != "&apos;") {
        return "unknown entity " + entity;
      }
      i = semicolon + 1;
      continue;
    }
    if (xml[i] != '<') {
      if (root_closed && !std::isspace(static_cast<unsigned char>(xml[i]))) {
        return "text after the root element";
      }
      if (xml[i] == '>') return "stray '>'";
      ++i;
      continue;
    }
    if (xml.compare(i, 4, "<!--") == 0) {
      size_t end = xml.find("-->", i);
      if (end == std::string::npos) return "unterminated comment";
      i = end + 3;
      continue;
    }
    if (xml.compare(i, 2, "<?") == 0 || xml.compare(i, 2, "<!") == 0) {
      size_t end = xml.find('>', i);
      if (end == std::string::npos) return "unterminated declaration";
      i = end + 1;
      continue;
    }
    const bool closing = xml.compare(i, 2, "</") == 0;
    i += closing ? 2 : 1;
    size_t name_end = i;
    while (name_end < xml.size() && is_name_char(xml[name_end])) ++name_end;
    if (name_end == i) return "a tag without a name";
    const std::string name = xml.substr(i, name_end - i);
    i = name_end;
    if (closing) {
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= xml.size() || xml[i] != '>') return "bad closing tag " + name;
      if (open.empty() || open.back() != name) return "</" + name + "> closes nothing open";
      open.pop_back();
      if (open.empty()) root_closed = true;
      ++i;
      continue;
    }
    if (root_closed) return "a second root element";
    if (name == "rect") ++*elements_named_rect;
    // Attributes until '>' or '/>'.
    while (true) {
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= xml.size()) return "unterminated tag " + name;
      if (xml[i] == '>') {
        open.push_back(name);
        ++i;
        break;
      }
      if (xml.compare(i, 2, "/>") == 0) {
        if (open.empty()) root_closed = true;
        i += 2;
        break;
      }
      size_t attribute_end = i;
      while (attribute_end < xml.size() && is_name_char(xml[attribute_end])) ++attribute_end;
      if (attribute_end == i) return "bad attribute in " + name;
      i = attribute_end;
      if (i >= xml.size() || xml[i] != '=') return "attribute without a value in " + name;
      ++i;
      if (i >= xml.size() || (xml[i] != '"' && xml[i] != '\'')) return "unquoted attribute";
      const char quote = xml[i];
      const size_t value_end = xml.find(quote, i + 1);
      if (value_end == std::string::npos) return "unterminated attribute";
      const std::string value = xml.substr(i + 1, value_end - i - 1);
      if (value.find('<') != std::string::npos) return "'<' in an attribute";
      i = value_end + 1;
    }
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_closed) return "no root element";
  return "";
}

TEST(TimelineRenderTest, TheSvgIsWellFormedWithOneRectanglePerFiring) {
  TraceModel model = PipelineModel();
  TraceSummary summary = Summarize(model);
  const std::string svg = RenderTimelineSvg(model, &summary);
  int rects = 0;
  EXPECT_EQ(XmlProblem(svg, &rects), "");
  EXPECT_EQ(rects, static_cast<int>(model.firings.size()));
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  // Rows per device queue, a legend, steps, the axis, the critical path outlined.
  EXPECT_NE(svg.find("node0/sim:2 q0"), std::string::npos);
  EXPECT_NE(svg.find(">compute</text>"), std::string::npos);
  EXPECT_NE(svg.find(">step 2</text>"), std::string::npos);
  EXPECT_NE(svg.find(" ms</text>"), std::string::npos);
  EXPECT_NE(svg.find(">0.0 ms</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">-0"), std::string::npos) << "the axis starts at 0, not -0";
  EXPECT_NE(svg.find("stroke=\"#d62728\" stroke-width=\"1.5\""), std::string::npos);
  EXPECT_NE(svg.find("<path class=\"critical-path\" d=\"M"), std::string::npos);
  EXPECT_NE(svg.find("Steady steps 1..2: devices idle"), std::string::npos);
  EXPECT_NE(svg.find("Warm-up step 0 (pale band), apart: idle"), std::string::npos);
  EXPECT_NE(svg.find("Critical path of the steady steps (red line)"), std::string::npos);
}

TEST(TimelineRenderTest, StepLabelsNeverPrintOverEachOther) {
  // However narrow the picture, labels of steps that begin close together merge ("steps 0-1"),
  // so each label ends before the next begins, and every step is still named.
  TraceModel model = PipelineModel();
  TraceSummary summary = Summarize(model);
  for (int width : {1200, 500, 300, 240}) {
    SCOPED_TRACE("width " + std::to_string(width));
    TimelineOptions options;
    options.width = width;
    const std::string svg = RenderTimelineSvg(model, &summary, options);
    int rects = 0;
    EXPECT_EQ(XmlProblem(svg, &rects), "");
    std::vector<double> xs;
    std::vector<std::string> names;
    std::string named;
    const std::string key = "font-size=\"10\" fill=\"#666\">step";
    for (size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
      const size_t x_at = svg.rfind("<text x=\"", at) + 9;
      xs.push_back(std::stod(svg.substr(x_at, svg.find('"', x_at) - x_at)));
      const size_t text_at = at + key.size() - 4;
      names.push_back(svg.substr(text_at, svg.find("</text>", at) - text_at));
      named += names.back() + ";";
    }
    ASSERT_FALSE(xs.empty());
    for (size_t i = 1; i < xs.size(); ++i) {
      EXPECT_GE(xs[i] - xs[i - 1], TextWidth(names[i - 1], 10)) << named;
    }
    const int64_t steps = summary.end_step - summary.first_step;
    if (xs.size() < static_cast<size_t>(steps)) {
      EXPECT_NE(named.find("steps "), std::string::npos) << named;
    }
  }
}

TEST(TimelineRenderTest, RowsSayTheirBusyShareAndTheWarmUpStepIsShadedApart) {
  TraceModel model = PipelineModel();
  TraceSummary summary = Summarize(model);
  ASSERT_GT(summary.first_steady_step, summary.first_step);
  const std::string svg = RenderTimelineSvg(model, &summary);
  int rects = 0;
  EXPECT_EQ(XmlProblem(svg, &rects), "");
  // Each row's label ends in its firings' share of the steady steps (all three devices have
  // one queue).
  const double steady = static_cast<double>(summary.steady_end - summary.steady_begin);
  ASSERT_GT(steady, 0);
  for (int device = 0; device < 3; ++device) {
    double busy = 0;
    for (const FiringRecord& firing : model.firings) {
      if (model.plan.actors[static_cast<size_t>(firing.actor)].device == device) {
        const TimeNs start = std::max(firing.start, summary.steady_begin);
        const TimeNs end = std::min(firing.end, summary.steady_end);
        if (end > start) busy += static_cast<double>(end - start);
      }
    }
    char label[64];
    std::snprintf(label, sizeof(label), "node0/sim:%d q0  %.0f%% busy</text>", device,
                  100 * busy / steady);
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
  EXPECT_NE(svg.find(">busy: share of steady steps</text>"), std::string::npos);
  // The warm-up step on a band of its own, named in the legend; none without a summary.
  const size_t band = svg.find("<path class=\"warmup\"");
  ASSERT_NE(band, std::string::npos);
  EXPECT_LT(band, svg.find("<rect")) << "the band lies under the firings";
  EXPECT_NE(svg.find("warm-up step (left out of the steady figures)"), std::string::npos);
  EXPECT_EQ(RenderTimelineSvg(model, nullptr).find("class=\"warmup\""), std::string::npos);
}

TEST(TimelineRenderTest, HugeTracesMergeFiringsCloserThanAPixel) {
  TraceModel model = PipelineModel();
  TimelineOptions options;
  options.max_firing_rects = 4;
  const std::string svg = RenderTimelineSvg(model, nullptr, options);
  int rects = 0;
  EXPECT_EQ(XmlProblem(svg, &rects), "");
  EXPECT_LT(rects, static_cast<int>(model.firings.size()));
  EXPECT_NE(svg.find("compute firings</title>"), std::string::npos);
}

TEST(TimelineRenderTest, NamesWithMarkupAreEscaped) {
  TraceModel model = PipelineModel();
  model.plan.actors[0].name = "a<b>&\"c'";
  model.plan.job_name = "</svg>";
  const std::string svg = RenderTimelineSvg(model, nullptr);
  int rects = 0;
  EXPECT_EQ(XmlProblem(svg, &rects), "");
  EXPECT_NE(svg.find("a&lt;b&gt;&amp;&quot;c&apos;"), std::string::npos);
}

TEST(TimelineRenderTest, TheHtmlReportHoldsThePictureAndEveryTable) {
  TraceModel model = PipelineModel();
  TraceSummary summary = Summarize(model);
  const std::string html = RenderHtmlReport(model, summary);
  for (const char* part : {"<!DOCTYPE html>", "<svg", "<h2>Devices</h2>", "<h2>Actors</h2>",
                           "<h2>Critical path of the steady steps</h2>", "Bottleneck: actor &apos;",
                           "<h2>Pipeline bubble</h2>", "<h2>Memory</h2>", "<pre>"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(html.find("http://", html.find("<svg") + 60), std::string::npos)
      << "the report loads nothing from elsewhere";
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

// Debian's chromium, or "" with the reason the tests that need it skip.
const char* kChromium = "/usr/bin/chromium";
std::string ChromiumMissing() {
  if (access(kChromium, X_OK) == 0) return "";
  return "Debian's chromium is not installed (/usr/bin/chromium): apt-get install chromium "
         "(scripts/install-deps) to run this check";
}

// Has headless chromium open `url` in a window of width x height and save what it shows.
void Screenshot(const std::string& url, int width, int height, const std::string& png) {
  const std::string directory = ::testing::TempDir();
  std::remove(png.c_str());
  const std::string command =
      std::string("timeout 60 ") + kChromium +
      " --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=" +
      std::to_string(width) + "," + std::to_string(height) + " --user-data-dir=" + directory +
      "/timeline_render_test_chromium --screenshot=" + png + " " + url + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(TimelineRenderTest, ChromiumOpensTheReportAndTakesAScreenshot) {
  const std::string missing = ChromiumMissing();
  if (!missing.empty()) GTEST_SKIP() << missing;
  TraceModel model = PipelineModel();
  const std::string report = ::testing::TempDir() + "/timeline_render_test_report.html";
  const std::string screenshot = ::testing::TempDir() + "/timeline_render_test_report.png";
  ASSERT_TRUE(WriteFileAtomically(report, RenderHtmlReport(model, Summarize(model))).ok());
  Screenshot("file://" + report, 1280, 1400, screenshot);
  const testing::PngFacts png = testing::ReadPngFacts(screenshot);
  ASSERT_EQ(png.problem, "");
  EXPECT_EQ(png.width, 1280u);
  EXPECT_EQ(png.height, 1400u);
  EXPECT_GT(png.colours.size(), 8u) << "a near-empty screenshot";
}

TEST(TimelineRenderTest, TheTimelineRendersToAPngOfItsSizeShowingFiringsIdleTimeAndThePath) {
  const std::string missing = ChromiumMissing();
  if (!missing.empty()) GTEST_SKIP() << missing;
  TraceModel model = PipelineModel();
  TraceSummary summary = Summarize(model);
  int width = 0;
  int height = 0;
  TimelineTextBoxes(model, &summary, TimelineOptions(), &width, &height);
  const std::string svg = ::testing::TempDir() + "/timeline_render_test_timeline.svg";
  const std::string screenshot = ::testing::TempDir() + "/timeline_render_test_timeline.png";
  ASSERT_TRUE(WriteFileAtomically(svg, RenderTimelineSvg(model, &summary)).ok());
  Screenshot("file://" + svg, width, height, screenshot);
  const testing::PngFacts png = testing::ReadPngFacts(screenshot);
  ASSERT_EQ(png.problem, "");
  EXPECT_EQ(png.width, static_cast<uint32_t>(width));
  EXPECT_EQ(png.height, static_cast<uint32_t>(height));
  // Not one colour: white paper, the compute firings' blue, the idle rows' grey, and red of
  // the critical path (its line is antialiased: reddish pixels, not one exact colour).
  EXPECT_GT(png.colours.size(), 8u);
  const int64_t pixels = static_cast<int64_t>(png.width) * png.height;
  auto count = [&](uint32_t colour) {
    auto found = png.colours.find(colour);
    return found == png.colours.end() ? int64_t{0} : found->second;
  };
  EXPECT_GT(count(0xffffff), pixels / 4) << "the paper";
  EXPECT_GT(count(0x4e79a7), pixels / 50) << "compute firings";
  EXPECT_GT(count(0xececec) + count(0xe4e4e4), pixels / 50) << "idle time";
  int64_t reddish = 0;
  for (const auto& [colour, n] : png.colours) {
    const uint32_t red = colour >> 16;
    const uint32_t green = (colour >> 8) & 0xff;
    const uint32_t blue = colour & 0xff;
    if (red > 150 && green < 110 && blue < 110) reddish += n;
  }
  EXPECT_GT(reddish, 200) << "the critical path";
}

}  // namespace
}  // namespace trace
}  // namespace softwire
