// The pybind11 module parallel_pool._native: task lookup, specs as plain dicts, and the Pool.
// Conversion and GIL handling live here; no env logic and no pool logic.
#include <pthread.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/family_loader.h"
#include "core/pool.h"
#include "core/process_env.h"
#include "core/registry.h"
#include "envs/atari/preprocess.h"
#include "python/pool_handles.h"

namespace py = pybind11;

namespace pp {
namespace {

ConfigValue ToConfigValue(const std::string& key, py::handle value) {
  if (py::isinstance<py::bool_>(value)) return value.cast<bool>();
  if (py::isinstance<py::int_>(value)) return value.cast<int64_t>();
  if (py::isinstance<py::float_>(value)) return value.cast<double>();
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  py::module_ np = py::module_::import("numpy");
  if (py::isinstance(value, np.attr("integer"))) return value.cast<int64_t>();
  if (py::isinstance(value, np.attr("floating"))) return value.cast<double>();
  if (py::isinstance(value, np.attr("bool_"))) return value.cast<bool>();
  if (py::isinstance<py::sequence>(value) || py::isinstance<py::array>(value)) {
    try {
      return value.cast<std::vector<double>>();
    } catch (const py::cast_error&) {
    }
  }
  throw py::type_error("config key '" + key + "': unsupported value type " +
                       std::string(py::str(py::type::of(value).attr("__name__"))));
}

std::map<std::string, ConfigValue> ToOverrides(const py::dict& kwargs) {
  std::map<std::string, ConfigValue> out;
  for (auto item : kwargs) {
    const std::string key = py::str(item.first);
    out[key] = ToConfigValue(key, item.second);
  }
  return out;
}

py::object FromConfigValue(const ConfigValue& v) {
  return std::visit([](const auto& x) -> py::object { return py::cast(x); }, v);
}

py::dict ConfigToDict(const Config& config) {
  py::dict d;
  for (const auto& [key, value] : config.values()) d[py::str(key)] = FromConfigValue(value);
  return d;
}

py::dict FieldToDict(const FieldSpec& f) {
  py::dict d;
  d["name"] = f.name;
  d["dtype"] = DtypeName(f.dtype);
  d["shape"] = py::tuple(py::cast(f.shape));
  d["space"] = f.space == SpaceKind::kDiscrete ? "discrete" : f.space == SpaceKind::kText ? "text" : "box";
  d["low"] = f.low;
  d["high"] = f.high;
  d["per_player"] = f.per_player;
  d["allow_nan"] = f.allow_nan;
  d["presence"] = f.presence == InfoPresence::kStep        ? "step"
                  : f.presence == InfoPresence::kWhereTrue ? "where_true"
                  : f.presence == InfoPresence::kExtra     ? "extra"
                                                           : "always";
  return d;
}

py::dict SpecToDict(const EnvSpec& spec) {
  py::dict d;
  py::dict tables;
  for (const auto& [name, values] : spec.tables)
    tables[py::str(name)] = py::array_t<double>(values.size(), values.data());
  d["tables"] = tables;
  d["task_id"] = spec.task_id;
  d["config"] = ConfigToDict(spec.config);
  py::list state, action;
  for (const auto& f : spec.state) state.append(FieldToDict(f));
  for (const auto& f : spec.action) action.append(FieldToDict(f));
  d["state"] = state;
  d["action"] = action;
  d["max_num_players"] = spec.max_num_players;
  d["max_episode_steps"] = spec.max_episode_steps;
  d["reward_threshold"] = spec.reward_threshold ? py::object(py::float_(*spec.reward_threshold)) : py::none();
  d["render_shape"] =
      spec.render_shape.empty() ? py::object(py::none()) : py::object(py::tuple(py::cast(spec.render_shape)));
  d["render_fps"] = spec.render_fps > 0 ? py::object(py::float_(spec.render_fps)) : py::object(py::none());
  return d;
}

Dtype DtypeFromName(const std::string& name) {
  for (Dtype d : {Dtype::kBool, Dtype::kInt8, Dtype::kUInt8, Dtype::kInt16, Dtype::kInt32, Dtype::kInt64,
                  Dtype::kFloat32, Dtype::kFloat64}) {
    if (DtypeName(d) == name) return d;
  }
  throw py::type_error("dtype " + name + " is not one a pool field can have");
}

FieldSpec FieldFromDict(const py::dict& d) {
  FieldSpec f;
  f.name = d["name"].cast<std::string>();
  f.dtype = DtypeFromName(d["dtype"].cast<std::string>());
  f.shape = d["shape"].cast<std::vector<int>>();
  const auto space = d["space"].cast<std::string>();
  if (space != "box" && space != "discrete")
    throw py::value_error("field '" + f.name + "': space must be box or discrete");
  f.space = space == "discrete" ? SpaceKind::kDiscrete : SpaceKind::kBox;
  f.low = d["low"].cast<std::vector<double>>();
  f.high = d["high"].cast<std::vector<double>>();
  f.allow_nan = d["allow_nan"].cast<bool>();
  return f;
}

// The inverse of SpecToDict for the fields a Python env's spaces give (single-player, no tables).
EnvSpec SpecFromDict(const py::dict& d) {
  EnvSpec spec;
  spec.task_id = d["task_id"].cast<std::string>();
  for (auto f : d["state"].cast<py::list>()) spec.state.push_back(FieldFromDict(f.cast<py::dict>()));
  for (auto f : d["action"].cast<py::list>()) spec.action.push_back(FieldFromDict(f.cast<py::dict>()));
  spec.max_episode_steps = d["max_episode_steps"].cast<int>();
  if (!d["reward_threshold"].is_none()) spec.reward_threshold = d["reward_threshold"].cast<double>();
  if (!d["render_shape"].is_none()) spec.render_shape = d["render_shape"].cast<std::vector<int>>();
  if (d.contains("render_fps") && !d["render_fps"].is_none()) spec.render_fps = d["render_fps"].cast<double>();
  for (auto item : d["config"].cast<py::dict>()) {
    const std::string key = py::str(item.first);
    spec.config.Set(key, ToConfigValue(key, item.second));
  }
  return spec;
}

std::shared_ptr<const TaskEntry> FindTask(const std::string& task_id) {
  auto task = Registry::Global().Find(task_id);
  if (!task) throw py::value_error("unknown task id '" + task_id + "'");
  return task;
}

// Python runs signal handlers (Ctrl-C's KeyboardInterrupt) on the main thread only, so only its
// waits are cut into slices of kSignalPoll, between which it takes the GIL and runs them.
// Set when the module is imported (a function-local static would take the GIL inside its guard).
// CPython's thread ident on POSIX is the pthread_t (PyThread_get_thread_ident returns
// pthread_self()): compared inline, without a call into libpython on every step.
unsigned long main_thread_id = 0;
bool OnMainThread() { return static_cast<unsigned long>(pthread_self()) == main_thread_id; }

// Ctrl-C must raise within 100 ms. A slice adds at most this to that latency (plus a job the pool
// has seen to be quick, kSlowJob in core/job_clock.h), and costs one GIL round trip per slice, and only in a wait
// that lasts longer than one: a batch that arrives sooner is never interrupted.
constexpr double kSignalPoll = 0.02;

// The action arrays of a call (kept alive until the core has copied their rows) and their data
// pointers, which the core reads with the GIL released.
struct ActionBuffers {
  std::vector<py::array> arrays;
  std::vector<const std::byte*> pointers;
  bool lent = false;  // to a call in progress (PyPool's own buffers)
};

// The buffers one call fills. A pool lends its own buffers to one call at a time, so that a step
// allocates nothing; a call that finds them lent (another Python thread is inside a call on this
// pool, or Python code run by this call, such as an array's __array__, called into it) fills
// buffers of its own. Lending and giving back happen with the GIL held, so a plain flag is enough.
class CallActions {
 public:
  explicit CallActions(ActionBuffers* pool) {
    if (pool->lent) {
      buffers_ = &own_.emplace();
    } else {
      pool->lent = true;
      lent_ = buffers_ = pool;
      pool->arrays.clear();  // the previous call's arrays, kept until now as a plain member would
      pool->pointers.clear();
    }
  }
  ~CallActions() { GiveBack(); }
  CallActions(const CallActions&) = delete;
  CallActions& operator=(const CallActions&) = delete;

