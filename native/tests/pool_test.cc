// Tests of Pool driven directly with the tutorial env (GuessingGame-v0): sync order, async batches,
// input validation, timeouts, env exceptions, close, autoreset modes, episode stats, determinism
// across thread counts, and per-player rows.
#include "core/pool.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/env_driver.h"
#include "envs/tutorial/guessing_game.h"
#include "envs/tutorial/register.h"
#include "tests/test_util.h"

namespace {

using pp::AutoresetMode;
using pp::Pool;
using Config = std::map<std::string, pp::ConfigValue>;
using Clock = std::chrono::steady_clock;

constexpr int kNumActions = 4;  // the tutorial env's default

std::shared_ptr<const pp::TaskEntry> Task() {
  static const std::shared_ptr<const pp::TaskEntry> task = [] {
    pp::RegisterTutorial(pp::Registry::Global());
    return pp::Registry::Global().Find("GuessingGame-v0");
  }();
  if (task == nullptr) throw std::runtime_error("GuessingGame-v0 is not registered");
  return task;
}

pp::PoolOptions Options(int num_envs, std::optional<int> batch_size, int num_threads, uint64_t first_seed = 1000) {
  pp::PoolOptions o;
  o.num_envs = num_envs;
  o.batch_size = batch_size;
  o.num_threads = num_threads;
  for (int i = 0; i < num_envs; ++i) o.seeds.push_back(first_seed + static_cast<uint64_t>(i));
  return o;
}

std::unique_ptr<Pool> MakePool(const Config& config, const pp::PoolOptions& options) {
  return std::make_unique<Pool>(Task(), pp::MakeSpec(*Task(), config), options);
}

std::vector<int32_t> Iota(int n) {
  std::vector<int32_t> ids(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = i;
  return ids;
}

// The dtype of a field read as T.
template <typename T>
constexpr pp::Dtype DtypeOf() {
  if constexpr (std::is_same_v<T, bool>) return pp::Dtype::kBool;
  if constexpr (std::is_same_v<T, int32_t>) return pp::Dtype::kInt32;
  if constexpr (std::is_same_v<T, int64_t>) return pp::Dtype::kInt64;
  if constexpr (std::is_same_v<T, float>) return pp::Dtype::kFloat32;
  if constexpr (std::is_same_v<T, double>) return pp::Dtype::kFloat64;
}

// A block from Recv/ResetNow, its fields looked up by name; gives the block back when destroyed.
class View {
 public:
  View(const Pool& pool, pp::OutputBlock* block, int rows)
      : layout_(&pool.layout()), max_players_(pool.spec().max_num_players), block_(block), rows_(rows) {}
  ~View() {
    if (block_ != nullptr) pp::BlockFreeList::Release(block_);
  }
  View(View&& o) noexcept
      : layout_(o.layout_), max_players_(o.max_players_), block_(std::exchange(o.block_, nullptr)), rows_(o.rows_) {}
  View(const View&) = delete;
  View& operator=(const View&) = delete;
  View& operator=(View&&) = delete;

  bool Has(const std::string& name) const { return Index(name) >= 0; }

  // Throws (failing the test with the name) when the block has no such field or another dtype.
  template <typename T>
  const T* Get(const std::string& name) const {
    const int i = Index(name);
    if (i < 0) throw std::runtime_error("block has no field '" + name + "'");
    if (layout_->fields()[static_cast<std::size_t>(i)].dtype != DtypeOf<T>()) {
      throw std::runtime_error("field '" + name + "' has another dtype");
    }
    return reinterpret_cast<const T*>(block_->field(i));
  }

  int rows() const { return rows_; }
  int player_rows() const { return block_->player_rows.load(); }
  int max_players() const { return max_players_; }
  const std::vector<std::pair<int, std::string>>& errors() const { return block_->errors(); }
  bool HasErrorFor(int env_id) const {
    for (const auto& e : errors()) {
      if (e.first == env_id) return true;
    }
    return false;
  }

  int32_t env_id(int r) const { return Get<int32_t>("info:env_id")[r]; }
  int32_t elapsed(int r) const { return Get<int32_t>("info:elapsed_step")[r]; }
  double reward(int r) const { return Get<double>("reward")[r]; }
  bool terminated(int r) const { return Get<bool>("terminated")[r]; }
  bool truncated(int r) const { return Get<bool>("truncated")[r]; }
  int32_t num_players(int r) const { return Get<int32_t>("info:num_players")[r]; }
  std::vector<int32_t> env_ids() const {
    const int32_t* ids = Get<int32_t>("info:env_id");
    return std::vector<int32_t>(ids, ids + rows_);
  }

  // Per-player rows of each row's env, in player order. Single-player envs keep theirs at the row.
  std::vector<std::vector<int>> PlayerRows() const {
    std::vector<std::vector<int>> out(static_cast<std::size_t>(rows_));
    if (max_players_ == 1) {
      for (int r = 0; r < rows_; ++r) out[static_cast<std::size_t>(r)] = {r};
      return out;
    }
    const int32_t* owner = Get<int32_t>("info:players.env_id");
    for (int p = 0; p < player_rows(); ++p) {
      for (int r = 0; r < rows_; ++r) {
        if (env_id(r) == owner[p]) out[static_cast<std::size_t>(r)].push_back(p);
      }
    }
    return out;
  }

 private:
  int Index(const std::string& name) const {
    const auto& f = layout_->fields();
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (f[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

  const pp::BlockLayout* layout_;  // owned by the free list, which the block keeps alive
  int max_players_;
  pp::OutputBlock* block_;
  int rows_;
};

View Recv(Pool& pool, double timeout_s = 20.0) { return View(pool, pool.Recv(timeout_s), pool.batch_size()); }

// `seeds`: none, or one per env of the pool.
View ResetNow(Pool& pool, const std::vector<int32_t>& ids, const std::vector<uint64_t>& seeds = {}) {
  return View(pool, pool.ResetNow(ids.data(), static_cast<int>(ids.size()), seeds), static_cast<int>(ids.size()));
}

void Reset(Pool& pool, const std::vector<int32_t>& ids, const std::vector<uint64_t>& seeds = {}) {
  pool.Reset(ids.data(), static_cast<int>(ids.size()), seeds);
}

// Actions: max_num_players guesses per env (every row is range-checked, so unused ones too).
void Send(Pool& pool, const std::vector<int32_t>& ids, const std::vector<int64_t>& guesses) {
  const std::vector<const std::byte*> actions = {reinterpret_cast<const std::byte*>(guesses.data())};
  pool.Send(ids.data(), static_cast<int>(ids.size()), actions);
}

std::vector<int64_t> Guesses(const Pool& pool, std::size_t num_envs, std::mt19937& rng) {
  std::vector<int64_t> g(num_envs * static_cast<std::size_t>(pool.spec().max_num_players));
  for (auto& x : g) x = static_cast<int64_t>(rng() % kNumActions);
  return g;
}

void SendRandom(Pool& pool, const std::vector<int32_t>& ids, std::mt19937& rng) {
  Send(pool, ids, Guesses(pool, ids.size(), rng));
}

// The invariants of one block's rows, whatever the mode: per-player rows belong to the batch's
// envs, each env has exactly num_players of them (contiguous, in player order), the player obs
// and rewards agree with the row's reward, and a reset row looks like a reset. Stops at the first
// broken invariant (one message per bad block) and says whether all held.
bool CheckRows(const View& v) {
  const int max_players = v.max_players();
  std::set<int> ids;
  int total_players = 0;
  for (int r = 0; r < v.rows(); ++r) {
    ids.insert(v.env_id(r));
    if (!v.HasErrorFor(v.env_id(r))) total_players += v.num_players(r);
  }
  if (!CHECK_EQ(ids.size(), static_cast<std::size_t>(v.rows()))) return false;  // distinct env ids
  if (max_players > 1) {
    // Rows claimed must fit the per-player arrays, and Python sizes them by player_rows.
    if (!CHECK_LE(v.player_rows(), v.rows() * max_players)) return false;
    if (!CHECK_EQ(v.player_rows(), total_players)) return false;
    const int32_t* owner = v.Get<int32_t>("info:players.env_id");
    for (int p = 0; p < v.player_rows(); ++p) {
      if (!CHECK(ids.count(owner[p]) == 1)) {
        std::fprintf(stderr, "  player row %d owned by env %d, not in this batch\n", p, owner[p]);
        return false;
      }
    }
  }
  const auto player_rows = v.PlayerRows();
  // same_step: a row that ended an episode has the step's reward but the new episode's state.
  const bool* final_mask = v.Has("info:_final") ? v.Get<bool>("info:_final") : nullptr;
  const float* obs = v.Get<float>("obs");
  const float* player_reward = v.Get<float>("info:players.reward");
  for (int r = 0; r < v.rows(); ++r) {
    if (v.HasErrorFor(v.env_id(r))) continue;  // its state fields hold zeros (AFailedEnvsRowHoldsZeros)
    const int n = v.num_players(r);
    const auto& rows = player_rows[static_cast<std::size_t>(r)];
    if (!CHECK(n >= 1 && n <= max_players) || !CHECK_EQ(static_cast<int>(rows.size()), n)) {
      std::fprintf(stderr, "  env %d: %zu player rows, num_players %d\n", v.env_id(r), rows.size(), n);
      return false;
    }
    const bool reset_row = v.elapsed(r) == 0;
    double sum = 0.0;
    for (int p = 0; p < n; ++p) {
      const int pr = rows[static_cast<std::size_t>(p)];
      bool ok = CHECK_EQ(pr, rows[0] + p);                      // contiguous
      ok = ok && CHECK_EQ(obs[2 * pr], static_cast<float>(p));  // the player's index, in order
      const float secret = obs[2 * pr + 1];
      if (reset_row) {
        ok = ok && CHECK_EQ(secret, -1.0f) && CHECK_EQ(player_reward[pr], 0.0f);
      } else {
        ok = ok && CHECK(secret >= 0.0f && secret < kNumActions);
        ok = ok && CHECK_EQ(secret, obs[2 * rows[0] + 1]);  // one secret per env
        ok = ok && CHECK(player_reward[pr] == 0.0f || player_reward[pr] == 1.0f);
      }
      if (!ok) {
        std::fprintf(stderr, "  env %d, player %d (row %d)\n", v.env_id(r), p, pr);
        return false;
      }
      sum += player_reward[pr];
    }
    const bool replaced = final_mask != nullptr && final_mask[r];
    if (!replaced && !CHECK_EQ(sum, v.reward(r))) return false;
    if (reset_row && !replaced && !(CHECK_EQ(v.reward(r), 0.0) && CHECK(!v.terminated(r) && !v.truncated(r)))) {
      return false;
    }
  }
  return true;
}

// ----------------------------------------------------------------------------------------------

// The whole message: these are the Python API's errors for its keyword arguments.
void CheckRefused(const pp::PoolOptions& options, const std::string& message) {
  try {
    MakePool({}, options);
    CHECK(!"the pool was made");
  } catch (const std::invalid_argument& e) {
    CHECK_EQ(std::string(e.what()), message);
  }
}

TEST(ConstructorAndSpecValidation) {
  const Config config;
  CheckRefused(Options(0, 0, 1), "num_envs must be >= 1, got 0");
  CheckRefused(Options(-3, std::nullopt, 1), "num_envs must be >= 1, got -3");
  CheckRefused(Options(4, 0, 1), "batch_size must be >= 1, got 0");
  CheckRefused(Options(4, -1, 1), "batch_size must be >= 1, got -1");
  CheckRefused(Options(4, 5, 1), "batch_size (5) must be <= num_envs (4)");
  CheckRefused(Options(4, 4, -1), "num_threads must be >= 0, got -1");
  pp::PoolOptions bad_affinity = Options(4, 4, 1);
  bad_affinity.thread_affinity_offset = -2;
  CheckRefused(bad_affinity, "thread_affinity_offset must be >= -1, got -2");
  pp::PoolOptions bad_seeds = Options(4, 4, 1);
  bad_seeds.seeds.pop_back();
  CHECK_THROWS_WITH(std::invalid_argument, MakePool(config, bad_seeds), "seed");
  CHECK_THROWS_WITH(std::invalid_argument, pp::MakeSpec(*Task(), {{"no_such_key", int64_t{1}}}), "no_such_key");
  CHECK_THROWS_WITH(std::invalid_argument, pp::MakeSpec(*Task(), {{"num_actions", std::string("x")}}), "num_actions");

  auto pool = MakePool(config, Options(3, std::nullopt, 0));  // batch_size none: num_envs; num_threads 0: auto
  CHECK_EQ(pool->batch_size(), 3);
  CHECK_EQ(pool->options().batch_size.value_or(-1), 3);
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CHECK_EQ(pool->num_threads(), std::min(hw, 3));
  CHECK(!pool->closed());
  CHECK_EQ(pool->outstanding(), 0);
}

// Per-env config (env_kwargs): one spec per env, each env built from its own; a spec whose fields
// differ from the pool's is refused, as is a count other than num_envs.
TEST(PerEnvSpecs) {
  pp::PoolOptions options = Options(2, 2, 1);
  options.env_specs = {pp::MakeSpec(*Task(), {{"num_actions", int64_t{4}}}),
                       pp::MakeSpec(*Task(), {{"num_actions", int64_t{4}}, {"episode_length", int64_t{9}}})};
  auto pool = MakePool({{"num_actions", int64_t{4}}}, options);
  CHECK_EQ(pool->spec().config.GetInt("episode_length"), Task()->defaults.GetInt("episode_length"));
  pp::PoolOptions wrong_count = Options(3, 3, 1);
  wrong_count.env_specs = options.env_specs;
  CHECK_THROWS_WITH(std::invalid_argument, MakePool({{"num_actions", int64_t{4}}}, wrong_count),
                    "env_kwargs needs one entry per env (3), got 2");
  pp::PoolOptions other_space = Options(2, 2, 1);
  other_space.env_specs = {options.env_specs[0], pp::MakeSpec(*Task(), {{"num_actions", int64_t{5}}})};
  CHECK_THROWS_WITH(std::invalid_argument, MakePool({{"num_actions", int64_t{4}}}, other_space),
                    "env_kwargs[1] changes the env's spaces");
}

// Sync mode: row i is the i-th env sent, however the envs' step times differ.
TEST(SyncRowsFollowSendOrder) {
  auto pool = MakePool({{"step_sleep_us", int64_t{300}}, {"episode_length", int64_t{1000}}}, Options(8, 8, 3));
  const std::vector<int32_t> first = {5, 2, 7}, second = {0, 3, 6, 1, 4};
  Reset(*pool, first);
  Reset(*pool, second);
  CHECK_EQ(pool->outstanding(), 8);
  {
    View v = Recv(*pool);
    CHECK(v.env_ids() == (std::vector<int32_t>{5, 2, 7, 0, 3, 6, 1, 4}));
    for (int r = 0; r < 8; ++r) CHECK_EQ(v.elapsed(r), 0);
    CheckRows(v);
  }
  CHECK_EQ(pool->outstanding(), 0);
  std::mt19937 rng(7);
  std::vector<int32_t> order = Iota(8);
  for (int step = 1; step <= 30; ++step) {
    std::shuffle(order.begin(), order.end(), rng);
    SendRandom(*pool, order, rng);
    View v = Recv(*pool);
    if (!CHECK(v.env_ids() == order)) return;
    for (int r = 0; r < 8; ++r) CHECK_EQ(v.elapsed(r), step);
    CHECK(v.errors().empty());
    CheckRows(v);
  }
}

// Async mode: each recv returns batch_size distinct envs that were in flight; every env's rows
// come back in its own step order; sends and receives balance per env.
TEST(AsyncBatchesOfEnvsInFlight) {
  constexpr int kEnvs = 16, kBatch = 4, kRecvs = 250;
  auto pool = MakePool({{"step_sleep_us", int64_t{500}}}, Options(kEnvs, kBatch, 4));
  std::mt19937 rng(3);
  std::vector<int> sent(kEnvs, 0), received(kEnvs, 0), last_elapsed(kEnvs, -1), episode_players(kEnvs, 0);
  std::vector<bool> last_done(kEnvs, false);
  Reset(*pool, Iota(kEnvs));
  for (int& s : sent) ++s;
  int allocated_after_warmup = 0;
  for (int k = 0; k < kRecvs + kEnvs / kBatch; ++k) {
    const bool draining = k >= kRecvs;
    View v = Recv(*pool);
    std::vector<int32_t> ids = v.env_ids();
    std::set<int32_t> distinct(ids.begin(), ids.end());
    CHECK_EQ(distinct.size(), static_cast<std::size_t>(kBatch));
    for (int r = 0; r < kBatch; ++r) {
      const int e = ids[static_cast<std::size_t>(r)];
      if (!CHECK(e >= 0 && e < kEnvs)) return;
      const auto ue = static_cast<std::size_t>(e);
      CHECK_EQ(sent[ue] - received[ue], 1);  // it was in flight
      ++received[ue];
      // next_step autoreset: after the 10th step (terminated) comes a reset row.
      const int expected = last_elapsed[ue] < 0 || last_done[ue] ? 0 : last_elapsed[ue] + 1;
      CHECK_EQ(v.elapsed(r), expected);
      CHECK_EQ(v.terminated(r), v.elapsed(r) == 10);
      CHECK(!v.truncated(r));
      if (v.elapsed(r) == 0) episode_players[ue] = v.num_players(r);
      CHECK_EQ(v.num_players(r), episode_players[ue]);  // fixed for the episode
      last_elapsed[ue] = v.elapsed(r);
      last_done[ue] = v.terminated(r);
    }
    CHECK(v.errors().empty());
    CheckRows(v);
    if (!draining) {
      SendRandom(*pool, ids, rng);
      for (int32_t e : ids) ++sent[static_cast<std::size_t>(e)];
    }
    if (k == 20) allocated_after_warmup = pool->blocks_allocated();
  }
  CHECK_EQ(pool->outstanding(), 0);
  CHECK(sent == received);
  // Recycled blocks: no allocation in steady state.
  CHECK_EQ(pool->blocks_allocated(), allocated_after_warmup);
  CHECK_THROWS_WITH(std::logic_error, pool->Recv(1.0), "would wait");
}

// Async mode batches the first envs to finish, not those sent first. A thread for each env (15
// workers and the caller) steps all 16 at once; envs 0, 4, 8, 12 sleep 30 ms, envs 1, 5, 9, 13
// 60 ms, and so on: the four batches come in that order, 30 ms apart (a margin a TSan build on a
// busy 2-core machine keeps). (This replaces a count of rows over a long run, quick envs' against
// slow ones', which TSan on CI once saw at 254 against 256: with more envs in flight than threads,
// the first-in-first-out job queue serves every env about equally often whatever its step time, so
// the quick envs' lead was ~4%. That the lanes take another lane's job once it has waited too long
// is job_queue_test's LanesTakeAJobThatWaitedTooLong.)
TEST(AsyncBatchesComeInFinishOrder) {
  constexpr int kEnvs = 16, kBatch = 4;
  auto pool = MakePool({{"step_sleep_us", int64_t{30000}}}, Options(kEnvs, kBatch, kEnvs));
  std::mt19937 rng(5);
  Reset(*pool, Iota(kEnvs));
  for (int k = 0; k < kEnvs / kBatch; ++k) Recv(*pool);  // the resets (they do not sleep)
  SendRandom(*pool, Iota(kEnvs), rng);
  for (int k = 0; k < kEnvs / kBatch; ++k) {
    // Without a timeout: the caller steps an env too (with one, it only waits, and the 15 workers
    // leave one env for whichever of them finishes first).
    View v = Recv(*pool, -1.0);
    std::vector<int32_t> ids = v.env_ids();
    std::sort(ids.begin(), ids.end());
    CHECK(ids == (std::vector<int32_t>{k, k + 4, k + 8, k + 12}));
    CHECK(v.errors().empty());
  }
}

TEST(InvalidSendsThrowAndQueueNothing) {
  auto pool = MakePool({}, Options(4, 4, 2));
  std::mt19937 rng(1);
  const std::vector<int32_t> all = Iota(4);
  CHECK_THROWS_WITH(std::logic_error, pool->Recv(1.0), "would wait");  // nothing in flight
  Reset(*pool, all);
  CHECK_THROWS_WITH(std::invalid_argument, SendRandom(*pool, {2}, rng), "not been received");  // pending
  CHECK_THROWS_WITH(std::invalid_argument, Reset(*pool, {2}), "not been received");
  CHECK_THROWS_WITH(std::invalid_argument, ResetNow(*pool, {2}), "not been received");
  CHECK_EQ(pool->outstanding(), 4);
  Recv(*pool);

  CHECK_THROWS_WITH(std::invalid_argument, SendRandom(*pool, {1, 1}, rng), "twice");
  CHECK_THROWS_WITH(std::invalid_argument, SendRandom(*pool, {0, 3, 0}, rng), "twice");
  CHECK_THROWS_WITH(std::invalid_argument, SendRandom(*pool, {4}, rng), "out of range");
  CHECK_THROWS_WITH(std::invalid_argument, SendRandom(*pool, {0, -1}, rng), "out of range");
  CHECK_THROWS_WITH(std::invalid_argument, Reset(*pool, {7}), "out of range");
  CHECK_THROWS(std::invalid_argument, SendRandom(*pool, {}, rng));
  {
    const std::vector<int32_t> ids = {0};
    CHECK_THROWS_WITH(std::invalid_argument, pool->Send(ids.data(), 1, {}), "action");  // no action arrays
  }
  // Discrete range, every player row included (player 3 of env 1 here).
  std::vector<int64_t> guesses(4 * 4, 0);
  guesses[1 * 4 + 3] = kNumActions;
  CHECK_THROWS_WITH(std::invalid_argument, Send(*pool, all, guesses), "must be in [0, 3]");
  guesses[1 * 4 + 3] = -1;
  CHECK_THROWS(std::invalid_argument, Send(*pool, all, guesses));

  // None of the failed calls queued anything or left an env pending.
  CHECK_EQ(pool->outstanding(), 0);
  CHECK_THROWS_WITH(std::logic_error, pool->Recv(1.0), "would wait");
  SendRandom(*pool, all, rng);
  View v = Recv(*pool);
  CHECK(v.env_ids() == all);
  for (int r = 0; r < 4; ++r) CHECK_EQ(v.elapsed(r), 1);
}

// Step = Send + Recv, refused before queueing anything when it cannot complete a batch (its envs
// would stay in flight with nobody to receive them).
TEST(StepRefusesABatchItCannotFill) {
  auto pool = MakePool({{"max_num_players", int64_t{1}}}, Options(4, 4, 2));
  Reset(*pool, Iota(4));
  Recv(*pool);
  const std::vector<int64_t> zeros(4, 0);
  const std::vector<const std::byte*> actions = {reinterpret_cast<const std::byte*>(zeros.data())};
  const std::vector<int32_t> first = {0, 1}, rest = {2, 3};
  try {
    pool->Step(first.data(), 2, actions);
    CHECK(!"step() of 2 of 4 envs was queued");
  } catch (const std::invalid_argument& e) {
    CHECK_EQ(std::string(e.what()),
             std::string("step() of 2 env(s) cannot fill a batch of 4 (0 in flight): step every env, or use send() "
                         "and recv()"));
  }
  CHECK_EQ(pool->outstanding(), 0);
  // A bad env id is reported as such, before the count.
  const std::vector<int32_t> bad = {0, 7};
  CHECK_THROWS_WITH(std::invalid_argument, pool->Step(bad.data(), 2, actions), "out of range");
  // With the other envs already sent, a subset completes the batch, rows in send order.
  pool->Send(rest.data(), 2, actions);
  {
    View v(*pool, pool->Step(first.data(), 2, actions), 4);
    CHECK(v.env_ids() == (std::vector<int32_t>{2, 3, 0, 1}));
    for (int r = 0; r < 4; ++r) CHECK_EQ(v.elapsed(r), 1);
  }
  CHECK_EQ(pool->outstanding(), 0);
  const std::vector<int32_t> all = Iota(4);
  View v(*pool, pool->Step(all.data(), 4, actions), 4);
  CHECK(v.env_ids() == all);
}

// Regression (found by tests/core/test_properties.py): an async Step counted on its caller to run the
// job it queued, so it woke one worker fewer. But an async Recv returns the first batch to finish,
// which can be another env's, before the caller runs anything: the job stayed queued with every
// worker asleep, and a later Recv with a timeout (which only waits) timed out.
TEST(AsyncStepLeavesNoJobWithoutAThread) {
  auto pool = MakePool({{"max_num_players", int64_t{1}}}, Options(2, 1, 2));  // one worker
  Reset(*pool, Iota(2));
  Recv(*pool);
  Recv(*pool);
  const std::vector<int64_t> zeros(1, 0);
  const std::vector<const std::byte*> actions = {reinterpret_cast<const std::byte*>(zeros.data())};
  Send(*pool, {0}, zeros);
  // Env 0's result is in and the worker asleep (it spins for microseconds only) before the Step,
  // whose Recv then returns env 0's batch at once, leaving env 1's job queued.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::vector<int32_t> one = {1};
  int32_t first;
  {
    View v(*pool, pool->Step(one.data(), 1, actions), 1);
    first = v.env_id(0);
  }
  CHECK_EQ(pool->outstanding(), 1);
  try {
    View v = Recv(*pool, 5.0);
    CHECK_EQ(v.env_id(0), 1 - first);  // whichever of the two came first, the other comes now
  } catch (const pp::TimeoutError&) {
    CHECK(!"a step stayed queued with no thread to run it");
  }
}

// Reset seeds are one per env of the pool, picked by env id: re-seeding env 2 alone gives it the
// stream of a fresh pool's env 2 with the same seeds.
TEST(ResetSeedsAreOnePerEnvOfThePool) {
  const Config config = {{"max_num_players", int64_t{1}}, {"episode_length", int64_t{100}}};
  std::vector<uint64_t> seeds;
  for (uint64_t i = 0; i < 4; ++i) seeds.push_back(9000 + 31 * i);
  auto secrets = [](Pool& pool, int env) {
    std::vector<float> out;
    for (int k = 0; k < 8; ++k) {
      Send(pool, Iota(4), std::vector<int64_t>(4, 0));
      View v = Recv(pool);
      out.push_back(v.Get<float>("obs")[2 * env + 1]);  // [player, last secret] per env
    }
    return out;
  };
  pp::PoolOptions o = Options(4, 4, 2);
  o.seeds = seeds;
  auto fresh = MakePool(config, o);
  Reset(*fresh, Iota(4));
  Recv(*fresh);
  const std::vector<float> want = secrets(*fresh, 2);

  auto pool = MakePool(config, Options(4, 4, 2));
  Reset(*pool, Iota(4));
  Recv(*pool);
  ResetNow(*pool, {2}, seeds);
  CHECK(secrets(*pool, 2) == want);

  auto async = MakePool(config, Options(4, 1, 2));
  Reset(*async, {2}, seeds);
  View v = Recv(*async);
  CHECK_EQ(v.env_id(0), 2);
  Reset(*async, {0, 1, 3});
  for (int k = 0; k < 3; ++k) Recv(*async);
  std::vector<float> got;
  for (int k = 0; k < 8; ++k) {
    Send(*async, {2}, {0});
    got.push_back(Recv(*async).Get<float>("obs")[1]);
  }
  CHECK(got == want);

  // A table of another size is refused before anything is queued.
  CHECK_THROWS_WITH(std::invalid_argument, Reset(*pool, {1}, {1, 2}), "one seed per env of the pool (4), got 2");
  CHECK_THROWS_WITH(std::invalid_argument, ResetNow(*pool, {1}, {1, 2, 3, 4, 5}), "one seed per env");
  CHECK_EQ(pool->outstanding(), 0);
}

// Recv with fewer than batch_size envs in flight raises at once instead of blocking for ever.
TEST(RecvWithTooFewInFlightThrows) {
  auto pool = MakePool({}, Options(8, 4, 2));
  Reset(*pool, {0, 1, 2});
  // Even without a timeout. On another thread, so that a Recv that blocks fails the test (and is
  // woken by Close) instead of hanging it.
  auto outcome = std::async(std::launch::async, [&]() -> std::string {
    try {
      pp::BlockFreeList::Release(pool->Recv(-1.0));
      return "returned a block";
    } catch (const std::logic_error& e) {
      return std::string("logic_error: ") + e.what();
    } catch (const std::exception& e) {
      return std::string("another exception: ") + e.what();
    }
  });
  if (!CHECK(outcome.wait_for(std::chrono::seconds(5)) == std::future_status::ready)) {
    std::fprintf(stderr, "  Recv(-1) with 3 of 4 envs in flight blocked\n");
    pool->Close();
  }
  const std::string result = outcome.get();
  if (!CHECK(result.find("logic_error: recv() would wait") == 0)) std::fprintf(stderr, "  got: %s\n", result.c_str());
  if (pool->closed()) return;
  Reset(*pool, {3});
  View v = Recv(*pool);
  std::vector<int32_t> ids = v.env_ids();
  std::sort(ids.begin(), ids.end());
  CHECK(ids == (std::vector<int32_t>{0, 1, 2, 3}));
}

// Four envs in batches of two, with steps slower than 10 ms: a recv(0.01) times out, promptly,
// with nothing lost; both batches then arrive, each env once, at its first step.
void CheckRecvTimesOutThenDelivers(Pool& pool, std::mt19937& rng) {
  Reset(pool, Iota(4));
  Recv(pool);
  Recv(pool);
  SendRandom(pool, Iota(4), rng);
  const auto start = Clock::now();
  CHECK_THROWS_WITH(pp::TimeoutError, pool.Recv(0.01), "timed out");
  CHECK_LT(Clock::now() - start, std::chrono::seconds(3));
  CHECK_EQ(pool.outstanding(), 4);
  std::set<int32_t> ids;
  for (int k = 0; k < 2; ++k) {
    View v = Recv(pool);
    for (int32_t e : v.env_ids()) ids.insert(e);
    for (int r = 0; r < 2; ++r) CHECK_EQ(v.elapsed(r), 1);
  }
  CHECK_EQ(ids.size(), 4u);
  CHECK_EQ(pool.outstanding(), 0);
}

TEST(RecvTimeoutThrowsAndThePoolStaysUsable) {
  // Steps take 0.1 to 0.4 s; a 10 ms timeout expires first.
  auto pool = MakePool({{"step_sleep_us", int64_t{100000}}}, Options(4, 2, 4));
  std::mt19937 rng(5);
  CheckRecvTimesOutThenDelivers(*pool, rng);
}

// An env that throws is reported in its block as (env_id, message); the batch still completes,
// other envs are unaffected, and the env resets on its next step.
TEST(EnvExceptionIsReportedAndThePoolRecovers) {
  auto pool = MakePool({{"raise_on_step", int64_t{3}}, {"episode_length", int64_t{100}}}, Options(4, 4, 2));
  std::mt19937 rng(11);
  const std::vector<int32_t> all = Iota(4);
  Reset(*pool, all);
  Recv(*pool);
  for (int step = 1; step <= 2; ++step) {
    SendRandom(*pool, all, rng);
    View v = Recv(*pool);
    CHECK(v.errors().empty());
  }
  {
    View v = ResetNow(*pool, {0, 1, 3});  // now only env 2 is at step 2
    CHECK(v.env_ids() == (std::vector<int32_t>{0, 1, 3}));
    for (int r = 0; r < 3; ++r) CHECK_EQ(v.elapsed(r), 0);
  }
  SendRandom(*pool, all, rng);
  {
    View v = Recv(*pool);
    CHECK(v.env_ids() == all);
    if (CHECK_EQ(v.errors().size(), 1u)) {
      CHECK_EQ(v.errors()[0].first, 2);
      CHECK(v.errors()[0].second.find("raised on step 3") != std::string::npos);
    }
    CHECK_EQ(v.elapsed(0), 1);
    CHECK_EQ(v.elapsed(1), 1);
    CHECK_EQ(v.elapsed(3), 1);
    CHECK_EQ(v.reward(2), 0.0);
    CHECK(!v.terminated(2) && !v.truncated(2));
    CheckRows(v);
  }
  SendRandom(*pool, all, rng);
  {
    View v = Recv(*pool);
    CHECK(v.errors().empty());  // the recycled block's old errors are gone too
    CHECK_EQ(v.elapsed(2), 0);  // env 2 was reset instead of stepped
    CHECK_EQ(v.elapsed(0), 2);
    CheckRows(v);
  }
  SendRandom(*pool, all, rng);
  {
    View v = Recv(*pool);  // envs 0, 1, 3 reach step 3 together
    std::set<int> failed;
    for (const auto& e : v.errors()) failed.insert(e.first);
    CHECK(failed == (std::set<int>{0, 1, 3}));
    CHECK_EQ(v.elapsed(2), 1);
    CheckRows(v);
  }
  // And it keeps going: every env fails on its every third step, resets, and so on.
  int errors = 0;
  for (int step = 0; step < 40; ++step) {
    SendRandom(*pool, all, rng);
    View v = Recv(*pool);
    for (const auto& e : v.errors()) {
      ++errors;
      const int r = e.first;  // sync: row == env id here
      CHECK_EQ(v.env_id(r), e.first);
      CHECK_EQ(v.elapsed(r), 3);
    }
    for (int r = 0; r < 4; ++r) CHECK_EQ(v.elapsed(r) == 3, v.HasErrorFor(r));
    CheckRows(v);
  }
  CHECK_GE(errors, 36);  // each env fails every fourth step
}

TEST(EnvExceptionInAsyncMode) {
  auto pool = MakePool({{"raise_on_step", int64_t{2}}, {"step_sleep_us", int64_t{100}}}, Options(8, 2, 3));
  std::mt19937 rng(12);
  Reset(*pool, Iota(8));
  std::vector<int> last_elapsed(8, -1);
  std::vector<bool> last_failed(8, false);
  int errors = 0;
  for (int k = 0; k < 200; ++k) {
    View v = Recv(*pool);
    for (const auto& e : v.errors()) {
      const auto ids = v.env_ids();
      CHECK(std::find(ids.begin(), ids.end(), e.first) != ids.end());  // an env of this batch
      ++errors;
    }
    for (int r = 0; r < 2; ++r) {
      const auto e = static_cast<std::size_t>(v.env_id(r));
      const int expected = last_elapsed[e] < 0 || last_failed[e] ? 0 : last_elapsed[e] + 1;
      CHECK_EQ(v.elapsed(r), expected);
      CHECK_EQ(v.HasErrorFor(v.env_id(r)), v.elapsed(r) == 2);
      last_elapsed[e] = v.elapsed(r);
      last_failed[e] = v.HasErrorFor(v.env_id(r));
    }
    CheckRows(v);
    SendRandom(*pool, v.env_ids(), rng);
  }
  CHECK_GT(errors, 50);
}

// With autoreset disabled an env whose episode ended (or that raised) must be reset explicitly;
// a reset and a step can share one sync batch.
TEST(AutoresetDisabled) {
  pp::PoolOptions o = Options(2, 2, 2);
  o.autoreset_mode = AutoresetMode::kDisabled;
  auto pool = MakePool({{"episode_length", int64_t{2}}}, o);
  std::mt19937 rng(2);
  Reset(*pool, {0, 1});
  Recv(*pool);
  SendRandom(*pool, {0, 1}, rng);
  Recv(*pool);
  SendRandom(*pool, {0, 1}, rng);
  {
    View v = Recv(*pool);
    CHECK(v.terminated(0) && v.terminated(1));
  }
  CHECK_THROWS_WITH(std::invalid_argument, SendRandom(*pool, {1}, rng), "disabled");
  CHECK_EQ(pool->outstanding(), 0);
  Reset(*pool, {1});
  Reset(*pool, {0});
  View v = Recv(*pool);
  CHECK(v.env_ids() == (std::vector<int32_t>{1, 0}));
  CHECK_EQ(v.elapsed(0), 0);
  CHECK_EQ(v.elapsed(1), 0);
}

TEST(TruncationAtTheTimeLimit) {
  auto pool = MakePool({{"max_episode_steps", int64_t{3}}, {"episode_length", int64_t{10}}}, Options(2, 2, 2));
  std::mt19937 rng(4);
  Reset(*pool, {0, 1});
  Recv(*pool);
  for (int step = 1; step <= 8; ++step) {
    SendRandom(*pool, {0, 1}, rng);
    View v = Recv(*pool);
    const int expected = step % 4;  // 1, 2, 3 (truncated), 0 (reset), ...
    for (int r = 0; r < 2; ++r) {
      CHECK_EQ(v.elapsed(r), expected);
      CHECK_EQ(v.truncated(r), expected == 3);
      CHECK(!v.terminated(r));
    }
  }
}

TEST(CloseWithJobsInFlight) {
  auto pool = MakePool({{"step_sleep_us", int64_t{100000}}}, Options(8, 8, 2));
  std::mt19937 rng(6);
  Reset(*pool, Iota(8));
  View held = Recv(*pool);          // Python may keep arrays of a block past close()
  SendRandom(*pool, Iota(8), rng);  // 8 steps of 0.1-0.4 s on 2 threads: ~1 s of work queued
  const auto start = Clock::now();
  pool->Close();
  CHECK_LT(Clock::now() - start, std::chrono::seconds(5));  // joins the running jobs only
  CHECK(pool->closed());
  CHECK_THROWS(pp::ClosedError, SendRandom(*pool, {0}, rng));
  CHECK_THROWS(pp::ClosedError, Reset(*pool, {0}));
  CHECK_THROWS(pp::ClosedError, ResetNow(*pool, {0}));
  CHECK_THROWS(pp::ClosedError, pool->Recv(1.0));
  CHECK_THROWS(pp::ClosedError, pool->Recv(-1.0));
  CHECK_THROWS(pp::ClosedError, pool->CheckOpen());
  {
    // Closed comes first, before the checks of the arguments (none here are valid).
    const std::vector<int32_t> bad = {9};
    CHECK_THROWS(pp::ClosedError, pool->Step(bad.data(), 1, {}));
    CHECK_THROWS(pp::ClosedError, pool->Send(bad.data(), 1, {}));
    CHECK_THROWS(pp::ClosedError, pool->Render(bad.data(), 1, nullptr));
  }
  pool->Close();  // idempotent
  pool.reset();
  CHECK(held.env_ids() == Iota(8));  // still readable; released after the pool is gone
}

// close() on another thread wakes a recv() that waits for ever.
TEST(CloseWakesABlockedRecv) {
  auto pool = MakePool({{"step_sleep_us", int64_t{100000}}}, Options(4, 4, 2));
  std::mt19937 rng(8);
  Reset(*pool, Iota(4));
  Recv(*pool);
  SendRandom(*pool, Iota(4), rng);  // at least 0.2 s of work: recv cannot finish before close
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    pool->Close();
  });
  const auto start = Clock::now();
  CHECK_THROWS(pp::ClosedError, pool->Recv(-1.0));
  CHECK_LT(Clock::now() - start, std::chrono::seconds(5));
  closer.join();
  CHECK(pool->closed());
}

// close() on another thread while ResetNow waits for its rows: ResetNow throws and gives its block
// back. (It once threw and kept it: a leak of the block and of its free list, which the asan
// preset's LeakSanitizer reports at exit.)
TEST(CloseDuringResetNow) {
  auto pool = MakePool({{"step_sleep_us", int64_t{100000}}}, Options(6, 2, 2));
  std::mt19937 rng(9);
  Reset(*pool, Iota(6));
  for (int k = 0; k < 3; ++k) Recv(*pool);
  // Four slow steps (0.1-0.4 s) queued ahead of the resets, on the one worker and ResetNow's
  // caller: the caller finishes its first step after close() and finds the resets not done.
  SendRandom(*pool, {0, 1, 2, 3}, rng);
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    pool->Close();
  });
  const auto start = Clock::now();
  CHECK_THROWS(pp::ClosedError, ResetNow(*pool, {4, 5}));
  CHECK_LT(Clock::now() - start, std::chrono::seconds(5));
  closer.join();
  CHECK(pool->closed());
}

// An env that counts its live instances, so a test sees when the pool destroys its envs: with
// GuessingGame's spec (one player), a step that sleeps step_sleep_us * (1 + env_id % 4).
std::atomic<int> g_live_envs{0};

class CountedEnv : public pp::Env {
 public:
  CountedEnv(const pp::EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        obs_(spec.StateIndex("obs")),
        num_players_(spec.StateIndex("info:num_players")),
        step_us_(spec.config.GetInt("step_sleep_us")) {
    g_live_envs.fetch_add(1);
  }
  ~CountedEnv() override { g_live_envs.fetch_sub(1); }
  void Reset() override { Write(); }
  pp::StepResult Step(const pp::Action& /*action*/) override {
    std::this_thread::sleep_for(std::chrono::microseconds(step_us_ * (1 + env_id() % 4)));
    Write();
    return pp::StepResult{};
  }
  void Render(uint8_t* rgb) override {
    const int n = pp::tutorial::GuessingGame::kFrameSize;
    std::fill(rgb, rgb + n * n * 3, uint8_t{7});
  }

 protected:
  void Write() {
    pp::Slot slot = Allocate(1);
    slot.Get<float>(obs_)[0] = 0.0f;
    slot.Get<float>(obs_)[1] = -1.0f;
    *slot.Get<int32_t>(num_players_) = 1;
  }
  int64_t step_us() const { return step_us_; }

 private:
  int obs_, num_players_;
  int64_t step_us_;
};

// A CountedEnv whose step spins for step_sleep_us of its thread's CPU time (every env alike; not
// wall time: preempted, it takes longer), counting the steps run by the thread marked as the caller.
std::atomic<int> g_caller_steps{0};
std::atomic<std::thread::id> g_caller_thread{};

int64_t ThreadCpuMicros() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000 + t.tv_nsec / 1000;
}

class SpinningEnv : public CountedEnv {
 public:
  using CountedEnv::CountedEnv;
  pp::StepResult Step(const pp::Action& /*action*/) override {
    const int64_t until = ThreadCpuMicros() + step_us();
    while (ThreadCpuMicros() < until) {
    }
    if (std::this_thread::get_id() == g_caller_thread.load()) g_caller_steps.fetch_add(1);
    Write();
    return pp::StepResult{};
  }
};

// A pool of `E` envs (task `task_id`, GuessingGame's spec with one player and step_sleep_us).
template <typename E>
std::unique_ptr<Pool> MakePoolOf(const char* task_id, const pp::PoolOptions& options, int64_t step_sleep_us) {
  static const auto task = [task_id] {
    pp::TaskEntry entry = *Task();
    entry.task_id = task_id;
    entry.make_env = [](const pp::EnvSpec& spec, int env_id) -> std::unique_ptr<pp::Env> {
      return std::make_unique<E>(spec, env_id);
    };
    return std::make_shared<const pp::TaskEntry>(std::move(entry));
  }();
  const Config config = {{"max_num_players", int64_t{1}}, {"step_sleep_us", step_sleep_us}};
  return std::make_unique<Pool>(task, pp::MakeSpec(*task, config), options);
}

std::unique_ptr<Pool> MakeCountedPool(const pp::PoolOptions& options, int64_t step_sleep_us) {
  return MakePoolOf<CountedEnv>("Counted-v0", options, step_sleep_us);
}

// A CountedEnv whose odd-numbered envs' steps sleep step_sleep_us and whose even ones' are instant.
class HalfSlowEnv : public CountedEnv {
 public:
  using CountedEnv::CountedEnv;
  pp::StepResult Step(const pp::Action& /*action*/) override {
    if (env_id() % 2 == 1) std::this_thread::sleep_for(std::chrono::microseconds(step_us()));
    Write();
    return pp::StepResult{};
  }
};

// Sync mode pops a run of queued jobs after a cheap one (Pool::RunRun), and a polled caller's run
// ends with its 20 ms slice, its remaining jobs queued again for any thread. 32 envs on 2 threads,
// the odd ones' steps 8 ms: a run after an even env's instant step holds up to 8 jobs (~32 ms), so
// runs are cut; the polled Recv returns empty-handed between slices, and every batch still holds
// every env's row once, in order.
TEST(SyncRunsCutAtAPolledCallersSliceKeepEveryRow) {
  auto pool = MakePoolOf<HalfSlowEnv>("HalfSlow-v0", Options(32, 32, 2), 8000);
  std::mt19937 rng(12);
  Reset(*pool, Iota(32));
  Recv(*pool);
  int empty_slices = 0;
  for (int step = 1; step <= 6; ++step) {
    const std::vector<int64_t> guesses = Guesses(*pool, 32, rng);
    const std::vector<const std::byte*> actions = {reinterpret_cast<const std::byte*>(guesses.data())};
    const std::vector<int32_t> ids = Iota(32);
    pp::OutputBlock* block = pool->Step(ids.data(), 32, actions, 0.02);
    const auto start = Clock::now();
    while (block == nullptr && Clock::now() - start < std::chrono::seconds(10)) {
      ++empty_slices;
      block = pool->Recv(-1.0, 0.02);
    }
    if (!CHECK(block != nullptr)) return;
    View v(*pool, block, 32);
    CHECK(v.env_ids() == ids);
  }
  // ~64 ms of steps per batch against 20 ms slices; and nothing left in flight.
  CHECK_GT(empty_slices, 0);
  CHECK_THROWS_WITH(std::logic_error, pool->Recv(1.0), "would wait");
}

// An env whose reset spins on its thread's CPU time in parts, asking Env::PauseReset() between
// them and keeping its progress across calls: env 0's reset is kParts parts of 500 us, every
// other env's one part of 5 ms (never paused). A reset's row holds the parts it ran (obs[0]) and
// its rng's second draw (obs[1], drawn after the parts: a resumed reset that seeded again would
// give the first). Counts the pauses.
std::atomic<int> g_pauses{0};

class PausingEnv final : public pp::Env {
 public:
  static constexpr int kParts = 40;
  PausingEnv(const pp::EnvSpec& spec, int env_id)
      : Env(spec, env_id), obs_(spec.StateIndex("obs")), num_players_(spec.StateIndex("info:num_players")) {}
  void Reset() override {
    const bool long_reset = env_id() == 0;
    const int parts = long_reset ? kParts : 1;
    if (done_ == 0) rng().NextU64();  // the first draw, at the reset's start
    while (done_ < parts) {
      if (done_ > 0 && PauseReset()) {
        g_pauses.fetch_add(1);
        return;
      }
      const int64_t until = ThreadCpuMicros() + (long_reset ? 500 : 5000);
      while (ThreadCpuMicros() < until) {
      }
      ++done_;
    }
    Write(static_cast<float>(done_), static_cast<float>(rng().NextU64() % 1000));
    done_ = 0;
  }
  pp::StepResult Step(const pp::Action& /*action*/) override {
    Write(0.0f, -1.0f);
    return pp::StepResult{};
  }

