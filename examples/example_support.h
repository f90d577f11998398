#pragma once
// What several example programs share: the "needs a GPU" check, words about a GPU pool's
// reservation and memory growth that hold on any card, the first line of an error message,
// and the --hold helper of the programs that run side by side.
//
//   std::vector<mt::PhysicalDevice> gpus = mt::config::list_physical_devices("GPU");
//   if (say_if_no_gpu(gpus)) return 0;
//   std::cout << "GPU:0: " << reservation("GPU:0") << "\n";

#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "runtime/minitensor.h"

constexpr int64_t kMiB = int64_t{1} << 20;

// Prints that this example needs a GPU when `gpus` is empty, after "`who`: " when `who` is
// given; returns whether it did, so that main can return 0.
inline bool say_if_no_gpu(const std::vector<mt::PhysicalDevice>& gpus,
                          const std::string& who = "") {
  if (!gpus.empty()) return false;
  std::cout << (who.empty() ? "" : who + ": ") << "This example needs a GPU; none is visible."
            << std::endl;
  return true;
}

// Returns whether the pool of `device` has reserved its whole limit.
inline bool reserved_whole_limit(const std::string& device) {
  mt::MemoryInfo info = mt::config::get_memory_info(device);
  // Pools round their limit down to a multiple of 256 bytes.
  return info.reserved == info.limit / 256 * 256;
}

// Describes what the pool of `device` reserved, in words that hold on any card.
inline std::string reservation(const std::string& device) {
  if (reserved_whole_limit(device)) return "the pool reserved its whole limit";
  return "the pool reserved only part of its limit";
}

// Prints whether memory growth is on for each of `gpus`, a line each.
inline void print_memory_growth(const std::vector<mt::PhysicalDevice>& gpus) {
  for (const mt::PhysicalDevice& gpu : gpus) {
    std::cout << gpu.name
              << " memory growth: " << (mt::config::get_memory_growth(gpu) ? "on" : "off") << "\n";
  }
}

// Returns the first line of `message`: minitensor's errors add details on later lines.
inline std::string first_line(const std::string& message) {
  return message.substr(0, message.find('\n'));
}

// Returns the first line of an OOM message without the shape, which depends on the card.
inline std::string without_shape(const std::string& message) {
  std::string line = first_line(message);
  size_t open = line.find("shape[");
  size_t close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return line;
  return line.substr(0, open + 6) + "..." + line.substr(close);
}

// Keeps this process, and so its memory, alive until stdin closes.
inline void hold_until_stdin_closes(const std::string& name) {
  std::cout << name << ": holding its memory until stdin closes" << std::endl;
  for (std::string line; std::getline(std::cin, line);) {
  }
}
