// One ViZDoom game per env (one engine process per player, as libvizdoom runs it), with EnvPool's
// preprocessing (frame skip, grey/RGB, INTER_AREA resize, stack); multi-player: a net game in turn.
#pragma once

#include <ViZDoom.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/atari/preprocess.h"  // AreaResizer: OpenCV's INTER_AREA, bit for bit

namespace pp::vizdoom {

// EnvPool 1.2.5's ViZDoom time limit (envpool/vizdoom/registration.py): 525 agent steps.
constexpr int64_t kDefaultMaxEpisodeSteps = 525;
// The most actions use_combined_action may make (a Discrete space's n; each is decoded when used).
constexpr int64_t kMaxCombinedActions = int64_t{1} << 31;
// The most players of one game (ViZDoom's engine supports 16; per-step scratch arrays use this).
constexpr int kMaxPlayers = 16;
// A multi-player episode starts after this many no-op tics of every player in turn (NetTic): a
// joiner more than one tic command ahead of the host drops one per 4 tics, so 8 bring any state
// new_episode leaves to the one every episode then continues from.
constexpr int kSettleTics = 8;
// How long a player's tic may take before the next player's starts anyway (NetTic): a tic takes
// about a millisecond; a host that needs the joiner's next command never finishes alone.
constexpr std::chrono::milliseconds kNetTurn{200};

// Every config key of a ViZDoom task, with EnvPool's defaults where EnvPool has the key.
inline Config VizdoomDefaults(const std::string& cfg_path, const std::string& vizdoom_dir) {
  return Config{{"max_episode_steps", kDefaultMaxEpisodeSteps},
                {"img_height", int64_t{84}},
                {"img_width", int64_t{84}},
                {"stack_num", int64_t{4}},
                {"gray_scale", false},  // the task's default follows its scenario (RegisterVizdoom)
                {"frame_skip", int64_t{4}},
                {"use_combined_action", false},
                // EnvPool's: SPEED always pressed, and the delta buttons' values, in the combined set
                // ("NAME n min max;...": the pool's form of EnvPool's {NAME: (n, min, max)}).
                {"force_speed", false},
                {"delta_button_config", std::string()},
                {"episode_timeout", int64_t{-1}},  // in tics; -1: the scenario's own, 0: none
                {"max_num_players", int64_t{1}},   // > 1: a multi-player game (host and joiners)
                {"game_args", std::string()},      // extra engine arguments, as DoomGame.add_game_args
                // Seconds an engine may take to start, begin an episode or make a step before its
                // engines are killed and the call raises (a stalled net game); 0: wait for ever.
                {"engine_timeout", int64_t{60}},
                // render()'s frame size, as EnvPool's render_width/render_height: the first player's
                // screen shrunk with INTER_AREA; 0: the scenario's screen size.
                {"render_width", int64_t{0}},
                {"render_height", int64_t{0}},
                {"cfg_path", cfg_path},
                {"vizdoom_dir", vizdoom_dir}};  // the installed vizdoom package: engine, pk3, IWADs
}

// A DoomGame with the scenario loaded, the engine not started: what its settings say.
inline std::unique_ptr<::vizdoom::DoomGame> LoadScenario(const Config& config) {
  auto game = std::make_unique<::vizdoom::DoomGame>();
  const std::string path = config.GetString("cfg_path");
  // libvizdoom's own message for a missing file lists the places it looked, none of them this.
  if (!std::filesystem::is_regular_file(path)) {
    throw std::invalid_argument("ViZDoom: the scenario file " + path + " does not exist");
  }
  bool loaded = false;
  try {
    loaded = game->loadConfig(path);
  } catch (const std::exception& e) {
    throw std::invalid_argument("ViZDoom cannot load the scenario " + path + ": " + e.what());
  }
  if (!loaded) throw std::invalid_argument("ViZDoom cannot load the scenario " + path);
  return game;
}

// delta_button_config as the pool passes it ("NAME n min max;..." from EnvPool's dict
// {NAME: (n, min, max)}): per delta button of the scenario, n values from min to max.
struct DeltaSteps {
  int count;
  float low, high;
};
inline std::map<::vizdoom::Button, DeltaSteps> ParseDeltaConfig(const std::string& text,
                                                                const std::vector<::vizdoom::Button>& buttons) {
  std::map<::vizdoom::Button, DeltaSteps> out;
  std::stringstream entries(text);
  std::string entry;
  while (std::getline(entries, entry, ';')) {
    if (entry.find_first_not_of(' ') == std::string::npos) continue;
    std::istringstream in(entry);
    std::string name;
    DeltaSteps d{};
    if (!(in >> name >> d.count >> d.low >> d.high) || d.count < 0) {
      throw std::invalid_argument("delta_button_config: expected {button name: (n >= 0, min, max)}, got '" + entry +
                                  "'");
    }
    bool found = false;
    for (const auto b : buttons) {
      if (::vizdoom::isDeltaButton(b) && ::vizdoom::buttonToString(b) == name) {
        out[b] = d;
        found = true;
      }
    }
    if (!found) {
      std::string names;
      for (const auto b : buttons) {
        if (::vizdoom::isDeltaButton(b)) names += (names.empty() ? "" : ", ") + ::vizdoom::buttonToString(b);
      }
      throw std::invalid_argument("delta_button_config: " + name + " is not a delta button of the scenario (its: " +
                                  (names.empty() ? std::string("none") : names) + ")");
    }
  }
  return out;
}

// The discrete action set. Without use_combined_action each button alone (action i presses button
// i). With it, EnvPool's set (BuildActionSet), every combination of one choice per button group,
// the groups in ViZDoom's Button order and the first varying slowest: a binary button off, then on
// (SPEED only on with force_speed); two opposed buttons of the scenario (MOVE_RIGHT/MOVE_LEFT,
// MOVE_BACKWARD/MOVE_FORWARD, TURN_RIGHT/TURN_LEFT, LOOK_UP/LOOK_DOWN, MOVE_UP/MOVE_DOWN,
// SELECT_NEXT/PREV_WEAPON, SELECT_NEXT/PREV_ITEM) neither, the first, the second; the weapon
// selections SELECT_WEAPON1..0 none, or one of them; a delta button n values from min to max in
// delta_button_config (stepped in float32, as EnvPool does), else 0. The set can be large (EnvPool
// lets delta buttons multiply it): an action is decoded from its index, never stored.
class ActionSet {
 public:
  ActionSet(const std::vector<::vizdoom::Button>& buttons, bool combined, bool force_speed,
            const std::string& delta_config)
      : buttons_(buttons.size()) {
    using B = ::vizdoom::Button;
    if (!combined) {
      for (std::size_t i = 0; i < buttons_; ++i) single_.push_back(static_cast<int>(i));
      size_ = static_cast<int64_t>(buttons_);
      return;
    }
    const auto deltas = ParseDeltaConfig(delta_config, buttons);
    auto index = [&](int button) {
      for (std::size_t i = 0; i < buttons_; ++i) {
        if (static_cast<int>(buttons[i]) == button) return static_cast<int>(i);
      }
      return -1;
    };
    constexpr int kFirstWeapon = B::SELECT_WEAPON1, kLastWeapon = B::SELECT_WEAPON0;
    const std::set<int> pair_firsts = {B::MOVE_RIGHT, B::MOVE_BACKWARD,      B::TURN_RIGHT,      B::LOOK_UP,
                                       B::MOVE_UP,    B::SELECT_NEXT_WEAPON, B::SELECT_NEXT_ITEM};
    for (int b = 0; b <= static_cast<int>(B::MOVE_UP_DOWN_DELTA);) {
      if (b == kFirstWeapon) {
        Group weapon{{}};
        for (int w = kFirstWeapon; w <= kLastWeapon; ++w) {
          if (index(w) >= 0) weapon.push_back({{index(w), 1.0}});
        }
        groups_.push_back(std::move(weapon));
        b = kLastWeapon + 1;
      } else if (pair_firsts.count(b) != 0 && index(b) >= 0 && index(b + 1) >= 0) {
        groups_.push_back({{}, {{index(b), 1.0}}, {{index(b + 1), 1.0}}});
        b += 2;
      } else if (::vizdoom::isDeltaButton(static_cast<B>(b))) {
        const auto d = deltas.find(static_cast<B>(b));
        if (d != deltas.end() && d->second.count > 1 && index(b) >= 0) {
          Group values;
          const float step = (d->second.high - d->second.low) / static_cast<float>(d->second.count - 1);
          float value = d->second.low;
          for (int k = 0; k < d->second.count; ++k, value += step) values.push_back({{index(b), value}});
          groups_.push_back(std::move(values));
        }
        ++b;
      } else if (index(b) >= 0) {
        if (b == B::SPEED && force_speed) {
          groups_.push_back({{{index(b), 1.0}}});
        } else {
          groups_.push_back({{}, {{index(b), 1.0}}});
        }
        ++b;
      } else {
        ++b;
      }
    }
    size_ = 1;
    for (const Group& g : groups_) {
      size_ *= static_cast<int64_t>(g.size());
      if (size_ > kMaxCombinedActions) {
        throw std::invalid_argument("use_combined_action: more than " + std::to_string(kMaxCombinedActions) +
                                    " button combinations (" + std::to_string(buttons_) + " buttons)");
      }
    }
  }

