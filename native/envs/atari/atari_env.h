// One Atari game on its own ALEInterface, with EnvPool's Atari v5 preprocessing done here in C++:
// frame skip with max-pooling, grey/RGB from our palette tables, area resize, frame stack.
#pragma once

#include <ale/ale_interface.hpp>
#include <ale/games/Roms.hpp>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/atari/preprocess.h"

namespace pp::atari {

// Gymnasium's v5 time limit: 108,000 emulator frames, 27,000 agent steps at frame_skip 4.
constexpr int64_t kDefaultMaxEpisodeSteps = 27000;

// Every config key of an Atari task, with EnvPool 1.2.5's defaults (envpool.make_spec("Pong-v5")).
// repeat_action_probability is 0 as in EnvPool, not ALE v5's 0.25: users switch from EnvPool with
// its defaults in their scripts and published numbers; pass 0.25 for Machado et al.'s sticky actions.
inline Config AtariDefaults(const std::string& rom_path) {
  return Config{{"max_episode_steps", kDefaultMaxEpisodeSteps},
                {"img_height", int64_t{84}},
                {"img_width", int64_t{84}},
                {"stack_num", int64_t{4}},
                {"gray_scale", true},
                {"frame_skip", int64_t{4}},
                {"noop_max", int64_t{30}},
                {"episodic_life", false},
                {"last_life_ends_episode", true},
                {"zero_discount_on_life_loss", false},
                {"reward_clip", false},
                {"use_fire_reset", true},
                {"repeat_action_probability", 0.0},
                {"full_action_space", false},
                {"mode", int64_t{-1}},
                {"difficulty", int64_t{-1}},
                {"rom_path", rom_path}};
}

// The preprocessing settings, validated (ValueError in Python: std::invalid_argument).
struct AtariOptions {
  int height, width, stack_num, channels, frame_skip, noop_max, mode, difficulty;
  bool episodic_life, last_life_ends_episode, zero_discount_on_life_loss, reward_clip, use_fire_reset,
      full_action_space;
  double repeat_action_probability;

