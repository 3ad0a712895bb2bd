// Headless MuJoCo rendering for the MuJoCo-based families: an EGL OpenGL context per thread (Mesa's
// llvmpipe on a machine without a GPU) and Renderer, which draws an mjData as mujoco's Python does.
#pragma once

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <dlfcn.h>
#include <mujoco/mujoco.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace pp::mujoco_render {

// ---- EGL, loaded at run time -------------------------------------------------------------------
// libEGL.so.1 is opened on first use, not linked: a machine without it (or without a working
// driver) still loads the family and steps its envs; only rendering raises, with the reason.
// MuJoCo's mjr_* functions find GL through the libEGL this loads (its loader looks for a loaded
// libEGL.so and takes eglGetProcAddress from it), so both must be the same library: glvnd's.

struct Egl {
  PFNEGLGETPROCADDRESSPROC GetProcAddress = nullptr;
  PFNEGLGETERRORPROC GetError = nullptr;
  PFNEGLINITIALIZEPROC Initialize = nullptr;
  PFNEGLCHOOSECONFIGPROC ChooseConfig = nullptr;
  PFNEGLBINDAPIPROC BindAPI = nullptr;
  PFNEGLQUERYAPIPROC QueryAPI = nullptr;
  PFNEGLCREATECONTEXTPROC CreateContext = nullptr;
  PFNEGLDESTROYCONTEXTPROC DestroyContext = nullptr;
  PFNEGLMAKECURRENTPROC MakeCurrent = nullptr;
  PFNEGLGETCURRENTCONTEXTPROC GetCurrentContext = nullptr;
  PFNEGLGETCURRENTDISPLAYPROC GetCurrentDisplay = nullptr;
  PFNEGLGETCURRENTSURFACEPROC GetCurrentSurface = nullptr;
  PFNEGLQUERYDEVICESEXTPROC QueryDevicesEXT = nullptr;
  PFNEGLGETPLATFORMDISPLAYEXTPROC GetPlatformDisplayEXT = nullptr;
  EGLDisplay display = EGL_NO_DISPLAY;
  EGLConfig config = nullptr;
  std::string error;  // why rendering is unavailable; empty when display and config are ready
};