  int64_t size() const { return size_; }
  std::size_t buttons() const { return buttons_; }

  // Action `a` (in [0, size)) as the buttons' values.
  const std::vector<double>& Get(int64_t a) {
    value_.assign(buttons_, 0.0);
    if (!single_.empty() || groups_.empty()) {
      if (!single_.empty()) value_[static_cast<std::size_t>(single_[static_cast<std::size_t>(a)])] = 1.0;
      return value_;
    }
    // Mixed radix, the last group varying fastest.
    for (std::size_t g = groups_.size(); g-- > 0;) {
      const auto radix = static_cast<int64_t>(groups_[g].size());
      for (const auto& [i, v] : groups_[g][static_cast<std::size_t>(a % radix)]) {
        value_[static_cast<std::size_t>(i)] = v;
      }
      a /= radix;
    }
    return value_;
  }

 private:
  using Option = std::vector<std::pair<int, double>>;  // (button index, value) pairs it sets
  using Group = std::vector<Option>;
  std::size_t buttons_;
  std::vector<int> single_;  // without use_combined_action: action i presses button single_[i]
  std::vector<Group> groups_;
  int64_t size_ = 0;
  std::vector<double> value_;
};

// The preprocessing settings, validated (ValueError in Python: std::invalid_argument).
struct VizdoomOptions {
  int height, width, stack_num, channels, frame_skip, num_players, render_height, render_width;
  int64_t episode_timeout, engine_timeout;
  bool combined, force_speed;
  std::string game_args, cfg_path, vizdoom_dir, delta_config;