  void Add(py::array array) {
    buffers_->pointers.push_back(static_cast<const std::byte*>(array.data()));
    buffers_->arrays.push_back(std::move(array));
  }
  const std::vector<const std::byte*>& pointers() const { return buffers_->pointers; }
  // Once the core has copied the actions (or failed); with the GIL held.
  void GiveBack() {
    if (lent_ != nullptr) lent_->lent = false;
    lent_ = nullptr;
  }

 private:
  ActionBuffers* buffers_ = nullptr;
  ActionBuffers* lent_ = nullptr;
  std::optional<ActionBuffers> own_;
};

char DtypeKind(Dtype d) {
  if (d == Dtype::kBool) return 'b';
  if (DtypeIsFloat(d)) return 'f';
  return d == Dtype::kUInt8 ? 'u' : 'i';
}

// Owns the NumPy views of one pool: the dtype objects are made once, not per recv. Every call on
// a closed pool raises (the core's check) before converting anything. Several Python threads may
// call at once (each releases the GIL in the core): the members are read-only after construction
// but for action_buffers_ (lent to one call at a time, see CallActions), and whatever else one
// call needs (ids, seeds) is its own.
class PyPool {
 public:
  PyPool(const std::string& task_id, const py::dict& overrides, PoolOptions options,
         const std::optional<py::list>& env_configs) {
    auto task = FindTask(task_id);
    const auto common = ToOverrides(overrides);
    EnvSpec spec = MakeSpec(*task, common);
    if (env_configs) {
      // Each env's config: the pool's overrides, then its own on top.
      for (py::handle env_config : *env_configs) {
        auto merged = common;
        for (auto& [key, value] : ToOverrides(env_config.cast<py::dict>())) merged[key] = std::move(value);
        options.env_specs.push_back(MakeSpec(*task, merged));
      }
    }
    Init(std::move(task), std::move(spec), std::move(options));
  }

