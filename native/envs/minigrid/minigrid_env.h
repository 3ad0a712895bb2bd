// MiniGridEnv: what every MiniGrid task shares (minigrid/minigrid_env.py): the agent, the seven
// actions, the partial view with its visibility mask, the reward, and the random placement helpers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/env.h"
#include "core/spec.h"
#include "envs/minigrid/render.h"
#include "envs/minigrid/world.h"

namespace pp::minigrid {

// The longest mission a MiniGrid task writes (LockedRoom's is 86 bytes), with room to spare; BabyAI
// levels' instructions (sequences of two conjunctions of put-next-to) get as many as EnvPool gives.
inline constexpr int kMissionBytes = 128;
inline constexpr int kBabyAIMissionBytes = 512;

enum ActionId : int { kLeft = 0, kRight = 1, kForward = 2, kPickup = 3, kDrop = 4, kToggle = 5, kDone = 6 };

// Config keys every MiniGrid task takes; `max_episode_steps` is minigrid's max_steps (the reward
// scales with it and the env truncates at it): 0, the default, is minigrid's default for the other
// kwargs (e.g. 4 size^2); `see_through_walls` defaults to the env's value.
// `tile_size`, `highlight`, `agent_pov` are the env's render kwargs; `obs_mode` and
// `obs_tile_size` stand for minigrid's observation wrappers (see ObsMode).
inline Config MiniGridDefaults(bool see_through_walls, Config extra = {}) {
  extra.Set("max_episode_steps", int64_t{0});
  extra.Set("agent_view_size", int64_t{7});
  extra.Set("see_through_walls", see_through_walls);
  extra.Set("obs_mode", std::string("partial"));
  extra.Set("obs_tile_size", int64_t{8});
  extra.Set("tile_size", int64_t{32});
  extra.Set("highlight", true);
  extra.Set("agent_pov", false);
  return extra;
}

// What obs["image"] is: minigrid's own partial view, or what one of its wrappers makes of it.
enum class ObsMode {
  kPartial,     // (view, view, 3) object codes
  kFull,        // FullyObsWrapper: (width, height, 3) codes of the whole grid, the agent as (10, 0, dir)
  kOneHot,      // OneHotPartialObsWrapper: (view, view, 20), one bit per type, colour and state
  kRgb,         // RGBImgObsWrapper(tile_size=obs_tile_size): the full frame
  kRgbPartial,  // RGBImgPartialObsWrapper(tile_size=obs_tile_size): the agent's view as a frame
};
inline ObsMode ParseObsMode(const std::string& name) {
  if (name == "partial") return ObsMode::kPartial;
  if (name == "full") return ObsMode::kFull;
  if (name == "one_hot") return ObsMode::kOneHot;
  if (name == "rgb") return ObsMode::kRgb;
  if (name == "rgb_partial") return ObsMode::kRgbPartial;
  throw std::invalid_argument("minigrid: obs_mode must be 'partial', 'full', 'one_hot', 'rgb' or 'rgb_partial', got '" +
                              name + "'");
}
inline constexpr int kOneHotBits = 11 + kNumColors + 3;  // OBJECT_TO_IDX, COLOR_TO_IDX, STATE_TO_IDX

// Observation: Dict(image, direction: Discrete(4), mission: str); action Discrete(num_actions)
// (Dynamic-Obstacles takes 3). `grid` is the task's (width, height) and `default_max_steps`
// minigrid's max_steps for this config (0: a BabyAI level's, set per episode).
inline EnvSpec MiniGridSpec(const Config& config, int num_actions, Pos grid, int64_t default_max_steps,
                            int mission_bytes = kMissionBytes) {
  const int64_t view = config.GetInt("agent_view_size");
  if (view < 3 || view % 2 != 1) throw std::invalid_argument("minigrid: agent_view_size must be odd and >= 3");
  if (config.GetInt("max_episode_steps") < 0) {
    throw std::invalid_argument(
        "minigrid: max_episode_steps (minigrid's max_steps) must be >= 0 (0: minigrid's default)");
  }
  const int64_t obs_tile = config.GetInt("obs_tile_size"), tile = config.GetInt("tile_size");
  if (obs_tile < 1 || tile < 1) throw std::invalid_argument("minigrid: tile sizes must be positive");
  const int v = static_cast<int>(view), ot = static_cast<int>(obs_tile), t = static_cast<int>(tile);
  std::vector<int> image;
  switch (ParseObsMode(config.GetString("obs_mode"))) {
    case ObsMode::kPartial: image = {v, v, 3}; break;
    case ObsMode::kFull: image = {grid.x, grid.y, 3}; break;
    case ObsMode::kOneHot: image = {v, v, kOneHotBits}; break;
    case ObsMode::kRgb: image = {grid.y * ot, grid.x * ot, 3}; break;
    case ObsMode::kRgbPartial: image = {v * ot, v * ot, 3}; break;
  }
  EnvSpec spec;
  spec.state = {
      Box("obs:image", Dtype::kUInt8, image, {0}, {255}), Discrete("obs:direction", 4),
      Text("obs:mission", mission_bytes),
      // EnvPool's info key: the agent's (x, y) after the step.
      WithPresence(Box("info:agent_pos", Dtype::kInt32, {2}, {0}, {static_cast<double>(std::max(grid.x, grid.y) - 1)}),
                   InfoPresence::kExtra)};
  spec.action = {Discrete("action", num_actions)};
  // The registry keeps this unless the config's max_episode_steps is positive.
  spec.max_episode_steps = static_cast<int>(default_max_steps);
  spec.render_shape =
      config.GetBool("agent_pov") ? std::vector<int>{v * t, v * t, 3} : std::vector<int>{grid.y * t, grid.x * t, 3};
  spec.render_fps = 10;  // MiniGridEnv.metadata
  return spec;
}

// place_obj's rejection sampling gave up (minigrid raises RecursionError).
// What minigrid raises as RecursionError when a generator gives up (BabyAI levels catch it and
// generate again).
struct RecursionFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// place_obj's rejection sampling gave up.
struct PlacementFailed : RecursionFailed {
  PlacementFailed() : RecursionFailed("minigrid: rejection sampling failed in place_obj") {}
};

struct StepOutcome {
  double reward = 0.0;
  bool terminated = false;
};

class MiniGridEnv : public Env {
 public:
  // `size` (width, height): the size minigrid passes to _gen_grid.
  MiniGridEnv(const EnvSpec& spec, int env_id, Pos size) : MiniGridEnv(spec, env_id, size.x, size.y) {}
  // (width, height): the size minigrid passes to _gen_grid.
  MiniGridEnv(const EnvSpec& spec, int env_id, int width, int height)
      : Env(spec, env_id),
        width_(width),
        height_(height),
        view_(static_cast<int>(spec.config.GetInt("agent_view_size"))),
        see_through_walls_(spec.config.GetBool("see_through_walls")),
        obs_mode_(ParseObsMode(spec.config.GetString("obs_mode"))),
        highlight_(spec.config.GetBool("highlight")),
        agent_pov_(spec.config.GetBool("agent_pov")),
        obs_tiles_(static_cast<int>(spec.config.GetInt("obs_tile_size"))),
        render_tiles_(static_cast<int>(spec.config.GetInt("tile_size"))),
        image_index_(spec.StateIndex("obs:image")),
        direction_index_(spec.StateIndex("obs:direction")),
        mission_index_(spec.StateIndex("obs:mission")),
        agent_pos_index_(spec.StateIndex("info:agent_pos")),
        action_index_(spec.ActionIndex("action")),
        mission_bytes_(spec.state[static_cast<std::size_t>(mission_index_)].shape[0]),
        view_cells_(static_cast<std::size_t>(view_ * view_)),
        vis_(static_cast<std::size_t>(view_ * view_)),
        codes_(static_cast<std::size_t>(view_ * view_ * 3)) {}