  static AtariOptions From(const Config& c) {
    auto in_range = [&](const std::string& key, int64_t low, int64_t high) {
      const int64_t v = c.GetInt(key);
      if (v < low || v > high) {
        throw std::invalid_argument(key + " must be in [" + std::to_string(low) + ", " + std::to_string(high) +
                                    "], got " + std::to_string(v));
      }
      return static_cast<int>(v);
    };
    AtariOptions o{};
    // Area interpolation only shrinks (OpenCV switches to bilinear for enlarging).
    o.height = in_range("img_height", 1, kScreenHeight);
    o.width = in_range("img_width", 1, kScreenWidth);
    o.stack_num = in_range("stack_num", 1, 64);
    o.channels = c.GetBool("gray_scale") ? 1 : 3;
    o.frame_skip = in_range("frame_skip", 1, 64);
    o.noop_max = in_range("noop_max", 0, 100000);
    o.mode = in_range("mode", -1, 255);
    o.difficulty = in_range("difficulty", -1, 255);
    o.episodic_life = c.GetBool("episodic_life");
    o.last_life_ends_episode = c.GetBool("last_life_ends_episode");
    o.zero_discount_on_life_loss = c.GetBool("zero_discount_on_life_loss");
    o.reward_clip = c.GetBool("reward_clip");
    o.use_fire_reset = c.GetBool("use_fire_reset");
    o.full_action_space = c.GetBool("full_action_space");
    o.repeat_action_probability = c.GetFloat("repeat_action_probability");
    if (!(o.repeat_action_probability >= 0.0 && o.repeat_action_probability <= 1.0)) {
      throw std::invalid_argument("repeat_action_probability must be in [0, 1], got " +
                                  std::to_string(o.repeat_action_probability));
    }
    return o;
  }
};

// A fresh ALEInterface on `rom_path` with ALE's own randomness off: sticky actions are drawn from
// the env's rng() instead, so that reset(seed=...) and the pool's (seed, env_id) seeding govern them.
inline std::unique_ptr<ale::ALEInterface> MakeAle(const std::string& rom_path, int mode, int difficulty) {
  auto ale = std::make_unique<ale::ALEInterface>();
  ale->setInt("random_seed", 0);
  ale->setFloat("repeat_action_probability", 0.0f);
  ale->setInt("frame_skip", 1);
  ale->setInt("max_num_frames_per_episode", 0);  // the env counts agent steps itself
  ale->loadROM(rom_path);
  if (mode >= 0) ale->setMode(static_cast<ale::game_mode_t>(mode));
  if (difficulty >= 0) ale->setDifficulty(static_cast<ale::difficulty_t>(difficulty));
  return ale;
}

// The action set the agent indexes into: ALE's minimal set, or all 18 with full_action_space.
inline ale::ActionVect ActionSet(ale::ALEInterface& ale, bool full_action_space) {
  return full_action_space ? ale.getLegalActionSet() : ale.getMinimalActionSet();
}

// ALE's palette (NTSC), read once through its own conversion functions.
inline Palette ReadPalette(ale::ALEInterface& ale) {
  Palette p{};
  uint8_t index[256];
  for (int i = 0; i < 256; ++i) index[i] = static_cast<uint8_t>(i);
  uint8_t rgb[256 * 3];
  ale.theOSystem->colourPalette().applyPaletteGrayscale(p.gray, index, 256);
  ale.theOSystem->colourPalette().applyPaletteRGB(rgb, index, 256);
  std::memcpy(p.rgb, rgb, sizeof(rgb));
  return p;
}

// The game's settings (action set, modes) without loading the emulator: ALE matches the ROM by its
// file name. Null for a ROM ALE does not support.
inline std::unique_ptr<ale::RomSettings> RomSettingsFor(const std::string& rom_path) {
  return std::unique_ptr<ale::RomSettings>(ale::buildRomRLWrapper(rom_path, std::string()));
}

inline EnvSpec MakeAtariSpec(const Config& config) {
  const AtariOptions o = AtariOptions::From(config);
  auto settings = RomSettingsFor(config.GetString("rom_path"));
  if (!settings) throw std::invalid_argument("ALE does not support the ROM " + config.GetString("rom_path"));
  auto check_choice = [](const char* key, int value, const auto& available) {
    if (value < 0) return;
    if (std::find(available.begin(), available.end(), static_cast<unsigned>(value)) == available.end()) {
      std::string list;
      for (const auto m : available) list += (list.empty() ? "" : ", ") + std::to_string(m);
      throw std::invalid_argument(std::string(key) + " must be -1 (the game's default) or one of [" + list + "], got " +
                                  std::to_string(value));
    }
  };
  check_choice("mode", o.mode, settings->getAvailableModes());
  check_choice("difficulty", o.difficulty, settings->getAvailableDifficulties());
  const std::size_t num_actions =
      o.full_action_space ? std::size_t{PLAYER_A_MAX} : settings->getMinimalActionSet().size();
  EnvSpec spec;
  // EnvPool's layout: (stack_num, H, W) grey; (stack_num * 3, H, W) RGB, each frame as 3 planes.
  spec.state.push_back(Box("obs", Dtype::kUInt8, {o.stack_num * o.channels, o.height, o.width}, {0.0}, {255.0}));
  spec.state.push_back(Box("info:lives", Dtype::kInt32, {}));
  // EnvPool's keys, not ale_py's: the reward before reward_clip, the real game over.
  spec.state.push_back(WithPresence(Box("info:reward", Dtype::kFloat64, {}), InfoPresence::kExtra));
  spec.state.push_back(WithPresence(Box("info:terminated", Dtype::kBool, {}), InfoPresence::kExtra));
  // EnvPool's too: the console's 128 bytes of RAM after the step.
  spec.state.push_back(WithPresence(Box("info:ram", Dtype::kUInt8, {kRamBytes}, {0.0}, {255.0}), InfoPresence::kExtra));
  if (o.zero_discount_on_life_loss) {
    spec.state.push_back(WithPresence(Box("info:life_loss", Dtype::kBool, {}), InfoPresence::kExtra));
  }
  spec.action.push_back(Discrete("action", static_cast<int64_t>(num_actions)));
  spec.render_shape = {kScreenHeight, kScreenWidth, 3};
  spec.render_fps = 30;  // ale_py's AtariEnv.metadata
  return spec;
}

class AtariEnv : public Env {
 public:
  AtariEnv(const EnvSpec& spec, int env_id)
      : Env(spec, env_id),
        o_(AtariOptions::From(spec.config)),
        ale_(MakeAle(spec.config.GetString("rom_path"), o_.mode, o_.difficulty)),
        action_set_(ActionSet(*ale_, o_.full_action_space)),
        palette_(ReadPalette(*ale_)),
        resizer_(kScreenHeight, kScreenWidth, o_.height, o_.width, o_.channels),
        frame_bytes_(static_cast<std::size_t>(o_.height) * o_.width * o_.channels),
        stack_(frame_bytes_ * o_.stack_num),
        pooled_(static_cast<std::size_t>(kScreenPixels) * o_.channels),
        resized_(frame_bytes_),
        cached_screens_{std::vector<uint8_t>(kScreenPixels), std::vector<uint8_t>(kScreenPixels)},
        horizontal_rows_(static_cast<std::size_t>(kScreenHeight) * resizer_.row_floats()),
        obs_(spec.StateIndex("obs")),
        lives_field_(spec.StateIndex("info:lives")),
        reward_field_(spec.StateIndex("info:reward")),
        terminated_field_(spec.StateIndex("info:terminated")),
        ram_field_(spec.StateIndex("info:ram")),
        life_loss_field_(o_.zero_discount_on_life_loss ? spec.StateIndex("info:life_loss") : -1),
        action_field_(spec.ActionIndex("action")) {
    has_fire_ = action_set_.size() >= 3 && action_set_[1] == ale::PLAYER_A_FIRE;
  }

