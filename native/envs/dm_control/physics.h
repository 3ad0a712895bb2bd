// dm_control's mujoco.Physics in C++: the suite's model files compiled once, and the reset, forward
// and step sequences of dm_control/mujoco/engine.py, so derived quantities match its at every step.
#pragma once

#include <mujoco/mujoco.h>
#include <sys/stat.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

namespace pp::dm_control {

using ModelPtr = std::shared_ptr<const mjModel>;

// Compiles a suite model once per process. `suite_dir` is the installed dm_control/suite (its
// `./common/*.xml` includes resolve from there, as common.ASSETS does for from_xml_string);
// `xml` is the model text when a domain edits the file (cartpole's extra poles), else empty and
// the file `suite_dir/xml_file` is read. The cache key is the text or path.
inline ModelPtr CompileModel(const std::string& suite_dir, const std::string& xml_file, const std::string& xml = "") {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, ModelPtr> cache;
  const std::string path = suite_dir + "/" + xml_file;
  const auto key = std::make_pair(path, xml);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) {
    throw std::invalid_argument("dm_control model file " + path + " does not exist (is dm_control installed?)");
  }
  constexpr int kErrorSize = 1000;
  char error[kErrorSize] = "";
  // Compiler warnings (deprecated attributes) are dropped, as in the MuJoCo family's model.h.
  void (*previous_warning)(const char*) = mju_user_warning;
  mju_user_warning = [](const char* /*message*/) {};
  mjModel* model = nullptr;
  if (xml.empty()) {
    model = mj_loadXML(path.c_str(), nullptr, error, kErrorSize);
  } else {
    // The edited text stands in for the file under the file's own name, so its includes resolve
    // against the suite directory exactly as the original's do.
    mjVFS vfs;
    mj_defaultVFS(&vfs);
    mj_addBufferVFS(&vfs, path.c_str(), xml.data(), static_cast<int>(xml.size()));
    model = mj_loadXML(path.c_str(), &vfs, error, kErrorSize);
    mj_deleteVFS(&vfs);
  }
  mju_user_warning = previous_warning;
  if (model == nullptr) throw std::invalid_argument("cannot load dm_control model " + path + ": " + error);
  ModelPtr shared(model, [](mjModel* m) { mj_deleteModel(m); });
  cache.emplace(key, shared);
  return shared;
}

// One env's simulation: its own mjData, and its model. A domain that edits its model (reacher's
// target size and position, finger's damping, point_mass's gains, quadruped's terrain: `own_copy`)
// gets a full copy of its own. Every other env shares the compiled model's arrays with all envs of
// the process and owns only a copy of the mjModel struct, so that what the struct itself holds (the
// options: Reset's forward with actuation off sets a disable flag) stays its own: a suite model is
// ~12 MB with its textures (cheetah), and many envs stepping one set of arrays share them in cache,
// as the MuJoCo family's envs do.
class Physics {
 public:
  Physics(ModelPtr compiled, bool own_copy) : compiled_(std::move(compiled)) {
    if (own_copy) {
      m_ = mj_copyModel(nullptr, compiled_.get());
      if (m_ == nullptr) throw std::runtime_error("mj_copyModel failed (out of memory?)");
    } else {
      shared_ = std::make_unique<mjModel>(*compiled_);
      m_ = shared_.get();
    }
    d_ = mj_makeData(m_);
    if (d_ == nullptr) {
      if (!shared_) mj_deleteModel(m_);
      throw std::runtime_error("mj_makeData failed (out of memory?)");
    }
  }
  ~Physics() {
    mj_deleteData(d_);
    if (!shared_) mj_deleteModel(m_);
  }
  Physics(const Physics&) = delete;
  Physics& operator=(const Physics&) = delete;

  mjModel* model() const { return m_; }
  mjData* data() const { return d_; }