  static VizdoomOptions From(const Config& c) {
    auto in_range = [&](const std::string& key, int64_t low, int64_t high) {
      const int64_t v = c.GetInt(key);
      if (v < low || v > high) {
        throw std::invalid_argument(key + " must be in [" + std::to_string(low) + ", " + std::to_string(high) +
                                    "], got " + std::to_string(v));
      }
      return v;
    };
    VizdoomOptions o{};
    o.height = static_cast<int>(in_range("img_height", 1, 4096));
    o.width = static_cast<int>(in_range("img_width", 1, 4096));
    o.render_height = static_cast<int>(in_range("render_height", 0, 4096));
    o.render_width = static_cast<int>(in_range("render_width", 0, 4096));
    o.stack_num = static_cast<int>(in_range("stack_num", 1, 64));
    o.channels = c.GetBool("gray_scale") ? 1 : 3;
    o.frame_skip = static_cast<int>(in_range("frame_skip", 1, 1000));
    o.num_players = static_cast<int>(in_range("max_num_players", 1, kMaxPlayers));
    o.episode_timeout = in_range("episode_timeout", -1, int64_t{1} << 31);
    o.combined = c.GetBool("use_combined_action");
    o.force_speed = c.GetBool("force_speed");
    o.delta_config = c.GetString("delta_button_config");
    if (!o.combined && (o.force_speed || !o.delta_config.empty())) {
      throw std::invalid_argument(
          "force_speed and delta_button_config shape the combined action set: they need "
          "use_combined_action=True");
    }
    o.engine_timeout = in_range("engine_timeout", 0, int64_t{1} << 31);
    o.game_args = c.GetString("game_args");
    o.cfg_path = c.GetString("cfg_path");
    o.vizdoom_dir = c.GetString("vizdoom_dir");
    return o;
  }
};

// The name of a game variable as ViZDoom spells it (HEALTH, AMMO2, ...): the info key.
inline std::string VariableName(::vizdoom::GameVariable v) { return ::vizdoom::gameVariableToString(v); }

// render()'s frame (height, width): render_height/render_width, each 0 for the screen's own.
inline std::pair<int, int> RenderSize(const VizdoomOptions& o, ::vizdoom::DoomGame& game) {
  return {o.render_height > 0 ? o.render_height : game.getScreenHeight(),
          o.render_width > 0 ? o.render_width : game.getScreenWidth()};
}

inline EnvSpec MakeVizdoomSpec(const Config& config) {
  const VizdoomOptions o = VizdoomOptions::From(config);
  auto game = LoadScenario(config);
  if (o.height > game->getScreenHeight() || o.width > game->getScreenWidth()) {
    // INTER_AREA only shrinks (OpenCV switches to bilinear for enlarging).
    throw std::invalid_argument("img_height x img_width must be at most the scenario's screen, " +
                                std::to_string(game->getScreenHeight()) + " x " +
                                std::to_string(game->getScreenWidth()));
  }
  const ActionSet actions(game->getAvailableButtons(), o.combined, o.force_speed, o.delta_config);
  if (actions.buttons() == 0) throw std::invalid_argument("the scenario has no buttons");
  const bool multi = o.num_players > 1;
  auto per_player = [multi](FieldSpec f) { return multi ? PerPlayer(std::move(f)) : f; };
  EnvSpec spec;
  spec.max_num_players = o.num_players;
  // EnvPool's layout: (stack_num, H, W) grey; (stack_num * 3, H, W) RGB, each frame as 3 planes.
  spec.state.push_back(
      per_player(Box("obs", Dtype::kUInt8, {o.stack_num * o.channels, o.height, o.width}, {0.0}, {255.0})));
  for (const auto v : game->getAvailableGameVariables()) {
    spec.state.push_back(per_player(Box((multi ? "info:players." : "info:") + VariableName(v), Dtype::kFloat64, {})));
  }
  if (multi) spec.state.push_back(PerPlayer(Box("info:players.reward", Dtype::kFloat64, {})));
  // The engine's seed of this episode (what DoomGame.set_seed takes before new_episode).
  spec.state.push_back(WithPresence(Box("info:episode_seed", Dtype::kInt64, {}), InfoPresence::kExtra));
  spec.action.push_back(per_player(Discrete("action", static_cast<int64_t>(actions.size()))));
  const auto [render_height, render_width] = RenderSize(o, *game);
  if (render_height > game->getScreenHeight() || render_width > game->getScreenWidth()) {
    throw std::invalid_argument("render_height x render_width must be at most the scenario's screen, " +
                                std::to_string(game->getScreenHeight()) + " x " +
                                std::to_string(game->getScreenWidth()) + " (render() shrinks it with INTER_AREA)");
  }
  spec.render_shape = {render_height, render_width, 3};
  spec.render_fps = 35;  // vizdoom.DEFAULT_TICRATE, its Gymnasium wrapper's metadata
  return spec;
}

// The lowest port the kernel hands out to a socket bound to port 0 (ip_local_port_range).
inline int EphemeralPortLow() {
  std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
  int low = 0;
  return (range >> low) && low > 0 ? low : 32768;  // Linux's default
}

// A free UDP port on localhost for a multi-player game's host. Below the kernel's ephemeral range,
// so that no socket bound to port 0 (every joiner's engine binds one) can take it between this
// check and the host's bind; each call of a process tries the next port of a cycle started at a
// random one, so pools of one process never pick the same port and pools of different processes
// (parallel tests) do only by a chance of about one in 20000.
inline int FreeUdpPort() {
  constexpr int kLowest = 10000;  // above the well-known and most registered services
  static std::atomic<uint32_t> next{std::random_device{}()};
  const int high = EphemeralPortLow() - 1;
  if (high - kLowest < 1000) throw std::runtime_error("ViZDoom: no UDP port range below the ephemeral one");
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int port = kLowest + static_cast<int>(next.fetch_add(1) % static_cast<uint32_t>(high - kLowest + 1));
    const int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) throw std::runtime_error("ViZDoom: cannot open a UDP socket to pick a port");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_ANY);  // the engine binds INADDR_ANY
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    if (free) return port;
  }
  throw std::runtime_error("ViZDoom: cannot find a free UDP port");
}