 private:
  void Write(float a, float b) {
    pp::Slot slot = Allocate(1);
    slot.Get<float>(obs_)[0] = a;
    slot.Get<float>(obs_)[1] = b;
    *slot.Get<int32_t>(num_players_) = 1;
  }
  int obs_, num_players_;
  int done_ = 0;  // parts run of the reset in progress
};

// (parts run, second draw) of each env's row in the next `n` async batches of one row, the caller
// helping (Recv without a timeout).
std::map<int, std::pair<float, float>> RecvResetRows(Pool& pool, int n) {
  std::map<int, std::pair<float, float>> rows;
  for (int k = 0; k < n; ++k) {
    View v(pool, pool.Recv(-1.0), pool.batch_size());
    for (int r = 0; r < v.rows(); ++r) rows[v.env_id(r)] = {v.Get<float>("obs")[2 * r], v.Get<float>("obs")[2 * r + 1]};
  }
  return rows;
}

float SecondDraw(uint64_t seed) {
  pp::Rng rng;
  rng.Seed(seed);
  rng.NextU64();
  return static_cast<float>(rng.NextU64() % 1000);
}

// Async: a long reset the caller runs stops once the batch it waits for is complete
// (Env::PauseReset) and goes on on the worker; the batch comes back without waiting for it, and
// the reset's row, when it comes, is the whole reset's, seeded once. 2 envs, batches of 1, one
// worker: the caller takes env 0's reset (its lane's) while the worker takes env 1's, whose row
// completes the batch ~5 ms later. Sync mode never pauses.
TEST(AsyncCallerPausesALongResetWhenItsBatchIsComplete) {
  const int before = g_pauses.load();
  for (int trial = 0; trial < 5; ++trial) {
    auto pool = MakePoolOf<PausingEnv>("Pausing-v0", Options(2, 1, 2), 0);
    for (const bool seeded : {false, true}) {
      const std::vector<uint64_t> seeds = seeded ? std::vector<uint64_t>{7, 8} : std::vector<uint64_t>{};
      Reset(*pool, Iota(2), seeds);
      auto rows = RecvResetRows(*pool, 2);
      CHECK_EQ(rows.size(), 2u);
      CHECK_EQ(rows[0].first, static_cast<float>(PausingEnv::kParts));
      CHECK_EQ(rows[0].second, SecondDraw(seeded ? 7 : 1000));
      CHECK_EQ(rows[1].first, 1.0f);
      CHECK_EQ(rows[1].second, SecondDraw(seeded ? 8 : 1001));
    }
  }
  // Each of the 10 resets of env 0 pauses unless the worker took it first (the caller, popping
  // its own lane at once, wins that race by the ~5 ms of env 1's reset).
  CHECK_GT(g_pauses.load() - before, 0);
  const int async_pauses = g_pauses.load();
  auto pool = MakePoolOf<PausingEnv>("Pausing-v0", Options(2, 2, 2), 0);
  Reset(*pool, Iota(2));
  auto rows = RecvResetRows(*pool, 1);
  CHECK_EQ(rows[0].first, static_cast<float>(PausingEnv::kParts));
  CHECK_EQ(rows[0].second, SecondDraw(1000));
  CHECK_EQ(g_pauses.load(), async_pauses);
}

bool PinThisThread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// A polled step (the Python main thread's): Step with poll_s, then polled Recv calls until the
// batch arrives (nullptr after 10 s).
pp::OutputBlock* PolledStep(Pool& pool, const std::vector<int32_t>& ids, const std::vector<const std::byte*>& actions) {
  pp::OutputBlock* block = pool.Step(ids.data(), static_cast<int>(ids.size()), actions, 0.02);
  const auto start = Clock::now();
  while (block == nullptr && Clock::now() - start < std::chrono::seconds(10)) block = pool.Recv(-1.0, 0.02);
  return block;
}

// close() destroys the envs at once (an env may hold processes, ViZDoom's engines, that close()
// must end), not when the pool object goes: with jobs in flight it waits for the running ones,
// drops the queued ones, and no later call reaches an env (each raises ClosedError; a use of a
// destroyed env would be a use-after-free, which the asan preset reports).
TEST(CloseDestroysTheEnvsWithJobsInFlight) {
  auto pool = MakeCountedPool(Options(8, 4, 2), 50000);
  std::mt19937 rng(21);
  CHECK_EQ(g_live_envs.load(), 8);
  Reset(*pool, Iota(8));
  View first = Recv(*pool);
  View second = Recv(*pool);
  SendRandom(*pool, Iota(8), rng);  // 8 steps of 0.05-0.2 s on 2 threads
  pool->Close();
  CHECK_EQ(g_live_envs.load(), 0);
  CHECK_THROWS(pp::ClosedError, pool->Recv(-1.0));
  CHECK_THROWS(pp::ClosedError, ResetNow(*pool, {0}));
  CHECK_THROWS(pp::ClosedError, Reset(*pool, {0}));
  CHECK_THROWS(pp::ClosedError, SendRandom(*pool, {0}, rng));
  {
    std::vector<uint8_t> frame(8 * 8 * 3);
    const std::vector<int32_t> ids = {0};
    CHECK_THROWS(pp::ClosedError, pool->Render(ids.data(), 1, frame.data()));
  }
  pool.reset();
  CHECK_EQ(g_live_envs.load(), 0);
  CHECK_EQ(first.rows() + second.rows(), 8);  // blocks Python still holds stay readable
}

// close() from another thread while a recv() waits for ever and the caller runs jobs itself:
// recv() raises ClosedError, close() returns after it, with every env destroyed.
TEST(CloseFromAnotherThreadDestroysTheEnvsWhileRecvWaits) {
  auto pool = MakeCountedPool(Options(4, 4, 2), 100000);
  std::mt19937 rng(22);
  Reset(*pool, Iota(4));
  Recv(*pool);
  SendRandom(*pool, Iota(4), rng);  // at least 0.2 s of work: recv cannot finish before close
  std::atomic<int> live_after_close{-1};
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    pool->Close();
    live_after_close.store(g_live_envs.load());
  });
  CHECK_THROWS(pp::ClosedError, pool->Recv(-1.0));
  closer.join();
  CHECK_EQ(live_after_close.load(), 0);
  CHECK_THROWS(pp::ClosedError, pool->Recv(-1.0));
  CHECK_THROWS(pp::ClosedError, ResetNow(*pool, {1}));
}

