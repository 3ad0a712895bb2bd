// Taxi-v3: Gymnasium's taxi (Dietterich 2000) with its is_rainy and fickle_passenger kwargs, the
// same transition table, draws, rewards and info (prob, action_mask) as gymnasium's taxi.py.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/common/pygame_raster.h"
#include "envs/toy_text/sprites.h"
#include "envs/toy_text/tabular.h"

namespace pp::toy_text {

struct TaxiMap {
  // Gymnasium's MAP: walls are '|', passable gaps ':'; cell (row, col) is at [1 + row][1 + 2 col].
  static constexpr std::array<const char*, 7> kRows = {"+---------+", "|R: | : :G|", "| : | : : |", "| : : : : |",
                                                       "| | : | : |", "|Y| : |B: |", "+---------+"};
  static constexpr int kSize = 5, kNumStates = 500, kNumActions = 6;
  // R, G, Y, B
  static constexpr std::array<std::pair<int, int>, 4> kLocs = {{{0, 0}, {0, 4}, {4, 0}, {4, 3}}};

  // WINDOW_SIZE (550, 350) over the 11 x 7 map: 50 x 50 cells.
  static constexpr int kCell = 50, kWindowW = 550, kWindowH = 350;
  static bool Gap(int map_row, int map_col) { return kRows[map_row][map_col] == ':'; }
  static int64_t Encode(int row, int col, int pass, int dest) { return ((row * 5 + col) * 5 + pass) * 4 + dest; }
  static std::array<int, 4> Decode(int64_t s) {
    const int dest = static_cast<int>(s % 4);
    s /= 4;
    const int pass = static_cast<int>(s % 5);
    s /= 5;
    const int col = static_cast<int>(s % 5);
    return {static_cast<int>(s / 5), col, pass, dest};
  }
  static int LocIndex(int row, int col) {
    for (int i = 0; i < 4; ++i) {
      if (kLocs[i] == std::make_pair(row, col)) return i;
    }
    return -1;
  }
};

// TaxiEnv.__init__'s P (_build_dry_transitions / _build_rainy_transitions).
inline TransitionTable TaxiTable(bool rainy) {
  using M = TaxiMap;
  TransitionTable table(M::kNumStates, M::kNumActions);
  auto clamp = [](int v) { return std::max(0, std::min(v, M::kSize - 1)); };
  for (int row = 0; row < M::kSize; ++row) {
    for (int col = 0; col < M::kSize; ++col) {
      for (int pass = 0; pass < 5; ++pass) {
        for (int dest = 0; dest < 4; ++dest) {
          const int64_t state = M::Encode(row, col, pass, dest);
          for (int action = 0; action < M::kNumActions; ++action) {
            int new_row = row, new_col = col, new_pass = pass;
            double reward = -1;
            bool terminated = false;
            const bool at_loc = M::LocIndex(row, col) >= 0;
            if (action == 4) {  // pickup
              if (pass < 4 && std::make_pair(row, col) == M::kLocs[pass]) {
                new_pass = 4;
              } else {
                reward = -10;
              }
            } else if (action == 5) {  // dropoff
              if (std::make_pair(row, col) == M::kLocs[dest] && pass == 4) {
                new_pass = dest;
                terminated = true;
                reward = 20;
              } else if (at_loc && pass == 4) {
                new_pass = M::LocIndex(row, col);
              } else {
                reward = -10;
              }
            }
            if (!rainy) {
              if (action == 0) new_row = std::min(row + 1, M::kSize - 1);
              if (action == 1) new_row = std::max(row - 1, 0);
              if (action == 2 && M::Gap(1 + row, 2 * col + 2)) new_col = std::min(col + 1, M::kSize - 1);
              if (action == 3 && M::Gap(1 + row, 2 * col)) new_col = std::max(col - 1, 0);
              table.Add(state, action, {1.0, M::Encode(new_row, new_col, new_pass, dest), reward, terminated});
              continue;
            }
            // Rainy: the intended move with 0.8, each perpendicular one with 0.1 (a blocked one
            // leaves the taxi in place); as Gymnasium, a blocked east/west move has no slips.
            std::pair<int, int> left{row, col}, right{row, col};
            // moves[action] = (intended, left, right) as (drow, dcol)
            static constexpr int kMoves[4][3][2] = {{{1, 0}, {0, -1}, {0, 1}},
                                                    {{-1, 0}, {0, -1}, {0, 1}},
                                                    {{0, 1}, {1, 0}, {-1, 0}},
                                                    {{0, -1}, {1, 0}, {-1, 0}}};
            auto slip = [&](const int* d, int offset) {
              const int r = clamp(row + d[0]), c = clamp(col + d[1]);
              return M::Gap(1 + r, 2 * c + offset) ? std::make_pair(r, c) : std::make_pair(row, col);
            };
            if (action == 0 || action == 1 || (action == 2 && M::Gap(1 + row, 2 * col + 2)) ||
                (action == 3 && M::Gap(1 + row, 2 * col))) {
              new_row = clamp(row + kMoves[action][0][0]);
              new_col = clamp(col + kMoves[action][0][1]);
              left = slip(kMoves[action][1], 2);
              right = slip(kMoves[action][2], 0);
            }
            const int64_t intended = M::Encode(new_row, new_col, new_pass, dest);
            if (action <= 3) {
              table.Add(state, action, {0.8, intended, -1, terminated});
              table.Add(state, action, {0.1, M::Encode(left.first, left.second, new_pass, dest), -1, terminated});
              table.Add(state, action, {0.1, M::Encode(right.first, right.second, new_pass, dest), -1, terminated});
            } else {
              table.Add(state, action, {1.0, intended, reward, terminated});
            }
          }
        }
      }
    }
  }
  return table;
}

inline Config TaxiDefaults() {
  return Config{{"max_episode_steps", int64_t{200}}, {"is_rainy", false}, {"fickle_passenger", false}};
}

inline EnvSpec TaxiSpec(const std::string& /*task_id*/, const Config& config) {
  EnvSpec spec;
  spec.state = {Discrete("obs", TaxiMap::kNumStates), Box("info:prob", Dtype::kFloat64, {}),
                Box("info:action_mask", Dtype::kInt8, {TaxiMap::kNumActions}, {0}, {1})};
  spec.action = {Discrete("action", TaxiMap::kNumActions)};
  spec.render_shape = {TaxiMap::kWindowH, TaxiMap::kWindowW, 3};
  spec.tables["P"] = TaxiTable(config.GetBool("is_rainy")).Flatten();
  return spec;
}

class TaxiEnv final : public Env {
 public:
  TaxiEnv(const EnvSpec& spec, int env_id, SpriteSheetPtr sheet)
      : Env(spec, env_id),
        obs_index_(spec.StateIndex("obs")),
        prob_index_(spec.StateIndex("info:prob")),
        mask_index_(spec.StateIndex("info:action_mask")),
        action_index_(spec.ActionIndex("action")),
        fickle_passenger_(spec.config.GetBool("fickle_passenger")),
        table_(TableFromFlat(spec.tables.at("P"), TaxiMap::kNumStates, TaxiMap::kNumActions)),
        initial_(InitialWeights()),
        sheet_(std::move(sheet)) {}

