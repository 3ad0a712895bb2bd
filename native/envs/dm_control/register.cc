// The dm_control task table: per task id (EnvPool's `<Domain><Task>-v1`), its domain class and
// suite task. A new domain is one header and its lines here.
#include "envs/dm_control/register.h"

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

// dm_control registers no reward thresholds.
template <typename EnvT>
TaskEntry DmTask(std::string task_id, typename EnvT::Task task, const std::string& suite_dir) {
  return pp::MakeTask<EnvT>(
      std::move(task_id), "dm_control", CommonDefaults(EnvT::Info(task), suite_dir),
      [task](const std::string& /*id*/, const Config& config) { return EnvT::MakeSpec(config, task); }, std::nullopt,
      task);
}

}  // namespace

void RegisterDmControl(Registry& registry, const std::string& suite_dir) {
  registry.Add(DmTask<AcrobotEnv>("AcrobotSwingup-v1", AcrobotTask::kSwingup, suite_dir));
  registry.Add(DmTask<AcrobotEnv>("AcrobotSwingupSparse-v1", AcrobotTask::kSwingupSparse, suite_dir));
  registry.Add(DmTask<BallInCupEnv>("BallInCupCatch-v1", 0, suite_dir));
  registry.Add(DmTask<CartpoleEnv>("CartpoleBalance-v1", CartpoleTask::kBalance, suite_dir));
  registry.Add(DmTask<CartpoleEnv>("CartpoleBalanceSparse-v1", CartpoleTask::kBalanceSparse, suite_dir));
  registry.Add(DmTask<CartpoleEnv>("CartpoleSwingup-v1", CartpoleTask::kSwingup, suite_dir));
  registry.Add(DmTask<CartpoleEnv>("CartpoleSwingupSparse-v1", CartpoleTask::kSwingupSparse, suite_dir));
  registry.Add(DmTask<CartpoleEnv>("CartpoleTwoPoles-v1", CartpoleTask::kTwoPoles, suite_dir));
  registry.Add(DmTask<CartpoleEnv>("CartpoleThreePoles-v1", CartpoleTask::kThreePoles, suite_dir));
  registry.Add(DmTask<CheetahEnv>("CheetahRun-v1", 0, suite_dir));
  registry.Add(DmTask<DogEnv>("DogStand-v1", DogTask::kStand, suite_dir));
  registry.Add(DmTask<DogEnv>("DogWalk-v1", DogTask::kWalk, suite_dir));
  registry.Add(DmTask<DogEnv>("DogTrot-v1", DogTask::kTrot, suite_dir));
  registry.Add(DmTask<DogEnv>("DogRun-v1", DogTask::kRun, suite_dir));
  registry.Add(DmTask<DogEnv>("DogFetch-v1", DogTask::kFetch, suite_dir));
  registry.Add(DmTask<FingerEnv>("FingerSpin-v1", FingerTask::kSpin, suite_dir));
  registry.Add(DmTask<FingerEnv>("FingerTurnEasy-v1", FingerTask::kTurnEasy, suite_dir));
  registry.Add(DmTask<FingerEnv>("FingerTurnHard-v1", FingerTask::kTurnHard, suite_dir));
  registry.Add(DmTask<FishEnv>("FishUpright-v1", FishTask::kUpright, suite_dir));
  registry.Add(DmTask<FishEnv>("FishSwim-v1", FishTask::kSwim, suite_dir));
  registry.Add(DmTask<HopperEnv>("HopperStand-v1", HopperTask::kStand, suite_dir));
  registry.Add(DmTask<HopperEnv>("HopperHop-v1", HopperTask::kHop, suite_dir));
  registry.Add(DmTask<HumanoidEnv>("HumanoidStand-v1", HumanoidTask::kStand, suite_dir));
  registry.Add(DmTask<HumanoidEnv>("HumanoidWalk-v1", HumanoidTask::kWalk, suite_dir));
  registry.Add(DmTask<HumanoidEnv>("HumanoidRun-v1", HumanoidTask::kRun, suite_dir));
  registry.Add(DmTask<HumanoidEnv>("HumanoidRunPureState-v1", HumanoidTask::kRunPureState, suite_dir));
  registry.Add(DmTask<HumanoidEnv>("HumanoidCMUStand-v1", HumanoidTask::kCMUStand, suite_dir));
  registry.Add(DmTask<HumanoidEnv>("HumanoidCMUWalk-v1", HumanoidTask::kCMUWalk, suite_dir));
  registry.Add(DmTask<HumanoidEnv>("HumanoidCMURun-v1", HumanoidTask::kCMURun, suite_dir));
  registry.Add(DmTask<LqrEnv>("LqrLqr21-v1", LqrTask::kLqr21, suite_dir));
  registry.Add(DmTask<LqrEnv>("LqrLqr62-v1", LqrTask::kLqr62, suite_dir));
  registry.Add(DmTask<ManipulatorEnv>("ManipulatorBringBall-v1", ManipulatorTask::kBringBall, suite_dir));
  registry.Add(DmTask<ManipulatorEnv>("ManipulatorBringPeg-v1", ManipulatorTask::kBringPeg, suite_dir));
  registry.Add(DmTask<ManipulatorEnv>("ManipulatorInsertBall-v1", ManipulatorTask::kInsertBall, suite_dir));
  registry.Add(DmTask<ManipulatorEnv>("ManipulatorInsertPeg-v1", ManipulatorTask::kInsertPeg, suite_dir));
  registry.Add(DmTask<PendulumEnv>("PendulumSwingup-v1", 0, suite_dir));
  registry.Add(DmTask<PointMassEnv>("PointMassEasy-v1", PointMassTask::kEasy, suite_dir));
  registry.Add(DmTask<PointMassEnv>("PointMassHard-v1", PointMassTask::kHard, suite_dir));
  registry.Add(DmTask<QuadrupedEnv>("QuadrupedWalk-v1", QuadrupedTask::kWalk, suite_dir));
  registry.Add(DmTask<QuadrupedEnv>("QuadrupedRun-v1", QuadrupedTask::kRun, suite_dir));
  registry.Add(DmTask<QuadrupedEnv>("QuadrupedEscape-v1", QuadrupedTask::kEscape, suite_dir));
  registry.Add(DmTask<QuadrupedEnv>("QuadrupedFetch-v1", QuadrupedTask::kFetch, suite_dir));
  registry.Add(DmTask<ReacherEnv>("ReacherEasy-v1", ReacherTask::kEasy, suite_dir));
  registry.Add(DmTask<ReacherEnv>("ReacherHard-v1", ReacherTask::kHard, suite_dir));
  registry.Add(DmTask<StackerEnv>("StackerStack2-v1", StackerTask::kStack2, suite_dir));
  registry.Add(DmTask<StackerEnv>("StackerStack4-v1", StackerTask::kStack4, suite_dir));
  registry.Add(DmTask<SwimmerEnv>("SwimmerSwimmer6-v1", SwimmerTask::kSwimmer6, suite_dir));
  registry.Add(DmTask<SwimmerEnv>("SwimmerSwimmer15-v1", SwimmerTask::kSwimmer15, suite_dir));
  registry.Add(DmTask<WalkerEnv>("WalkerStand-v1", WalkerTask::kStand, suite_dir));
  registry.Add(DmTask<WalkerEnv>("WalkerWalk-v1", WalkerTask::kWalk, suite_dir));
  registry.Add(DmTask<WalkerEnv>("WalkerRun-v1", WalkerTask::kRun, suite_dir));
}

}  // namespace pp::dm_control