  static constexpr int kNumActions = 7;

  // Env.render(): get_frame(highlight, tile_size, agent_pov).
  void Render(uint8_t* rgb) override {
    ComputeView();
    if (agent_pov_) {
      DrawPov(render_tiles_, rgb);
    } else {
      DrawFull(render_tiles_, highlight_, rgb);
    }
  }

  // EnvPool's MiniGrid debug state: the grid's (type, colour, state) codes and each cell's box
  // contents' codes (empty: minigrid's "empty"), x-major as minigrid's Grid.encode; the agent;
  // what it carries (and that box's contents); the mission; max_steps.
  Config DebugState() const override {
    Config c;
    c.Set("width", int64_t{world_.width()});
    c.Set("height", int64_t{world_.height()});
    std::vector<double> grid, contains;
    grid.reserve(static_cast<std::size_t>(world_.width() * world_.height() * 3));
    contains.reserve(grid.capacity());
    uint8_t code[3];
    for (int x = 0; x < world_.width(); ++x) {
      for (int y = 0; y < world_.height(); ++y) {
        const int id = world_.Get(x, y);
        world_.Encode(id, code);
        grid.insert(grid.end(), code, code + 3);
        world_.Encode(id == kNone ? kNone : world_.obj(id).contains, code);
        contains.insert(contains.end(), code, code + 3);
      }
    }
    c.Set("grid", std::move(grid));
    c.Set("grid_contains", std::move(contains));
    c.Set("agent_pos", std::vector<double>{static_cast<double>(agent_.x), static_cast<double>(agent_.y)});
    c.Set("agent_dir", int64_t{agent_dir_});
    c.Set("mission", mission_);
    c.Set("max_steps", int64_t{max_steps_});
    c.Set("has_carrying", carrying_ != kNone);
    world_.Encode(carrying_, code);
    c.Set("carrying_type", int64_t{code[0]});
    c.Set("carrying_color", int64_t{code[1]});
    c.Set("carrying_state", int64_t{code[2]});
    const int carried_contents = carrying_ == kNone ? kNone : world_.obj(carrying_).contains;
    c.Set("carrying_has_contains", carried_contents != kNone);
    world_.Encode(carried_contents, code);
    c.Set("carrying_contains_type", int64_t{code[0]});
    c.Set("carrying_contains_color", int64_t{code[1]});
    c.Set("carrying_contains_state", int64_t{code[2]});
    DebugExtras(c);
    return c;
  }

