// mt::trace's HTML report: self-contained, and drawn by headless Chromium (Debian's
// `chromium`, which scripts/test.sh installs) into a DOM that holds the recording's ops,
// devices and numbers.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "runtime/trace/trace.h"
#include "tests/runtime/json_test_util.h"
#include "tests/runtime/runtime_fixture.h"

namespace mt::testing {
namespace {

namespace fs = std::filesystem;

class ReportTest : public RuntimeTest {
 protected:
  // Records a matmul on CPU:1 (both inputs copied there) and a sum of it on CPU:0.
  void SetUp() override {
    RuntimeTest::SetUp();
    split_cpu(2);
    trace::Recording recording;
    Tensor a = constant({{1.f, 2.f}, {3.f, 4.f}});
    DeviceScope scope("/CPU:1");
    Tensor m = matmul(a, a);
    DeviceScope back("/CPU:0");
    Tensor s = reduce_sum(m, {0});
  }

  // Returns a program that runs Chromium, or "" when there is none.
  static std::string chromium() {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
      std::string probe = std::string("command -v ") + name + " >/dev/null 2>&1";
      if (std::system(probe.c_str()) == 0) return name;
    }
    return "";
  }

  // Returns what `command` prints on stdout.
  static std::string run(const std::string& command) {
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) return out;
    char buffer[4096];
    for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
    pclose(pipe);
    return out;
  }
};

TEST_F(ReportTest, HoldsItsDataAndFetchesNothing) {
  std::string html = trace::report_html();
  for (const char* fetch : {"src=", "href=", "https:", "@import", "fetch("}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  size_t begin = html.find(open);
  ASSERT_NE(begin, std::string::npos);
  begin += open.size();
  size_t end = html.find("</script>", begin);
  std::optional<Json> data = parse_json(html.substr(begin, end - begin));
  ASSERT_TRUE(data.has_value());
  EXPECT_FALSE((*data)["trace"]["traceEvents"].array.empty());
  ASSERT_EQ((*data)["snapshots"].array.size(), 2u);  // one per pool, at its peak
  const Json& cpu1 = (*data)["snapshots"].array[1];
  EXPECT_EQ(cpu1["device"].string, cpu(1));
  bool matmul_chunk = false;
  for (const Json& r : cpu1["regions"].array) {
    for (const Json& c : r["chunks"].array) matmul_chunk |= c["op"].string == "MatMul";
  }
  EXPECT_TRUE(matmul_chunk);
}

TEST_F(ReportTest, WriteToAMissingFolderIsNotFound) {
  Error e = expect_error([] { trace::write_report("/nonexistent-folder/report.html"); });
  EXPECT_EQ(e.code(), absl::StatusCode::kNotFound);
  EXPECT_STREQ(e.what(), "[trace] cannot write '/nonexistent-folder/report.html'");
}

TEST_F(ReportTest, HeadlessChromiumDrawsOpsDevicesAndNumbers) {
  const std::string browser = chromium();
  if (browser.empty()) {
    if (std::getenv("MT_REQUIRE_CHROMIUM") != nullptr) FAIL() << "chromium is not installed";
    GTEST_SKIP() << "chromium cannot be run here; `apt-get install chromium` (scripts/test.sh "
                    "installs it) to render the report";
  }
  fs::path dir = fs::path(::testing::TempDir()) / "mt_report_test";
  fs::create_directories(dir);
  trace::write_report((dir / "report.html").string());
  std::string dom = run("timeout 120 " + browser +
                        " --headless --no-sandbox --disable-gpu --disable-dev-shm-usage"
                        " --no-first-run --user-data-dir='" +
                        (dir / "profile").string() + "' --dump-dom 'file://" +
                        (dir / "report.html").string() + "' 2>/dev/null");
  fs::remove_all(dir);
  ASSERT_NE(dom.find("data-rendered=\"yes\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("3 ops and 3 copies on 2 devices"), std::string::npos);
  EXPECT_NE(dom.find("<td class=\"op\">MatMul</td>"), std::string::npos);
  EXPECT_NE(dom.find("<td class=\"op\">Sum</td>"), std::string::npos);
  EXPECT_NE(dom.find("<h3 class=\"device\">" + cpu(1) + ": 1 ops</h3>"), std::string::npos);
  EXPECT_NE(dom.find("<h3 class=\"pool\">" + cpu(1) + " (CPU_1_bfc)</h3>"), std::string::npos);
  EXPECT_NE(dom.find("<td>asked for /device:CPU:1</td>"), std::string::npos);
  EXPECT_NE(dom.find("<td class=\"num\">48</td>"), std::string::npos);  // MatMul: 2 copies, output
  EXPECT_NE(dom.find("data-pool=\"CPU_1_bfc\""), std::string::npos);    // its memory curve
}

}  // namespace
}  // namespace mt::testing