// The process's EGL display, made once: the first EGL device that initializes (what
// mujoco.egl.GLContext picks, so Gymnasium and dm_control under MUJOCO_GL=egl use the same
// renderer: on a machine without a GPU that is Mesa's software device, llvmpipe), else Mesa's
// surfaceless platform. The display is never terminated (another user in the process, e.g.
// mujoco.egl, may share it: EGL returns one display per device).
inline const Egl& EglLibrary() {
  static const Egl egl = [] {
    Egl e;
    void* lib = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      e.error = std::string("cannot load libEGL.so.1 (") + (why != nullptr ? why : "?") +
                "); on Debian/Ubuntu: apt-get install libegl1 libegl-mesa0 libgl1-mesa-dri";
      return e;
    }
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (fn == nullptr && e.GetProcAddress != nullptr) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(e.GetProcAddress(name));
      }
      return fn != nullptr;
    };
    bool ok = get(e.GetProcAddress, "eglGetProcAddress");
    ok = get(e.GetError, "eglGetError") && ok;
    ok = get(e.Initialize, "eglInitialize") && ok;
    ok = get(e.ChooseConfig, "eglChooseConfig") && ok;
    ok = get(e.BindAPI, "eglBindAPI") && ok;
    ok = get(e.QueryAPI, "eglQueryAPI") && ok;
    ok = get(e.CreateContext, "eglCreateContext") && ok;
    ok = get(e.DestroyContext, "eglDestroyContext") && ok;
    ok = get(e.MakeCurrent, "eglMakeCurrent") && ok;
    ok = get(e.GetCurrentContext, "eglGetCurrentContext") && ok;
    ok = get(e.GetCurrentDisplay, "eglGetCurrentDisplay") && ok;
    ok = get(e.GetCurrentSurface, "eglGetCurrentSurface") && ok;
    ok = get(e.GetPlatformDisplayEXT, "eglGetPlatformDisplayEXT") && ok;
    get(e.QueryDevicesEXT, "eglQueryDevicesEXT");  // optional: the surfaceless platform needs none
    if (!ok) {
      e.error = "libEGL.so.1 lacks EGL 1.4 functions or EGL_EXT_platform_base";
      return e;
    }
    auto initialized = [&](EGLDisplay d) {
      if (d == EGL_NO_DISPLAY) return false;
      EGLint major = 0, minor = 0;
      return e.Initialize(d, &major, &minor) == EGL_TRUE;
    };
    if (e.QueryDevicesEXT != nullptr) {
      constexpr EGLint kMaxDevices = 16;
      EGLDeviceEXT devices[kMaxDevices];
      EGLint n = 0;
      if (e.QueryDevicesEXT(kMaxDevices, devices, &n) == EGL_TRUE) {
        for (EGLint i = 0; i < n && e.display == EGL_NO_DISPLAY; ++i) {
          EGLDisplay d = e.GetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
          if (initialized(d)) e.display = d;
        }
      }
    }
    if (e.display == EGL_NO_DISPLAY) {
      EGLDisplay d = e.GetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
      if (initialized(d)) e.display = d;
    }
    if (e.display == EGL_NO_DISPLAY) {
      e.error =
          "no EGL display: no EGL device and no surfaceless platform initialized (install Mesa's "
          "libegl-mesa0 and libgl1-mesa-dri for the software renderer)";
      return e;
    }
    // mujoco.egl's framebuffer configuration: RGBA8, 24-bit depth, 8-bit stencil, desktop OpenGL.
    const EGLint attributes[] = {EGL_RED_SIZE,
                                 8,
                                 EGL_GREEN_SIZE,
                                 8,
                                 EGL_BLUE_SIZE,
                                 8,
                                 EGL_ALPHA_SIZE,
                                 8,
                                 EGL_DEPTH_SIZE,
                                 24,
                                 EGL_STENCIL_SIZE,
                                 8,
                                 EGL_COLOR_BUFFER_TYPE,
                                 EGL_RGB_BUFFER,
                                 EGL_SURFACE_TYPE,
                                 EGL_PBUFFER_BIT,
                                 EGL_RENDERABLE_TYPE,
                                 EGL_OPENGL_BIT,
                                 EGL_NONE};
    EGLint num_configs = 0;
    if (e.ChooseConfig(e.display, attributes, &e.config, 1, &num_configs) != EGL_TRUE || num_configs < 1) {
      e.error = "the EGL display has no RGBA8/depth24/stencil8 desktop-OpenGL configuration";
      e.display = EGL_NO_DISPLAY;
    }
    return e;
  }();
  return egl;
}