  void Reset() override {
    agent_ = {-1, -1};
    agent_dir_ = -1;
    carrying_ = kNone;
    world_.Reset(width_, height_);
    max_steps_ = spec().max_episode_steps;
    GenGrid();
    if (agent_.x < 0 || agent_.y < 0 || agent_dir_ < 0) throw std::logic_error("minigrid: the agent was not placed");
    WriteObs();
    AfterReset();
  }

  StepResult Step(const Action& action) override {
    const StepOutcome outcome = DoStep(static_cast<int>(action.Get<int64_t>(action_index_)[0]));
    WriteObs();
    return StepResult{outcome.reward, outcome.terminated, elapsed_step() >= max_steps_};
  }

 protected:
  // _gen_grid: build the world (world_.Reset was called with (width, height)), place the agent,
  // set the mission.
  virtual void GenGrid() = 0;
  // The task's own debug-state entries: EnvPool's env_name and the targets minigrid's env keeps
  // (SetObj's <key>_pos, _type, _color). None for the BabyAI levels.
  virtual void DebugExtras(Config& /*c*/) const {}
  static void SetPos(Config& c, const std::string& key, Pos p) {
    c.Set(key, std::vector<double>{static_cast<double>(p.x), static_cast<double>(p.y)});
  }
  static void SetKind(Config& c, const std::string& key, ObjType type, Color color) {
    c.Set(key + "_type", int64_t{type});
    c.Set(key + "_color", int64_t{color});
  }
  // Object `id`'s kind and cell ((-1, -1) when it is in no cell: carried, or in a box).
  void SetObj(Config& c, const std::string& key, int id) const {
    Pos at;
    for (int x = 0; x < world_.width() && at.x < 0; ++x) {
      for (int y = 0; y < world_.height(); ++y) {
        if (world_.Get(x, y) == id) {
          at = {x, y};
          break;
        }
      }
    }
    SetPos(c, key + "_pos", at);
    SetKind(c, key, world_.obj(id).type, world_.obj(id).color);
  }
  // The env's step; the default is MiniGridEnv.step. Overrides call BaseStep and adjust.
  virtual StepOutcome DoStep(int action) { return BaseStep(action); }
  // What MiniGridEnv.reset's overrides do after the observation is made (BabyAI's PutNext hands
  // the agent an object the first observation does not show).
  virtual void AfterReset() {}

