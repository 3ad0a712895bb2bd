// Taxi-v3 and Taxi-v4: Gymnasium's taxi (Dietterich 2000) with the same transition table, draws, rewards
// and info (prob, action_mask) as gymnasium's taxi.py: v3 as Gymnasium 1.2 has it, v4 as 1.3 and 1.4
// (rain slips laterally as navigation names left and right, blocked moves never slip, and the rain's and
// the fickle passenger's probabilities are kwargs).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
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

struct TaxiMap {
  // Gymnasium's MAP: walls are '|', passable gaps ':'; cell (row, col) is at [1 + row][1 + 2 col].
  static constexpr std::array<const char*, 7> kRows = {"+---------+", "|R: | : :G|", "| : | : : |", "| : : : : |",
                                                       "| | : | : |", "|Y| : |B: |", "+---------+"};
  static constexpr int kSize = 5, kNumStates = 500, kNumActions = 6;
  // R, G, Y, B
  static constexpr std::array<std::pair<int, int>, 4> kLocs = {{{0, 0}, {0, 4}, {4, 0}, {4, 3}}};

  // Gymnasium 1.1-1.3's WINDOW_SIZE (550, 350) over the 11 x 7 map: 50 x 50 cells.
  static constexpr int kCell = 50, kWindowW = 550, kWindowH = 350;
  // Gymnasium 1.4's: a 536 x 456 window, the 5 x 5 grid's cells 88 x 56 from (48, 128).
  static constexpr int kWindowW14 = 536, kWindowH14 = 456, kOriginX14 = 48, kOriginY14 = 128, kCellW14 = 88,
                       kCellH14 = 56;
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

// Which taxi.py the task follows: Taxi-v3 (Gymnasium 1.2) or Taxi-v4 (1.3 on), whose config is the one
// with rainy_probability and fickle_probability.
enum class TaxiRules { kV3, kV4 };

inline TaxiRules TaxiRulesOf(const Config& config) {
  return config.Has("rainy_probability") ? TaxiRules::kV4 : TaxiRules::kV3;
}

// TaxiEnv.__init__'s P (_build_dry_transitions / _build_rainy_transitions). `intended`: Taxi-v4's
// rainy_probability (v3: 0.8 intended, 0.1 each side).
inline TransitionTable TaxiTable(bool rainy, TaxiRules rules, double intended) {
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
            // Rainy: the intended move, else a slip to either side (a blocked one leaves the taxi in
            // place). v3: as Gymnasium 1.2, a blocked east/west move has no slips, a north/south move
            // at the edge still slips, and a slip is checked against one wall column per side.
            // v4: no move that is blocked slips, and a slip east or west meets the wall it crosses.
            std::pair<int, int> left{row, col}, right{row, col};
            // moves[action] = (intended, left, right) as (drow, dcol)
            static constexpr int kMovesV3[4][3][2] = {{{1, 0}, {0, -1}, {0, 1}},
                                                      {{-1, 0}, {0, -1}, {0, 1}},
                                                      {{0, 1}, {1, 0}, {-1, 0}},
                                                      {{0, -1}, {1, 0}, {-1, 0}}};
            static constexpr int kMovesV4[4][3][2] = {{{1, 0}, {0, 1}, {0, -1}},
                                                      {{-1, 0}, {0, -1}, {0, 1}},
                                                      {{0, 1}, {-1, 0}, {1, 0}},
                                                      {{0, -1}, {1, 0}, {-1, 0}}};
            const bool v4 = rules == TaxiRules::kV4;
            const auto& moves = v4 ? kMovesV4 : kMovesV3;
            // v3's _calc_new_position(row, col, movement, offset)
            auto slip_v3 = [&](const int* d, int offset) {
              const int r = clamp(row + d[0]), c = clamp(col + d[1]);
              return M::Gap(1 + r, 2 * c + offset) ? std::make_pair(r, c) : std::make_pair(row, col);
            };
            // v4's _calc_new_position(row, col, movement)
            auto slip_v4 = [&](const int* d) {
              const int r = clamp(row + d[0]), c = clamp(col + d[1]);
              if ((d[1] == 1 && !M::Gap(1 + r, 2 * c)) || (d[1] == -1 && !M::Gap(1 + r, 2 * c + 2))) {
                return std::make_pair(row, col);
              }
              return std::make_pair(r, c);
            };
            const bool vertical_ok =
                v4 ? (action == 0 && row < M::kSize - 1) || (action == 1 && row > 0) : action == 0 || action == 1;
            if (vertical_ok || (action == 2 && M::Gap(1 + row, 2 * col + 2)) ||
                (action == 3 && M::Gap(1 + row, 2 * col))) {
              new_row = clamp(row + moves[action][0][0]);
              new_col = clamp(col + moves[action][0][1]);
              left = v4 ? slip_v4(moves[action][1]) : slip_v3(moves[action][1], 2);
              right = v4 ? slip_v4(moves[action][2]) : slip_v3(moves[action][2], 0);
            }
            const int64_t moved = M::Encode(new_row, new_col, new_pass, dest);
            if (action <= 3) {
              // v4: rainy_probability, and (1.0 - rainy_probability) / 2.0 each side (v3: 0.1).
              const double side = v4 ? (1.0 - intended) / 2.0 : 0.1;
              table.Add(state, action, {intended, moved, -1, terminated});
              table.Add(state, action, {side, M::Encode(left.first, left.second, new_pass, dest), -1, terminated});
              table.Add(state, action, {side, M::Encode(right.first, right.second, new_pass, dest), -1, terminated});
            } else {
              table.Add(state, action, {1.0, moved, reward, terminated});
            }
          }
        }
      }
    }
  }
  return table;
}