// close() from another thread while ResetNow runs jobs on the caller's thread: every env is
// destroyed once close() returns, and ResetNow raises ClosedError.
TEST(CloseDuringResetNowDestroysTheEnvs) {
  auto pool = MakeCountedPool(Options(6, 2, 2), 100000);
  std::mt19937 rng(23);
  Reset(*pool, Iota(6));
  for (int k = 0; k < 3; ++k) Recv(*pool);
  SendRandom(*pool, {0, 1, 2, 3}, rng);
  std::atomic<int> live_after_close{-1};
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    pool->Close();
    live_after_close.store(g_live_envs.load());
  });
  CHECK_THROWS(pp::ClosedError, ResetNow(*pool, {4, 5}));
  closer.join();
  CHECK_EQ(live_after_close.load(), 0);
}

TEST(DestroyWithoutCloseWithJobsInFlight) {
  auto pool = MakePool({{"step_sleep_us", int64_t{20000}}}, Options(8, 2, 2));
  std::mt19937 rng(17);
  Reset(*pool, Iota(8));
  for (int k = 0; k < 4; ++k) Recv(*pool);
  SendRandom(*pool, Iota(8), rng);
  const auto start = Clock::now();
  pool.reset();
  CHECK_LT(Clock::now() - start, std::chrono::seconds(5));
}