  void Reset() override {
    state_ = initial_.Sample(np_random());
    // Gymnasium: fickle_passenger and random() < 0.3 (no draw without fickle_passenger).
    fickle_step_ = fickle_passenger_ && np_random().Random() < 0.3;
    last_action_ = -1;  // lastaction = None
    orientation_ = 0;
    Write(1.0);
  }

  StepResult Step(const Action& action) override {
    const int64_t a = action.Get<int64_t>(action_index_)[0];
    const std::vector<Transition>& options = table_.Get(state_, a);
    const Transition& t = options[static_cast<std::size_t>(CategoricalSample(options, np_random()))];
    int64_t next = t.next_state;
    const auto [old_row, old_col, old_pass, old_dest] = TaxiMap::Decode(state_);
    const auto [row, col, pass, dest] = TaxiMap::Decode(next);
    // The fickle passenger changes destination once, on the first move after boarding.
    if (fickle_passenger_ && fickle_step_ && old_pass == 4 && (row != old_row || col != old_col)) {
      fickle_step_ = false;
      int others[3], n = 0;
      for (int i = 0; i < 4; ++i) {
        if (i != old_dest) others[n++] = i;
      }
      next = TaxiMap::Encode(row, col, pass, others[np_random().Choice(3)]);
    }
    state_ = next;
    last_action_ = static_cast<int>(a);
    Write(t.prob);
    return StepResult{t.reward, t.terminated, TimeLimitReached()};
  }

