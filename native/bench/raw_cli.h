// What the raw loops (native/bench/*_raw.cc) share around their measurement: flags read as
// `--flag value` pairs, usage errors, pinning the thread to a CPU.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <variant>

namespace pp::raw {

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

// A raw loop's command line: its name, one line of what it does and its usage synopsis.
class Cli {
 public:
  Cli(const char* name, const char* about, const char* synopsis) : name_(name), about_(about), synopsis_(synopsis) {}

  // Prints `message` and the usage line, and exits with status 2.
  [[noreturn]] void Usage(const std::string& message) const {
    std::fprintf(stderr, "%s\nusage: %s %s\n", message.c_str(), name_, synopsis_);
    std::exit(2);
  }

  // A flag and the option it sets: a string, a number, a 0|1 value (bool*), or a Switch, which
  // takes no value.
  struct Switch {
    bool* on;
  };
  struct Flag {
    const char* name;
    std::variant<std::string*, double*, int*, uint64_t*, bool*, Switch> target;
  };

  // Reads argv as `--flag value` pairs (a Switch alone) into the flags' targets. An unknown flag
  // or a missing value is a usage error; --help and -h print what the loop does.
  void Parse(int argc, char** argv, std::initializer_list<Flag> flags) const {
    for (int i = 1; i < argc; ++i) {
      const std::string name = argv[i];
      if (name == "--help" || name == "-h") Usage(about_);
      const Flag* flag = std::find_if(flags.begin(), flags.end(), [&](const Flag& f) { return name == f.name; });
      if (flag == flags.end()) Usage("unknown flag " + name);
      if (const Switch* sw = std::get_if<Switch>(&flag->target)) {
        *sw->on = true;
        continue;
      }
      if (i + 1 >= argc) Usage("missing value for " + name);
      const char* value = argv[++i];
      std::visit(
          [&](auto target) {
            using T = std::remove_pointer_t<decltype(target)>;
            if constexpr (std::is_same_v<T, std::string>) *target = value;
            if constexpr (std::is_same_v<T, double>) *target = std::atof(value);
            if constexpr (std::is_same_v<T, int>) *target = std::atoi(value);
            if constexpr (std::is_same_v<T, uint64_t>) *target = std::strtoull(value, nullptr, 10);
            if constexpr (std::is_same_v<T, bool>) *target = std::atoi(value) != 0;
          },
          flag->target);
    }
  }

  // Runs a loop's body on this thread, pinned to `cpu` first unless it is negative, and returns
  // its exit status; an exception it throws is printed after the loop's name, with status 1.
  template <typename Body>
  int Run(int cpu, Body body) const {
    if (cpu >= 0) PinToCpu(cpu);
    try {
      return body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", name_, e.what());
      return 1;
    }
  }

 private:
  const char* name_;
  const char* about_;
  const char* synopsis_;
};

}  // namespace pp::raw