  // A pool of Python envs run by worker processes (core/process_env.h): the spec comes from their
  // spaces (a dict of SpecToDict's form), the envs forward every call through `channel`.
  static std::unique_ptr<PyPool> ForProcesses(const py::dict& spec, std::shared_ptr<ProcessChannel> channel,
                                              PoolOptions options) {
    EnvSpec env_spec = SpecFromDict(spec);
    auto task = MakeProcessTask(env_spec.task_id, std::move(channel));
    auto pool = std::unique_ptr<PyPool>(new PyPool());
    options.thread_affinity_offset = -1;
    pool->Init(std::move(task), std::move(env_spec), std::move(options));
    return pool;
  }

 private:
  PyPool() = default;
  void Init(std::shared_ptr<const TaskEntry> task, EnvSpec spec, PoolOptions options) {
    pool_ = std::make_shared<Pool>(task, std::move(spec), std::move(options));
    for (const BlockField& f : pool_->layout().fields()) {
      if (f.shape.size() > kMaxDims) throw py::value_error("field '" + f.name + "' has too many dimensions");
      dtypes_.push_back(py::dtype(DtypeName(f.dtype)));
      names_.push_back(f.name);
    }
    for (const FieldSpec& f : pool_->spec().action) action_dtypes_.push_back(py::dtype(DtypeName(f.dtype)));
    const int num_envs = pool_->options().num_envs;
    all_ids_.resize(static_cast<std::size_t>(num_envs));
    for (int i = 0; i < num_envs; ++i) all_ids_[static_cast<std::size_t>(i)] = i;
  }

 public:
  ~PyPool() {
    if (handle_id_ != 0) PoolHandles::Global().Remove(handle_id_);
  }
  PyPool(const PyPool&) = delete;
  PyPool& operator=(const PyPool&) = delete;

  py::dict spec() const { return SpecToDict(pool_->spec()); }
  py::list field_names() const { return py::cast(names_); }
  // (name, dtype, row shape, per_player) of each output field, in field_names' order: the arrays
  // recv returns, for callers that must know them before any batch arrives (xla()).
  py::list field_layout() const {
    py::list out;
    for (const BlockField& f : pool_->layout().fields())
      out.append(py::make_tuple(f.name, DtypeName(f.dtype), py::tuple(py::cast(f.shape)), f.per_player));
    return out;
  }
  // The pool's handle for XLA custom calls (xla_ffi.cc): the bytes of its number in PoolHandles,
  // the same number on every call; it finds nothing once this object is gone.
  py::bytes xla_handle() {
    pool_->CheckOpen();
    if (handle_id_ == 0) handle_id_ = PoolHandles::Global().Add(pool_);
    char bytes[sizeof handle_id_];
    std::memcpy(bytes, &handle_id_, sizeof handle_id_);
    return py::bytes(bytes, sizeof bytes);
  }
  int num_envs() const { return pool_->options().num_envs; }
  int batch_size() const { return pool_->batch_size(); }
  int num_threads() const { return pool_->options().num_threads; }
  bool closed() const { return pool_->closed(); }
  int outstanding() const { return pool_->outstanding(); }
  int blocks_allocated() const { return pool_->blocks_allocated(); }
  int64_t resets_paused() const { return pool_->resets_paused(); }

