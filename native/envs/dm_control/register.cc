// The dm_control task table: each domain class and its suite tasks; a task's id is EnvPool's
// `<Domain><Task>-v1`, from the suite's names. A new domain is one header and its line here.
#include "envs/dm_control/register.h"

#include <cctype>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "core/task_maker.h"
#include "envs/dm_control/acrobot.h"
#include "envs/dm_control/ball_in_cup.h"
#include "envs/dm_control/cartpole.h"
#include "envs/dm_control/cheetah.h"
#include "envs/dm_control/dm_control_env.h"
#include "envs/dm_control/dog.h"
#include "envs/dm_control/finger.h"
#include "envs/dm_control/fish.h"
#include "envs/dm_control/hopper.h"
#include "envs/dm_control/humanoid.h"
#include "envs/dm_control/lqr.h"
#include "envs/dm_control/manipulator.h"
#include "envs/dm_control/pendulum.h"
#include "envs/dm_control/point_mass.h"
#include "envs/dm_control/quadruped.h"
#include "envs/dm_control/reacher.h"
#include "envs/dm_control/stacker.h"
#include "envs/dm_control/swimmer.h"
#include "envs/dm_control/walker.h"

namespace pp::dm_control {
namespace {

// EnvPool's id of a suite task: its domain's and task's names in CamelCase, then "-v1"
// ("ball_in_cup", "catch": BallInCupCatch-v1; "lqr", "lqr_2_1": LqrLqr21-v1).
std::string TaskId(const TaskInfo& info) {
  std::string id;
  for (const std::string& name : {info.domain, info.task}) {
    bool word_start = true;
    for (char c : name) {
      if (c == '_') {
        word_start = true;
        continue;
      }
      id += word_start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      word_start = false;
    }
  }
  return id + "-v1";
}

// Registers `tasks` of domain EnvT, in order. dm_control registers no reward thresholds.
template <typename EnvT>
void AddDomain(Registry& registry, const std::string& suite_dir, std::initializer_list<typename EnvT::Task> tasks) {
  for (const typename EnvT::Task task : tasks) {
    const TaskInfo info = EnvT::Info(task);
    registry.Add(pp::MakeTask<EnvT>(
        TaskId(info), "dm_control", CommonDefaults(info, suite_dir),
        [task](const std::string& /*id*/, const Config& config) { return EnvT::MakeSpec(config, task); }, std::nullopt,
        task));
  }
}

}  // namespace

void RegisterDmControl(Registry& registry, const std::string& suite_dir) {
  AddDomain<AcrobotEnv>(registry, suite_dir, {AcrobotTask::kSwingup, AcrobotTask::kSwingupSparse});
  AddDomain<BallInCupEnv>(registry, suite_dir, {0});
  AddDomain<CartpoleEnv>(registry, suite_dir,
                         {CartpoleTask::kBalance, CartpoleTask::kBalanceSparse, CartpoleTask::kSwingup,
                          CartpoleTask::kSwingupSparse, CartpoleTask::kTwoPoles, CartpoleTask::kThreePoles});
  AddDomain<CheetahEnv>(registry, suite_dir, {0});
  AddDomain<DogEnv>(registry, suite_dir,
                    {DogTask::kStand, DogTask::kWalk, DogTask::kTrot, DogTask::kRun, DogTask::kFetch});
  AddDomain<FingerEnv>(registry, suite_dir, {FingerTask::kSpin, FingerTask::kTurnEasy, FingerTask::kTurnHard});
  AddDomain<FishEnv>(registry, suite_dir, {FishTask::kUpright, FishTask::kSwim});
  AddDomain<HopperEnv>(registry, suite_dir, {HopperTask::kStand, HopperTask::kHop});
  AddDomain<HumanoidEnv>(registry, suite_dir,
                         {HumanoidTask::kStand, HumanoidTask::kWalk, HumanoidTask::kRun, HumanoidTask::kRunPureState,
                          HumanoidTask::kCMUStand, HumanoidTask::kCMUWalk, HumanoidTask::kCMURun});
  AddDomain<LqrEnv>(registry, suite_dir, {LqrTask::kLqr21, LqrTask::kLqr62});
  AddDomain<ManipulatorEnv>(registry, suite_dir,
                            {ManipulatorTask::kBringBall, ManipulatorTask::kBringPeg, ManipulatorTask::kInsertBall,
                             ManipulatorTask::kInsertPeg});
  AddDomain<PendulumEnv>(registry, suite_dir, {0});
  AddDomain<PointMassEnv>(registry, suite_dir, {PointMassTask::kEasy, PointMassTask::kHard});
  AddDomain<QuadrupedEnv>(registry, suite_dir,
                          {QuadrupedTask::kWalk, QuadrupedTask::kRun, QuadrupedTask::kEscape, QuadrupedTask::kFetch});
  AddDomain<ReacherEnv>(registry, suite_dir, {ReacherTask::kEasy, ReacherTask::kHard});
  AddDomain<StackerEnv>(registry, suite_dir, {StackerTask::kStack2, StackerTask::kStack4});
  AddDomain<SwimmerEnv>(registry, suite_dir, {SwimmerTask::kSwimmer6, SwimmerTask::kSwimmer15});
  AddDomain<WalkerEnv>(registry, suite_dir, {WalkerTask::kStand, WalkerTask::kWalk, WalkerTask::kRun});
}

}  // namespace pp::dm_control