// same_step: the step that ends an episode reports its reward and flags, and its final obs and
// per-env info go to "final:*" copies while the row holds the new episode's first obs.
TEST(SameStepAutoresetKeepsTheFinalObservation) {
  pp::PoolOptions o = Options(2, 2, 2);
  o.autoreset_mode = AutoresetMode::kSameStep;
  o.episode_stats = true;
  auto pool = MakePool({{"episode_length", int64_t{3}}, {"max_num_players", int64_t{1}}}, o);
  std::mt19937 rng(9);
  Reset(*pool, {0, 1});
  {
    View v = Recv(*pool);
    CHECK(v.Has("info:_final"));
    CHECK(v.Has("final:info:num_players"));
    CHECK(v.Has("final:obs"));  // the env's observation is declared per player (max 1 player here)
    for (int r = 0; r < 2; ++r) CHECK(!v.Get<bool>("info:_final")[r]);
  }
  double returns[2] = {0, 0};
  for (int step = 1; step <= 7; ++step) {
    std::vector<int64_t> guesses = Guesses(*pool, 2, rng);
    Send(*pool, {0, 1}, guesses);
    View v = Recv(*pool);
    const bool* final_mask = v.Get<bool>("info:_final");
    const float* obs = v.Get<float>("obs");
    for (int r = 0; r < 2; ++r) {
      returns[r] += v.reward(r);
      const bool ends = step % 3 == 0;
      CHECK_EQ(v.terminated(r), ends);
      CHECK_EQ(final_mask[r], ends);
      CHECK_EQ(v.elapsed(r), ends ? 0 : step % 3);
      CHECK_EQ(v.Get<bool>("info:_episode")[r], ends);
      if (ends) {
        CHECK_EQ(obs[2 * r + 1], -1.0f);  // the new episode's first observation
        CHECK_EQ(v.Get<double>("info:episode.r")[r], returns[r]);
        CHECK_EQ(v.Get<int64_t>("info:episode.l")[r], int64_t{3});
        CHECK_EQ(v.Get<int32_t>("final:info:num_players")[r], 1);
        if (v.Has("final:obs")) {
          const float* final_obs = v.Get<float>("final:obs");
          const float secret = final_obs[2 * r + 1];
          CHECK_EQ(final_obs[2 * r], 0.0f);
          CHECK(secret >= 0.0f && secret < kNumActions);
          CHECK_EQ(v.reward(r), guesses[static_cast<std::size_t>(r)] == static_cast<int64_t>(secret) ? 1.0 : 0.0);
        }
        returns[r] = 0;
      } else {
        CHECK(obs[2 * r + 1] >= 0.0f);
        CHECK_EQ(v.reward(r), guesses[static_cast<std::size_t>(r)] == static_cast<int64_t>(obs[2 * r + 1]) ? 1.0 : 0.0);
      }
    }
  }
}