  void Reset() override {
    // Under episodic_life a lost life ends the agent's episode but not the game: play on.
    if (!continue_game_) {
      ale_->reset_game();
      game_steps_ = 0;
      // No-op starts: uniform in [1, noop_max] frames, as Gymnasium's AtariPreprocessing.
      const int64_t noops = o_.noop_max > 0 ? rng().UniformInt(1, o_.noop_max) : 0;
      for (int64_t i = 0; i < noops; ++i) {
        ale_->act(ale::PLAYER_A_NOOP);
        if (ale_->game_over()) ale_->reset_game();
      }
      last_action_ = ale::PLAYER_A_NOOP;
    }
    continue_game_ = false;
    if (o_.use_fire_reset && has_fire_) {
      ale_->act(ale::PLAYER_A_FIRE);
      if (ale_->game_over()) ale_->reset_game();
    }
    lives_ = ale_->lives();
    // The first observation: the current screen (its pooling partner is black, as Gymnasium's
    // zero-filled buffer), repeated over the whole stack.
    std::memcpy(screens_[0], ale_->getScreen().getArray(), kScreenPixels);
    std::memset(screens_[1], 0, kScreenPixels);
    PushFrame(/*fill_stack=*/true, /*last_frame_fresh=*/true);
    Slot slot = Allocate();
    WriteObs(slot);
    *slot.Get<int32_t>(lives_field_) = lives_;
    *slot.Get<double>(reward_field_) = 0.0;
    *slot.Get<bool>(terminated_field_) = false;
    WriteRam(slot);
    if (life_loss_field_ >= 0) *slot.Get<bool>(life_loss_field_) = false;
  }

  StepResult Step(const Action& action) override {
    const int64_t index = *action.Get<int64_t>(action_field_);  // in range: the core checks it against the spec
    const ale::Action chosen = action_set_[static_cast<std::size_t>(index)];
    double reward = 0.0;
    bool game_over = false;
    bool last_frame_fresh = false;
    for (int t = 0; t < o_.frame_skip; ++t) {
      // Sticky actions per frame, as ALE: with probability p the previous frame's action repeats.
      if (o_.repeat_action_probability <= 0.0 || rng().Uniform01() >= o_.repeat_action_probability) {
        last_action_ = chosen;
      }
      reward += ale_->act(last_action_);
      if (ale_->game_over()) {
        // As Gymnasium's AtariPreprocessing: stop at once; the pooling buffers keep what they had.
        game_over = true;
        break;
      }
      if (t == o_.frame_skip - 2) std::memcpy(screens_[1], ale_->getScreen().getArray(), kScreenPixels);
      if (t == o_.frame_skip - 1) {
        std::memcpy(screens_[0], ale_->getScreen().getArray(), kScreenPixels);
        last_frame_fresh = true;
      }
    }
    ++game_steps_;
    const int lives = ale_->lives();
    const bool life_loss = lives < lives_;
    lives_ = lives;
    const bool time_up = spec().max_episode_steps > 0 && game_steps_ >= spec().max_episode_steps;

    StepResult result;
    result.reward = o_.reward_clip ? static_cast<double>((reward > 0.0) - (reward < 0.0)) : reward;
    // Under episodic_life a lost life ends the agent's episode; the last one too (Gymnasium's
    // AtariPreprocessing), or, with last_life_ends_episode=False, play goes on to the game's end
    // (EnvPool's and baselines' EpisodicLifeEnv: 0 < lives < previous lives).
    const bool life_ends = o_.episodic_life && life_loss && (o_.last_life_ends_episode || lives > 0);
    result.terminated = game_over || life_ends;
    result.truncated = !result.terminated && time_up;
    continue_game_ = life_ends && !game_over && !time_up;

    PushFrame(/*fill_stack=*/false, last_frame_fresh);
    Slot slot = Allocate();
    WriteObs(slot);
    *slot.Get<int32_t>(lives_field_) = lives;
    *slot.Get<double>(reward_field_) = reward;
    *slot.Get<bool>(terminated_field_) = game_over;
    WriteRam(slot);
    if (life_loss_field_ >= 0) *slot.Get<bool>(life_loss_field_) = life_loss;
    return result;
  }

