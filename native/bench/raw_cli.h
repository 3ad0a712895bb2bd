// What the raw loops (native/bench/*_raw.cc) share around their measurement: flags read as
// `--flag value` pairs, usage errors, pinning the thread to a CPU.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace pp::raw {

// A raw loop's command line: its name, one line of what it does and its usage synopsis.
class Cli {
 public:
  Cli(const char* name, const char* about, const char* synopsis) : name_(name), about_(about), synopsis_(synopsis) {}

  // Prints `message` and the usage line, and exits with status 2.
  [[noreturn]] void Usage(const std::string& message) const {
    std::fprintf(stderr, "%s\nusage: %s %s\n", message.c_str(), name_, synopsis_);
    std::exit(2);
  }

  // Reads argv as `--flag value` pairs, each passed to on_value(flag, value), which returns false
  // for a flag it does not know. Flags in `switches` (space-separated, e.g. "--swap") take no
  // value: on_value gets them with an empty value. --help and -h print what the loop does.
  template <typename OnValue>
  void Parse(int argc, char** argv, OnValue on_value, const std::string& switches = "") const {
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--help" || flag == "-h") Usage(about_);
      const bool is_switch = (" " + switches + " ").find(" " + flag + " ") != std::string::npos;
      if (!is_switch && i + 1 >= argc) Usage("missing value for " + flag);
      const std::string value = is_switch ? std::string() : argv[++i];
      if (!on_value(flag, value)) Usage("unknown flag " + flag);
    }
  }

 private:
  const char* name_;
  const char* about_;
  const char* synopsis_;
};

// Pins the calling thread to `cpu`, or exits with status 1.
inline void PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
    std::fprintf(stderr, "cannot pin to cpu %d\n", cpu);
    std::exit(1);
  }
}

}  // namespace pp::raw