// info:episode.r / .l are the sum and count of the episode's rewards, on the step that ends it.
TEST(EpisodeStatsNextStep) {
  for (const int64_t max_steps : {int64_t{100}, int64_t{4}}) {  // terminated at 6, or truncated at 4
    pp::PoolOptions o = Options(4, 4, 2);
    o.episode_stats = true;
    auto pool = MakePool({{"episode_length", int64_t{6}}, {"max_episode_steps", max_steps}}, o);
    std::mt19937 rng(13);
    Reset(*pool, Iota(4));
    std::vector<double> ret(4, 0.0);
    std::vector<int64_t> len(4, 0);
    int episodes = 0;
    double total = 0.0;
    for (int step = 0; step < 40; ++step) {
      View v = Recv(*pool);
      const double* er = v.Get<double>("info:episode.r");
      const int64_t* el = v.Get<int64_t>("info:episode.l");
      const double* et = v.Get<double>("info:episode.t");
      const bool* mask = v.Get<bool>("info:_episode");
      for (int r = 0; r < 4; ++r) {
        const auto e = static_cast<std::size_t>(v.env_id(r));
        if (v.elapsed(r) == 0) {  // a reset row
          ret[e] = 0;
          len[e] = 0;
          CHECK(!mask[r]);
          continue;
        }
        ret[e] += v.reward(r);
        len[e] += 1;
        total += v.reward(r);
        const bool done = v.terminated(r) || v.truncated(r);
        CHECK_EQ(done, len[e] == std::min<int64_t>(6, max_steps));
        CHECK_EQ(mask[r], done);
        if (done) {
          ++episodes;
          CHECK_EQ(er[r], ret[e]);
          CHECK_EQ(el[r], len[e]);
          CHECK(et[r] >= 0.0 && et[r] < 10.0);
        } else {
          CHECK_EQ(er[r], 0.0);
          CHECK_EQ(el[r], int64_t{0});
        }
      }
      SendRandom(*pool, Iota(4), rng);
    }
    Recv(*pool);
    CHECK_GT(episodes, 8);
    CHECK_GT(total, 0.0);  // rewards were not all zero, so the sums were really checked
  }
}

// Everything a row shows, per env, with player rows gathered by env: comparable across runs.
std::string Describe(const View& v, int r) {
  std::ostringstream out;
  out << "env " << v.env_id(r) << " t=" << v.elapsed(r) << " r=" << v.reward(r) << " term=" << v.terminated(r)
      << " trunc=" << v.truncated(r) << " n=" << v.num_players(r) << " obs=";
  const float* obs = v.Get<float>("obs");
  const float* pr = v.Get<float>("info:players.reward");
  const auto player_rows = v.PlayerRows();
  for (int p : player_rows[static_cast<std::size_t>(r)])
    out << obs[2 * p] << "," << obs[2 * p + 1] << "/" << pr[p] << ";";
  return out.str();
}

// Sync mode: the same seeds and actions give the same outputs with 1, 2 or 4 threads; a reset
// with new seeds starts the trajectories a fresh pool with those seeds would have.
std::vector<std::string> SyncTrace(int num_threads, uint64_t first_seed, bool reseed_midway) {
  auto pool = MakePool({{"episode_length", int64_t{7}}, {"step_sleep_us", int64_t{50}}},
                       Options(8, 8, num_threads, first_seed));
  std::mt19937 rng(42);  // the actions do not depend on the pool
  std::vector<std::string> trace;
  Reset(*pool, Iota(8));
  for (int step = 0; step < 40; ++step) {
    View v = Recv(*pool);
    for (int r = 0; r < 8; ++r) trace.push_back(Describe(v, r));
    if (reseed_midway && step == 19) {
      std::vector<uint64_t> seeds;
      for (uint64_t i = 0; i < 8; ++i) seeds.push_back(500 + i);
      Reset(*pool, Iota(8), seeds);
      rng.seed(43);
    } else {
      SendRandom(*pool, Iota(8), rng);
    }
  }
  return trace;
}

TEST(DeterministicAcrossThreadCountsSync) {
  const auto one = SyncTrace(1, 1000, true);
  CHECK(one == SyncTrace(2, 1000, true));
  CHECK(one == SyncTrace(4, 1000, true));
  CHECK(one != SyncTrace(2, 2000, true));  // the seeds matter
  // After the reseed at step 19, the run continues as a fresh pool seeded 500.. with actions
  // from rng(43) would: compare with such a run's first 20 steps.
  auto pool = MakePool({{"episode_length", int64_t{7}}, {"step_sleep_us", int64_t{50}}}, Options(8, 8, 2, 500));
  std::mt19937 rng(43);
  Reset(*pool, Iota(8));
  for (int step = 0; step < 20; ++step) {
    View v = Recv(*pool);
    for (int r = 0; r < 8; ++r) {
      if (!CHECK_EQ(Describe(v, r), one[static_cast<std::size_t>((20 + step) * 8 + r)])) return;
    }
    SendRandom(*pool, Iota(8), rng);
  }
  Recv(*pool);
}

