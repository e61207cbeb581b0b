// The SVG timeline and the HTML report: well-formed, one rectangle per firing, every section
// present; and, where Debian's chromium is installed, the report opens in a real browser.
#include "trace/timeline_render.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "base/file.h"
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
  EXPECT_NE(svg.find("stroke=\"#000\" stroke-width=\"1\""), std::string::npos);
  EXPECT_NE(svg.find("steady steps idle"), std::string::npos);
}

TEST(TimelineRenderTest, StepLabelsNeverPrintOverEachOther) {
  // However narrow the picture, labels of steps that begin close together merge ("steps 0-1"),
  // so no two labels start closer than a label's width, and every step is still named.
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
    std::string named;
    const std::string key = "font-size=\"10\" fill=\"#666\">step";
    for (size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
      const size_t x_at = svg.rfind("<text x=\"", at) + 9;
      xs.push_back(std::stod(svg.substr(x_at, svg.find('"', x_at) - x_at)));
      named += svg.substr(at + key.size() - 4, svg.find("</text>", at) - at - key.size() + 4) + ";";
    }
    ASSERT_FALSE(xs.empty());
    for (size_t i = 1; i < xs.size(); ++i) EXPECT_GE(xs[i] - xs[i - 1], 44) << named;
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
  // Each row's label ends in its firings' share of the span.
  const double span = static_cast<double>(model.span_end() - model.span_begin());
  for (int device = 0; device < 3; ++device) {
    double busy = 0;
    for (const FiringRecord& firing : model.firings) {
      if (model.plan.actors[static_cast<size_t>(firing.actor)].device == device) {
        busy += static_cast<double>(firing.end - firing.start);
      }
    }
    char label[64];
    std::snprintf(label, sizeof(label), "node0/sim:%d q0  %.0f%% busy</text>", device,
                  100 * busy / span);
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
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
  for (const char* part :
       {"<!DOCTYPE html>", "<svg", "<h2>Devices</h2>", "<h2>Actors</h2>", "<h2>Critical path</h2>",
        "Bottleneck: actor &apos;", "<h2>Pipeline bubble</h2>", "<h2>Memory</h2>", "<pre>"}) {
    EXPECT_NE(html.find(part), std::string::npos) << part;
  }
  EXPECT_EQ(html.find("http://", html.find("<svg") + 60), std::string::npos)
      << "the report loads nothing from elsewhere";
  EXPECT_EQ(html.find("<script"), std::string::npos);
}

TEST(TimelineRenderTest, ChromiumOpensTheReportAndTakesAScreenshot) {
  const char* chromium = "/usr/bin/chromium";
  if (access(chromium, X_OK) != 0) {
    GTEST_SKIP() << "Debian's chromium is not installed (/usr/bin/chromium): apt-get install "
                    "chromium to run this check";
  }
  TraceModel model = PipelineModel();
  const std::string directory = ::testing::TempDir();
  const std::string report = directory + "/timeline_render_test_report.html";
  const std::string screenshot = directory + "/timeline_render_test_report.png";
  ASSERT_TRUE(WriteFileAtomically(report, RenderHtmlReport(model, Summarize(model))).ok());
  std::remove(screenshot.c_str());
  const std::string command =
      std::string("timeout 60 ") + chromium +
      " --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1400"
      " --user-data-dir=" +
      directory + "/timeline_render_test_chromium --screenshot=" + screenshot + " file://" +
      report + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream png(screenshot, std::ios::binary);
  ASSERT_TRUE(png.good()) << "no screenshot at " << screenshot;
  std::string bytes((std::istreambuf_iterator<char>(png)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 10000u) << "a near-empty screenshot";
  EXPECT_EQ(bytes.compare(1, 3, "PNG"), 0);
}

}  // namespace
}  // namespace trace
}  // namespace softwire