  void CheckOpen() const { pool_->CheckOpen(); }

  void Send(const py::object& actions, const py::object& env_ids) {
    pool_->CheckOpen();
    EnvIdList ids = EnvIds(env_ids);
    CallActions call(&action_buffers_);
    PrepareActions(actions, ids.size, &call);
    py::gil_scoped_release release;
    pool_->Send(ids.data, ids.size, call.pointers());
  }

  void Reset(const py::object& env_ids, const py::object& seeds) { ResetImpl(env_ids, seeds, false); }

  py::tuple Recv(std::optional<double> timeout) { return Wrap(Receive(timeout)); }

  // send + recv in one call, with one GIL release: the calling thread steps envs while it waits.
  py::tuple Step(const py::object& actions, const py::object& env_ids) {
    pool_->CheckOpen();
    EnvIdList ids = EnvIds(env_ids);
    CallActions call(&action_buffers_);
    PrepareActions(actions, ids.size, &call);
    const bool main = OnMainThread();
    OutputBlock* block;
    int rows = -1;
    {
      py::gil_scoped_release release;
      block = pool_->Step(ids.data, ids.size, call.pointers(), main ? kSignalPoll : -1.0, &rows);
    }
    call.GiveBack();  // copied by the core; a signal handler below may step this pool again
    if (block == nullptr) {
      // Sent, not yet received: from here on a Ctrl-C leaves the batch in flight, for recv().
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      block = Receive(std::nullopt);
    }
    return Wrap(block, rows);
  }
  py::tuple ResetRecv(const py::object& env_ids, const py::object& seeds) {
    ResetImpl(env_ids, seeds, true);
    return Recv(std::nullopt);
  }

  // Waits for the next batch with the GIL released. On the main thread the wait returns every
  // kSignalPoll to run signal handlers with the GIL: Ctrl-C raises KeyboardInterrupt here, with
  // the batch still in flight. `timeout` bounds the whole wait, slices included.
  OutputBlock* Receive(std::optional<double> timeout) {
    if (!OnMainThread()) {
      py::gil_scoped_release release;
      return pool_->Recv(timeout.value_or(-1.0));
    }
    using Clock = std::chrono::steady_clock;
    const std::optional<Clock::time_point> deadline =
        timeout ? std::optional<Clock::time_point>(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                                      std::chrono::duration<double>(*timeout)))
                : std::nullopt;
    for (;;) {
      OutputBlock* block;
      {
        py::gil_scoped_release release;
        double left = -1.0;
        if (deadline) left = std::max(0.0, std::chrono::duration<double>(*deadline - Clock::now()).count());
        block = pool_->Recv(left, kSignalPoll);
      }
      if (block != nullptr) return block;
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
  }

  py::tuple ResetNow(const py::object& env_ids, const py::object& seeds) {
    pool_->CheckOpen();
    EnvIdList ids = EnvIds(env_ids);
    const std::vector<uint64_t> seed_values = Seeds(seeds);
    OutputBlock* block;
    {
      py::gil_scoped_release release;
      block = pool_->ResetNow(ids.data, ids.size, seed_values);
    }
    return Wrap(block, ids.size);
  }

  // (n, height, width, 3) uint8: the current frame of each env in env_ids (all if None).
  py::array Render(const py::object& env_ids) {
    pool_->CheckOpen();
    const std::vector<int>& shape = pool_->RenderShape();
    EnvIdList ids = EnvIds(env_ids);
    std::vector<py::ssize_t> dims{ids.size};
    for (int d : shape) dims.push_back(d);
    py::array_t<uint8_t> frames(dims);
    uint8_t* out = frames.mutable_data();
    {
      py::gil_scoped_release release;
      pool_->Render(ids.data, ids.size, out);
    }
    return frames;
  }

  // One dict per env in env_ids (all if None): its Env::DebugState().
  py::list DebugStates(const py::object& env_ids) {
    pool_->CheckOpen();
    EnvIdList ids = EnvIds(env_ids);
    std::vector<Config> states;
    {
      py::gil_scoped_release release;
      states = pool_->DebugStates(ids.data, ids.size);
    }
    py::list out;
    for (const Config& state : states) out.append(ConfigToDict(state));
    return out;
  }

  void Close() {
    py::gil_scoped_release release;
    pool_->Close();
  }