  void Render(uint8_t* rgb) override { ToRgb(palette_, ale_->getScreen().getArray(), rgb); }

  // For the raw benchmark loop: the emulator alone, one frame.
  ale::ALEInterface& ale() { return *ale_; }

 private:
  void WriteRam(const Slot& slot) const {
    std::memcpy(slot.Get<uint8_t>(ram_field_), ale_->getRAM().array(), kRamBytes);
  }

  // Pools screens_[0] with screens_[1] (frame_skip > 1), converts, resizes, and writes the frame
  // into the ring (every slot of it on a reset). When the game ended before the last frame of the
  // skip, screens_[0] was not refreshed: Gymnasium's AtariPreprocessing then pools its buffer 0,
  // which holds the previous step's pooled frame (np.maximum(..., out=obs_buffer[0])), so we start
  // from our previous pooled frame likewise, and the terminal observation is the oracle's.
  void PushFrame(bool fill_stack, bool last_frame_fresh) {
    const bool same_size = o_.height == kScreenHeight && o_.width == kScreenWidth;
    const uint8_t* hwc = pooled_.data();
    if (o_.channels == 1 && !same_size) {
      PoolAndResizeGray(last_frame_fresh);
      hwc = resized_.data();
    } else {
      Pool(last_frame_fresh);
      if (!same_size) {
        resizer_.Resize(pooled_.data(), resized_.data());
        hwc = resized_.data();
      }
    }
    PushToStack(hwc, fill_stack);
  }

  // The grey path, row by row with a cache: a source row whose two palette-index rows are those of
  // the last fresh pooling gives the same pooled row and the same horizontal resize pass, so both
  // are kept (Atari screens change in a few rows per step: in Pong the paddles and the ball).
  // Exact: the cache is keyed on the inputs themselves. A stale pooling (game over inside the
  // skip: pooled = max(previous pooled, frame)) is not a function of the index rows: it drops it.
  void PoolAndResizeGray(bool last_frame_fresh) {
    const uint8_t* gray = palette_.gray;
    const uint8_t* gray_max = GrayMaxTable(palette_);
    const bool pool = o_.frame_skip > 1;
    const std::size_t row_floats = resizer_.row_floats();
    const bool reuse = row_cache_valid_ && last_frame_fresh;
    for (int y = 0; y < kScreenHeight; ++y) {
      const std::size_t at = static_cast<std::size_t>(y) * kScreenWidth;
      const uint8_t* a = screens_[0] + at;
      const uint8_t* b = screens_[1] + at;
      uint8_t* cached_a = &cached_screens_[0][at];
      uint8_t* cached_b = &cached_screens_[1][at];
      if (reuse && std::memcmp(a, cached_a, kScreenWidth) == 0 &&
          (!pool || std::memcmp(b, cached_b, kScreenWidth) == 0)) {
        continue;
      }
      uint8_t* row = pooled_.data() + at;
      if (last_frame_fresh && pool) {
        for (int x = 0; x < kScreenWidth; ++x) row[x] = gray_max[a[x] << 8 | b[x]];
      } else if (last_frame_fresh) {
        for (int x = 0; x < kScreenWidth; ++x) row[x] = gray[a[x]];
      } else if (pool) {
        for (int x = 0; x < kScreenWidth; ++x) row[x] = std::max(row[x], gray[b[x]]);
      }
      resizer_.HorizontalPass(row, &horizontal_rows_[static_cast<std::size_t>(y) * row_floats]);
      std::memcpy(cached_a, a, kScreenWidth);
      std::memcpy(cached_b, b, kScreenWidth);
    }
    row_cache_valid_ = last_frame_fresh;
    resizer_.VerticalPass(horizontal_rows_.data(), resized_.data());
  }