// Async mode: batches differ from run to run, but each env's own trajectory does not (its k-th
// action is a function of (env, k) only).
std::vector<std::vector<std::string>> AsyncTrace(int num_threads) {
  constexpr int kEnvs = 8, kSteps = 25;
  auto pool =
      MakePool({{"episode_length", int64_t{7}}, {"step_sleep_us", int64_t{100}}}, Options(kEnvs, 2, num_threads));
  std::vector<std::vector<std::string>> trace(kEnvs);
  std::vector<int> step(kEnvs, 0);
  Reset(*pool, Iota(kEnvs));
  auto complete = [&] {
    for (const auto& t : trace) {
      if (static_cast<int>(t.size()) < kSteps) return false;
    }
    return true;
  };
  for (int k = 0; k < 10000 && !complete(); ++k) {
    View v = Recv(*pool);
    const auto ids = v.env_ids();
    std::vector<int64_t> guesses;
    for (int r = 0; r < 2; ++r) {
      const auto e = static_cast<std::size_t>(ids[static_cast<std::size_t>(r)]);
      trace[e].push_back(Describe(v, r));
      const int s = step[e]++;
      for (int p = 0; p < pool->spec().max_num_players; ++p) {
        guesses.push_back(static_cast<int64_t>((e * 7 + static_cast<std::size_t>(s) * 3 + static_cast<std::size_t>(p)) %
                                               kNumActions));
      }
    }
    Send(*pool, ids, guesses);
  }
  for (auto& t : trace) t.resize(kSteps);
  return trace;
}

TEST(DeterministicAcrossThreadCountsAsync) {
  const auto one = AsyncTrace(1);
  const auto two = AsyncTrace(2);
  const auto four = AsyncTrace(4);
  for (std::size_t e = 0; e < one.size(); ++e) {
    CHECK(one[e] == two[e]);
    CHECK(one[e] == four[e]);
    CHECK(one[e][0].find(" t=0 ") != std::string::npos);
  }
}

// Per-player rows: info:players.env_id holds each env exactly num_players times, sync and async.
TEST(MultiPlayerRows) {
  for (const int batch : {8, 4}) {
    auto pool =
        MakePool({{"max_num_players", int64_t{4}}, {"episode_length", int64_t{3}}, {"step_sleep_us", int64_t{50}}},
                 Options(8, batch, 3));
    std::mt19937 rng(14);
    std::set<int> counts_seen;
    Reset(*pool, Iota(8));
    for (int k = 0; k < 60; ++k) {
      View v = Recv(*pool);
      CheckRows(v);
      for (int r = 0; r < v.rows(); ++r) counts_seen.insert(v.num_players(r));
      SendRandom(*pool, v.env_ids(), rng);
    }
    CHECK_GE(counts_seen.size(), 3u);  // several player counts occurred
  }
}

// A single-player env that declares per-player fields: its player rows are its rows, and the
// block says so (player_rows is what sizes the per-player arrays handed to Python).
TEST(SinglePlayerEnvWithPerPlayerFields) {
  auto pool = MakePool({{"max_num_players", int64_t{1}}}, Options(4, 4, 2));
  std::mt19937 rng(15);
  Reset(*pool, Iota(4));
  for (int k = 0; k < 5; ++k) {
    View v = Recv(*pool);
    CHECK(!v.Has("info:players.env_id"));
    CHECK_EQ(v.player_rows(), 4);
    CheckRows(v);
    SendRandom(*pool, Iota(4), rng);
  }
  Recv(*pool);
}

// ResetNow: rows in the caller's order, in a block of its own, honouring new seeds; the batch in
// flight is not disturbed.
TEST(ResetNowPartialReset) {
  auto pool = MakePool({{"episode_length", int64_t{100}}}, Options(6, 6, 2));
  std::mt19937 rng(16);
  Reset(*pool, Iota(6));
  Recv(*pool);
  SendRandom(*pool, Iota(6), rng);
  Recv(*pool);
  {
    View v = ResetNow(*pool, {4, 1});
    CHECK_EQ(v.rows(), 2);
    CHECK(v.env_ids() == (std::vector<int32_t>{4, 1}));
    for (int r = 0; r < 2; ++r) CHECK_EQ(v.elapsed(r), 0);
    CheckRows(v);
  }
  SendRandom(*pool, Iota(6), rng);
  {
    View v = Recv(*pool);
    for (int r = 0; r < 6; ++r) CHECK_EQ(v.elapsed(r), r == 4 || r == 1 ? 1 : 2);
  }
  // New seeds: the reset draws what a fresh pool with those seeds draws.
  std::vector<uint64_t> seeds;
  for (uint64_t s = 0; s < 6; ++s) seeds.push_back(77 + s * 13);
  std::vector<int32_t> players_now;
  {
    View v = ResetNow(*pool, Iota(6), seeds);
    for (int r = 0; r < 6; ++r) players_now.push_back(v.num_players(r));
  }
  pp::PoolOptions o = Options(6, 6, 2);
  o.seeds = seeds;
  auto fresh = MakePool({{"episode_length", int64_t{100}}}, o);
  Reset(*fresh, Iota(6));
  std::vector<int32_t> players_fresh;
  {
    View v = Recv(*fresh);
    for (int r = 0; r < 6; ++r) players_fresh.push_back(v.num_players(r));
  }
  CHECK(players_now == players_fresh);
  // Steady state allocates no blocks, ResetNow included.
  const int allocated = pool->blocks_allocated();
  for (int k = 0; k < 50; ++k) {
    SendRandom(*pool, Iota(6), rng);
    Recv(*pool);
    ResetNow(*pool, {static_cast<int32_t>(k % 6)});
  }
  CHECK_EQ(pool->blocks_allocated(), allocated);
}

// Async ResetNow of more envs than a batch: its rows must fit the block it writes. (They once went
// into a batch_size-row block of the ring's free list, writing past each field into the next one,
// and past the block's end: heap corruption, which the asan preset's ASan reports.)
TEST(ResetNowOfMoreEnvsThanABatchInAsyncMode) {
  const Config config = {{"episode_length", int64_t{100}}, {"max_num_players", int64_t{4}}};
  auto pool = MakePool(config, Options(8, 2, 2));
  std::mt19937 rng(17);
  Reset(*pool, Iota(8));
  for (int k = 0; k < 4; ++k) Recv(*pool);
  std::vector<uint64_t> seeds;
  for (uint64_t s = 0; s < 8; ++s) seeds.push_back(500 + s);
  const std::vector<int32_t> ids = {7, 0, 6, 1, 5, 2, 4, 3};
  std::vector<int32_t> players_now(8);
  {
    View v = ResetNow(*pool, ids, seeds);
    CHECK_EQ(v.rows(), 8);
    CHECK(v.env_ids() == ids);
    for (int r = 0; r < 8; ++r) {
      CHECK_EQ(v.elapsed(r), 0);
      CHECK_EQ(v.reward(r), 0.0);
      CHECK(!v.terminated(r) && !v.truncated(r));
      players_now[static_cast<std::size_t>(ids[static_cast<std::size_t>(r)])] = v.num_players(r);
    }
    CheckRows(v);
  }
  // The draws of a fresh pool with those seeds, in env order.
  pp::PoolOptions o = Options(8, 8, 2);
  o.seeds = seeds;
  auto fresh = MakePool(config, o);
  Reset(*fresh, Iota(8));
  {
    View v = Recv(*fresh);
    for (int r = 0; r < 8; ++r) CHECK_EQ(v.num_players(r), players_now[static_cast<std::size_t>(r)]);
  }
  // The batches go on as before, and the steady state allocates no block, ResetNow's included.
  const int allocated = pool->blocks_allocated();
  for (int round = 0; round < 20; ++round) {
    SendRandom(*pool, Iota(8), rng);
    std::set<int32_t> seen;
    for (int k = 0; k < 4; ++k) {
      View v = Recv(*pool);
      CheckRows(v);
      for (int r = 0; r < 2; ++r) CHECK_EQ(v.elapsed(r), 1);
      for (int32_t id : v.env_ids()) seen.insert(id);
    }
    CHECK_EQ(seen.size(), 8u);
    View v = ResetNow(*pool, Iota(8));  // every env back at step 0
    CheckRows(v);
  }
  CHECK_EQ(pool->blocks_allocated(), allocated);
}

// same_step with several players: final:info:num_players is the ended episode's count, the row's
// is the new one's; per-player rows must still match the row's num_players. Last in this file:
// rows claimed twice by one env could run past the per-player arrays into other fields.
// Regression (found by tests/core/test_properties.py): ResetNow wrote its rows into a block of the
// batch ring, which holds batch_size rows, so resetting more envs than that in async mode wrote
// past the block (here 8 envs of up to 4 players each into a block sized for 2 envs).
TEST(ResetNowOfMoreEnvsThanABatchInAsyncModeThenBatchesGoOn) {
  auto pool = MakePool({{"episode_length", int64_t{100}}}, Options(8, 2, 2));
  std::mt19937 rng(17);
  const std::vector<int32_t> all = {5, 0, 7, 2, 1, 6, 3, 4};
  for (int round = 0; round < 3; ++round) {
    View v = ResetNow(*pool, all);
    CHECK_EQ(v.rows(), 8);
    CHECK(v.env_ids() == all);
    for (int r = 0; r < 8; ++r) CHECK_EQ(v.elapsed(r), 0);
    if (!CheckRows(v)) return;
    const float* player_reward = v.Get<float>("info:players.reward");
    for (int p = 0; p < v.player_rows(); ++p) CHECK_EQ(player_reward[p], 0.0f);
    // The pool goes on in async mode, and the next ResetNow reuses the block.
    SendRandom(*pool, {0, 1, 2, 3}, rng);
    Recv(*pool);
    Recv(*pool);
    CHECK_EQ(pool->outstanding(), 0);
  }
  const int allocated = pool->blocks_allocated();
  ResetNow(*pool, all);
  CHECK_EQ(pool->blocks_allocated(), allocated);  // recycled
}

TEST(SameStepAutoresetMultiPlayer) {
  pp::PoolOptions o = Options(8, 8, 2);
  o.autoreset_mode = AutoresetMode::kSameStep;
  std::unique_ptr<Pool> pool;
  try {
    pool = MakePool({{"episode_length", int64_t{2}}, {"max_num_players", int64_t{4}}}, o);
  } catch (const std::invalid_argument& e) {
    // Refusing the combination up front is a correct answer too; corrupt rows are not.
    CHECK(std::string(e.what()).find("same_step") != std::string::npos);
    return;
  }
  std::mt19937 rng(10);
  Reset(*pool, Iota(8));
  std::vector<int> players(8, 0);
  {
    View v = Recv(*pool);
    for (int r = 0; r < 8; ++r) players[static_cast<std::size_t>(r)] = v.num_players(r);
  }
  int changed = 0;
  for (int step = 1; step <= 30; ++step) {
    SendRandom(*pool, Iota(8), rng);
    View v = Recv(*pool);
    if (!CheckRows(v)) {
      std::fprintf(stderr, "  (step %d)\n", step);
      return;
    }
    for (int r = 0; r < 8; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      if (v.terminated(r)) {
        CHECK_EQ(v.Get<int32_t>("final:info:num_players")[r], players[ur]);
        if (v.num_players(r) != players[ur]) ++changed;
        players[ur] = v.num_players(r);
      } else {
        CHECK_EQ(v.num_players(r), players[ur]);
      }
    }
  }
  CHECK_GT(changed, 0);  // the case that matters did occur
}

// --- Faulty-v0, the tutorial family's fault-injection env: what a failed env's row holds ---------

std::unique_ptr<Pool> MakeFaultyPool(const Config& config, const pp::PoolOptions& options) {
  Task();  // registers the tutorial family
  const std::shared_ptr<const pp::TaskEntry> task = pp::Registry::Global().Find("Faulty-v0");
  if (task == nullptr) throw std::runtime_error("Faulty-v0 is not registered");
  return std::make_unique<Pool>(task, pp::MakeSpec(*task, config), options);
}

// Faulty-v0's observation: [episode number, elapsed step, last action].
std::vector<float> FaultyObs(const View& v, int r) {
  const float* obs = v.Get<float>("obs") + 3 * r;
  return {obs[0], obs[1], obs[2]};
}

