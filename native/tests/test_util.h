// A tiny test harness for the core's C++ tests: CHECK macros that print file:line and values,
// TEST registration, a per-test watchdog so a deadlock fails loudly instead of hanging ctest.
#pragma once

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace pp::test {

inline int& Failures() {
  static int failures = 0;
  return failures;
}
inline std::mutex& FailureMutex() {
  static std::mutex mu;
  return mu;
}

// Thread-safe: CHECKs may run on worker threads.
inline void Fail(const char* file, int line, const std::string& what) {
  std::lock_guard<std::mutex> lock(FailureMutex());
  ++Failures();
  std::fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what.c_str());
  std::fflush(stderr);
}

inline bool CheckNear(double a, double b, double tol, const char* file, int line, const char* what) {
  if (std::fabs(a - b) <= tol) return true;
  char values[128];
  std::snprintf(values, sizeof values, ": %.9g vs %.9g (tol %g)", a, b, tol);
  Fail(file, line, std::string(what) + values);
  return false;
}

template <typename T, typename = void>
struct Printable : std::false_type {};
template <typename T>
struct Printable<T, std::void_t<decltype(std::declval<std::ostream&>() << std::declval<const T&>())>> : std::true_type {
};

// Values as a reader wants them: bytes as numbers, strings quoted, enums as their integer.
template <typename T>
std::string Show(const T& v) {
  std::ostringstream out;
  if constexpr (std::is_same_v<T, bool>) {
    out << (v ? "true" : "false");
  } else if constexpr (std::is_same_v<T, char> || std::is_same_v<T, signed char> || std::is_same_v<T, unsigned char>) {
    out << static_cast<int>(v);
  } else if constexpr (std::is_enum_v<T>) {
    out << static_cast<long long>(v);
  } else if constexpr (std::is_convertible_v<const T&, std::string>) {
    out << '"' << std::string(v) << '"';
  } else if constexpr (Printable<T>::value) {
    out << v;
  } else {
    out << "<unprintable>";
  }
  return out.str();
}

template <typename A, typename B>
bool CheckOp(bool ok, const char* file, int line, const char* expr, const A& a, const B& b) {
  if (!ok) Fail(file, line, std::string(expr) + "  (" + Show(a) + " vs " + Show(b) + ")");
  return ok;
}

struct TestCase {
  const char* name;
  void (*fn)();
};
inline std::vector<TestCase>& Tests() {
  static std::vector<TestCase> tests;
  return tests;
}
struct Registrar {
  Registrar(const char* name, void (*fn)()) { Tests().push_back({name, fn}); }
};

// Aborts the process (with the test's name) when one test runs longer than `limit`.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit) : limit_(limit), thread_([this] { Run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Start(const char* name) {
    std::lock_guard<std::mutex> lock(mu_);
    name_ = name;
    deadline_ = std::chrono::steady_clock::now() + limit_;
    cv_.notify_all();
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!done_) {
      if (name_ != nullptr && std::chrono::steady_clock::now() >= deadline_) {
        std::fprintf(stderr, "WATCHDOG: test '%s' still running after %lld s (deadlock or hang?); aborting\n", name_,
                     static_cast<long long>(limit_.count()));
        std::fflush(stderr);
        std::abort();
      }
      if (name_ == nullptr) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, deadline_);
      }
    }
  }

  const std::chrono::seconds limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  const char* name_ = nullptr;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;  // last: starts after the members above exist
};

// Runs every registered test (or those whose name contains argv[1]); the exit code is non-zero
// when any CHECK failed or a test threw.
inline int RunAll(int argc, char** argv) {
  const std::string filter = argc > 1 ? argv[1] : "";
  Watchdog watchdog(std::chrono::seconds(60));
  int ran = 0;
  for (const TestCase& t : Tests()) {
    if (!filter.empty() && std::string(t.name).find(filter) == std::string::npos) continue;
    ++ran;
    const int before = Failures();
    const auto start = std::chrono::steady_clock::now();
    std::printf("[ RUN    ] %s\n", t.name);
    std::fflush(stdout);
    watchdog.Start(t.name);
    try {
      t.fn();
    } catch (const std::exception& e) {
      Fail(t.name, 0, std::string("unexpected exception: ") + e.what());
    } catch (...) {
      Fail(t.name, 0, "unexpected non-std exception");
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("[ %s ] %s (%.0f ms)\n", Failures() == before ? "    OK" : "FAILED", t.name, ms);
    std::fflush(stdout);
  }
  if (ran == 0) {
    std::fprintf(stderr, "no test matches '%s'\n", filter.c_str());
    return 1;
  }
  std::printf("%d test(s), %d failed check(s)\n", ran, Failures());
  return Failures() == 0 ? 0 : 1;
}

}  // namespace pp::test

#define PP_TEST_CONCAT_(a, b) a##b
#define PP_TEST_CONCAT(a, b) PP_TEST_CONCAT_(a, b)

// TEST(Name) { ... }  registers a test; main() is `return pp::test::RunAll(argc, argv);`.
#define TEST(name)                                                                   \
  static void name();                                                                \
  static const ::pp::test::Registrar PP_TEST_CONCAT(name, _registrar)(#name, &name); \
  static void name()

// Each CHECK evaluates to whether it passed, so a test can stop early: if (!CHECK(p)) return;
#define CHECK(cond) ((cond) ? true : (::pp::test::Fail(__FILE__, __LINE__, "CHECK(" #cond ")"), false))

#define PP_CHECK_OP_(a, op, b) \
  ::pp::test::CheckOp(((a)op(b)), __FILE__, __LINE__, "CHECK(" #a " " #op " " #b ")", (a), (b))
#define CHECK_EQ(a, b) PP_CHECK_OP_(a, ==, b)
#define CHECK_NE(a, b) PP_CHECK_OP_(a, !=, b)
#define CHECK_LT(a, b) PP_CHECK_OP_(a, <, b)
#define CHECK_LE(a, b) PP_CHECK_OP_(a, <=, b)
#define CHECK_GT(a, b) PP_CHECK_OP_(a, >, b)
#define CHECK_GE(a, b) PP_CHECK_OP_(a, >=, b)
// Passes when |a - b| <= tol (as doubles); prints both values otherwise.
#define CHECK_NEAR(a, b, tol) ::pp::test::CheckNear((a), (b), (tol), __FILE__, __LINE__, "CHECK_NEAR(" #a ", " #b ")")

// Passes when `stmt` throws `type` (or a subclass) whose what() contains `substr` ("" for any).
#define CHECK_THROWS_WITH(type, stmt, substr)                                                                          \
  [&]() -> bool {                                                                                                      \
    try {                                                                                                              \
      stmt;                                                                                                            \
    } catch (const type& e_) {                                                                                         \
      const std::string msg_ = e_.what();                                                                              \
      if (msg_.find(substr) != std::string::npos) return true;                                                         \
      ::pp::test::Fail(__FILE__, __LINE__,                                                                             \
                       "`" #stmt "` threw " #type " without \"" + std::string(substr) + "\" in its message: " + msg_); \
      return false;                                                                                                    \
    } catch (const std::exception& e_) {                                                                               \
      ::pp::test::Fail(__FILE__, __LINE__,                                                                             \
                       "`" #stmt "` threw another exception than " #type ": " + std::string(e_.what()));               \
      return false;                                                                                                    \
    }                                                                                                                  \
    ::pp::test::Fail(__FILE__, __LINE__, "`" #stmt "` did not throw " #type);                                          \
    return false;                                                                                                      \
  }()
#define CHECK_THROWS(type, stmt) CHECK_THROWS_WITH(type, stmt, "")