  // Pools the full frame into pooled_ (grey or HWC RGB).
  void Pool(bool last_frame_fresh) {
    uint8_t* pooled = pooled_.data();
    if (o_.channels == 1) {
      const uint8_t* gray = palette_.gray;
      if (last_frame_fresh && o_.frame_skip > 1) {
        const uint8_t* gray_max = GrayMaxTable(palette_);
        for (int i = 0; i < kScreenPixels; ++i) pooled[i] = gray_max[screens_[0][i] << 8 | screens_[1][i]];
      } else if (last_frame_fresh) {
        ToGray(palette_, screens_[0], pooled);
      } else if (o_.frame_skip > 1) {
        for (int i = 0; i < kScreenPixels; ++i) pooled[i] = std::max(pooled[i], gray[screens_[1][i]]);
      }
    } else {
      if (last_frame_fresh) ToRgb(palette_, screens_[0], pooled);
      if (o_.frame_skip > 1) {
        for (int i = 0; i < kScreenPixels; ++i) {
          const uint8_t* c = palette_.rgb[screens_[1][i]];
          for (int k = 0; k < 3; ++k) pooled[3 * i + k] = std::max(pooled[3 * i + k], c[k]);
        }
      }
    }
  }

  // Writes a frame (HWC) into the ring, as CHW planes for RGB; every slot of it on a reset.
  void PushToStack(const uint8_t* hwc, bool fill_stack) {
    head_ = (head_ + 1) % o_.stack_num;
    uint8_t* frame = stack_.data() + static_cast<std::size_t>(head_) * frame_bytes_;
    if (o_.channels == 1) {
      std::memcpy(frame, hwc, frame_bytes_);
    } else {  // HWC -> CHW planes
      const std::size_t plane = static_cast<std::size_t>(o_.height) * o_.width;
      for (std::size_t i = 0; i < plane; ++i) {
        for (std::size_t k = 0; k < 3; ++k) frame[k * plane + i] = hwc[3 * i + k];
      }
    }
    if (fill_stack) {
      for (int s = 0; s < o_.stack_num; ++s) {
        if (s != head_) std::memcpy(stack_.data() + static_cast<std::size_t>(s) * frame_bytes_, frame, frame_bytes_);
      }
    }
  }

  // The stack, oldest frame first, into the output row.
  void WriteObs(const Slot& slot) const {
    uint8_t* out = slot.Get<uint8_t>(obs_);
    for (int s = 0; s < o_.stack_num; ++s) {
      const int ring = (head_ + 1 + s) % o_.stack_num;
      std::memcpy(out + static_cast<std::size_t>(s) * frame_bytes_,
                  stack_.data() + static_cast<std::size_t>(ring) * frame_bytes_, frame_bytes_);
    }
  }

  const AtariOptions o_;
  std::unique_ptr<ale::ALEInterface> ale_;
  const ale::ActionVect action_set_;
  const Palette palette_;
  AreaResizer resizer_;
  const std::size_t frame_bytes_;
  std::vector<uint8_t> stack_;    // stack_num frames, a ring; head_ is the newest
  std::vector<uint8_t> pooled_;   // the last max-pooled 210x160 frame, grey or HWC RGB
  std::vector<uint8_t> resized_;  // the resized frame, HWC
  // The grey path's row cache: the index rows each pooled row was made from, and each source row's
  // horizontal resize pass.
  std::vector<uint8_t> cached_screens_[2];
  std::vector<float> horizontal_rows_;
  bool row_cache_valid_ = false;
  uint8_t screens_[2][kScreenPixels];  // palette indices of the last and the second-last frame
  const int obs_, lives_field_, reward_field_, terminated_field_, ram_field_, life_loss_field_, action_field_;
  bool has_fire_ = false;
  // Set by a step that lost a life under episodic_life: the next Reset plays on in the same game.
  // Any other Reset (an auto-reset after a game over, or the user's) starts a new game.
  bool continue_game_ = false;
  int head_ = 0;
  int lives_ = 0;
  int64_t game_steps_ = 0;  // agent steps since the game began: max_episode_steps counts these
  ale::Action last_action_ = ale::PLAYER_A_NOOP;
};

}  // namespace pp::atari