  // MiniGridEnv.step without the observation.
  StepOutcome BaseStep(int action) {
    StepOutcome out;
    const Pos fwd = FrontPos();
    const int fwd_cell = world_.Get(fwd.x, fwd.y);
    switch (action) {
      case kLeft: agent_dir_ = (agent_dir_ + 3) % 4; break;
      case kRight: agent_dir_ = (agent_dir_ + 1) % 4; break;
      case kForward:
        if (fwd_cell == kNone || world_.obj(fwd_cell).CanOverlap()) agent_ = fwd;
        if (fwd_cell != kNone && world_.obj(fwd_cell).type == kGoal) {
          out.terminated = true;
          out.reward = SuccessReward();
        }
        if (fwd_cell != kNone && world_.obj(fwd_cell).type == kLava) out.terminated = true;
        break;
      case kPickup:
        if (fwd_cell != kNone && world_.obj(fwd_cell).CanPickup() && carrying_ == kNone) {
          carrying_ = fwd_cell;
          world_.obj(fwd_cell).cur_pos = {-1, -1};
          world_.Set(fwd.x, fwd.y, kNone);
        }
        break;
      case kDrop:
        if (fwd_cell == kNone && carrying_ != kNone) {
          world_.Set(fwd.x, fwd.y, carrying_);
          world_.obj(carrying_).cur_pos = fwd;
          carrying_ = kNone;
        }
        break;
      case kToggle:
        if (fwd_cell != kNone) Toggle(fwd_cell, fwd);
        break;
      default: break;  // done: nothing
    }
    return out;
  }

  // WorldObj.toggle: a door opens or closes (a locked one opens with a key of its colour), a box
  // turns into its contents.
  void Toggle(int id, Pos pos) {
    Obj& o = world_.obj(id);
    if (o.type == kDoor) {
      if (o.is_locked) {
        if (carrying_ != kNone && world_.obj(carrying_).type == kKey && world_.obj(carrying_).color == o.color) {
          o.is_locked = false;
          o.is_open = true;
        }
        return;
      }
      o.is_open = !o.is_open;
    } else if (o.type == kBox) {
      world_.Set(pos.x, pos.y, o.contains);
    }
  }

  // MiniGridEnv._reward: 1 - 0.9 * (step_count / max_steps).
  double SuccessReward() const {
    return 1.0 - 0.9 * (static_cast<double>(elapsed_step()) / static_cast<double>(max_steps_));
  }

  Pos FrontPos() const { return {agent_.x + kDirX[agent_dir_], agent_.y + kDirY[agent_dir_]}; }

  // --- the random helpers, each drawing from np_random() exactly as MiniGridEnv's ---
  int RandInt(int64_t low, int64_t high) { return static_cast<int>(np_random().Integers(low, high)); }
  bool RandBool() { return np_random().Integers(0, 2) == 0; }
  // _rand_elem: an index into a list of n elements.
  int RandIndex(int n) { return RandInt(0, n); }
  template <typename T>
  T RandElem(const std::vector<T>& items) {
    return items[static_cast<std::size_t>(RandIndex(static_cast<int>(items.size())))];
  }
  Color RandColor() { return kColorNames[static_cast<std::size_t>(RandIndex(kNumColors))]; }
  // _rand_subset: num elements drawn one by one without replacement.
  template <typename T>
  std::vector<T> RandSubset(std::vector<T> items, int num) {
    std::vector<T> out;
    while (static_cast<int>(out.size()) < num) {
      const int idx = RandIndex(static_cast<int>(items.size()));
      out.push_back(items[static_cast<std::size_t>(idx)]);
      items.erase(items.begin() + idx);
    }
    return out;
  }
  Pos RandPos(int x_low, int x_high, int y_low, int y_high) {
    const int x = RandInt(x_low, x_high);
    return {x, RandInt(y_low, y_high)};
  }