// A failed env's row holds zeros in its state fields, though the recycled block held an earlier
// batch's values there; reward 0, both flags false, elapsed_step the step that raised. The other
// env's row is whole, and the failed env starts a new episode on its next step.
TEST(AFailedEnvsRowHoldsZeros) {
  pp::PoolOptions o = Options(2, 2, 2);
  o.episode_stats = true;
  auto pool = MakeFaultyPool({{"raise_on_step", int64_t{3}}, {"fault_env_id", int64_t{1}}}, o);
  Reset(*pool, {0, 1});
  Recv(*pool);
  for (int step = 1; step <= 3; ++step) {
    Send(*pool, {0, 1}, {1, 1});
    View v = Recv(*pool);
    CHECK_EQ(v.errors().size(), step == 3 ? 1u : 0u);
    CHECK(FaultyObs(v, 0) == (std::vector<float>{1.0f, static_cast<float>(step), 1.0f}));
    CHECK_EQ(v.Get<int64_t>("info:steps")[0], int64_t{step});
    if (step < 3) continue;
    CHECK(v.HasErrorFor(1));
    CHECK(v.errors()[0].second.find("Faulty-v0: Step() raised on this env's step 3") != std::string::npos);
    CHECK(FaultyObs(v, 1) == (std::vector<float>{0.0f, 0.0f, 0.0f}));
    CHECK_EQ(v.Get<int64_t>("info:steps")[1], int64_t{0});
    CHECK_EQ(v.elapsed(1), 3);
    CHECK_EQ(v.reward(1), 0.0);
    CHECK(!v.terminated(1) && !v.truncated(1));
    CHECK(!v.Get<bool>("info:_episode")[1]);
    CHECK_EQ(v.Get<double>("info:episode.r")[1], 0.0);
  }
  Send(*pool, {0, 1}, {0, 0});
  View v = Recv(*pool);
  CHECK(v.errors().empty());
  CHECK(FaultyObs(v, 0) == (std::vector<float>{1.0f, 4.0f, 0.0f}));
  CHECK(FaultyObs(v, 1) == (std::vector<float>{2.0f, 0.0f, -1.0f}));  // its second episode begins
  CHECK_EQ(v.reward(1), 0.0);
}

// The first step of an env that was never reset resets it, in every mode (as EnvPool's does): a
// reset row (the action ignored, reward 0, flags false); the step after it steps.
TEST(TheFirstStepOfAnEnvNeverResetResetsIt) {
  for (AutoresetMode mode : {AutoresetMode::kNextStep, AutoresetMode::kSameStep, AutoresetMode::kDisabled}) {
    pp::PoolOptions o = Options(2, 2, 2);
    o.autoreset_mode = mode;
    auto pool = MakeFaultyPool({}, o);
    Send(*pool, {0, 1}, {1, 1});
    {
      View v = Recv(*pool);
      CHECK(v.errors().empty());
      CHECK(FaultyObs(v, 0) == (std::vector<float>{1.0f, 0.0f, -1.0f}));  // a reset's observation
      CHECK(FaultyObs(v, 1) == (std::vector<float>{1.0f, 0.0f, -1.0f}));
      CHECK_EQ(v.reward(0), 0.0);
      CHECK(!v.terminated(0) && !v.truncated(0));
    }
    Send(*pool, {0, 1}, {1, 1});
    View v = Recv(*pool);
    CHECK(FaultyObs(v, 0) == (std::vector<float>{1.0f, 1.0f, 1.0f}));  // stepped
    CHECK(FaultyObs(v, 1) == (std::vector<float>{1.0f, 1.0f, 1.0f}));
  }
}

// A first reset that raised is retried by the env's next step (a reset row), not refused as a
// step before reset; with autoreset disabled the env must be reset explicitly.
TEST(AFailedFirstResetIsRetriedByTheNextStep) {
  for (AutoresetMode mode : {AutoresetMode::kNextStep, AutoresetMode::kDisabled}) {
    pp::PoolOptions o = Options(2, 2, 2);
    o.autoreset_mode = mode;
    auto pool = MakeFaultyPool({{"raise_on_reset", int64_t{1}}, {"fault_env_id", int64_t{0}}}, o);
    Reset(*pool, {0, 1});
    {
      View v = Recv(*pool);
      CHECK(v.HasErrorFor(0) && !v.HasErrorFor(1));
      CHECK(FaultyObs(v, 0) == (std::vector<float>{0.0f, 0.0f, 0.0f}));
      CHECK(FaultyObs(v, 1) == (std::vector<float>{1.0f, 0.0f, -1.0f}));
    }
    if (mode == AutoresetMode::kDisabled) {
      const std::vector<int64_t> actions = {1, 1};
      CHECK_THROWS_WITH(std::invalid_argument, Send(*pool, {0, 1}, actions), "env 0: its episode is over");
      View v = ResetNow(*pool, {0});
      CHECK(v.errors().empty());
      CHECK(FaultyObs(v, 0) == (std::vector<float>{2.0f, 0.0f, -1.0f}));
      continue;
    }
    Send(*pool, {0, 1}, {1, 1});
    View v = Recv(*pool);
    CHECK(v.errors().empty());
    CHECK(FaultyObs(v, 0) == (std::vector<float>{2.0f, 0.0f, -1.0f}));  // reset again, the action ignored
    CHECK(FaultyObs(v, 1) == (std::vector<float>{1.0f, 1.0f, 1.0f}));
  }
}

// same_step: a reset that raises inside the step that ended the episode makes the whole row the
// failed row (zeros, no final observation, flags false); the env's next step resets it.
TEST(SameStepResetThatRaisesMakesAFailedRow) {
  pp::PoolOptions o = Options(1, 1, 1);
  o.autoreset_mode = AutoresetMode::kSameStep;
  auto pool = MakeFaultyPool({{"raise_on_reset", int64_t{2}}, {"episode_length", int64_t{2}}}, o);
  Reset(*pool, {0});
  Recv(*pool);
  for (int step = 1; step <= 3; ++step) {
    Send(*pool, {0}, {1});
    View v = Recv(*pool);
    CHECK_EQ(v.HasErrorFor(0), step == 2);
    CHECK(!v.terminated(0) && !v.Get<bool>("info:_final")[0]);
    if (step == 2) CHECK(FaultyObs(v, 0) == (std::vector<float>{0.0f, 0.0f, 0.0f}));
    if (step == 3) CHECK(FaultyObs(v, 0) == (std::vector<float>{3.0f, 0.0f, -1.0f}));
  }
}

}  // namespace

// Polls Recv in 20 ms slices, each call returning within 150 ms, until a batch arrives or 10 s
// pass; counts the calls that returned nothing. Returns the batch, or nullptr.
pp::OutputBlock* PollForBatch(Pool& pool, int* empty_returns = nullptr) {
  pp::OutputBlock* block = nullptr;
  const auto start = Clock::now();
  while (block == nullptr && Clock::now() - start < std::chrono::seconds(10)) {
    const auto call = Clock::now();
    block = pool.Recv(-1.0, 0.02);
    CHECK_LT(Clock::now() - call, std::chrono::milliseconds(150));
    if (block == nullptr && empty_returns != nullptr) ++*empty_returns;
  }
  return block;
}

// Recv with poll_s (the Python main thread's wait, so that Ctrl-C is seen): while the envs' steps
// are slow, each call returns nullptr after about poll_s with the batch still in flight, the caller
// runs none of them (it would be held for a whole step), and the stand-in worker steps them; the
// batch then arrives whole. Here no worker exists at all (sync, one thread): only the stand-in can
// run the jobs. Steps sleep 0.2 s (env 0) and 0.4 s (env 1); a call must return within 0.15 s.
TEST(PolledRecvReturnsWhileTheStandInRunsSlowSteps) {
  auto pool = MakePool({{"step_sleep_us", int64_t{200000}}}, Options(2, 2, 1));
  std::mt19937 rng(10);
  Reset(*pool, Iota(2));
  Recv(*pool);
  SendRandom(*pool, Iota(2), rng);
  int empty_returns = 0;
  const auto start = Clock::now();
  pp::OutputBlock* block = PollForBatch(*pool, &empty_returns);
  CHECK(block != nullptr);
  CHECK_GE(empty_returns, 2);                                      // 0.6 s of steps in 20 ms slices: many
  CHECK_GE(Clock::now() - start, std::chrono::milliseconds(550));  // the steps really ran, serially
  if (block != nullptr) {
    View v(*pool, block, 2);
    CHECK(v.env_ids() == Iota(2));
    CHECK(CheckRows(v));
    for (int r = 0; r < 2; ++r) CHECK_EQ(v.elapsed(r), 1);
  }
}

// Once the stand-in has seen a streak of quick steps, a polled caller runs jobs itself again, and
// every polled step returns its batch (after nullptr returns or not): nothing is lost or doubled.
TEST(PolledStepsOfQuickEnvsAllArrive) {
  auto pool = MakePool({}, Options(4, 4, 1));
  std::mt19937 rng(11);
  Reset(*pool, Iota(4));
  Recv(*pool);
  for (int step = 1; step <= 200; ++step) {
    const std::vector<int64_t> guesses = Guesses(*pool, 4, rng);
    const std::vector<const std::byte*> actions = {reinterpret_cast<const std::byte*>(guesses.data())};
    const std::vector<int32_t> ids = Iota(4);
    pp::OutputBlock* block = PolledStep(*pool, ids, actions);
    if (!CHECK(block != nullptr)) return;
    View v(*pool, block, 4);
    CHECK(v.env_ids() == ids);
    if (!CHECK(CheckRows(v))) return;
  }
  CHECK_THROWS_WITH(std::logic_error, pool->Recv(1.0), "would wait");  // nothing left in flight
}

// A polled caller stops running jobs after a slow one; a quick job whose thread was preempted is
// not slow. The caller, the stand-in and four spinning threads share one CPU, so each 4 ms step
// (of CPU time) takes several times that of wall time, well over kSlowJob: the caller must still
// run the steps (timed by wall time alone it ran one or two, then left them all to the stand-in).
TEST(PolledCallerKeepsRunningQuickJobsWhileItsThreadIsPreempted) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (!CHECK_EQ(pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed), 0)) return;
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed)) ++cpu;
  if (!CHECK(PinThisThread(cpu))) return;
  g_caller_thread.store(std::this_thread::get_id());
  g_caller_steps.store(0);
  {
    auto pool = MakePoolOf<SpinningEnv>("Spinning-v0", Options(2, 2, 1), 4000);  // sync, no worker
    const std::vector<int32_t> ids = Iota(2);
    const std::vector<int64_t> guesses = {0, 0};
    const std::vector<const std::byte*> actions = {reinterpret_cast<const std::byte*>(guesses.data())};
    auto step = [&] {
      pp::OutputBlock* block = PolledStep(*pool, ids, actions);
      if (block == nullptr) return false;
      View v(*pool, block, 2);
      return v.env_ids() == ids;
    };
    Reset(*pool, ids);
    Recv(*pool);
    // Alone on the CPU: the stand-in's quick steps let the caller run them.
    for (int k = 0; k < 12; ++k) CHECK(step());
    const int alone = g_caller_steps.exchange(0);
    CHECK_GT(alone, 0);
    std::atomic<bool> stop{false};
    std::vector<std::thread> spinners;
    for (int k = 0; k < 4; ++k) {
      spinners.emplace_back([&] {
        PinThisThread(cpu);
        while (!stop.load(std::memory_order_relaxed)) {
        }
      });
    }
    for (int k = 0; k < 15; ++k) CHECK(step());
    stop.store(true);
    for (auto& t : spinners) t.join();
    CHECK_GE(g_caller_steps.load(), 20);  // of the 30 steps
  }
  CHECK_EQ(pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed), 0);  // the other tests' CPUs
  g_caller_thread.store(std::thread::id{});
}

// ---- split-phase envs (Env::Post): the engine's batch-level hand-offs -----------------------------

// What the split-phase envs of one pool did, in order: "post <id>", "kick <id>", "await <id>",
// "collect <id>" (a posted job's Reset/Step), "run <id>" (a Reset/Step not posted).
struct PostLog {
  std::mutex mu;
  std::vector<std::string> events;
  void Add(const std::string& what, int env_id) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(what + " " + std::to_string(env_id));
  }
  std::vector<std::string> Take() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(events, {});
  }
};