// Makes `context` current on this thread for the scope, then restores whatever was current before
// (e.g. Gymnasium's own context on the Python thread, which Gymnasium expects to stay current), or
// none. Ours is never left current: code outside a frame can then never act on it (mujoco's Python
// MjrContext, garbage-collected, frees its GL objects by name in whatever context is current, and
// would delete ours). Releasing costs an eglMakeCurrent per frame, small against drawing one.
class ScopedCurrent {
 public:
  ScopedCurrent(const Egl& egl, EGLContext context) : egl_(egl) {
    previous_api_ = egl_.QueryAPI();
    if (previous_api_ != EGL_OPENGL_API) egl_.BindAPI(EGL_OPENGL_API);
    previous_context_ = egl_.GetCurrentContext();
    if (previous_context_ == context) return;  // nested: the outer scope restores
    previous_display_ = egl_.GetCurrentDisplay();
    previous_draw_ = egl_.GetCurrentSurface(EGL_DRAW);
    previous_read_ = egl_.GetCurrentSurface(EGL_READ);
    if (egl_.MakeCurrent(egl_.display, EGL_NO_SURFACE, EGL_NO_SURFACE, context) != EGL_TRUE) {
      const EGLint code = egl_.GetError();
      RestoreApi();
      throw std::runtime_error("eglMakeCurrent failed (EGL error 0x" + Hex(code) + ")");
    }
    switched_ = true;
  }
  ~ScopedCurrent() {
    if (switched_) {
      if (previous_context_ != EGL_NO_CONTEXT) {
        egl_.MakeCurrent(previous_display_, previous_draw_, previous_read_, previous_context_);
      } else {
        egl_.MakeCurrent(egl_.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
      }
    }
    RestoreApi();
  }
  ScopedCurrent(const ScopedCurrent&) = delete;
  ScopedCurrent& operator=(const ScopedCurrent&) = delete;

  static std::string Hex(EGLint code) {
    static const char* digits = "0123456789abcdef";
    std::string s;
    for (int shift = 12; shift >= 0; shift -= 4) s += digits[(code >> shift) & 0xf];
    return s;
  }

 private:
  void RestoreApi() {
    if (previous_api_ != EGL_OPENGL_API && previous_api_ != EGL_NONE) egl_.BindAPI(previous_api_);
  }

  const Egl& egl_;
  EGLenum previous_api_ = EGL_NONE;
  EGLContext previous_context_ = EGL_NO_CONTEXT;
  EGLDisplay previous_display_ = EGL_NO_DISPLAY;
  EGLSurface previous_draw_ = EGL_NO_SURFACE, previous_read_ = EGL_NO_SURFACE;
  bool switched_ = false;
};

// ---- the per-thread GL state -------------------------------------------------------------------

// What a frame's GL side needs: the offscreen framebuffer of one size and the model's uploaded
// meshes, textures and shadow map (an mjrContext, ~70 MB with MuJoCo's default 4096^2 shadow map).
struct UploadKey {
  const mjModel* model;
  int width, height;  // offscreen buffer size
  int font_scale;
  bool operator==(const UploadKey& o) const {
    return model == o.model && width == o.width && height == o.height && font_scale == o.font_scale;
  }
};

// One GL context per thread that renders, with one mjrContext per (model, size) drawn on that
// thread. Per thread, not per env: an mjrContext holds the model's shadow map (~70 MB), so 64 envs
// with a context each would hold 4 GB where the pool's threads need a few hundred MB, and a
// thread's context is current on that thread only, so no context is ever current on two threads.
// A model is known by address and by a weak reference: an entry whose model was freed (its
// address possibly reused) is dropped, never used.
class ThreadGl {
 public:
  static ThreadGl& Get() {
    thread_local ThreadGl gl;
    return gl;
  }