  using RejectFn = std::function<bool(Pos)>;
  static constexpr int64_t kUnlimited = -1;

  // place_obj: uniform positions in [top, top + size) (clipped to the grid) until one is empty,
  // not the agent's and not rejected; `max_tries` failed tries and then one more raise.
  Pos PlaceObj(int obj, Pos top = {0, 0}, Pos size = {-1, -1}, const RejectFn& reject = nullptr,
               int64_t max_tries = kUnlimited) {
    top = {std::max(top.x, 0), std::max(top.y, 0)};
    if (size.x < 0) size = {world_.width(), world_.height()};
    const int x_high = std::min(top.x + size.x, world_.width());
    const int y_high = std::min(top.y + size.y, world_.height());
    int64_t tries = 0;
    Pos pos;
    for (;;) {
      if (max_tries != kUnlimited && tries > max_tries) throw PlacementFailed();
      ++tries;
      pos = RandPos(top.x, x_high, top.y, y_high);
      if (world_.Get(pos.x, pos.y) != kNone) continue;
      if (pos == agent_) continue;
      if (reject && reject(pos)) continue;
      break;
    }
    world_.Set(pos.x, pos.y, obj);
    if (obj != kNone) world_.obj(obj).cur_pos = pos;
    return pos;
  }
  // put_obj
  void PutObj(int obj, int x, int y) {
    world_.Set(x, y, obj);
    world_.obj(obj).cur_pos = {x, y};
  }
  // MiniGridEnv.place_agent
  // The agent at `start` facing `start_dir` when given (a task's agent_start_pos), else anywhere.
  void PlaceAgentAt(const std::optional<Pos>& start, int start_dir) {
    if (start) {
      agent_ = *start;
      agent_dir_ = start_dir;
    } else {
      PlaceAgent();
    }
  }
  Pos PlaceAgent(Pos top = {0, 0}, Pos size = {-1, -1}, bool rand_dir = true, int64_t max_tries = kUnlimited) {
    agent_ = {-1, -1};
    const Pos pos = PlaceObj(kNone, top, size, nullptr, max_tries);
    agent_ = pos;
    if (rand_dir) agent_dir_ = RandInt(0, 4);
    return pos;
  }

  World world_;
  int width_, height_;
  // minigrid's max_steps: the task's max_episode_steps, or (BabyAI levels whose max_episode_steps
  // is 0) set per episode by the level.
  int max_steps_ = 0;
  Pos agent_;
  int agent_dir_ = 0;
  int carrying_ = kNone;
  std::string mission_;

 private:
  // gen_obs_grid: the view_ x view_ cells in front of the agent (outside the grid: walls), so
  // that the agent looks up from the bottom middle, and unless see_through_walls Grid.process_vis's
  // mask of what walls and closed doors do not hide.
  void ComputeView() {
    const int v = view_, half = view_ / 2;
    const int dx = kDirX[agent_dir_], dy = kDirY[agent_dir_];
    const int rx = -dy, ry = dx;  // right_vec
    for (int vy = 0; vy < v; ++vy) {
      for (int vx = 0; vx < v; ++vx) {
        const int x = agent_.x + dx * (v - 1 - vy) + rx * (vx - half);
        const int y = agent_.y + dy * (v - 1 - vy) + ry * (vx - half);
        view_cells_[static_cast<std::size_t>(vy * v + vx)] = world_.Inside(x, y) ? world_.Get(x, y) : kOutside;
      }
    }
    auto blocks = [&](int vx, int vy) {
      const int id = view_cells_[static_cast<std::size_t>(vy * v + vx)];
      return id == kOutside || (id != kNone && !world_.obj(id).SeeBehind());
    };
    if (see_through_walls_) {
      std::fill(vis_.begin(), vis_.end(), 1);
      return;
    }
    std::fill(vis_.begin(), vis_.end(), 0);
    Vis(half, v - 1) = 1;
    for (int j = v - 1; j >= 0; --j) {
      for (int i = 0; i < v - 1; ++i) {
        if (!Vis(i, j) || blocks(i, j)) continue;
        Vis(i + 1, j) = 1;
        if (j > 0) Vis(i + 1, j - 1) = Vis(i, j - 1) = 1;
      }
      for (int i = v - 1; i >= 1; --i) {
        if (!Vis(i, j) || blocks(i, j)) continue;
        Vis(i - 1, j) = 1;
        if (j > 0) Vis(i - 1, j - 1) = Vis(i, j - 1) = 1;
      }
    }
  }
  uint8_t& Vis(int vx, int vy) { return vis_[static_cast<std::size_t>(vy * view_ + vx)]; }