// The tutorial env made split-phase: Post records the job and the following Reset/Step runs it
// (the work a worker process would do), checking that it is the job posted. `post_if(env_id)`:
// whether the env posts at all (a pool may mix envs that do and do not): Base is SplitPhaseEnv for
// those that do, Env for the others (whose Post and Kick are then plain members the core never calls).
template <typename Base>
class PostingEnv final : public Base {
 public:
  using Base::env_id;
  PostingEnv(const pp::EnvSpec& spec, int env_id, std::shared_ptr<PostLog> log)
      : Base(spec, env_id), inner_(Task()->make_env(spec, env_id)), log_(std::move(log)) {
    forward_.env = this;
    pp::EnvDriver(*inner_).SetAllocator(&forward_);
  }
  void Reset() override {
    Collect(kReset);
    pp::EnvDriver(*inner_).Reset();
  }
  pp::StepResult Step(const pp::Action& action) override {
    Collect(kStep);
    // The action the engine posted is the one it steps with: its rows did not change meanwhile.
    if (posted_action_ >= 0) CHECK_EQ(*action.Get<int64_t>(0), posted_action_);
    posted_action_ = -1;
    return pp::EnvDriver(*inner_).Step(action);
  }
  bool Post(bool reset, const pp::Action& action) {
    CHECK_EQ(posted_, 0);  // one posted job at a time
    posted_ = reset ? kReset : kStep;
    posted_action_ = reset ? -1 : *action.Get<int64_t>(0);
    log_->Add("post", env_id());
    return true;
  }
  void Kick() { log_->Add("kick", env_id()); }
  void AwaitPosted() { log_->Add("await", env_id()); }

 protected:
  void Reseeded(uint64_t seed) override { pp::EnvDriver(*inner_).Seed(seed); }

 private:
  static constexpr int kReset = 1, kStep = 2;
  struct Forward final : pp::SlotAllocator {
    PostingEnv* env = nullptr;
    pp::Slot Allocate(int /*env_id*/, int num_players) override { return env->Row(num_players); }
  };
  pp::Slot Row(int num_players) { return Base::Allocate(num_players); }
  void Collect(int kind) {
    if (posted_ != 0) {
      CHECK_EQ(posted_, kind);  // the job collected is the job posted
      posted_ = 0;
      log_->Add("collect", env_id());
    } else {
      log_->Add("run", env_id());
    }
  }

  std::unique_ptr<pp::Env> inner_;
  Forward forward_;
  std::shared_ptr<PostLog> log_;
  int posted_ = 0;
  int64_t posted_action_ = -1;
};

std::shared_ptr<const pp::TaskEntry> PostingTask(
    std::shared_ptr<PostLog> log, std::function<bool(int)> post_if = [](int) { return true; }) {
  auto task = std::make_shared<pp::TaskEntry>(*Task());
  task->task_id = "Posting-v0";
  task->make_env = [log = std::move(log), post_if = std::move(post_if)](const pp::EnvSpec& spec, int env_id) {
    if (post_if(env_id))
      return std::unique_ptr<pp::Env>(std::make_unique<PostingEnv<pp::SplitPhaseEnv>>(spec, env_id, log));
    return std::unique_ptr<pp::Env>(std::make_unique<PostingEnv<pp::Env>>(spec, env_id, log));
  };
  return task;
}

std::unique_ptr<Pool> MakePostingPool(std::shared_ptr<const pp::TaskEntry> task, const Config& config,
                                      const pp::PoolOptions& options) {
  return std::make_unique<Pool>(task, pp::MakeSpec(*task, config), options);
}

// A row as Describe gives it, and its error text if the env raised.
std::string DescribeWithError(const View& v, int r) {
  std::string out = Describe(v, r);
  for (const auto& e : v.errors()) {
    if (e.first == v.env_id(r)) out += " error=" + e.second;
  }
  return out;
}

// Every row of a run: sync or async (batch 3 of 8: rows in finishing order, so an env's rows are
// compared in its own order), same-step or next-step autoreset with episode stats, the envs
// failing part-way (raise_on_step: every env's 5th step of an episode), a reseed midway and a
// ResetNow of some envs; each env's k-th action is a function of (env, k) only.
std::vector<std::vector<std::string>> PostingTrace(std::shared_ptr<const pp::TaskEntry> task, int num_threads,
                                                   bool sync, AutoresetMode mode) {
  constexpr int kEnvs = 8, kSteps = 30;
  pp::PoolOptions o = Options(kEnvs, sync ? kEnvs : 3, num_threads);
  o.autoreset_mode = mode;
  o.episode_stats = true;
  const Config config = {{"episode_length", int64_t{7}},
                         {"raise_on_step", int64_t{5}},
                         {"step_sleep_us", int64_t{30}},
                         {"max_num_players", int64_t{mode == AutoresetMode::kSameStep ? 1 : 3}}};
  auto pool = MakePostingPool(task, config, o);
  std::vector<std::vector<std::string>> trace(kEnvs);
  std::vector<int> step(kEnvs, 0);
  auto describe = [&](const View& v, int r) {
    std::string row = DescribeWithError(v, r);
    if (v.Has("info:episode.r")) {
      row += " ep=" + std::to_string(v.Get<double>("info:episode.r")[r]) + "/" +
             std::to_string(v.Get<int64_t>("info:episode.l")[r]);
    }
    return row;
  };
  auto send = [&](const std::vector<int32_t>& ids) {
    std::vector<int64_t> guesses;
    for (int32_t id : ids) {
      const auto e = static_cast<std::size_t>(id);
      const int k = step[e]++;
      for (int p = 0; p < pool->spec().max_num_players; ++p) {
        guesses.push_back(static_cast<int64_t>((e * 7 + static_cast<std::size_t>(k) * 3 + static_cast<std::size_t>(p)) %
                                               kNumActions));
      }
    }
    Send(*pool, ids, guesses);
  };
  Reset(*pool, Iota(kEnvs));
  for (int k = 0; k < 10000; ++k) {
    bool complete = true;
    for (const auto& t : trace) complete = complete && static_cast<int>(t.size()) >= kSteps;
    if (complete) break;
    View v = Recv(*pool);
    const auto ids = v.env_ids();
    for (int r = 0; r < v.rows(); ++r)
      trace[static_cast<std::size_t>(ids[static_cast<std::size_t>(r)])].push_back(describe(v, r));
    if (sync && k == 12) {
      // A reseed of every env midway, and a ResetNow of two of them.
      std::vector<uint64_t> seeds;
      for (uint64_t i = 0; i < kEnvs; ++i) seeds.push_back(500 + i);
      View now = ResetNow(*pool, {2, 5}, seeds);
      for (int r = 0; r < 2; ++r) trace[static_cast<std::size_t>(now.env_id(r))].push_back("now " + describe(now, r));
    }
    send(ids);
  }
  for (auto& t : trace) t.resize(kSteps);
  return trace;
}

// A pool of split-phase envs gives exactly the rows of the same envs run whole, in every mode and
// with any thread count, errors included; and with some envs posting and others not.
TEST(PostedJobsGiveTheRowsOfUnpostedOnes) {
  auto log = std::make_shared<PostLog>();
  const auto posting = PostingTask(log);
  const auto mixed = PostingTask(log, [](int env_id) { return env_id % 3 != 1; });
  const auto plain = PostingTask(log, [](int) { return false; });
  for (const bool sync : {true, false}) {
    for (const AutoresetMode mode : {AutoresetMode::kNextStep, AutoresetMode::kSameStep}) {
      const auto expected = PostingTrace(plain, 1, sync, mode);
      bool errors = false;
      for (const auto& t : expected) {
        for (const auto& row : t) errors = errors || row.find("raised on step 5") != std::string::npos;
      }
      CHECK(errors);  // the runs really fail part-way
      for (int threads : {1, 2, 4}) {
        if (!CHECK(PostingTrace(posting, threads, sync, mode) == expected)) {
          std::fprintf(stderr, "  posting, sync=%d same_step=%d threads=%d\n", sync, mode == AutoresetMode::kSameStep,
                       threads);
        }
        if (!CHECK(PostingTrace(mixed, threads, sync, mode) == expected)) {
          std::fprintf(stderr, "  mixed, sync=%d same_step=%d threads=%d\n", sync, mode == AutoresetMode::kSameStep,
                       threads);
        }
      }
    }
  }
}

// One thread posts a batch's jobs, kicks each, waits once (on the last posted), then collects them
// in the order it posted them; an env that does not post runs after the posted ones.
TEST(APostedRunHandsOverTheWholeBatch) {
  auto log = std::make_shared<PostLog>();
  {
    auto pool = MakePostingPool(PostingTask(log), {{"max_num_players", int64_t{1}}}, Options(4, 4, 1));
    std::mt19937 rng(3);
    Reset(*pool, Iota(4));
    Recv(*pool);
    log->Take();
    SendRandom(*pool, Iota(4), rng);
    View v = Recv(*pool);
    CHECK(v.env_ids() == Iota(4));
    CHECK(v.errors().empty());
    const std::vector<std::string> expected = {"post 0",    "post 1",    "post 2",   "post 3",  "kick 0",
                                               "kick 1",    "kick 2",    "kick 3",   "await 3", "collect 0",
                                               "collect 1", "collect 2", "collect 3"};
    CHECK(log->Take() == expected);
  }
  {
    // Env 1 does not post: the run stops popping at it and runs it after the posted env 0.
    auto pool = MakePostingPool(PostingTask(log, [](int env_id) { return env_id != 1; }),
                                {{"max_num_players", int64_t{1}}}, Options(4, 4, 1));
    Reset(*pool, Iota(4));
    Recv(*pool);
    const auto events = log->Take();
    const std::vector<std::string> head = {"post 0", "kick 0", "await 0", "collect 0", "run 1"};
    CHECK(events.size() >= head.size() && std::equal(head.begin(), head.end(), events.begin()));
  }
  {
    auto pool = MakePostingPool(PostingTask(log), {{"max_num_players", int64_t{1}}}, Options(6, 2, 1));
    std::mt19937 rng(4);
    Reset(*pool, Iota(6));
    std::set<int32_t> ids;
    for (int k = 0; k < 3; ++k) {
      View v = Recv(*pool);
      for (int32_t e : v.env_ids()) ids.insert(e);
    }
    CHECK_EQ(ids.size(), 6u);
    int posts_in_a_row = 0, most = 0;
    for (const auto& e : log->Take()) {
      posts_in_a_row = e.starts_with("post") ? posts_in_a_row + 1 : 0;
      most = std::max(most, posts_in_a_row);
    }
    CHECK_GE(most, 1);
    CHECK_LE(most, 2);  // the batch size
  }
}

// Slow posted jobs: recv(timeout) expires and the pool goes on; close() with posted jobs in flight
// joins them; a polled step returns while a slow posted run goes on, and its batch arrives.
TEST(PostedJobsTimeoutsAndClose) {
  auto log = std::make_shared<PostLog>();
  const auto task = PostingTask(log);
  {
    auto pool = MakePostingPool(task, {{"step_sleep_us", int64_t{30000}}}, Options(4, 2, 2));
    std::mt19937 rng(5);
    CheckRecvTimesOutThenDelivers(*pool, rng);
  }
  {
    auto pool = MakePostingPool(task, {{"step_sleep_us", int64_t{20000}}}, Options(8, 8, 2));
    std::mt19937 rng(6);
    Reset(*pool, Iota(8));
    Recv(*pool);
    SendRandom(*pool, Iota(8), rng);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a worker is inside its posted run
    const auto start = Clock::now();
    pool->Close();
    CHECK_LT(Clock::now() - start, std::chrono::seconds(10));
    CHECK(pool->closed());
    // Every posted job was finished (collected) before close returned.
    int posts = 0, collects = 0;
    for (const auto& e : log->Take()) {
      posts += e.starts_with("post") ? 1 : 0;
      collects += e.starts_with("collect") ? 1 : 0;
    }
    CHECK_EQ(posts, collects);
  }
  {
    auto pool = MakePostingPool(task, {{"step_sleep_us", int64_t{100000}}}, Options(2, 2, 1));
    std::mt19937 rng(7);
    Reset(*pool, Iota(2));
    Recv(*pool);
    SendRandom(*pool, Iota(2), rng);
    pp::OutputBlock* block = PollForBatch(*pool);
    if (CHECK(block != nullptr)) {
      View v(*pool, block, 2);
      CHECK(v.env_ids() == Iota(2));
      CHECK(CheckRows(v));
    }
  }
}

int main(int argc, char** argv) { return pp::test::RunAll(argc, argv); }