// Runs fn(player) for every player of a game, each player on a persistent thread of its own, so
// that the caller can wait for one player with a time limit. Run starts every player at once (a
// net game's init and new episode: the host waits for the joiners). RunInTurn starts player p once
// player p - 1 has returned or `turn` has passed, whichever is first: a net game's tics, whose
// order decides the game (see VizdoomEnv::NetTic). Both rethrow the first exception after every
// player has returned.
class PlayerThreads {
 public:
  explicit PlayerThreads(int num_players)
      : started_(static_cast<std::size_t>(num_players), 0),
        done_(static_cast<std::size_t>(num_players), true),
        errors_(static_cast<std::size_t>(num_players)) {
    for (int p = 0; p < num_players; ++p) threads_.emplace_back([this, p] { Loop(p); });
  }
  ~PlayerThreads() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    start_.notify_all();
    for (auto& t : threads_) t.join();
  }
  PlayerThreads(const PlayerThreads&) = delete;
  PlayerThreads& operator=(const PlayerThreads&) = delete;

  void Run(const std::function<void(int)>& fn) { RunInTurn(fn, std::chrono::nanoseconds(0)); }

  void RunInTurn(const std::function<void(int)>& fn, std::chrono::nanoseconds turn) {
    std::unique_lock<std::mutex> lock(mu_);
    fn_ = &fn;
    std::fill(done_.begin(), done_.end(), false);
    for (std::size_t p = 0; p < threads_.size(); ++p) {
      ++started_[p];
      start_.notify_all();
      if (turn.count() > 0) done_cv_.wait_for(lock, turn, [&] { return done_[p]; });
    }
    done_cv_.wait(lock, [this] { return std::all_of(done_.begin(), done_.end(), [](bool d) { return d; }); });
    fn_ = nullptr;
    for (auto& e : errors_) {
      if (e) {
        std::exception_ptr first = std::exchange(e, nullptr);
        for (auto& rest : errors_) rest = nullptr;
        std::rethrow_exception(first);
      }
    }
  }

 private:
  void Loop(int p) {
    const auto i = static_cast<std::size_t>(p);
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      start_.wait(lock, [&] { return stop_ || started_[i] != seen; });
      if (stop_) return;
      seen = started_[i];
      const std::function<void(int)>* fn = fn_;
      lock.unlock();
      try {
        (*fn)(p);
      } catch (...) {
        errors_[i] = std::current_exception();  // read only after done_[i], under the lock
      }
      lock.lock();
      done_[i] = true;
      done_cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable start_, done_cv_;
  const std::function<void(int)>* fn_ = nullptr;
  std::vector<uint64_t> started_;  // per player: how many calls were started
  std::vector<bool> done_;         // per player: the current call has returned
  bool stop_ = false;
  std::vector<std::exception_ptr> errors_;
  std::vector<std::thread> threads_;  // last: started once the rest is constructed
};