inline Config TaxiDefaults(TaxiRules rules) {
  Config config{{"max_episode_steps", int64_t{200}}, {"is_rainy", false}, {"fickle_passenger", false}};
  if (rules == TaxiRules::kV4) {
    config.Set("rainy_probability", 0.8);
    config.Set("fickle_probability", 0.3);
  }
  return config;
}

// Taxi-v4's probabilities (v3's are fixed: 0.8 and 0.3).
inline double TaxiProbability(const Config& config, const char* key, double v3_value) {
  if (TaxiRulesOf(config) == TaxiRules::kV3) return v3_value;
  const double p = config.GetFloat(key);
  if (!(p >= 0.0 && p <= 1.0)) {
    throw std::invalid_argument(std::string("Taxi-v4: ") + key + " must be a probability in [0, 1], got " +
                                std::to_string(p));
  }
  return p;
}

inline EnvSpec TaxiSpec(const std::string& /*task_id*/, const Config& config, Art art) {
  EnvSpec spec;
  spec.state = {Discrete("obs", TaxiMap::kNumStates), Box("info:prob", Dtype::kFloat64, {}),
                Box("info:action_mask", Dtype::kInt8, {TaxiMap::kNumActions}, {0}, {1})};
  spec.action = {Discrete("action", TaxiMap::kNumActions)};
  spec.render_shape = art == Art::kGymnasium1_4 ? std::vector<int>{TaxiMap::kWindowH14, TaxiMap::kWindowW14, 3}
                                                : std::vector<int>{TaxiMap::kWindowH, TaxiMap::kWindowW, 3};
  spec.render_fps = 4;
  TaxiProbability(config, "fickle_probability", 0.3);  // checked here, read by the envs
  spec.tables["P"] =
      TaxiTable(config.GetBool("is_rainy"), TaxiRulesOf(config), TaxiProbability(config, "rainy_probability", 0.8))
          .Flatten();
  return spec;
}

class TaxiEnv final : public GridTableEnv {
 public:
  TaxiEnv(const EnvSpec& spec, int env_id, SpriteSheetPtr sheet)
      : GridTableEnv(spec, env_id, std::move(sheet)),
        mask_index_(spec.StateIndex("info:action_mask")),
        fickle_passenger_(spec.config.GetBool("fickle_passenger")),
        fickle_probability_(TaxiProbability(spec.config, "fickle_probability", 0.3)),
        table_(TableFromFlat(spec.tables.at("P"), TaxiMap::kNumStates, TaxiMap::kNumActions)),
        initial_(InitialWeights()) {}

  void Reset() override {
    state_ = initial_.Sample(np_random());
    // Gymnasium: fickle_passenger and random() < fickle_probability (no draw without fickle_passenger).
    fickle_step_ = fickle_passenger_ && np_random().Random() < fickle_probability_;
    last_action_ = -1;  // lastaction = None
    orientation_ = 0;
    Write(1.0);
  }

  StepResult Step(const Action& action) override {
    const Transition& t = Draw(table_, action);
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
    Write(t.prob);
    return StepResult{t.reward, t.terminated, TimeLimitReached()};
  }

  // TaxiEnv._render_gui's rgb_array frame, in the installed Gymnasium's art. As in Gymnasium, the
  // taxi's orientation is the last move seen by a render (a state of rendering).
  void Render(uint8_t* rgb) override {
    if (last_action_ >= 0 && last_action_ <= 3) orientation_ = last_action_;
    GridTableEnv::Render(rgb);
  }