 private:
  // Env ids as int32, the core's type; None means every env. Which ids are valid is the core's to
  // say; a value that does not fit in int32 is refused here, never narrowed into another id.
  struct EnvIdList {
    const int32_t* data = nullptr;
    int size = 0;
    py::object keep_alive;
    std::vector<int32_t> storage;
  };
  EnvIdList EnvIds(const py::object& env_ids) {
    EnvIdList out;
    if (env_ids.is_none()) {
      out.data = all_ids_.data();
      out.size = static_cast<int>(all_ids_.size());
      return out;
    }
    py::array arr = py::array::ensure(env_ids);
    if (!arr) throw py::type_error("env_id must be an array of ints");
    if (arr.ndim() != 1) {
      const std::string got = arr.ndim() == 0 ? "a scalar " + std::string(py::repr(env_ids))
                                              : "an array of shape " + std::string(py::str(arr.attr("shape")));
      throw py::value_error("env_id must be a 1-d array of env ids, got " + got);
    }
    const char kind = arr.dtype().kind();
    if (arr.size() > 0 && kind != 'i' && kind != 'u') {
      throw py::type_error("env_id must be integers, got dtype " + std::string(py::str(arr.dtype())));
    }
    if (arr.dtype().is(py::dtype::of<int32_t>()) && (arr.flags() & py::array::c_style)) {
      out.data = static_cast<const int32_t*>(arr.data());
      out.size = static_cast<int>(arr.size());
      out.keep_alive = arr;
      return out;
    }
    out.storage.resize(static_cast<std::size_t>(arr.size()));
    if (kind == 'u') {
      Narrow(py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(arr), &out.storage);
    } else {
      Narrow(py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(arr), &out.storage);
    }
    out.data = out.storage.data();
    out.size = static_cast<int>(out.storage.size());
    return out;
  }

  template <typename Wide>
  static void Narrow(const py::array_t<Wide, py::array::c_style | py::array::forcecast>& wide,
                     std::vector<int32_t>* out) {
    for (py::ssize_t i = 0; i < wide.size(); ++i) {
      const Wide v = wide.data()[i];
      if (!std::in_range<int32_t>(v)) {
        throw py::value_error("env id " + std::to_string(v) + " is out of range: env ids are int32");
      }
      (*out)[static_cast<std::size_t>(i)] = static_cast<int32_t>(v);
    }
  }

  py::array ActionArray(const py::handle& obj, std::size_t f, int n) {
    const FieldSpec& field = pool_->spec().action[f];
    py::array arr = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj) : py::array::ensure(obj);
    if (!arr) throw py::type_error("action '" + field.name + "' must be an array");
    const py::dtype& want = action_dtypes_[f];
    if (!arr.dtype().is(want)) {
      const char have_kind = arr.dtype().kind();
      const char want_kind = DtypeKind(field.dtype);
      const bool ok = (want_kind == 'f' && (have_kind == 'f' || have_kind == 'i' || have_kind == 'u')) ||
                      (want_kind != 'f' && want_kind != 'b' && (have_kind == 'i' || have_kind == 'u')) ||
                      (want_kind == 'b' && have_kind == 'b');
      if (!ok) {
        throw py::type_error("action '" + field.name + "' must have dtype " + DtypeName(field.dtype) +
                             " (or a castable " + (want_kind == 'f' ? "number" : "integer") + " type), got " +
                             std::string(py::str(arr.dtype())));
      }
      arr = arr.attr("astype")(want);
    }
    std::vector<py::ssize_t> expect{n};
    if (field.per_player) expect.push_back(pool_->spec().max_num_players);
    for (int d : field.shape) expect.push_back(d);
    if (field.per_player && expect[1] == 1 && arr.ndim() + 1 == static_cast<py::ssize_t>(expect.size())) {
      // One player per env: (n, *shape) is accepted for (n, 1, *shape), as the single-env space says.
      bool rest = arr.ndim() >= 1 && arr.shape(0) == n;
      for (std::size_t d = 2; rest && d < expect.size(); ++d)
        rest = arr.shape(static_cast<py::ssize_t>(d - 1)) == expect[d];
      if (rest) arr = arr.attr("reshape")(py::tuple(py::cast(expect)));
    }
    bool match = arr.ndim() == static_cast<py::ssize_t>(expect.size());
    for (std::size_t d = 0; match && d < expect.size(); ++d)
      match = arr.shape(static_cast<py::ssize_t>(d)) == expect[d];
    if (!match) {
      // Python's tuple notation: (3,), (3, 4).
      auto tuple_str = [](const std::vector<py::ssize_t>& dims) {
        std::string out = "(";
        for (std::size_t d = 0; d < dims.size(); ++d) out += (d ? ", " : "") + std::to_string(dims[d]);
        return out + (dims.size() == 1 ? ",)" : ")");
      };
      std::vector<py::ssize_t> got(arr.shape(), arr.shape() + arr.ndim());
      throw py::value_error("action '" + field.name + "' must have shape " + tuple_str(expect) + " for " +
                            std::to_string(n) + " env(s), got " + tuple_str(got));
    }
    return py::array::ensure(arr, py::array::c_style);
  }

