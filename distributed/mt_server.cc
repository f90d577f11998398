// mt-server: runs one task of a cluster until killed.
//
//   mt-server --cluster worker=127.0.0.1:2222,127.0.0.1:2223 --job worker --task 1
//             [--cluster ps=127.0.0.1:2224] [--cpus 2] [--log_device_placement]
//             [--max_message_mb 256] [--tls_cert cert.pem --tls_key key.pem]
//
// --cpus N splits the CPU into N logical CPUs. Prints "mt-server: serving <target>" once
// it listens.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "distributed/distributed.h"
#include "runtime/minitensor.h"

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "mt-server: " << why
            << "\nusage: mt-server --cluster JOB=HOST:PORT[,HOST:PORT...] [--cluster ...] "
               "--job JOB --task N [--cpus N] [--log_device_placement] [--max_message_mb N] "
               "[--tls_cert FILE --tls_key FILE]\n";
  std::exit(2);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) usage("cannot read " + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int to_int(const std::string& flag, const std::string& value) {
  int n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < 0) usage(flag + " needs a number >= 0");
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  mt::distributed::ClusterSpec cluster;
  std::string job = "worker";
  int task = 0, cpus = 1;
  mt::distributed::ServerOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--log_device_placement") {
      mt::debugging::set_log_device_placement(true);
      continue;
    }
    if (i + 1 >= argc) usage(flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--cluster") {
      std::pair<std::string, std::string> kv = absl::StrSplit(value, absl::MaxSplits('=', 1));
      cluster[kv.first] = absl::StrSplit(kv.second, ',');
    } else if (flag == "--job") {
      job = value;
    } else if (flag == "--task") {
      task = to_int(flag, value);
    } else if (flag == "--cpus") {
      cpus = to_int(flag, value);
    } else if (flag == "--max_message_mb") {
      options.max_message_bytes = int64_t{to_int(flag, value)} << 20;
    } else if (flag == "--tls_cert") {
      options.tls.server_cert_pem = read_file(value);
    } else if (flag == "--tls_key") {
      options.tls.server_key_pem = read_file(value);
    } else {
      usage("unknown flag " + flag);
    }
  }
  try {
    if (cpus > 1) {
      auto cpu = mt::config::list_physical_devices("CPU")[0];
      mt::config::set_logical_device_configuration(
          cpu, std::vector<mt::LogicalDeviceConfiguration>(cpus));
    }
    mt::distributed::Server server(cluster, job, task, options);
    std::printf("mt-server: serving %s\n", server.target().c_str());
    std::fflush(stdout);
    server.join();
  } catch (const mt::Error& e) {
    std::cerr << "mt-server: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