  ~ThreadGl() {
    if (context_ == EGL_NO_CONTEXT) return;
    const Egl& egl = EglLibrary();
    try {
      ScopedCurrent current(egl, context_);
      for (UploadEntry& u : uploads_) mjr_freeContext(u.context.get());
    } catch (const std::exception&) {
      // Not current (e.g. the display was torn down at exit): the GL objects go with the context.
    }
    uploads_.clear();
    // A context still current is only marked for deletion (EGL frees it once no thread has it
    // current): release it first, or every pool's worker threads would leave theirs behind.
    if (egl.GetCurrentContext() == context_) {
      egl.MakeCurrent(egl.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    }
    egl.DestroyContext(egl.display, context_);
  }

  // This thread's context, created on first use; throws std::runtime_error if there is no GL.
  EGLContext Context() {
    if (context_ != EGL_NO_CONTEXT) return context_;
    const Egl& egl = EglLibrary();
    if (!egl.error.empty()) throw std::runtime_error("MuJoCo rendering needs EGL: " + egl.error);
    const EGLenum previous_api = egl.QueryAPI();
    egl.BindAPI(EGL_OPENGL_API);  // per thread: contexts made on this thread are desktop OpenGL
    context_ = egl.CreateContext(egl.display, egl.config, EGL_NO_CONTEXT, nullptr);
    const EGLint code = egl.GetError();
    if (previous_api != EGL_OPENGL_API && previous_api != EGL_NONE) egl.BindAPI(previous_api);
    if (context_ == EGL_NO_CONTEXT) {
      throw std::runtime_error("cannot create an EGL OpenGL context (EGL error 0x" + ScopedCurrent::Hex(code) + ")");
    }
    return context_;
  }

  // The mjrContext of `key` on this thread (this thread's context must be current).
  mjrContext* Upload(const UploadKey& key, const std::shared_ptr<const mjModel>& owner) {
    for (auto it = uploads_.begin(); it != uploads_.end(); ++it) {
      if (!(it->key == key)) continue;
      if (!it->owner.expired()) return it->context.get();
      mjr_freeContext(it->context.get());  // its model is gone; the address is someone else's now
      uploads_.erase(it);
      break;
    }
    // Drop every entry of a freed model while we are here, so a long-lived thread does not
    // accumulate them.
    for (auto it = uploads_.begin(); it != uploads_.end();) {
      if (it->owner.expired()) {
        mjr_freeContext(it->context.get());
        it = uploads_.erase(it);
      } else {
        ++it;
      }
    }
    auto context = std::make_unique<mjrContext>();
    mjr_defaultContext(context.get());
    mjr_makeContext(key.model, context.get(), key.font_scale);
    // The offscreen buffer as Gymnasium sizes it (model.vis.global_.offwidth = width, ...),
    // without copying the shared model: same samples, new size.
    if (context->offWidth != key.width || context->offHeight != key.height) {
      mjr_resizeOffscreen(key.width, key.height, context.get());
    }
    mjr_setBuffer(mjFB_OFFSCREEN, context.get());
    uploads_.push_back(UploadEntry{key, owner, std::move(context)});
    return uploads_.back().context.get();
  }

 private:
  ThreadGl() = default;

  struct UploadEntry {
    UploadKey key;
    std::weak_ptr<const mjModel> owner;
    std::unique_ptr<mjrContext> context;
  };
  EGLContext context_ = EGL_NO_CONTEXT;
  std::vector<UploadEntry> uploads_;
};

// ---- the renderer ------------------------------------------------------------------------------

// What mujoco's Python renderers (Gymnasium's OffScreenViewer, dm_control's Physics.render) set up.
struct RenderOptions {
  int max_geom = 1000;               // mjv_makeScene's maxgeom (Gymnasium's max_geom default)
  int font_scale = mjFONTSCALE_150;  // mjr_makeContext's font scale (both use 150%)
  // The offscreen buffer: true, the frame's size (Gymnasium sets model.vis.global_.offwidth/
  // offheight to width/height); false, the model's own offwidth x offheight, the frame drawn in
  // its lower-left corner (dm_control, which only checks that the frame fits).
  bool size_buffer_to_frame = true;
};

// Renders one env's mjData: each call makes this thread's GL context current (restoring the one
// that was current before), updates the scene from `data`, draws and reads the pixels back.
// Not thread-safe per object (the scene is the env's own; the pool never runs one env on two
// threads at once), but any number of Renderers may draw at once on different threads.
// Construction does no GL work, so an env may own one whether or not it ever renders.
class Renderer {
 public:
  Renderer(std::shared_ptr<const mjModel> model, int width, int height, RenderOptions options = {})
      : model_(std::move(model)), width_(width), height_(height), options_(options) {
    if (width < 1 || height < 1) {
      throw std::invalid_argument("render width and height must be >= 1, got " + std::to_string(width) + "x" +
                                  std::to_string(height));
    }
    if (!options_.size_buffer_to_frame &&
        (width > model_->vis.global.offwidth || height > model_->vis.global.offheight)) {
      throw std::invalid_argument(
          "frame " + std::to_string(width) + "x" + std::to_string(height) + " exceeds the model's offscreen buffer " +
          std::to_string(model_->vis.global.offwidth) + "x" + std::to_string(model_->vis.global.offheight));
    }
    mjv_defaultScene(&scene_);
    mjv_makeScene(model_.get(), &scene_, options_.max_geom);
    mjv_defaultOption(&option_);
    mjv_defaultPerturb(&perturb_);
    rgb_.resize(static_cast<std::size_t>(width) * height * 3);
  }
  ~Renderer() { mjv_freeScene(&scene_); }
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  int width() const { return width_; }
  int height() const { return height_; }
  // Scene options (mjvOption: Gymnasium's visual_options flags) and the scene itself (its render
  // flags, scene.flags[mjRND_*], persist across frames), for a caller to adjust before Render.
  mjvOption& option() { return option_; }
  mjvScene& scene() { return scene_; }
  // The model mjv_updateScene reads, when it is not the uploaded one: an env's own copy of it
  // (dm_control's tasks edit their copy's geom sizes, positions and colours, which the scene reads
  // each frame, but no mesh, texture or height field, which mjr_makeContext uploads), so the envs of
  // one task share one upload per thread. nullptr: the constructor's model. It must outlive this.
  void set_scene_model(const mjModel* model) { scene_model_ = model; }
  // Called on each frame after the upload is found or made and before drawing, with this thread's
  // context current: for an env whose model changes what mjr_makeContext uploaded (a height field
  // drawn per episode), to re-upload it (mjr_uploadHField). Empty: nothing.
  void set_before_draw(std::function<void(const mjrContext*)> fn) { before_draw_ = std::move(fn); }