  // The arrays of `actions`, one per action field, into this call's `call`.
  void PrepareActions(const py::object& actions, int n, CallActions* call) {
    const auto& fields = pool_->spec().action;
    if (fields.size() == 1 && !py::isinstance<py::dict>(actions)) {
      call->Add(ActionArray(actions, 0, n));
    } else {
      if (!py::isinstance<py::dict>(actions)) {
        throw py::type_error("this env takes a dict of actions with keys " + ActionKeys());
      }
      py::dict d = actions;
      if (static_cast<std::size_t>(py::len(d)) != fields.size()) {
        throw py::value_error("expected action keys " + ActionKeys());
      }
      for (std::size_t f = 0; f < fields.size(); ++f) {
        const std::string key = ActionKey(fields[f].name);
        if (!d.contains(key)) throw py::value_error("missing action key '" + key + "'; expected " + ActionKeys());
        call->Add(ActionArray(d[py::str(key)], f, n));
      }
    }
  }

  void ResetImpl(const py::object& env_ids, const py::object& seeds, bool caller_waits) {
    pool_->CheckOpen();
    EnvIdList ids = EnvIds(env_ids);
    const std::vector<uint64_t> seed_values = Seeds(seeds);
    py::gil_scoped_release release;
    pool_->Reset(ids.data, ids.size, seed_values, caller_waits);
  }

  // None: keep each env's stream; else one seed per env of the pool (the core checks the count).
  static std::vector<uint64_t> Seeds(const py::object& seeds) {
    if (seeds.is_none()) return {};
    try {
      return seeds.cast<std::vector<uint64_t>>();
    } catch (const py::cast_error&) {
      throw py::type_error("seeds must be non-negative ints");
    }
  }

  static std::string ActionKey(const std::string& name) {
    const auto colon = name.find(':');
    return colon == std::string::npos ? name : name.substr(colon + 1);
  }
  std::string ActionKeys() const {
    std::string keys;
    for (const auto& f : pool_->spec().action) keys += (keys.empty() ? "'" : ", '") + ActionKey(f.name) + "'";
    return "[" + keys + "]";
  }

  // (arrays in field order, errors or None). The arrays view the block; the capsule gives it back.
  // NumPy's C API directly: this runs on every step, and pybind11's generic constructor allocates.
  py::tuple Wrap(OutputBlock* block, int rows = -1) {
    py::capsule owner(block, [](void* p) { BlockFreeList::Release(static_cast<OutputBlock*>(p)); });
    const auto& fields = pool_->layout().fields();
    const int player_rows = block->player_rows.load(std::memory_order_acquire);
    auto& api = py::detail::npy_api::get();
    py::tuple arrays(fields.size());
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const BlockField& f = fields[i];
      Py_intptr_t dims[kMaxDims + 1];
      dims[0] = f.per_player ? player_rows : (rows >= 0 ? rows : pool_->batch_size());
      for (std::size_t d = 0; d < f.shape.size(); ++d) dims[d + 1] = f.shape[d];
      PyObject* descr = dtypes_[i].inc_ref().ptr();  // stolen by PyArray_NewFromDescr
      PyObject* arr = api.PyArray_NewFromDescr_(
          api.PyArray_Type_, descr, static_cast<int>(f.shape.size() + 1), dims, nullptr,
          block->field(static_cast<int>(i)),
          py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | py::detail::npy_api::NPY_ARRAY_WRITEABLE_, nullptr);
      if (arr == nullptr) throw py::error_already_set();
      if (api.PyArray_SetBaseObject_(arr, owner.inc_ref().ptr()) != 0) {
        Py_DECREF(arr);
        throw py::error_already_set();
      }
      PyTuple_SET_ITEM(arrays.ptr(), static_cast<py::ssize_t>(i), arr);
    }
    py::object errors = py::none();
    if (!block->errors().empty()) errors = py::cast(block->errors());
    return py::make_tuple(arrays, errors);
  }

