// CliffWalking-v1 (and CliffWalkingSlippery-v1): Gymnasium's 4x12 cliff walk (Sutton & Barto,
// example 6.6), with is_slippery, the same transition table and draws as cliffwalking.py.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/common/pygame_raster.h"
#include "envs/toy_text/sprites.h"
#include "envs/toy_text/tabular.h"
#include "envs/toy_text/toy_text_env.h"

namespace pp::toy_text {

struct CliffMap {
  static constexpr int kRows = 4, kCols = 12, kNumStates = kRows * kCols;
  static constexpr int64_t kStart = 3 * kCols;  // (3, 0)
  // Actions UP, RIGHT, DOWN, LEFT as (drow, dcol).
  static constexpr int kMoves[4][2] = {{-1, 0}, {0, 1}, {1, 0}, {0, -1}};
  static bool Cliff(int row, int col) { return row == 3 && col >= 1 && col <= kCols - 2; }
  static constexpr int kCell = 60;  // CliffWalkingEnv.cell_size: the window is 720 x 240
  // Gymnasium 1.4's: 64, the size its art is drawn for (ART_CELL_SIZE): the window is 768 x 256.
  static constexpr int kCell14 = 64;
};

// CliffWalkingEnv._calculate_transition_prob for every state and action; slippery: the two
// perpendicular moves too, each of the three with probability 1/3.
inline TransitionTable CliffWalkingTable(bool slippery) {
  using M = CliffMap;
  TransitionTable table(M::kNumStates, 4);
  for (int s = 0; s < M::kNumStates; ++s) {
    const int row = s / M::kCols, col = s % M::kCols;
    for (int a = 0; a < 4; ++a) {
      const int moves[3] = {(a + 3) % 4, a, (a + 1) % 4};
      const int count = slippery ? 3 : 1;
      for (int k = 0; k < count; ++k) {
        const int m = slippery ? moves[k] : a;
        const int r = std::clamp(row + M::kMoves[m][0], 0, M::kRows - 1);
        const int c = std::clamp(col + M::kMoves[m][1], 0, M::kCols - 1);
        const double prob = 1.0 / count;
        if (M::Cliff(r, c)) {
          table.Add(s, a, {prob, M::kStart, -100.0, false});
        } else {
          table.Add(s, a, {prob, int64_t{r} * M::kCols + c, -1.0, r == M::kRows - 1 && c == M::kCols - 1});
        }
      }
    }
  }
  return table;
}

inline Config CliffWalkingDefaults(bool slippery) {
  // Gymnasium registers no time limit for either id.
  return Config{{"max_episode_steps", int64_t{0}}, {"is_slippery", slippery}};
}

inline EnvSpec CliffWalkingSpec(const std::string& /*task_id*/, const Config& config, Art art) {
  EnvSpec spec;
  spec.state = {Discrete("obs", CliffMap::kNumStates), Box("info:prob", Dtype::kFloat64, {})};
  spec.action = {Discrete("action", 4)};
  const int cell = art == Art::kGymnasium1_4 ? CliffMap::kCell14 : CliffMap::kCell;
  spec.render_shape = {CliffMap::kRows * cell, CliffMap::kCols * cell, 3};
  spec.render_fps = 4;
  spec.tables["P"] = CliffWalkingTable(config.GetBool("is_slippery")).Flatten();
  return spec;
}

class CliffWalkingEnv final : public GridTableEnv {
 public:
  CliffWalkingEnv(const EnvSpec& spec, int env_id, SpriteSheetPtr sheet)
      : GridTableEnv(spec, env_id, std::move(sheet)),
        table_(TableFromFlat(spec.tables.at("P"), CliffMap::kNumStates, 4)),
        initial_(StartOnly()) {}

  void Reset() override {
    state_ = initial_.Sample(np_random());  // always the start, but it draws as Gymnasium does
    last_action_ = -1;                      // lastaction = None
    Write(1.0);
  }

  StepResult Step(const Action& action) override { return TableStep(table_, action); }

 private:
  // CliffWalkingEnv._render_gui's rgb_array frame (ArtEnv::Render picks the art):
  // Gymnasium 1.1-1.3, cell by cell in state order: the checkered mountain, the cliff, the cliff's edge
  // above it, stool and cookie, and the elf (facing the last action, down after a reset) drawn 0.1
  // cell higher, under the cells drawn after it.
  void Render11(uint8_t* rgb) override {
    if (!sprites_loaded_) LoadSprites();
    // A new (black) surface per frame, as LunarLander and BipedalWalker draw: no env holds a
    // window-sized surface between frames.
    raster::Surface surface(CliffMap::kCols * CliffMap::kCell, CliffMap::kRows * CliffMap::kCell);
    using M = CliffMap;
    for (int s = 0; s < M::kNumStates; ++s) {
      const int row = s / M::kCols, col = s % M::kCols;
      const int x = col * M::kCell, y = row * M::kCell;
      const int checker = (row % 2) ^ (col % 2);
      raster::Blit(surface, *mountain_bg_[checker], x, y);
      if (M::Cliff(row, col)) raster::Blit(surface, *cliff_, x, y);
      if (row < M::kRows - 1 && M::Cliff(row + 1, col)) raster::Blit(surface, *near_cliff_[checker], x, y);
      if (s == M::kStart) raster::Blit(surface, *start_, x, y);
      if (s == M::kNumStates - 1) raster::Blit(surface, *goal_, x, y);
      // (x, y - 0.1 * 60): y - 6.000000000000001 rounds to the integer y - 6 in doubles.
      if (s == state_) raster::Blit(surface, *elves_[last_action_ < 0 ? 2 : last_action_], x, y - M::kCell / 10);
    }
    surface.WriteRgb(rgb, false, 0, surface.width());
  }

