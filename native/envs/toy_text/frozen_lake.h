// FrozenLake-v1 and FrozenLake8x8-v1: Gymnasium's walk across a (slippery) frozen lake, with its
// maps, kwargs, transition table and draws, as gymnasium/envs/toy_text/frozen_lake.py.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
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

using Board = std::vector<std::string>;

// Gymnasium's MAPS.
inline Board FrozenLakeMap(const std::string& name) {
  if (name == "4x4") return {"SFFF", "FHFH", "FFFH", "HFFG"};
  if (name == "8x8") {
    return {"SFFFFFFF", "FFFFFFFF", "FFFHFFFF", "FFFFFHFF", "FFFHFFFF", "FHHFFFHF", "FHFFHFHF", "FFFHFFFG"};
  }
  throw std::invalid_argument("FrozenLake: unknown map_name '" + name + "' (known: '4x4', '8x8', or None)");
}

// frozen_lake.is_valid: whether G is reachable from (0, 0) without stepping into a hole.
inline bool FrozenLakeIsValid(const Board& board) {
  const int size = static_cast<int>(board.size());
  std::vector<char> seen(static_cast<std::size_t>(size * size), 0);
  std::vector<std::pair<int, int>> frontier{{0, 0}};
  while (!frontier.empty()) {
    const auto [r, c] = frontier.back();
    frontier.pop_back();
    if (seen[static_cast<std::size_t>(r * size + c)]) continue;
    seen[static_cast<std::size_t>(r * size + c)] = 1;
    const int moves[4][2] = {{1, 0}, {0, 1}, {-1, 0}, {0, -1}};
    for (const auto& m : moves) {
      const int nr = r + m[0], nc = c + m[1];
      if (nr < 0 || nr >= size || nc < 0 || nc >= size) continue;
      if (board[nr][nc] == 'G') return true;
      if (board[nr][nc] != 'H') frontier.emplace_back(nr, nc);
    }
  }
  return false;
}

// frozen_lake.generate_random_map(size, p, seed) with `rng` = seeding.np_random(seed): boards of
// choice(["F", "H"], (size, size), p=[p, 1 - p]) until one is valid.
inline Board FrozenLakeRandomMap(NumpyGenerator& rng, int size = 8, double p = 0.8) {
  p = std::min(1.0, p);
  const double probs[2] = {p, 1.0 - p};
  std::vector<int64_t> tiles(static_cast<std::size_t>(size * size));
  Board board;
  do {
    rng.Choice(probs, 2, tiles.data(), size * size);
    board.assign(static_cast<std::size_t>(size), std::string(static_cast<std::size_t>(size), 'F'));
    for (int i = 0; i < size * size; ++i) board[i / size][i % size] = tiles[i] ? 'H' : 'F';
    board[0][0] = 'S';
    board[size - 1][size - 1] = 'G';
  } while (!FrozenLakeIsValid(board));
  return board;
}

