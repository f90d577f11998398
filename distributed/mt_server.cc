// mt-server: runs one task of a cluster until stopped (SIGTERM, SIGINT) or killed.
//
//   mt-server --cluster worker=127.0.0.1:2222,127.0.0.1:2223 --job worker --task 1
//             [--cluster ps=127.0.0.1:2224] [--cpus 2] [--log_device_placement]
//             [--max_message_mb 256] [--max_client_bytes N]
//             [--tls_cert cert.pem --tls_key key.pem [--tls_client_ca ca.pem]]
//             [--auth_token_file token] [--insecure]
//             [--num_cqs N] [--min_pollers N] [--max_pollers N]
//
// --cpus N splits the CPU into N logical CPUs. --num_cqs, --min_pollers and --max_pollers
// set gRPC's sync server: its completion queues and the polling threads of each (0, the
// default: gRPC's own; ServerOptions::num_cqs, min_pollers, max_pollers). Prints
// "mt-server: serving <target>" once it listens. SIGHUP reads the certificate, key, client
// CA and token files again and serves them from then on (docs/distributed.md, "Security");
// SIGTERM and SIGINT stop it (exit status 0).
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "distributed/distributed.h"
#include "runtime/minitensor.h"

namespace {

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "mt-server: " << why
            << "\nusage: mt-server --cluster JOB=HOST:PORT[,HOST:PORT...] [--cluster ...] "
               "--job JOB --task N [--cpus N] [--log_device_placement] [--max_message_mb N] "
               "[--max_client_bytes N] [--tls_cert FILE --tls_key FILE [--tls_client_ca FILE]] "
               "[--auth_token_file FILE] [--insecure] [--num_cqs N] [--min_pollers N] "
               "[--max_pollers N]\n";
  std::exit(2);
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int64_t to_int(const std::string& flag, const std::string& value) {
  int64_t n = 0;
  if (!absl::SimpleAtoi(value, &n) || n < 0) usage(flag + " needs a number >= 0");
  return n;
}

// The files credentials come from, read again on SIGHUP.
struct CredentialFiles {
  std::string cert, key, client_ca, token;

  // Reads every file named into `options`; returns what went wrong, or "".
  std::string read(mt::distributed::ServerOptions& options) const {
    std::pair<const std::string*, std::string*> files[] = {{&cert, &options.tls.server_cert_pem},
                                                           {&key, &options.tls.server_key_pem},
                                                           {&client_ca, &options.tls.client_ca_pem},
                                                           {&token, &options.auth_token}};
    for (auto [path, text] : files) {
      if (path->empty()) continue;
      std::optional<std::string> read = read_file(*path);
      if (!read.has_value()) return "cannot read " + *path;
      *text = *std::move(read);
    }
    // A token file holds one line; its newline is not part of the token.
    options.auth_token = std::string(absl::StripAsciiWhitespace(options.auth_token));
    if (!token.empty() && options.auth_token.empty()) return token + " holds no token";
    return "";
  }
};

// The signals main() waits for; blocked in every thread before any starts.
sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGHUP, SIGTERM, SIGINT}) sigaddset(&set, signal);
  return set;
}

// Reloads the credentials on each SIGHUP; returns on SIGTERM or SIGINT.
void serve_until_stopped(mt::distributed::Server& server, const CredentialFiles& files,
                         mt::distributed::ServerOptions options) {
  sigset_t set = handled_signals();
  for (;;) {
    int signal = 0;
    if (sigwait(&set, &signal) != 0 || signal != SIGHUP) return;
    std::string failed = files.read(options);
    try {
      if (failed.empty()) server.update_credentials(options);
    } catch (const mt::Error& e) {
      failed = e.what();
    }
    if (failed.empty()) {
      std::cerr << "mt-server: reloaded the credentials" << std::endl;
    } else {
      std::cerr << "mt-server: kept the old credentials: " << failed << std::endl;
    }
  }
}

// What the command line asks for.
struct Flags {
  mt::distributed::ClusterSpec cluster;
  std::string job = "worker";
  int task = 0, cpus = 1;
  mt::distributed::ServerOptions options;
  CredentialFiles files;
};

// Sets the flag `flag` that takes `value`; exits with the usage for an unknown one.
void set_flag(Flags& f, const std::string& flag, const std::string& value) {
  auto to_int32 = [&] {
    return static_cast<int>(std::min<int64_t>(to_int(flag, value), INT32_MAX));
  };
  if (flag == "--cluster") {
    std::pair<std::string, std::string> kv = absl::StrSplit(value, absl::MaxSplits('=', 1));
    f.cluster[kv.first] = absl::StrSplit(kv.second, ',');
  } else if (flag == "--job") {
    f.job = value;
  } else if (flag == "--task") {
    f.task = to_int32();
  } else if (flag == "--cpus") {
    f.cpus = to_int32();
  } else if (flag == "--max_message_mb") {
    f.options.max_message_bytes = int64_t{to_int32()} << 20;
  } else if (flag == "--max_client_bytes") {
    f.options.max_client_bytes = to_int(flag, value);
  } else if (flag == "--num_cqs") {
    f.options.num_cqs = to_int32();
  } else if (flag == "--min_pollers") {
    f.options.min_pollers = to_int32();
  } else if (flag == "--max_pollers") {
    f.options.max_pollers = to_int32();
  } else if (flag == "--tls_cert") {
    f.files.cert = value;
  } else if (flag == "--tls_key") {
    f.files.key = value;
  } else if (flag == "--tls_client_ca") {
    f.files.client_ca = value;
  } else if (flag == "--auth_token_file") {
    f.files.token = value;
  } else {
    usage("unknown flag " + flag);
  }
}

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--log_device_placement") {
      mt::debugging::set_log_device_placement(true);
    } else if (flag == "--insecure") {
      f.options.insecure = true;
    } else if (i + 1 >= argc) {
      usage(flag + " needs a value");
    } else {
      set_flag(f, flag, argv[++i]);
    }
  }
  if (std::string failed = f.files.read(f.options); !failed.empty()) usage(failed);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  Flags f = parse_flags(argc, argv);
  sigset_t signals = handled_signals();  // taken by serve_until_stopped, not by a thread
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  try {
    if (f.cpus > 1) {
      auto cpu = mt::config::list_physical_devices("CPU")[0];
      mt::config::set_logical_device_configuration(
          cpu, std::vector<mt::LogicalDeviceConfiguration>(f.cpus));
    }
    mt::distributed::Server server(f.cluster, f.job, f.task, f.options);
    std::printf("mt-server: serving %s\n", server.target().c_str());
    std::fflush(stdout);
    serve_until_stopped(server, f.files, f.options);  // the server stops as it goes
  } catch (const mt::Error& e) {
    std::cerr << "mt-server: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