  // TaxiEnv._render_gui's rgb_array frame: the map's background and medians, the four stands as
  // half-transparent colour cells (10 pixels low), the waiting passenger, then the taxi and the
  // hotel (alpha 170, half a cell high) in the order that keeps the lower one in front. As in
  // Gymnasium, the taxi's orientation is the last move seen by a render (a state of rendering).
  void Render(uint8_t* rgb) override {
    if (!sprites_loaded_) LoadSprites();
    // A new (black) surface per frame, as LunarLander and BipedalWalker draw: no env holds a
    // window-sized surface between frames.
    raster::Surface surface(TaxiMap::kWindowW, TaxiMap::kWindowH);
    using M = TaxiMap;
    static constexpr raster::Rgb kLocColors[4] = {{255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {0, 0, 255}};
    const int rows = static_cast<int>(M::kRows.size()), cols = 11;
    auto at = [](int y, int x) { return M::kRows[static_cast<std::size_t>(y)][x]; };
    for (int y = 0; y < rows; ++y) {
      for (int x = 0; x < cols; ++x) {
        const int cx = x * M::kCell, cy = y * M::kCell;
        raster::Blit(surface, *background_, cx, cy);
        const char c = at(y, x);
        if (c == '|' && (y == 0 || at(y - 1, x) != '|')) {
          raster::Blit(surface, *median_vert_[0], cx, cy);
        } else if (c == '|' && (y == rows - 1 || at(y + 1, x) != '|')) {
          raster::Blit(surface, *median_vert_[2], cx, cy);
        } else if (c == '|') {
          raster::Blit(surface, *median_vert_[1], cx, cy);
        } else if (c == '-' && (x == 0 || at(y, x - 1) != '-')) {
          raster::Blit(surface, *median_horiz_[0], cx, cy);
        } else if (c == '-' && (x == cols - 1 || at(y, x + 1) != '-')) {
          raster::Blit(surface, *median_horiz_[2], cx, cy);
        } else if (c == '-') {
          raster::Blit(surface, *median_horiz_[1], cx, cy);
        }
      }
    }
    // get_surf_loc((row, col)) = ((2 col + 1) cell, (row + 1) cell)
    auto surf_x = [](int col) { return (col * 2 + 1) * M::kCell; };
    auto surf_y = [](int row) { return (row + 1) * M::kCell; };
    for (int i = 0; i < 4; ++i) {
      raster::BlitFilled(surface, kLocColors[i], M::kCell, M::kCell, surf_x(M::kLocs[i].second),
                         surf_y(M::kLocs[i].first) + 10, 128);
    }
    const auto [row, col, pass, dest] = M::Decode(state_);
    if (pass < 4) raster::Blit(surface, *passenger_, surf_x(M::kLocs[pass].second), surf_y(M::kLocs[pass].first));
    if (last_action_ >= 0 && last_action_ <= 3) orientation_ = last_action_;
    const int dest_x = surf_x(M::kLocs[dest].second), dest_y = surf_y(M::kLocs[dest].first) - M::kCell / 2;
    if (surf_y(M::kLocs[dest].first) <= surf_y(row)) {
      raster::Blit(surface, *destination_, dest_x, dest_y, 170);
      raster::Blit(surface, *taxis_[orientation_], surf_x(col), surf_y(row));
    } else {
      raster::Blit(surface, *taxis_[orientation_], surf_x(col), surf_y(row));
      raster::Blit(surface, *destination_, dest_x, dest_y, 170);
    }
    surface.WriteRgb(rgb, false, 0, surface.width());
  }

 private:
  static std::vector<double> InitialWeights() {
    std::vector<double> weights(TaxiMap::kNumStates, 0.0);
    for (int64_t s = 0; s < TaxiMap::kNumStates; ++s) {
      const auto [row, col, pass, dest] = TaxiMap::Decode(s);
      if (pass < 4 && pass != dest) weights[static_cast<std::size_t>(s)] += 1.0;
    }
    return weights;
  }

  // TaxiEnv.action_mask
  void WriteMask(int8_t* mask) const {
    const auto [row, col, pass, dest] = TaxiMap::Decode(state_);
    mask[0] = row < 4;
    mask[1] = row > 0;
    mask[2] = col < 4 && TaxiMap::Gap(row + 1, 2 * col + 2);
    mask[3] = col > 0 && TaxiMap::Gap(row + 1, 2 * col);
    mask[4] = pass < 4 && std::make_pair(row, col) == TaxiMap::kLocs[pass];
    mask[5] = pass == 4 && TaxiMap::LocIndex(row, col) >= 0;
  }

  void Write(double prob) {
    Slot out = Allocate();
    out.Get<int64_t>(obs_index_)[0] = state_;
    out.Get<double>(prob_index_)[0] = prob;
    WriteMask(out.Get<int8_t>(mask_index_));
  }

  const int obs_index_;
  const int prob_index_;
  const int mask_index_;
  const int action_index_;
  const bool fickle_passenger_;
  const TransitionTable table_;
  const InitialStates initial_;
  int64_t state_ = 0;
  bool fickle_step_ = false;
  int last_action_ = -1;  // Gymnasium's lastaction, -1 for None
  int orientation_ = 0;   // Gymnasium's taxi_orientation: set at reset, updated by render()
  // The sprites are read at the first render(), not at construction: a Gymnasium without these
  // files (1.4 redrew the art) must fail render() only (sprites.h says why).
  void LoadSprites() {
    auto load = [&](const char* name) { return sheet_->Scaled(name, TaxiMap::kCell, TaxiMap::kCell); };
    taxis_ = {load("cab_front.png"), load("cab_rear.png"), load("cab_right.png"), load("cab_left.png")};
    passenger_ = load("passenger.png");
    destination_ = load("hotel.png");
    median_horiz_ = {load("gridworld_median_left.png"), load("gridworld_median_horiz.png"),
                     load("gridworld_median_right.png")};
    median_vert_ = {load("gridworld_median_top.png"), load("gridworld_median_vert.png"),
                    load("gridworld_median_bottom.png")};
    background_ = load("taxi_background.png");
    sprites_loaded_ = true;
  }

  const SpriteSheetPtr sheet_;
  bool sprites_loaded_ = false;
  std::array<SpritePtr, 4> taxis_;  // facing SOUTH (front), NORTH (rear), EAST (right), WEST (left)
  std::array<SpritePtr, 3> median_horiz_, median_vert_;
  SpritePtr passenger_, destination_, background_;
};

}  // namespace pp::toy_text