  static constexpr std::size_t kMaxDims = 31;  // NumPy's limit is 32 dimensions, one is the batch

  // Shared with the XLA custom calls in progress (PoolHandles::Find), which may outlive this object.
  std::shared_ptr<Pool> pool_;
  uint64_t handle_id_ = 0;  // 0: no XLA handle yet
  std::vector<py::dtype> dtypes_;
  std::vector<std::string> names_;
  std::vector<py::dtype> action_dtypes_;
  std::vector<int32_t> all_ids_;
  ActionBuffers action_buffers_;
};

// resize_frames(frames, height, width): each (h, w, 3) uint8 frame of an (n, h, w, 3) batch shrunk
// to (height, width) as cv::resize(frame, (width, height), interpolation=INTER_AREA) does, bit for
// bit: OpenCV's integer-factor shortcut where both factors are integers, its general path
// (atari::AreaResizer) otherwise. render()'s render_width/render_height (base.py). Only shrinks:
// OpenCV's INTER_AREA enlarges by another (bilinear) method.
py::array ResizeFrames(const py::array_t<uint8_t, py::array::c_style | py::array::forcecast>& frames, int height,
                       int width) {
  if (frames.ndim() != 4 || frames.shape(3) != 3) throw py::value_error("frames must be (n, height, width, 3) uint8");
  const int n = static_cast<int>(frames.shape(0));
  const int h = static_cast<int>(frames.shape(1)), w = static_cast<int>(frames.shape(2));
  if (height < 1 || height > h || width < 1 || width > w) {
    throw py::value_error("height x width must be within 1 x 1 and the frames' " + std::to_string(h) + " x " +
                          std::to_string(w) + ", got " + std::to_string(height) + " x " + std::to_string(width));
  }
  py::array_t<uint8_t> out({n, height, width, 3});
  const uint8_t* src = frames.data();
  uint8_t* dst = out.mutable_data();
  const std::size_t src_frame = static_cast<std::size_t>(h) * w * 3,
                    dst_frame = static_cast<std::size_t>(height) * width * 3;
  py::gil_scoped_release release;
  if (height == h && width == w) {
    std::memcpy(dst, src, src_frame * n);
  } else if (h % height == 0 && w % width == 0) {
    for (int i = 0; i < n; ++i) {
      atari::IntegerAreaResize(src + i * src_frame, w, height, width, 3, h / height, w / width, dst + i * dst_frame);
    }
  } else {
    atari::AreaResizer resizer(h, w, height, width, 3);
    for (int i = 0; i < n; ++i) resizer.Resize(src + i * src_frame, dst + i * dst_frame);
  }
  return std::move(out);
}

}  // namespace

// process_bindings.cc: the Python-env backend's channel.
void RegisterProcessChannel(py::module_& m);
// dataplane.cc: the Ray layer's frame I/O (integrations/ray/wire.py).
void RegisterDataPlane(py::module_& m);
#ifdef PP_WITH_XLA
// xla_ffi.cc: _xla_targets(), the XLA custom-call handlers of xla().
void RegisterXlaTargets(py::module_& m);
#endif

}  // namespace pp