  // Draws `data` from `camera` (updated as mjv_updateScene updates it: a tracking camera's lookat)
  // and writes height x width x 3 RGB bytes, top row first (mujoco's
  // Python renderers flip mjr_readPixels' bottom-up rows the same way); `depth`, if given, gets
  // height x width floats (mjr_readPixels' depth buffer values in [0, 1]), also top row first.
  // Throws std::runtime_error when no GL context can be made.
  void Render(mjData* data, mjvCamera& camera, uint8_t* rgb, float* depth = nullptr) {
    ThreadGl& gl = ThreadGl::Get();
    const Egl& egl = EglLibrary();
    ScopedCurrent current(egl, gl.Context());
    const UploadKey key{model_.get(), options_.size_buffer_to_frame ? width_ : model_->vis.global.offwidth,
                        options_.size_buffer_to_frame ? height_ : model_->vis.global.offheight, options_.font_scale};
    mjrContext* context = gl.Upload(key, model_);
    if (before_draw_) before_draw_(context);
    mjv_updateScene(scene_model_ != nullptr ? scene_model_ : model_.get(), data, &option_, &perturb_, &camera,
                    mjCAT_ALL, &scene_);
    const mjrRect viewport{0, 0, width_, height_};
    mjr_setBuffer(mjFB_OFFSCREEN, context);
    mjr_render(viewport, &scene_, context);
    if (depth != nullptr) depth_.resize(static_cast<std::size_t>(width_) * height_);
    mjr_readPixels(rgb_.data(), depth != nullptr ? depth_.data() : nullptr, viewport, context);
    const std::size_t row = static_cast<std::size_t>(width_) * 3;
    for (int y = 0; y < height_; ++y) {
      std::memcpy(rgb + static_cast<std::size_t>(y) * row,
                  rgb_.data() + static_cast<std::size_t>(height_ - 1 - y) * row, row);
    }
    if (depth != nullptr) {
      const std::size_t drow = static_cast<std::size_t>(width_);
      for (int y = 0; y < height_; ++y) {
        std::memcpy(depth + static_cast<std::size_t>(y) * drow,
                    depth_.data() + static_cast<std::size_t>(height_ - 1 - y) * drow, drow * sizeof(float));
      }
    }
  }

 private:
  std::shared_ptr<const mjModel> model_;
  const mjModel* scene_model_ = nullptr;
  std::function<void(const mjrContext*)> before_draw_;
  const int width_, height_;
  const RenderOptions options_;
  mjvScene scene_{};
  mjvOption option_{};
  mjvPerturb perturb_{};
  std::vector<uint8_t> rgb_;  // mjr_readPixels' bottom-up rows
  std::vector<float> depth_;
};

}  // namespace pp::mujoco_render
