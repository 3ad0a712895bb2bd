// The bindings of the Python-env backend's shared-memory channel (core/process_channel.h): the
// parent makes it and watches its workers; a worker process waits on it with the GIL released.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "core/process_channel.h"

namespace py = pybind11;

namespace pp {
namespace {

ChannelShape MakeShape(std::vector<int> worker_of_env, std::vector<std::size_t> action_row_bytes,
                       std::vector<std::size_t> state_row_bytes, std::size_t render_bytes) {
  ChannelShape shape;
  shape.num_envs = static_cast<int>(worker_of_env.size());
  shape.worker_of_env = std::move(worker_of_env);
  shape.action_row_bytes = std::move(action_row_bytes);
  shape.state_row_bytes = std::move(state_row_bytes);
  shape.render_bytes = render_bytes;
  return shape;
}

}  // namespace

void RegisterProcessChannel(py::module_& m) {
  py::class_<ProcessChannel, std::shared_ptr<ProcessChannel>>(m, "ProcessChannel")
      .def_static(
          "create",
          [](std::vector<int> worker_of_env, std::vector<std::size_t> action_row_bytes,
             std::vector<std::size_t> state_row_bytes, std::size_t render_bytes) {
            return ProcessChannel::Create(MakeShape(std::move(worker_of_env), std::move(action_row_bytes),
                                                    std::move(state_row_bytes), render_bytes));
          },
          py::arg("worker_of_env"), py::arg("action_row_bytes"), py::arg("state_row_bytes"), py::arg("render_bytes"))
      .def_static(
          "attach",
          [](std::vector<int> worker_of_env, std::vector<std::size_t> action_row_bytes,
             std::vector<std::size_t> state_row_bytes, std::size_t render_bytes, int parent_pid, int fd) {
            return ProcessChannel::Attach(MakeShape(std::move(worker_of_env), std::move(action_row_bytes),
                                                    std::move(state_row_bytes), render_bytes),
                                          parent_pid, fd);
          },
          py::arg("worker_of_env"), py::arg("action_row_bytes"), py::arg("state_row_bytes"), py::arg("render_bytes"),
          py::arg("parent_pid"), py::arg("fd"))
      .def_property_readonly("fd", &ProcessChannel::fd)
      .def_property_readonly("num_workers", [](const ProcessChannel& c) { return c.shape().num_workers(); })
      // The whole mapping as a writable memoryview; the channel must outlive the views made of it.
      .def_property_readonly("buffer",
                             [](const ProcessChannel& c) {
                               return py::memoryview::from_memory(c.base(), static_cast<py::ssize_t>(c.size_bytes()));
                             })
      .def("action_offset", &ProcessChannel::action_offset, py::arg("env_id"), py::arg("field"))
      .def("state_offset", &ProcessChannel::state_offset, py::arg("env_id"), py::arg("field"))
      .def("render_offset", &ProcessChannel::render_offset, py::arg("env_id"))
      // Parent side.
      .def("set_worker", &ProcessChannel::SetWorker, py::arg("worker"), py::arg("pid"))
      .def("worker_dead", &ProcessChannel::WorkerDead, py::arg("worker"))
      .def("shutdown", &ProcessChannel::Shutdown)
      .def("set_spin", &ProcessChannel::SetSpin, py::arg("parent_us"), py::arg("worker_us"))
      .def_property_readonly(
          "spin", [](const ProcessChannel& c) { return py::make_tuple(c.parent_spin_us(), c.worker_spin_us()); })
      // Worker side: a list of (env_id, command, seed or None); None when the worker should exit.
      .def(
          "wait",
          [](ProcessChannel& c, int worker, double timeout_s) -> py::object {
            std::vector<ChannelRequest> requests;
            bool go_on;
            {
              py::gil_scoped_release release;
              go_on = c.WaitRequests(worker, timeout_s, &requests);
            }
            if (!go_on) return py::none();
            py::list out;
            for (const ChannelRequest& r : requests) {
              out.append(py::make_tuple(r.env_id, static_cast<int>(r.command),
                                        r.seeded ? py::object(py::int_(r.seed)) : py::object(py::none())));
            }
            return out;
          },
          py::arg("worker"), py::arg("timeout_s"))
      .def("finish", &ProcessChannel::Finish, py::arg("env_id"), py::arg("reward"), py::arg("terminated"),
           py::arg("truncated"))
      .def("fail", &ProcessChannel::Fail, py::arg("env_id"), py::arg("message"));
  m.attr("CHANNEL_STEP") = static_cast<int>(ChannelCommand::kStep);
  m.attr("CHANNEL_RESET") = static_cast<int>(ChannelCommand::kReset);
  m.attr("CHANNEL_RENDER") = static_cast<int>(ChannelCommand::kRender);
}

}  // namespace pp
