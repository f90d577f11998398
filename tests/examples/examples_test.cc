// Runs every program of examples/ and compares its standard output, exactly, with
// examples/expected/<case>.gpus<N>.txt, N being the number of GPUs of this machine. A case
// without an expected file for N skips itself.
//
// Where things are found (each overridable by the environment variable of the same name):
// - MT_EXAMPLES_BIN_DIR, the example programs: this test's own folder when they are there
//   (scripts/gpu-check.sh bundles both into .gpu/bin), else the build's examples folder;
// - MT_SOURCE_DIR, for examples/expected/ and the scripts: the working directory when it
//   holds examples/expected/, else the source tree this test was built from.
// With MT_EXAMPLES_ACTUAL_DIR set, every case also runs without an expected file and writes
// its output there under the expected file's name, ready to be reviewed and copied.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "runtime/minitensor.h"

namespace mt {
namespace {

namespace fs = std::filesystem;

struct ExampleCase {
  const char* name;         // the test's name and the stem of its expected files
  const char* program;      // an example program, or a script under examples/ ("*.sh")
  const char* env;          // "NAME=value" for the run, or ""
  const char* stderr_line;  // a line that stderr must contain, or ""
};

// Names a case in test listings (gtest prints parameters).
void PrintTo(const ExampleCase& c, std::ostream* os) { *os << c.name; }

constexpr char kGrowthEnv[] = "TF_FORCE_GPU_ALLOW_GROWTH";

const ExampleCase kCases[] = {
    {"guide_logging", "guide_logging", "", ""},
    {"guide_manual_placement", "guide_manual_placement", "", ""},
    {"guide_visible_devices", "guide_visible_devices", "", ""},
    {"guide_memory_growth", "guide_memory_growth", "", ""},
    {"guide_memory_growth_env_false", "guide_memory_growth", "TF_FORCE_GPU_ALLOW_GROWTH=false", ""},
    {"guide_allow_growth_env_unset", "guide_allow_growth_env", "", ""},
    {"guide_allow_growth_env_true", "guide_allow_growth_env", "TF_FORCE_GPU_ALLOW_GROWTH=true", ""},
    {"guide_allow_growth_env_invalid", "guide_allow_growth_env", "TF_FORCE_GPU_ALLOW_GROWTH=yes",
     "minitensor: ignoring TF_FORCE_GPU_ALLOW_GROWTH='yes': expected 'true' or 'false'"},
    {"guide_memory_limit", "guide_memory_limit", "", ""},
    {"guide_soft_placement", "guide_soft_placement", "", ""},
    {"guide_virtual_gpus", "guide_virtual_gpus", "", ""},
    {"guide_manual_replication", "guide_manual_replication", "", ""},
    {"guide_mirrored_strategy", "guide_mirrored_strategy", "", ""},
    {"run_three_processes", "run_three_processes.sh", "", ""},
    {"run_reordered_programs", "run_reordered_programs.sh", "", ""},
    {"two_gib_per_gpu", "two_gib_per_gpu", "", ""},
    {"per_gpu_limits", "per_gpu_limits", "", ""},
    {"per_gpu_growth", "per_gpu_growth", "", ""},
};

fs::path examples_bin_dir() {
  if (const char* dir = std::getenv("MT_EXAMPLES_BIN_DIR")) return dir;
  fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
  if (fs::exists(self / "guide_logging")) return self;
  return MT_EXAMPLES_BIN_DIR;
}

fs::path source_dir() {
  if (const char* dir = std::getenv("MT_SOURCE_DIR")) return dir;
  if (fs::exists(fs::current_path() / "examples" / "expected")) return fs::current_path();
  return MT_SOURCE_DIR;
}

// Appends rather than `"'" + std::string`, which GCC 12 flags with a false -Wrestrict.
std::string quoted(const fs::path& path) {
  return std::string("'").append(path.string()).append("'");
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Output {
  std::string out;
  std::string err;
  int status = -1;
};

// Runs `command` through the shell with stderr sent to a file; returns both outputs.
Output run_command(const std::string& command, const std::string& name) {
  fs::path err_file = fs::temp_directory_path() /
                      ("examples_test_" + name + "_" + std::to_string(getpid()) + ".stderr");
  Output result;
  FILE* pipe = popen((command + " 2>" + quoted(err_file)).c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) result.out.append(buffer, n);
  result.status = pclose(pipe);
  result.err = read_file(err_file);
  fs::remove(err_file);
  return result;
}

size_t num_gpus() {
  static const size_t n = config::list_physical_devices("GPU").size();
  return n;
}

class ExamplesTest : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(ExamplesTest, PrintsTheExpectedOutput) {
  const ExampleCase& c = GetParam();
  std::string stem = std::string(c.name) + ".gpus" + std::to_string(num_gpus()) + ".txt";
  fs::path expected_file = source_dir() / "examples" / "expected" / stem;
  const char* actual_dir = std::getenv("MT_EXAMPLES_ACTUAL_DIR");
  if (!fs::exists(expected_file) && actual_dir == nullptr) {
    GTEST_SKIP() << "no expected output for " << num_gpus() << " GPUs: " << expected_file;
  }
  // Every case starts from an unset TF_FORCE_GPU_ALLOW_GROWTH; some set it.
  std::string command = std::string("env -u ") + kGrowthEnv + " " + c.env + " ";
  std::string program = c.program;
  if (program.size() > 3 && program.substr(program.size() - 3) == ".sh") {
    command +=
        "bash " + quoted(source_dir() / "examples" / program) + " " + quoted(examples_bin_dir());
  } else {
    command += quoted(examples_bin_dir() / program);
  }
  Output result = run_command(command, c.name);
  if (actual_dir != nullptr) std::ofstream(fs::path(actual_dir) / stem) << result.out;
  if (!fs::exists(expected_file)) {
    GTEST_SKIP() << "no expected output for " << num_gpus() << " GPUs; wrote "
                 << fs::path(actual_dir) / stem;
  }
  EXPECT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0)
      << command << "\nexited with wait status " << result.status << "\nstderr:\n"
      << result.err;
  EXPECT_EQ(result.out, read_file(expected_file))
      << command << "\nexpected: " << expected_file << "\nstderr:\n"
      << result.err;
  if (*c.stderr_line != '\0') {
    EXPECT_NE(result.err.find(std::string(c.stderr_line) + "\n"), std::string::npos)
        << "stderr lacks: " << c.stderr_line << "\nstderr:\n"
        << result.err;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExamplesTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ExampleCase>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace mt