  // The code of view cell (vx, vy) as the observed grid holds it: hidden cells are empty (process_vis
  // clears them), the agent's own cell shows what it carries.
  void ViewCode(int vx, int vy, uint8_t* code) const {
    int id = view_cells_[static_cast<std::size_t>(vy * view_ + vx)];
    if (!vis_[static_cast<std::size_t>(vy * view_ + vx)]) id = kNone;
    if (vx == view_ / 2 && vy == view_ - 1) id = carrying_;
    if (id == kOutside) {
      code[0] = kWall;
      code[1] = kGrey;
      code[2] = 0;
    } else {
      world_.Encode(id, code);
    }
  }

  // grid.encode(vis_mask) of the view: image[vx][vy] = the code, zeros where hidden.
  void EncodePartial(uint8_t* image) const {
    const int v = view_;
    for (int vx = 0; vx < v; ++vx) {
      for (int vy = 0; vy < v; ++vy) {
        uint8_t* cell = image + (vx * v + vy) * 3;
        if (!vis_[static_cast<std::size_t>(vy * v + vx)]) {
          cell[0] = cell[1] = cell[2] = 0;
        } else {
          ViewCode(vx, vy, cell);
        }
      }
    }
  }

  // Grid.render of (width x height) cells: tile (i, j) at rows j*T, columns i*T.
  template <typename CodeAt>
  static void DrawTiles(TileCache& tiles, int width, int height, CodeAt&& code_at, uint8_t* out) {
    const int t = tiles.tile_size();
    for (int j = 0; j < height; ++j) {
      for (int i = 0; i < width; ++i) {
        uint8_t code[3];
        int agent_dir = -1;
        bool highlight = false;
        code_at(i, j, code, agent_dir, highlight);
        const std::vector<uint8_t>& tile = tiles.Tile(code, agent_dir, highlight);
        for (int y = 0; y < t; ++y) {
          std::memcpy(out + (static_cast<std::size_t>(j * t + y) * width * t + i * t) * 3,
                      tile.data() + static_cast<std::size_t>(y * t * 3), static_cast<std::size_t>(t * 3));
        }
      }
    }
  }

  // get_full_render: the whole grid, the agent drawn on its cell, the cells it sees highlighted.
  void DrawFull(TileCache& tiles, bool highlight, uint8_t* out) {
    highlight_mask_.assign(static_cast<std::size_t>(width_ * height_), 0);
    if (highlight) {
      const int v = view_, half = view_ / 2;
      const int dx = kDirX[agent_dir_], dy = kDirY[agent_dir_], rx = -dy, ry = dx;
      for (int vy = 0; vy < v; ++vy) {
        for (int vx = 0; vx < v; ++vx) {
          if (!vis_[static_cast<std::size_t>(vy * v + vx)]) continue;
          const int x = agent_.x + dx * (v - 1 - vy) + rx * (vx - half);
          const int y = agent_.y + dy * (v - 1 - vy) + ry * (vx - half);
          if (x >= 0 && x < width_ && y >= 0 && y < height_)
            highlight_mask_[static_cast<std::size_t>(y * width_ + x)] = 1;
        }
      }
    }
    DrawTiles(
        tiles, width_, height_,
        [&](int i, int j, uint8_t* code, int& agent_dir, bool& lit) {
          world_.Encode(world_.Get(i, j), code);
          if (i == agent_.x && j == agent_.y) agent_dir = agent_dir_;
          lit = highlight_mask_[static_cast<std::size_t>(j * width_ + i)] != 0;
        },
        out);
  }