  // Physics.reset(): mj_resetData, then forward with actuation disabled. Its PhysicsError is
  // swallowed by reset_context, so warnings are not checked here.
  void Reset() {
    mj_resetData(m_, d_);
    ForwardWithoutActuation();
  }
  // Physics.after_reset(): forward with actuation disabled (a warning raises PhysicsError).
  void AfterReset() {
    CheckedCall([this] { ForwardWithoutActuation(); });
  }
  // after_reset() whose PhysicsError the caller swallows (quadruped's _find_non_contacting_height):
  // the forward ran to the end either way.
  void AfterResetIgnoringWarnings() { ForwardWithoutActuation(); }
  // Physics.step(n) with legacy_step (the default): mj_step2 finishes the step whose mj_step1 the
  // last forward or step did, n - 1 full steps follow, and mj_step1 leaves the position- and
  // velocity-dependent quantities current for the observation. RK4 has no split step.
  // Without legacy_step: n full steps. A warning counter that grew is dm_control's PhysicsError.
  void Step(int n, bool legacy_step) {
    Steps steps;
    BeginSteps(&steps, n, legacy_step);
    RunSteps(&steps, [] { return false; });
  }

  // Step(n, legacy_step) in parts, for a long one inside a reset that may stop halfway
  // (Env::PauseReset): BeginSteps, then RunSteps until it returns true; its PhysicsError over the
  // whole n steps, raised at the end.
  struct Steps {
    int total = 0;
    int done = 0;
    bool legacy = true;
    int warnings[mjNWARNING] = {};  // the warning counters before the first step
  };
  void BeginSteps(Steps* steps, int n, bool legacy_step) const {
    steps->total = n;
    steps->done = 0;
    steps->legacy = legacy_step;
    for (int i = 0; i < mjNWARNING; ++i) steps->warnings[i] = d_->warning[i].number;
  }
  // Runs the steps left, asking `pause` every kPauseEvery steps; false when it said stop (the
  // steps left are still to run).
  static constexpr int kPauseEvery = 8;
  template <typename Pause>
  bool RunSteps(Steps* steps, const Pause& pause) {
    while (steps->done < steps->total) {
      if (steps->done == 0 && steps->legacy && m_->opt.integrator != mjINT_RK4) {
        mj_step2(m_, d_);
      } else {
        mj_step(m_, d_);
      }
      ++steps->done;
      if (steps->done < steps->total && steps->done % kPauseEvery == 0 && pause()) return false;
    }
    if (steps->legacy) mj_step1(m_, d_);
    ThrowNewWarnings(steps->warnings);
    return true;
  }

 private:
  // `with model.disable('actuation'): forward()`.
  void ForwardWithoutActuation() {
    const int flags = m_->opt.disableflags;
    m_->opt.disableflags = flags | mjDSBL_ACTUATION;
    mj_forward(m_, d_);
    m_->opt.disableflags = flags;
  }

  // check_invalid_state(): any MuJoCo warning counter that grew during `call` is dm_control's
  // PhysicsError, which its Environment.step raises; here the env's step throws it.
  template <typename Call>
  void CheckedCall(const Call& call) {
    int before[mjNWARNING];
    for (int i = 0; i < mjNWARNING; ++i) before[i] = d_->warning[i].number;
    call();
    ThrowNewWarnings(before);
  }
  // PhysicsError when a warning counter grew past `before`.
  void ThrowNewWarnings(const int* before) const {
    std::string names;
    for (int i = 0; i < mjNWARNING; ++i) {
      if (d_->warning[i].number > before[i]) names += (names.empty() ? "" : ", ") + std::string(WarningName(i));
    }
    if (!names.empty()) {
      throw std::runtime_error("PhysicsError: Physics state is invalid. Warning(s) raised: " + names);
    }
  }
  static const char* WarningName(int i) {
    static const char* const kNames[] = {"mjWARN_INERTIA", "mjWARN_CONTACTFULL", "mjWARN_CNSTRFULL", "mjWARN_BADQPOS",
                                         "mjWARN_BADQVEL", "mjWARN_BADQACC",     "mjWARN_BADCTRL"};
    return i < static_cast<int>(sizeof(kNames) / sizeof(kNames[0])) ? kNames[i] : "mjWARN_UNKNOWN";
  }

  ModelPtr compiled_;
  std::unique_ptr<mjModel> shared_;  // the struct of a shared model; null when m_ is a full copy
  mjModel* m_ = nullptr;
  mjData* d_ = nullptr;
};

}  // namespace pp::dm_control
