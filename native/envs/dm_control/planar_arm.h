// What dm_control's manipulator and stacker domains share (suite/manipulator.py, suite/stacker.py):
// the planar arm's joints and their random angles, its observations, and the props' removal.
#pragma once

#include <mujoco/mujoco.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/numpy_random_state.h"
#include "envs/mujoco/numpy_math.h"

namespace pp::dm_control {

class PlanarArm {
 public:
  static constexpr int kNumJoints = 8;  // _ARM_JOINTS

  explicit PlanarArm(const mjModel* m) {
    static const char* const kJoints[kNumJoints] = {"arm_root", "arm_shoulder", "arm_elbow", "arm_wrist",
                                                    "finger",   "fingertip",    "thumb",     "thumbtip"};
    for (int k = 0; k < kNumJoints; ++k) {
      const int j = mj_name2id(m, mjOBJ_JOINT, kJoints[k]);
      if (j < 0) throw std::invalid_argument(std::string("the model has no joint ") + kJoints[k]);
      qpos_[k] = m->jnt_qposadr[j];
      dof_[k] = m->jnt_dofadr[j];
      // np.where(is_limited, joint_range[:, 0 or 1], -+np.pi)
      low_[k] = m->jnt_limited[j] ? m->jnt_range[2 * j] : -M_PI;
      high_[k] = m->jnt_limited[j] ? m->jnt_range[2 * j + 1] : M_PI;
    }
  }

  // data.qpos[_ARM_JOINTS] = uniform(lower_limits, upper_limits); data.qpos['finger'] = qpos['thumb'].
  void RandomAngles(NumpyRandomState& random, double* qpos) const {
    for (int k = 0; k < kNumJoints; ++k) qpos[qpos_[k]] = random.Uniform(low_[k], high_[k]);
    qpos[qpos_[4]] = qpos[qpos_[6]];
  }
  // bounded_joint_pos(_ARM_JOINTS): rows (sin, cos) per joint.
  double* WritePositions(const mjData* d, double* out) const {
    for (int k = 0; k < kNumJoints; ++k) {
      *out++ = std::sin(d->qpos[qpos_[k]]);
      *out++ = std::cos(d->qpos[qpos_[k]]);
    }
    return out;
  }
  double* WriteVelocities(const mjData* d, double* out) const {
    for (int k = 0; k < kNumJoints; ++k) *out++ = d->qvel[dof_[k]];
    return out;
  }

 private:
  int qpos_[kNumJoints], dof_[kNumJoints];
  double low_[kNumJoints], high_[kNumJoints];
};

// body_2d_pose(body): xpos x, z, then (orientation) xquat qw, qy.
inline double* WriteBody2dPose(const mjData* d, int body, bool orientation, double* out) {
  *out++ = d->xpos[3 * body + 0];
  *out++ = d->xpos[3 * body + 2];
  if (orientation) {
    *out++ = d->xquat[4 * body + 0];
    *out++ = d->xquat[4 * body + 2];
  }
  return out;
}

// site_distance(site1, site2): the norm of site1 - site2 (np.diff of [site2, site1]).
inline double SiteDistance(const mjData* d, int site1, int site2) {
  double v[3];
  for (int k = 0; k < 3; ++k) v[k] = d->site_xpos[3 * site1 + k] - d->site_xpos[3 * site2 + k];
  return mujoco::Norm3(v);
}

}  // namespace pp::dm_control