  // get_pov_render: the observed grid, the agent at the bottom middle facing up, seen cells lit.
  void DrawPov(TileCache& tiles, uint8_t* out) {
    DrawTiles(
        tiles, view_, view_,
        [&](int i, int j, uint8_t* code, int& agent_dir, bool& lit) {
          ViewCode(i, j, code);
          if (i == view_ / 2 && j == view_ - 1) agent_dir = 3;
          lit = vis_[static_cast<std::size_t>(j * view_ + i)] != 0;
        },
        out);
  }

  // gen_obs, through the observation wrapper obs_mode stands for.
  void WriteObs() {
    Slot out = Allocate();
    uint8_t* image = out.Get<uint8_t>(image_index_);
    ComputeView();
    switch (obs_mode_) {
      case ObsMode::kPartial: EncodePartial(image); break;
      case ObsMode::kOneHot: {
        EncodePartial(codes_.data());
        std::memset(image, 0, static_cast<std::size_t>(view_ * view_ * kOneHotBits));
        for (int cell = 0; cell < view_ * view_; ++cell) {
          uint8_t* bits = image + cell * kOneHotBits;
          const uint8_t* code = &codes_[static_cast<std::size_t>(cell * 3)];
          bits[code[0]] = 1;
          bits[11 + code[1]] = 1;
          bits[11 + kNumColors + code[2]] = 1;
        }
        break;
      }
      case ObsMode::kFull:  // image[x][y]
        for (int x = 0; x < width_; ++x) {
          for (int y = 0; y < height_; ++y) {
            uint8_t* cell = image + (x * height_ + y) * 3;
            world_.Encode(world_.Get(x, y), cell);
            if (x == agent_.x && y == agent_.y) {
              cell[0] = kAgent;
              cell[1] = kRed;
              cell[2] = static_cast<uint8_t>(agent_dir_);
            }
          }
        }
        break;
      case ObsMode::kRgb: DrawFull(obs_tiles_, highlight_, image); break;
      case ObsMode::kRgbPartial: DrawPov(obs_tiles_, image); break;
    }
    out.Get<int64_t>(direction_index_)[0] = agent_dir_;
    out.Get<int32_t>(agent_pos_index_)[0] = agent_.x;
    out.Get<int32_t>(agent_pos_index_)[1] = agent_.y;
    if (mission_.size() > static_cast<std::size_t>(mission_bytes_)) {
      throw std::logic_error("minigrid: mission longer than " + std::to_string(mission_bytes_) + " bytes");
    }
    uint8_t* mission = out.Get<uint8_t>(mission_index_);
    std::memset(mission, 0, static_cast<std::size_t>(mission_bytes_));
    std::memcpy(mission, mission_.data(), mission_.size());
  }

  static constexpr int kOutside = -2;  // a view cell beyond the grid: seen as a wall
  const int view_;
  const bool see_through_walls_;
  const ObsMode obs_mode_;
  const bool highlight_, agent_pov_;
  TileCache obs_tiles_, render_tiles_;
  const int image_index_;
  const int direction_index_;
  const int mission_index_;
  const int agent_pos_index_;
  const int action_index_;
  const int mission_bytes_;
  std::vector<int> view_cells_;          // [vy][vx]
  std::vector<uint8_t> vis_;             // [vy][vx]
  std::vector<uint8_t> codes_;           // the partial view's codes, for the one-hot encoding
  std::vector<uint8_t> highlight_mask_;  // [y][x]
};

}  // namespace pp::minigrid