  // Gymnasium 1.4, cell by cell in state order: the ground, the cliff (its left and right ends, and
  // the middle alternating by column), the letter S, the letter G and the flag, the agent (one
  // sprite). The art is drawn for 64-pixel cells, the cells' size: every sprite at its own size, at
  // LETTER_OFFSET (8, 8), FLAG_OFFSET (28, 16) and AGENT_OFFSET (20, 20) in its cell.
  void Render14(uint8_t* rgb) override {
    using M = CliffMap;
    if (!sprites14_) LoadSprites14();
    const Sprites14& art = *sprites14_;
    raster::Surface surface(M::kCols * M::kCell14, M::kRows * M::kCell14);
    for (int s = 0; s < M::kNumStates; ++s) {
      const int row = s / M::kCols, col = s % M::kCols;
      const int x = col * M::kCell14, y = row * M::kCell14;
      raster::Blit(surface, *art.ground, x, y);
      if (M::Cliff(row, col)) {
        // cliff_cols = the columns with cliff: 1 to kCols - 2.
        const SpritePtr& tile = col == 1              ? art.cliff_left
                                : col == M::kCols - 2 ? art.cliff_right
                                                      : art.cliff_mid[static_cast<std::size_t>(col % 2)];
        raster::Blit(surface, *tile, x, y);
      }
      if (s == M::kStart) raster::Blit(surface, *art.letter_s, x + 8, y + 8);
      if (s == M::kNumStates - 1) {
        raster::Blit(surface, *art.letter_g, x + 8, y + 8);
        raster::Blit(surface, *art.goal_flag, x + 28, y + 16);
      }
      if (s == state_) raster::Blit(surface, *art.agent, x + 20, y + 20);
    }
    surface.WriteRgb(rgb, false, 0, surface.width());
  }

  static std::vector<double> StartOnly() {
    std::vector<double> weights(CliffMap::kNumStates, 0.0);
    weights[CliffMap::kStart] = 1.0;
    return weights;
  }

  const TransitionTable table_;
  const InitialStates initial_;
  // Gymnasium 1.1-1.3's sprites, read at the first render(), not at construction: a Gymnasium without
  // these files fails render() only (sprites.h says why).
  void LoadSprites() {
    auto load = [&](const char* name) { return sheet_->Scaled(name, CliffMap::kCell, CliffMap::kCell); };
    elves_ = {load("elf_up.png"), load("elf_right.png"), load("elf_down.png"), load("elf_left.png")};
    start_ = load("stool.png");
    goal_ = load("cookie.png");
    mountain_bg_ = {load("mountain_bg1.png"), load("mountain_bg2.png")};
    near_cliff_ = {load("mountain_near-cliff1.png"), load("mountain_near-cliff2.png")};
    cliff_ = load("mountain_cliff.png");
    sprites_loaded_ = true;
  }

  struct Sprites14 {
    SpritePtr ground, cliff_left, cliff_right;
    std::array<SpritePtr, 2> cliff_mid;  // mid_a (even columns), mid_b (odd)
    SpritePtr letter_s, letter_g, goal_flag, agent;
  };
  // Scaled by cell / ART_CELL_SIZE = 1: each sprite as loaded.
  void LoadSprites14() {
    auto load = [&](const std::string& name) { return sheet_->Image("cliff_walking/" + name + ".png"); };
    Sprites14 art{load("tile_ground"),      load("tile_cliff_left"),
                  load("tile_cliff_right"), {load("tile_cliff_mid_a"), load("tile_cliff_mid_b")},
                  load("letter_s"),         load("letter_g"),
                  load("goal_flag"),        load("agent")};
    sprites14_ = std::make_unique<const Sprites14>(std::move(art));
  }

  std::unique_ptr<const Sprites14> sprites14_;
  bool sprites_loaded_ = false;
  std::array<SpritePtr, 4> elves_;  // facing UP, RIGHT, DOWN, LEFT
  std::array<SpritePtr, 2> mountain_bg_, near_cliff_;
  SpritePtr start_, goal_, cliff_;
};

}  // namespace pp::toy_text
