// The episode bookkeeping's cold parts: parsing the mode, the send-time errors, the final copy.
#include "episode.h"

#include <cstring>
#include <stdexcept>

namespace pp {

AutoresetMode ParseAutoresetMode(const std::string& name) {
  if (name == "next_step") return AutoresetMode::kNextStep;
  if (name == "same_step") return AutoresetMode::kSameStep;
  if (name == "disabled") return AutoresetMode::kDisabled;
  throw std::invalid_argument("autoreset_mode must be one of ('next_step', 'same_step', 'disabled'), got '" + name +
                              "'");
}

void Episode::ThrowCannotStep(int env_id) const {
  throw std::invalid_argument("env " + std::to_string(env_id) +
                              ": its episode is over and autoreset_mode='disabled'; reset it first (reset_mask)");
}

void CopyFinalRow(const OutputBlock& block, const OutputFields& f, const BlockLayout& layout, int row) {
  for (std::size_t i = 0; i < f.state.size(); ++i) {
    const int final_field = f.final_state[i];
    if (final_field < 0) continue;
    const std::size_t bytes = layout.fields()[static_cast<std::size_t>(final_field)].row_bytes;
    const auto r = static_cast<std::size_t>(row);
    std::memcpy(block.field(final_field) + r * bytes, block.field(f.state[i]) + r * bytes, bytes);
  }
  At<bool>(block, f.final_mask, row) = true;
}

}  // namespace pp