PYBIND11_MODULE(_native, m) {
  using namespace pp;
  m.doc() = "parallel_pool's native engine (see parallel_pool for the Python API)";
  main_thread_id = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();

  static py::exception<ClosedError> closed_error(m, "PoolClosedError", PyExc_RuntimeError);
  static py::exception<ForkedError> forked_error(m, "PoolForkedError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const TimeoutError& e) {
      PyErr_SetString(PyExc_TimeoutError, e.what());
    } catch (const ClosedError& e) {
      PyErr_SetString(closed_error.ptr(), e.what());
    } catch (const ForkedError& e) {
      PyErr_SetString(forked_error.ptr(), e.what());
    }
  });

  m.def("task_ids", [] { return Registry::Global().TaskIds(); });
  // Env libraries (core/family.h): every family, and those built outside this repository.
  m.def("library_resources", [](const std::string& path) {
    py::list out;
    for (const ResourceRequest& r : LibraryResources(path)) out.append(py::make_tuple(r.name, r.package, r.path));
    return out;
  });
  m.def(
      "load_library",
      [](const std::string& path, const std::map<std::string, std::string>& resources) {
        return LoadEnvLibrary(Registry::Global(), path, resources);
      },
      py::arg("path"), py::arg("resources") = std::map<std::string, std::string>{});
  m.def("task_info", [](const std::string& task_id) {
    auto task = FindTask(task_id);
    py::dict d;
    d["task_id"] = task->task_id;
    d["family"] = task->family;
    d["defaults"] = ConfigToDict(task->defaults);
    d["reward_threshold"] = task->reward_threshold ? py::object(py::float_(*task->reward_threshold)) : py::none();
    return d;
  });
  m.def("specs_built", [] { return SpecsBuilt().load(std::memory_order_relaxed); });
  m.def("make_spec", [](const std::string& task_id, const py::dict& overrides) {
    auto task = FindTask(task_id);
    return SpecToDict(MakeSpec(*task, ToOverrides(overrides)));
  });

  // core/pool.h's PoolOptions, keyword-only: what make() resolved; the Pool checks the ranges.
  py::class_<PoolOptions>(m, "PoolOptions")
      .def(py::init([](int num_envs, std::vector<uint64_t> seeds, std::optional<int> batch_size, int num_threads,
                       int thread_affinity_offset, const std::string& autoreset_mode, bool episode_stats) {
             PoolOptions o;
             o.num_envs = num_envs;
             o.batch_size = batch_size;
             o.num_threads = num_threads;
             o.thread_affinity_offset = thread_affinity_offset;
             o.seeds = std::move(seeds);
             o.autoreset_mode = ParseAutoresetMode(autoreset_mode);
             o.episode_stats = episode_stats;
             return o;
           }),
           py::kw_only(), py::arg("num_envs"), py::arg("seeds"), py::arg("batch_size") = py::none(),
           py::arg("num_threads") = 0, py::arg("thread_affinity_offset") = -1, py::arg("autoreset_mode") = "next_step",
           py::arg("episode_stats") = false)
      .def_readonly("num_envs", &PoolOptions::num_envs)
      .def_readonly("batch_size", &PoolOptions::batch_size)
      .def_readonly("num_threads", &PoolOptions::num_threads)
      .def_readonly("thread_affinity_offset", &PoolOptions::thread_affinity_offset)
      .def_readonly("seeds", &PoolOptions::seeds)
      .def_readonly("episode_stats", &PoolOptions::episode_stats);

  RegisterProcessChannel(m);  // before Pool: Pool.for_processes takes a ProcessChannel
  py::class_<PyPool>(m, "Pool")
      .def(py::init<const std::string&, const py::dict&, PoolOptions, const std::optional<py::list>&>(),
           py::arg("task_id"), py::arg("config"), py::arg("options"), py::arg("env_configs") = py::none())
      .def_property_readonly("spec", &PyPool::spec)
      .def_property_readonly("field_names", &PyPool::field_names)
      .def_property_readonly("field_layout", &PyPool::field_layout)
      .def("xla_handle", &PyPool::xla_handle)
      .def_property_readonly("num_envs", &PyPool::num_envs)
      .def_property_readonly("batch_size", &PyPool::batch_size)
      .def_property_readonly("num_threads", &PyPool::num_threads)
      .def_property_readonly("closed", &PyPool::closed)
      .def_property_readonly("outstanding", &PyPool::outstanding)
      .def_property_readonly("blocks_allocated", &PyPool::blocks_allocated)
      .def_property_readonly("_resets_paused", &PyPool::resets_paused)
      .def("send", &PyPool::Send, py::arg("actions"), py::arg("env_ids") = py::none())
      .def("reset", &PyPool::Reset, py::arg("env_ids") = py::none(), py::arg("seeds") = py::none())
      .def("recv", &PyPool::Recv, py::arg("timeout") = py::none())
      .def("step", &PyPool::Step, py::arg("actions"), py::arg("env_ids") = py::none())
      .def("reset_recv", &PyPool::ResetRecv, py::arg("env_ids") = py::none(), py::arg("seeds") = py::none())
      .def("reset_now", &PyPool::ResetNow, py::arg("env_ids") = py::none(), py::arg("seeds") = py::none())
      .def("render", &PyPool::Render, py::arg("env_ids") = py::none())
      .def("debug_states", &PyPool::DebugStates, py::arg("env_ids") = py::none())
      .def_static("for_processes", &PyPool::ForProcesses, py::arg("spec"), py::arg("channel"), py::arg("options"))
      .def("check_open", &PyPool::CheckOpen)
      .def("close", &PyPool::Close);

  m.def("resize_frames", &ResizeFrames, py::arg("frames"), py::arg("height"), py::arg("width"));
  RegisterDataPlane(m);
#ifdef PP_WITH_XLA
  RegisterXlaTargets(m);
#endif
}