// The map a config names: desc (rows joined by '\n') if given, else map_name's; empty when both
// are None (a random map, drawn per env).
inline Board FrozenLakeBoard(const Config& config) {
  const std::string& desc = config.GetString("desc");
  if (desc.empty()) {
    const std::string& name = config.GetString("map_name");
    return name.empty() ? Board{} : FrozenLakeMap(name);
  }
  Board board;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = desc.find('\n', start);
    board.push_back(desc.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  for (const std::string& row : board) {
    if (row.size() != board[0].size() || row.empty()) {
      throw std::invalid_argument("FrozenLake: desc must be non-empty rows of equal length");
    }
  }
  return board;
}

// FrozenLakeEnv.__init__'s P: actions LEFT, DOWN, RIGHT, UP; on ice, the intended move with
// success_rate and each perpendicular one with (1 - success_rate) / 2 when slippery.
inline TransitionTable FrozenLakeTable(const Board& board, const Config& config) {
  const int nrow = static_cast<int>(board.size()), ncol = static_cast<int>(board[0].size());
  const bool slippery = config.GetBool("is_slippery");
  const double success_rate = config.GetFloat("success_rate");
  const double fail_rate = (1.0 - success_rate) / 2.0;
  const std::vector<double>& schedule = config.GetFloats("reward_schedule");
  if (schedule.size() != 3) throw std::invalid_argument("FrozenLake: reward_schedule needs 3 values (G, H, F)");
  TransitionTable table(nrow * ncol, 4);
  auto move = [&](int row, int col, int a) {
    if (a == 0) col = std::max(col - 1, 0);
    if (a == 1) row = std::min(row + 1, nrow - 1);
    if (a == 2) col = std::min(col + 1, ncol - 1);
    if (a == 3) row = std::max(row - 1, 0);
    const char letter = board[row][col];
    const double reward = letter == 'G' ? schedule[0] : letter == 'H' ? schedule[1] : schedule[2];
    return std::make_tuple(int64_t{row} * ncol + col, reward, letter == 'G' || letter == 'H');
  };
  for (int row = 0; row < nrow; ++row) {
    for (int col = 0; col < ncol; ++col) {
      const int64_t s = int64_t{row} * ncol + col;
      for (int a = 0; a < 4; ++a) {
        if (board[row][col] == 'G' || board[row][col] == 'H') {
          table.Add(s, a, {1.0, s, 0.0, true});
        } else if (slippery) {
          for (int b : {(a + 3) % 4, a, (a + 1) % 4}) {
            const auto [next, reward, done] = move(row, col, b);
            table.Add(s, a, {b == a ? success_rate : fail_rate, next, reward, done});
          }
        } else {
          const auto [next, reward, done] = move(row, col, a);
          table.Add(s, a, {1.0, next, reward, done});
        }
      }
    }
  }
  return table;
}

inline Config FrozenLakeDefaults(const std::string& map_name, int64_t max_episode_steps) {
  return Config{{"max_episode_steps", max_episode_steps},
                {"desc", std::string()},
                {"map_name", map_name},
                {"is_slippery", true},
                {"success_rate", 1.0 / 3.0},
                {"reward_schedule", std::vector<double>{1.0, 0.0, 0.0}}};
}

// FrozenLakeEnv's window_size: 64 pixels a cell, at most 512 a side (width, height).
inline std::pair<int, int> FrozenLakeWindow(int nrow, int ncol) {
  return {std::min(64 * ncol, 512), std::min(64 * nrow, 512)};
}

// The window is the same in every Gymnasium's art.
inline EnvSpec FrozenLakeSpec(const std::string& /*task_id*/, const Config& config, Art /*art*/) {
  const Board board = FrozenLakeBoard(config);
  const int nrow = board.empty() ? 8 : static_cast<int>(board.size());
  const int ncol = board.empty() ? 8 : static_cast<int>(board[0].size());
  const int size = nrow * ncol;
  EnvSpec spec;
  const auto [width, height] = FrozenLakeWindow(nrow, ncol);
  spec.render_shape = {height, width, 3};
  spec.render_fps = 4;
  spec.state = {Discrete("obs", size), Box("info:prob", Dtype::kFloat64, {})};
  spec.action = {Discrete("action", 4)};
  // A random map is drawn per env: the table is then each env's own, not the task's.
  if (!board.empty()) spec.tables["P"] = FrozenLakeTable(board, config).Flatten();
  return spec;
}

class FrozenLakeEnv final : public GridTableEnv {
 public:
  FrozenLakeEnv(const EnvSpec& spec, int env_id, SpriteSheetPtr sheet)
      : GridTableEnv(spec, env_id, std::move(sheet)), board_(FrozenLakeBoard(spec.config)) {
    if (!board_.empty()) Build(TableFromFlat(spec.tables.at("P"), NumStates(), 4));
    // cell_size = window_size // (ncol, nrow); a random map is 8 x 8.
    const int nrow = board_.empty() ? 8 : static_cast<int>(board_.size());
    const int ncol = board_.empty() ? 8 : static_cast<int>(board_[0].size());
    cell_w_ = spec.render_shape.at(1) / ncol;
    cell_h_ = spec.render_shape.at(0) / nrow;
  }

  void Reset() override {
    if (board_.empty()) {
      // desc=None, map_name=None: Gymnasium draws generate_random_map() from fresh entropy at
      // construction; here it is generate_random_map(seed=s) for s this env's seed at its first
      // reset (a copy of the freshly seeded stream), so a seed reproduces the map.
      NumpyGenerator map_rng = np_random();
      board_ = FrozenLakeRandomMap(map_rng);
      Build(FrozenLakeTable(board_, spec().config));
    }
    state_ = initial_->Sample(np_random());
    last_action_ = -1;  // lastaction = None
    Write(1.0);
  }

  StepResult Step(const Action& action) override { return TableStep(*table_, action); }

 private:
  // FrozenLakeEnv._render_gui's rgb_array frame (ArtEnv::Render picks the art). Columns and rows
  // past ncol * cell_w stay black, as in Gymnasium's window (never drawn there).
  // Gymnasium 1.1-1.3: per cell ice, then its hole, goal or stool, then a 1-pixel (180, 200, 230)
  // frame; then the elf facing the last action (down after a reset), or the cracked hole where it
  // fell in.
  void Render11(uint8_t* rgb) override {
    if (!sprites_loaded_) LoadSprites();
    // A new (black) surface per frame, as LunarLander and BipedalWalker draw: no env holds a
    // window-sized surface between frames.
    raster::Surface surface(spec().render_shape.at(1), spec().render_shape.at(0));
    const int nrow = static_cast<int>(board_.size()), ncol = static_cast<int>(board_[0].size());
    for (int y = 0; y < nrow; ++y) {
      for (int x = 0; x < ncol; ++x) {
        const int px = x * cell_w_, py = y * cell_h_;
        raster::Blit(surface, *ice_, px, py);
        const char letter = board_[y][x];
        if (letter == 'H') {
          raster::Blit(surface, *hole_, px, py);
        } else if (letter == 'G') {
          raster::Blit(surface, *goal_, px, py);
        } else if (letter == 'S') {
          raster::Blit(surface, *start_, px, py);
        }
        raster::Rect(surface, {180, 200, 230}, px, py, cell_w_, cell_h_, 1);
      }
    }
    const int row = static_cast<int>(state_ / ncol), col = static_cast<int>(state_ % ncol);
    const raster::Sprite& agent =
        board_[row][col] == 'H' ? *cracked_hole_ : *elves_[last_action_ < 0 ? 1 : last_action_];
    raster::Blit(surface, agent, col * cell_w_, row * cell_h_);
    surface.WriteRgb(rgb, false, 0, surface.width());
  }

  // Gymnasium 1.4: per cell a hole, or ice with a crack (frozen cells, by position), the letter S or
  // the flag and the letter G; then the 1-pixel (180, 200, 230) frame; then the agent (one sprite,
  // centred) unless it stands in a hole. The tiles fill a cell; the overlays keep their proportions,
  // drawn for 64-pixel cells.
  void Render14(uint8_t* rgb) override {
    if (!sprites14_) LoadSprites14();
    const Sprites14& art = *sprites14_;
    raster::Surface surface(spec().render_shape.at(1), spec().render_shape.at(0));
    // blit_overlay's anchors; blit truncates their float positions (C's (int) cast).
    auto corner = [&](const raster::Sprite& img, int cx, int cy) {
      const int margin = static_cast<int>(std::nearbyint(cell_w_ * 0.06));  // round(): ties to even
      raster::Blit(surface, img, cx + margin, cy + margin);
    };
    auto flag = [&](const raster::Sprite& img, int cx, int cy) {
      const int y = cy + cell_h_ - img.height - static_cast<int>(std::nearbyint(cell_h_ * 0.12));
      raster::Blit(surface, img, static_cast<int>(cx + (cell_w_ - img.width) / 2.0), y);
    };
    auto centre = [&](const raster::Sprite& img, int cx, int cy) {
      raster::Blit(surface, img, static_cast<int>(cx + (cell_w_ - img.width) / 2.0),
                   static_cast<int>(cy + (cell_h_ - img.height) / 2.0));
    };
    const int nrow = static_cast<int>(board_.size()), ncol = static_cast<int>(board_[0].size());
    for (int y = 0; y < nrow; ++y) {
      for (int x = 0; x < ncol; ++x) {
        const int px = x * cell_w_, py = y * cell_h_;
        const char tile = board_[y][x];
        if (tile == 'H') {
          raster::Blit(surface, *art.hole, px, py);
        } else {
          raster::Blit(surface, *art.ice, px, py);
          if (tile == 'F') {
            const int crack = (x * 3 + y * 5) % 7;  // two of seven cells, fixed by position
            if (crack < 2) raster::Blit(surface, *art.cracks[static_cast<std::size_t>(crack)], px, py);
          } else if (tile == 'S') {
            corner(*art.letter_s, px, py);
          } else if (tile == 'G') {
            flag(*art.goal_flag, px, py);
            corner(*art.letter_g, px, py);
          }
        }
        raster::Rect(surface, {180, 200, 230}, px, py, cell_w_, cell_h_, 1);
      }
    }
    const int row = static_cast<int>(state_ / ncol), col = static_cast<int>(state_ % ncol);
    if (board_[row][col] != 'H') centre(*art.agent, col * cell_w_, row * cell_h_);
    surface.WriteRgb(rgb, false, 0, surface.width());
  }

  int NumStates() const { return static_cast<int>(board_.size() * board_[0].size()); }

  void Build(TransitionTable table) {
    table_.emplace(std::move(table));
    std::vector<double> starts;
    for (const std::string& row : board_) {
      for (char c : row) starts.push_back(c == 'S' ? 1.0 : 0.0);
    }
    initial_.emplace(starts);
  }

  Board board_;
  std::optional<TransitionTable> table_;
  std::optional<InitialStates> initial_;
  int cell_w_ = 0, cell_h_ = 0;
  // Gymnasium 1.1-1.3's sprites, read at the first render(), not at construction: a Gymnasium without
  // these files fails render() only (sprites.h says why).
  void LoadSprites() {
    auto load = [&](const char* name) { return sheet_->Scaled(name, cell_w_, cell_h_); };
    hole_ = load("hole.png");
    cracked_hole_ = load("cracked_hole.png");
    ice_ = load("ice.png");
    goal_ = load("goal.png");
    start_ = load("stool.png");
    elves_ = {load("elf_left.png"), load("elf_down.png"), load("elf_right.png"), load("elf_up.png")};
    sprites_loaded_ = true;
  }

  struct Sprites14 {
    SpritePtr ice, hole;
    std::array<SpritePtr, 2> cracks;
    SpritePtr agent, goal_flag, letter_s, letter_g;
  };
  void LoadSprites14() {
    auto tile = [&](const char* name) { return sheet_->Scaled(name, cell_w_, cell_h_); };
    // load_overlay: (native width, height) * min(cell) / 64, each rounded (ties to even), at least 1.
    const double scale = std::min(cell_w_, cell_h_) / 64.0;
    auto overlay = [&](const char* name, int width, int height) {
      auto side = [scale](int v) { return std::max(1, static_cast<int>(std::nearbyint(v * scale))); };
      return sheet_->Scaled(name, side(width), side(height));
    };
    Sprites14 art{tile("tile_ice.png"),
                  tile("tile_hole.png"),
                  {tile("tile_ice_crack_a.png"), tile("tile_ice_crack_b.png")},
                  overlay("agent.png", 40, 36),
                  overlay("goal_flag.png", 24, 32),
                  overlay("letter_s.png", 12, 20),
                  overlay("letter_g.png", 12, 20)};
    sprites14_ = std::make_unique<const Sprites14>(std::move(art));
  }

  std::unique_ptr<const Sprites14> sprites14_;
  bool sprites_loaded_ = false;
  SpritePtr hole_, cracked_hole_, ice_, goal_, start_;
  std::array<SpritePtr, 4> elves_;  // facing LEFT, DOWN, RIGHT, UP
};

}  // namespace pp::toy_text