// Calls on_expiry (from its own thread) when a call armed with Arm() is not disarmed within the
// limit. Arming and disarming are two atomic stores, nothing a step would notice; the thread looks
// every quarter of the limit (at most each second), so an expiry is seen within 1.25 limits.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, std::function<void()> on_expiry)
      : limit_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(limit).count()),
        on_expiry_(std::move(on_expiry)),
        thread_([this] { Loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Arm() { armed_at_.store(Now(), std::memory_order_release); }
  // Whether the limit passed (and on_expiry ran) since Arm().
  bool Disarm() {
    armed_at_.store(0, std::memory_order_release);
    std::lock_guard<std::mutex> lock(mu_);  // an expiry in progress finishes first
    return std::exchange(expired_, false);
  }

 private:
  static int64_t Now() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void Loop() {
    const auto period = std::chrono::nanoseconds(std::min<int64_t>(limit_ns_ / 4, 1000000000));
    std::unique_lock<std::mutex> lock(mu_);
    while (!wake_.wait_for(lock, period, [this] { return stop_; })) {
      const int64_t armed = armed_at_.load(std::memory_order_acquire);
      if (armed != 0 && Now() - armed > limit_ns_ && !expired_) {
        expired_ = true;
        on_expiry_();
      }
    }
  }

  const int64_t limit_ns_;
  const std::function<void()> on_expiry_;
  std::atomic<int64_t> armed_at_{0};  // steady-clock ns of the armed call's start; 0: none
  std::mutex mu_;
  std::condition_variable wake_;
  bool expired_ = false;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is constructed
};

class VizdoomEnv : public Env {
 public:
  VizdoomEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        o_(VizdoomOptions::From(spec.config)),
        obs_(spec.StateIndex("obs")),
        seed_field_(spec.StateIndex("info:episode_seed")),
        reward_field_(o_.num_players > 1 ? spec.StateIndex("info:players.reward") : -1),
        action_field_(spec.ActionIndex("action")) {
    auto game = LoadScenario(spec.config);
    variables_ = game->getAvailableGameVariables();
    for (const auto v : variables_) {
      variable_fields_.push_back(spec.StateIndex((o_.num_players > 1 ? "info:players." : "info:") + VariableName(v)));
    }
    actions_.emplace(game->getAvailableButtons(), o_.combined, o_.force_speed, o_.delta_config);
    screen_height_ = game->getScreenHeight();
    screen_width_ = game->getScreenWidth();
    const auto [render_height, render_width] = RenderSize(o_, *game);
    if (render_height != screen_height_ || render_width != screen_width_) {
      render_screen_.resize(static_cast<std::size_t>(screen_height_) * screen_width_ * 3);
      render_resizer_.emplace(screen_height_, screen_width_, render_height, render_width, 3);
    }
    frame_bytes_ = static_cast<std::size_t>(o_.height) * o_.width * o_.channels;
    for (int p = 0; p < o_.num_players; ++p) {
      players_.push_back(Player{nullptr, std::vector<uint8_t>(frame_bytes_ * o_.stack_num),
                                AreaResizer(screen_height_, screen_width_, o_.height, o_.width, o_.channels),
                                std::vector<uint8_t>(frame_bytes_), 0.0});
    }
  }

  ~VizdoomEnv() override {
    // Every engine process is closed (each DoomGame's close() ends its process and joins the thread
    // that waits for it); the helper threads first, so none is inside a game being closed.
    watchdog_.reset();
    threads_.reset();
    for (auto& player : players_) {
      if (player.game) {
        try {
          player.game->close();
        } catch (...) {  // a destructor must not throw; the engine is gone either way
        }
      }
    }
    if (!work_dir_.empty()) {
      std::error_code error;  // best effort: a destructor must not throw
      std::filesystem::remove_all(work_dir_, error);
    }
  }

  void Reset() override {
    // A fresh episode seed from this env's stream: DoomGame.set_seed(seed) + new_episode() in the
    // reference gives the same episode. In a multi-player game the host's seed governs the map.
    episode_seed_ = static_cast<int64_t>(rng().UniformInt(0, 0x7fffffff));
    if (!started_) Start();
    Drive([&](int p) {
      players_[p].game->setSeed(static_cast<unsigned int>(episode_seed_));
      players_[p].game->newEpisode();
    });
    if (o_.num_players > 1) {
      // The players' engines ran new_episode's tics at once, so a joiner may end it out of step
      // with the host (see NetTic): kSettleTics no-op tics in turn bring the game to the state
      // from which every episode goes the same way; the episode's first screen is after them.
      for (auto& pl : players_) pl.game->setAction(std::vector<double>(actions_->buttons(), 0.0));
      for (int k = 0; k < kSettleTics; ++k) NetTic(/*update=*/k == kSettleTics - 1);
    }
    Slot slot = Allocate(o_.num_players);
    for (int p = 0; p < o_.num_players; ++p) {
      Player& pl = players_[p];
      PushFrame(pl, /*fill_stack=*/true);
      pl.reward = 0.0;
      Write(slot, p);
    }
    *slot.Get<int64_t>(seed_field_) = episode_seed_;
  }

  StepResult Step(const Action& action) override {
    const int64_t* chosen = action.Get<int64_t>(action_field_);  // in range: checked by the core
    if (o_.num_players == 1) {
      Drive([&](int /*p*/) {
        Player& pl = players_[0];
        pl.reward = pl.game->makeAction(actions_->Get(chosen[0]), static_cast<unsigned int>(o_.frame_skip));
      });
    } else {
      // frame_skip tics, each one tic of every player in turn (NetTic), the players' states
      // updated on the last (as make_action(a, frame_skip) does), or on the tic that reaches the
      // episode timeout. An end the engine decides inside a step (the host's +timelimit or
      // +fraglimit, a level exit) stops the step without an update: its reward is 0.
      for (int p = 0; p < o_.num_players; ++p) {
        players_[p].game->setAction(actions_->Get(chosen[p]));
      }
      ::vizdoom::DoomGame& host = *players_[0].game;
      bool updated = false;
      for (int k = 0; k < o_.frame_skip && !host.isEpisodeFinished(); ++k) {
        updated = k == o_.frame_skip - 1 || TimeoutAtNextTic(host);
        NetTic(updated);
      }
      for (auto& pl : players_) pl.reward = updated ? pl.game->getLastReward() : 0.0;
    }
    ::vizdoom::DoomGame& host = *players_[0].game;
    const bool finished = host.isEpisodeFinished();
    const bool timeout = finished && host.isEpisodeTimeoutReached();
    StepResult result;
    result.terminated = finished && !timeout;
    result.truncated = !result.terminated && (timeout || TimeLimitReached());
    double total = 0.0;
    Slot slot = Allocate(o_.num_players);
    for (int p = 0; p < o_.num_players; ++p) {
      Player& pl = players_[p];
      PushFrame(pl, /*fill_stack=*/false);
      Write(slot, p);
      total += pl.reward;
    }
    *slot.Get<int64_t>(seed_field_) = episode_seed_;
    result.reward = total;
    return result;
  }

  // The first player's current screen, RGB, at render_height x render_width (the scenario's
  // resolution by default), shrunk as the observations are.
  void Render(uint8_t* rgb) override {
    if (!render_resizer_) {
      ScreenRgb(rgb);
      return;
    }
    ScreenRgb(render_screen_.data());
    render_resizer_->Resize(render_screen_.data(), rgb);
  }

 private:
  using AreaResizer = atari::AreaResizer;

  // The first player's current screen, RGB, at the scenario's resolution (black before the first
  // episode).
  void ScreenRgb(uint8_t* rgb) {
    const std::size_t n = static_cast<std::size_t>(screen_height_) * screen_width_;
    if (!started_ || !players_[0].game->getState()) {
      std::memset(rgb, 0, n * 3);
      return;
    }
    const auto& buffer = *players_[0].game->getState()->screenBuffer;
    if (o_.channels == 3) {
      std::memcpy(rgb, buffer.data(), n * 3);
    } else {
      for (std::size_t i = 0; i < n; ++i) rgb[3 * i] = rgb[3 * i + 1] = rgb[3 * i + 2] = buffer[i];
    }
  }

  struct Player {
    std::unique_ptr<::vizdoom::DoomGame> game;
    std::vector<uint8_t> stack;  // stack_num frames, oldest first, each (H, W, C) interleaved
    AreaResizer resizer;
    std::vector<uint8_t> resized;
    double reward;
  };

  // Starts every player's engine (on the worker thread that resets the env first, so a pool's
  // engines start in parallel). A multi-player game's host waits in init() for the joiners.
  void Start() {
    // Every engine writes its settings (_vizdoom.ini) and cache (_vizdoom/) into its working
    // directory: never the user's. Each engine of this env gets its own directory in a private
    // temporary one (removed when the env is destroyed, at close), _vizdoom/ made in advance.
    if (work_dir_.empty()) work_dir_ = MakeTempDirectory();  // a failed start is retried in it
    if (o_.num_players > 1) threads_ = std::make_unique<PlayerThreads>(o_.num_players);
    const int port = o_.num_players > 1 ? FreeUdpPort() : 0;
    for (int p = 0; p < o_.num_players; ++p) {
      auto game = LoadScenario(spec().config);
      game->setViZDoomPath(o_.vizdoom_dir + "/vizdoom");
      const std::filesystem::path engine_dir = work_dir_ / ("player" + std::to_string(p));
      std::filesystem::create_directories(engine_dir / "_vizdoom");
      game->setEngineDirectory(engine_dir.string());
      // The scenario's own IWAD if it names one the wheel ships (freedoom1), else freedoom2.
      const std::string iwad = game->getDoomGamePath();
      const std::string base = iwad.substr(iwad.find_last_of('/') + 1);
      game->setDoomGamePath(o_.vizdoom_dir + "/" + (base.empty() ? std::string("freedoom2.wad") : base));
      // freedoom1 is a Doom-1 IWAD (maps E1M1 ... E4M9). A scenario that names no map gets
      // libvizdoom's default, MAP01, which it lacks: the engine still starts, but every
      // new_episode() sends "map map01", which fails, and libvizdoom repeats it for ever (the vizdoom
      // package's new_episode() hangs the same way on freedoom1.cfg). Its first map instead.
      std::string map = game->getDoomMap();
      std::transform(map.begin(), map.end(), map.begin(), [](unsigned char c) { return std::tolower(c); });
      if (base == "freedoom1.wad" && map == "map01") game->setDoomMap("E1M1");
      game->setScreenFormat(o_.channels == 1 ? ::vizdoom::GRAY8 : ::vizdoom::RGB24);
      game->setWindowVisible(false);
      game->setSoundEnabled(false);
      game->setMode(::vizdoom::PLAYER);
      if (o_.episode_timeout >= 0) game->setEpisodeTimeout(static_cast<unsigned int>(o_.episode_timeout));
      if (o_.num_players > 1) {
        // A net game's random seed is agreed on when the players connect (in init()), and a new
        // episode keeps it: the first episode's seed is set before init too.
        game->setSeed(static_cast<unsigned int>(episode_seed_));
        game->addGameArgs(p == 0 ? HostArgs(port) : JoinArgs(port));
        // A dead player's screen shows the deathmatch scoreboard, whose ping column is the measured
        // network latency (wall-clock times of packets): never the same twice. Not drawn.
        game->addGameArgs("+name Player" + std::to_string(p) + " +colorset " + std::to_string(p) +
                          " +sb_deathmatch_enable 0");
      }
      if (!o_.game_args.empty()) game->addGameArgs(o_.game_args);
      players_[p].game = std::move(game);
    }
    Drive([&](int p) {
      try {
        players_[p].game->init();
      } catch (const std::exception& e) {
        // libvizdoom's exceptions say little on their own ("Unexpected ViZDoom instance crash."):
        // say which engine, and where its arguments and files are.
        throw std::runtime_error("ViZDoom: the engine of player " + std::to_string(p) + " failed to start (" +
                                 e.what() + "); scenario " + o_.cfg_path + ", engine " + o_.vizdoom_dir + "/vizdoom" +
                                 (o_.game_args.empty() ? "" : ", game_args '" + o_.game_args + "'"));
      }
    });
    started_ = true;
  }

  // A new directory of our own under the system's temporary directory ($TMPDIR, else /tmp).
  static std::filesystem::path MakeTempDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "parallel_pool_vizdoom_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("ViZDoom: cannot create a temporary directory for the engine (" + pattern +
                               "): " + std::strerror(errno));
    }
    return pattern;
  }

  // A deathmatch; a dead player respawns by itself viz_respawn_delay (1 s) after its death
  // (sv_forcerespawn), not by respawn_player(), whose tics of one engine alone would stall a net game.
  std::string HostArgs(int port) const {
    return "-host " + std::to_string(o_.num_players) + " -port " + std::to_string(port) +
           " +viz_connect_timeout 60 -deathmatch +sv_spawnfarthest 1 +sv_forcerespawn 1";
  }
  static std::string JoinArgs(int port) {
    return "-join 127.0.0.1 -port " + std::to_string(port) + " +viz_connect_timeout 60";
  }

  // Runs fn for every player under the watchdog: if the engines make no progress in
  // engine_timeout seconds (a multi-player game's engines can stall waiting for each other's
  // network tics, and nothing in libvizdoom times out), the watchdog kills them, which ends the
  // waits (libvizdoom sees its engine exit), and the call raises. The game restarts at the next reset.
  void Drive(const std::function<void(int)>& fn, std::chrono::nanoseconds turn = std::chrono::nanoseconds(0)) {
    if (o_.engine_timeout > 0 && !watchdog_) {
      watchdog_ = std::make_unique<Watchdog>(std::chrono::seconds(o_.engine_timeout), [this] { KillEngines(); });
    }
    if (watchdog_) watchdog_->Arm();
    std::exception_ptr error;
    try {
      if (threads_) {
        threads_->RunInTurn(fn, turn);
      } else {
        fn(0);
      }
    } catch (...) {
      error = std::current_exception();
    }
    const bool expired = watchdog_ && watchdog_->Disarm();
    if (expired) {
      started_ = false;
      throw std::runtime_error("ViZDoom: the engines made no progress in " + std::to_string(o_.engine_timeout) +
                               " s (engine_timeout) and were killed; the next reset starts them again");
    }
    if (error) {
      // An engine that failed mid-game is gone: start again at the next reset.
      started_ = false;
      std::rethrow_exception(error);
    }
  }

  // Kills this env's engine processes: our children whose working directory is a player's own.
  void KillEngines() {
    const std::string self = std::to_string(::getpid());
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
      const std::string pid = entry.path().filename().string();
      if (pid.empty() || !std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
      std::ifstream stat(entry.path() / "stat");
      std::string line;
      if (!std::getline(stat, line)) continue;
      const std::size_t close = line.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream fields(line.substr(close + 1));
      std::string state, ppid;
      fields >> state >> ppid;
      if (ppid != self) continue;
      std::error_code link_error;
      const std::filesystem::path cwd = std::filesystem::read_symlink(entry.path() / "cwd", link_error);
      if (link_error || cwd.parent_path() != work_dir_) continue;
      ::kill(static_cast<pid_t>(std::stol(pid)), SIGKILL);
    }
  }

  // One tic of a multi-player game: every player's advance_action(1, update), the host's first,
  // each next player's once the one before has returned or kNetTurn has passed.
  //
  // Why not every player's make_action(a, frame_skip) at once, as the vizdoom package is used
  // alone: a joiner's engine (ZDoom's d_net.cpp NetUpdate, for every player but the host, the
  // "arbitrator") keeps its clock in step with the host's by making one tic command more
  // (gametime--) when the host's latest command has arrived by the time it checks, and one fewer
  // (skiptics) after 4 checks at which it had not. Driven at once, the host's packet arrives before
  // or after the joiner's check as the OS schedules them: which tic a joiner's action lands on,
  // and how many tics an engine runs per make_action, change from run to run (tests/
  // test_vizdoom.py has the measurements), and a joiner that has fallen to the host's command
  // count makes both engines wait for each other's next command for ever (the stalls).
  //
  // In turn, the host's packet of this tic has always arrived at a joiner's check, so the joiner
  // settles one command ahead of the host and stays there: no adjustment, the host never waits
  // for the joiner, and every run gives the same game. From a state the settling tics have not
  // reached yet (after new_episode, whose tics run at once), the host cannot finish its tic
  // alone: the turn passes after kNetTurn, the joiner's check then sees the host's command and
  // makes the command that puts it ahead.
  void NetTic(bool update) {
    Drive([&](int p) { players_[p].game->advanceAction(1, update); }, kNetTurn);
  }

  // Whether the next tic reaches the episode timeout (isEpisodeTimeoutReached after it).
  static bool TimeoutAtNextTic(::vizdoom::DoomGame& game) {
    const unsigned int timeout = game.getEpisodeTimeout();
    return timeout > 0 && game.getEpisodeTime() + 1 >= game.getEpisodeStartTime() + timeout;
  }

  // The player's current screen, resized, pushed onto its stack (every slot on a reset). A
  // finished episode has no screen: its frame is zeros (as vizdoom's Gymnasium wrapper).
  void PushFrame(Player& pl, bool fill_stack) {
    const ::vizdoom::GameStatePtr state = pl.game->getState();
    if (!state || !state->screenBuffer) {
      std::fill(pl.resized.begin(), pl.resized.end(), uint8_t{0});
    } else if (o_.height == screen_height_ && o_.width == screen_width_) {
      std::memcpy(pl.resized.data(), state->screenBuffer->data(), frame_bytes_);
    } else {
      pl.resizer.Resize(state->screenBuffer->data(), pl.resized.data());
    }
    if (fill_stack) {
      for (int k = 0; k < o_.stack_num; ++k) {
        std::memcpy(pl.stack.data() + k * frame_bytes_, pl.resized.data(), frame_bytes_);
      }
    } else {
      std::memmove(pl.stack.data(), pl.stack.data() + frame_bytes_, frame_bytes_ * (o_.stack_num - 1));
      std::memcpy(pl.stack.data() + (o_.stack_num - 1) * frame_bytes_, pl.resized.data(), frame_bytes_);
    }
  }

  // Player p's row: its frame stack as planes (C, H, W per frame), its game variables, its reward.
  void Write(Slot& slot, int p) {
    Player& pl = players_[p];
    const std::size_t plane = static_cast<std::size_t>(o_.height) * o_.width;
    uint8_t* obs = slot.Get<uint8_t>(obs_) + static_cast<std::size_t>(p) * frame_bytes_ * o_.stack_num;
    for (int k = 0; k < o_.stack_num; ++k) {
      const uint8_t* frame = pl.stack.data() + k * frame_bytes_;
      for (int c = 0; c < o_.channels; ++c) {
        uint8_t* out = obs + (static_cast<std::size_t>(k) * o_.channels + c) * plane;
        for (std::size_t i = 0; i < plane; ++i) out[i] = frame[i * o_.channels + c];
      }
    }
    for (std::size_t v = 0; v < variables_.size(); ++v) {
      slot.Get<double>(variable_fields_[v])[p] = pl.game->getGameVariable(variables_[v]);
    }
    if (reward_field_ >= 0) slot.Get<double>(reward_field_)[p] = pl.reward;
  }

  const VizdoomOptions o_;
  const int obs_, seed_field_, reward_field_, action_field_;
  std::vector<::vizdoom::GameVariable> variables_;
  std::vector<int> variable_fields_;
  std::optional<ActionSet> actions_;  // made with the env's first engine
  int screen_height_ = 0, screen_width_ = 0;
  // render() at another size than the screen's: the screen, then the resizer that shrinks it.
  std::vector<uint8_t> render_screen_;
  std::optional<AreaResizer> render_resizer_;
  std::size_t frame_bytes_ = 0;
  std::vector<Player> players_;
  std::unique_ptr<PlayerThreads> threads_;
  std::unique_ptr<Watchdog> watchdog_;  // made on the first engine call; destroyed before the games
  std::filesystem::path work_dir_;      // the engines' working directories, inside it
  bool started_ = false;
  int64_t episode_seed_ = 0;
};

}  // namespace pp::vizdoom