 private:
  // Gymnasium 1.1-1.3: the map's background and medians, the four stands as half-transparent colour
  // cells (10 pixels low), the waiting passenger, then the taxi and the hotel (alpha 170, half a cell
  // high) in the order that keeps the lower one in front.
  void Render11(uint8_t* rgb) override {
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

  // Gymnasium 1.4: the canvas colour, the background (frame, walls and pads) 80 pixels down, the house,
  // the destination's marker, the waiting passenger, then the cab (full with the passenger aboard),
  // every sprite at its own size.
  void Render14(uint8_t* rgb) override {
    using M = TaxiMap;
    // taxi.py's layout constants (CANVAS_COLOR, *_POS, *_OFFSET), in pixels.
    static constexpr raster::Rgb kCanvas{250, 250, 246};
    static constexpr int kBackgroundX = 0, kBackgroundY = 80, kHouseX = 403, kHouseY = 36;
    static constexpr int kPassengerDx = 35, kPassengerDy = 19;
    static constexpr int kCabVerticalDx = 25, kCabVerticalDy = 0, kCabHorizontalDx = 15, kCabHorizontalDy = 9;
    if (!sprites14_) LoadSprites14();
    const Sprites14& art = *sprites14_;
    raster::Surface surface(M::kWindowW14, M::kWindowH14);
    surface.Fill(kCanvas);
    raster::Blit(surface, *art.background, kBackgroundX, kBackgroundY);
    raster::Blit(surface, *art.house, kHouseX, kHouseY);
    // get_surf_loc((row, col)) = GRID_ORIGIN + (col, row) * CELL_SIZE
    auto surf_x = [](int col) { return M::kOriginX14 + col * M::kCellW14; };
    auto surf_y = [](int row) { return M::kOriginY14 + row * M::kCellH14; };
    const auto [row, col, pass, dest] = M::Decode(state_);
    raster::Blit(surface, *art.destination, surf_x(M::kLocs[dest].second), surf_y(M::kLocs[dest].first));
    if (pass < 4) {
      raster::Blit(surface, *art.passenger, surf_x(M::kLocs[pass].second) + kPassengerDx,
                   surf_y(M::kLocs[pass].first) + kPassengerDy);
    }
    const raster::Sprite& cab = *(pass == 4 ? art.full : art.empty)[orientation_];
    const bool vertical = orientation_ < 2;  // facing south or north
    raster::Blit(surface, cab, surf_x(col) + (vertical ? kCabVerticalDx : kCabHorizontalDx),
                 surf_y(row) + (vertical ? kCabVerticalDy : kCabHorizontalDy));
    surface.WriteRgb(rgb, false, 0, surface.width());
  }

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

  void Write(double prob) { WriteMask(GridTableEnv::Write(prob).Get<int8_t>(mask_index_)); }

  const int mask_index_;
  const bool fickle_passenger_;
  const double fickle_probability_;
  const TransitionTable table_;
  const InitialStates initial_;
  bool fickle_step_ = false;
  int orientation_ = 0;  // Gymnasium's taxi_orientation: set at reset, updated by render()
  // Gymnasium 1.1-1.3's sprites, read at the first render(), not at construction: a Gymnasium without
  // these files fails render() only (sprites.h says why).
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

  // Gymnasium 1.4's: the cab facing south (taxi_v flipped upside down), north (taxi_v), east (taxi_h)
  // and west (taxi_h mirrored), empty and full; unscaled.
  struct Sprites14 {
    std::array<SpritePtr, 4> empty, full;
    SpritePtr passenger, destination, house, background;
  };
  void LoadSprites14() {
    auto load = [&](const std::string& name) { return sheet_->Image("taxi/" + name + ".png"); };
    auto orientations = [&](const std::string& suffix) {
      const SpritePtr vertical = load("taxi_v" + suffix), horizontal = load("taxi_h" + suffix);
      return std::array<SpritePtr, 4>{std::make_shared<const raster::Sprite>(raster::Flip(*vertical, false, true)),
                                      vertical, horizontal,
                                      std::make_shared<const raster::Sprite>(raster::Flip(*horizontal, true, false))};
    };
    Sprites14 art{orientations(""),           orientations("_full"), load("passenger"),
                  load("marker_destination"), load("house"),         load("background")};
    sprites14_ = std::make_unique<const Sprites14>(std::move(art));
  }

  std::unique_ptr<const Sprites14> sprites14_;
  bool sprites_loaded_ = false;
  std::array<SpritePtr, 4> taxis_;  // facing SOUTH (front), NORTH (rear), EAST (right), WEST (left)
  std::array<SpritePtr, 3> median_horiz_, median_vert_;
  SpritePtr passenger_, destination_, background_;
};

}  // namespace pp::toy_text
