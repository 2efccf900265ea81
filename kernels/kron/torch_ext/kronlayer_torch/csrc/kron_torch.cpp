// kron_torch.cpp: the PyTorch binding of kernels/kron/kron_api.h: the ops
//   kronlayer::kron_v3(x, factors) -> y                  differentiable (autograd in C++)
//   kronlayer::v3_forward(x, factors) -> (y, saved)
//   kronlayer::v3_backward(x, factors, saved, gy) -> (gx, gA)
// for CPU tensors (the CPU backend) and CUDA tensors (v3's kernels on the current stream of the
// tensors' device), every input checked first (dtype, device, shape, contiguity: the error
// names what was expected). x, y, gy, gx are [B, N]; factors the list of A_k [f_k, f_k], read
// where they are (no copy); gA every factor's gradient back to back, flat; saved the forward's
// intermediates for the backward. kron_v3 is what kronlayer_torch.kron calls: its autograd node
// lives in C++, so a call costs one dispatch, not a Python autograd.Function. v3's plans are
// built once per batch, factors, dtype and device and kept for the process. Built without
// KRON_API_CUDA (a CPU-only build), CUDA tensors are refused with the reason.
#include <torch/extension.h>

#ifdef KRON_API_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#include "kron_api.h"

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace {

const char *const kNoCuda =
    "kronlayer: this build of kronlayer_torch has no CUDA (it was built with KRON_EXT_CUDA=0, "
    "or without nvcc or a CUDA torch); move the tensors to the CPU, or rebuild on a machine "
    "with nvcc and a CUDA torch";

// Error messages are put together as std::string without iostreams: where the compiler the
// extension is built with links its own copy of the C++ library, that copy's locale is never
// set up and formatting a number through an ostream in this module crashes (seen on the GPU
// machine's /opt/gcc). KRON_CHECK passes TORCH_CHECK one finished string.
std::string piece(const char *s) { return s; }
std::string piece(const std::string &s) { return s; }
std::string piece(at::ScalarType t) { return c10::toString(t); }
std::string piece(const c10::Device &d) { return d.str(); }
template <typename T, typename = std::enable_if_t<std::is_integral<T>::value>>
std::string piece(T v) {
  return std::to_string(v);
}
std::string piece(at::IntArrayRef v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); i++) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}
template <typename... Parts> std::string msg(const Parts &...parts) {
  std::string out;
  (out += ... += piece(parts));
  return out;
}
#define KRON_CHECK(cond, ...) TORCH_CHECK(cond, msg(__VA_ARGS__))
#define KRON_CHECK_VALUE(cond, ...) TORCH_CHECK_VALUE(cond, msg(__VA_ARGS__))
#define KRON_CHECK_TYPE(cond, ...) TORCH_CHECK_TYPE(cond, msg(__VA_ARGS__))

// ---- plans, one per (batch, factors, element size, device) ------------------------------------
struct plan_key {
  long long batch;
  std::vector<int> f;
  int es, device;
  bool operator<(const plan_key &o) const {
    return std::tie(batch, f, es, device) < std::tie(o.batch, o.f, o.es, o.device);
  }
};

std::mutex g_plans_mu;
std::map<plan_key, std::shared_ptr<const kron_api_plan>> g_plans;

// the plan of a shape (made on first use; for CUDA the device must be current)
std::shared_ptr<const kron_api_plan> plan_for(long long batch, const std::vector<int> &f, int es,
                                              int device) {
  plan_key key{batch, f, es, device};
  std::lock_guard<std::mutex> lock(g_plans_mu);
  auto it = g_plans.find(key);
  if (it != g_plans.end()) return it->second;
  auto p = std::make_shared<kron_api_plan>();
  char why[512] = "";
  int rc = kron_api_plan_make(p.get(), batch, (int)f.size(), f.data(), es, device, why, sizeof why);
  KRON_CHECK(rc == 0, "kronlayer: no v3 plan for batch ", batch, " and factors ",
              at::IntArrayRef(std::vector<int64_t>(f.begin(), f.end())), ": ", why);
  g_plans[key] = p;
  return p;
}

// ---- input checks ---------------------------------------------------------------------------
// t: contiguous, x's dtype and device, of `shape`
void check_like(const at::Tensor &t, const char *name, const at::Tensor &x, at::IntArrayRef shape) {
  KRON_CHECK(t.scalar_type() == x.scalar_type(), "kronlayer: ", name, " must be ", x.scalar_type(),
              " like x, got ", t.scalar_type());
  KRON_CHECK(t.device() == x.device(), "kronlayer: ", name, " must be on ", x.device(),
              " like x, got ", t.device());
  KRON_CHECK(t.sizes() == shape, "kronlayer: ", name, " must have shape ", at::IntArrayRef(shape),
              ", got ", at::IntArrayRef(t.sizes()));
  KRON_CHECK(t.is_contiguous(), "kronlayer: ", name,
              " must be contiguous (row-major); call .contiguous() first");
}

struct checked {
  std::vector<int> f;
  std::array<const void *, KRON_MAX_FACTORS> a{}; // the factors' data
  int64_t batch = 0, n = 1, na = 0;
  int es = 4;
  int device = KRON_API_CPU;
};

// 1 to KRON_MAX_FACTORS factors, factor k (0-based) of size f in [1, KRON_MAX_FACTOR]
void check_factor_count(size_t m) {
  KRON_CHECK_VALUE(m >= 1 && m <= KRON_MAX_FACTORS, "kronlayer: expected 1 to ", KRON_MAX_FACTORS,
                   " factors, got ", m);
}
void check_factor_size(size_t k, int64_t f) {
  KRON_CHECK_VALUE(f >= 1 && f <= KRON_MAX_FACTOR, "kronlayer: factor ", k + 1, " is ", f,
                   "; every factor must be in [1, ", KRON_MAX_FACTOR, "]");
}

// the factors: 1 to KRON_MAX_FACTORS square matrices [f, f] of x's dtype and device, contiguous
void check_factors(checked &c, const at::Tensor &x, at::TensorList factors) {
  check_factor_count(factors.size());
  c.f.reserve(factors.size());
  for (size_t k = 0; k < factors.size(); k++) {
    const at::Tensor &A = factors[k];
    KRON_CHECK_VALUE(A.dim() == 2 && A.size(0) == A.size(1), "kronlayer: factor ", k + 1,
                     " must be a square matrix [f, f], got shape ", at::IntArrayRef(A.sizes()));
    check_factor_size(k, A.size(0));
    KRON_CHECK_TYPE(A.scalar_type() == x.scalar_type(), "kronlayer: factor ", k + 1, " is ",
                    A.scalar_type(), " but x is ", x.scalar_type(), "; expected one dtype");
    KRON_CHECK_VALUE(A.device() == x.device(), "kronlayer: factor ", k + 1, " is on ", A.device(),
                     " but x is on ", x.device(), "; expected one device");
    KRON_CHECK(A.is_contiguous(), "kronlayer: factor ", k + 1,
               " must be contiguous (row-major); call .contiguous() first");
    int f = (int)A.size(0);
    c.f.push_back(f);
    c.a[k] = A.data_ptr();
    c.n *= f;
    c.na += (int64_t)f * f;
  }
}

// x [B, N] fp32/fp64 contiguous on the CPU or a CUDA device, the factors like it
checked check_inputs(const at::Tensor &x, at::TensorList factors) {
  checked c;
  KRON_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kDouble,
              "kronlayer: x must be float32 or float64, got ", x.scalar_type());
  check_factors(c, x, factors);
  KRON_CHECK(x.dim() == 2, "kronlayer: x must be 2-D [B, N], got shape ", at::IntArrayRef(x.sizes()));
  KRON_CHECK(x.size(1) == c.n, "kronlayer: x has N = ", x.size(1), " columns but the factors ",
              at::IntArrayRef(std::vector<int64_t>(c.f.begin(), c.f.end())), " multiply to ", c.n);
  KRON_CHECK(x.is_contiguous(), "kronlayer: x must be contiguous (row-major [B, N]); call "
                                 ".contiguous() first");
  KRON_CHECK(x.is_cpu() || x.is_cuda(), "kronlayer: x must be on the CPU or a CUDA device, got ",
              x.device());
  if (x.is_cuda()) {
    KRON_CHECK(kron_api_has_cuda(), kNoCuda);
    c.device = x.get_device();
  }
  c.batch = x.size(0);
  c.es = x.scalar_type() == at::kDouble ? 8 : 4;
  return c;
}

void *stream_of(const checked &c) {
#ifdef KRON_API_CUDA
  if (c.device != KRON_API_CPU) return (void *)at::cuda::getCurrentCUDAStream(c.device).stream();
#endif
  (void)c;
  return nullptr;
}

void *ptr(const at::Tensor &t) { return t.numel() ? t.data_ptr() : nullptr; }

// ---- the ops --------------------------------------------------------------------------------
// Each runs on the device of its tensors (the guard makes it current for the plan and launches).
std::tuple<at::Tensor, at::Tensor> v3_forward(const at::Tensor &x, at::TensorList factors) {
  RECORD_FUNCTION("kronlayer::v3_forward", std::vector<c10::IValue>());
  checked c = check_inputs(x, factors);
#ifdef KRON_API_CUDA
  c10::cuda::OptionalCUDAGuard device_guard;
  if (c.device != KRON_API_CPU) device_guard.set_index((c10::DeviceIndex)c.device);
#endif
  int64_t m = (int64_t)c.f.size();
  at::Tensor y = at::empty_like(x);
  at::Tensor saved = at::empty({(m - 1) * c.batch * c.n}, x.options());
  if (c.batch == 0) return {y, saved};
  auto p = plan_for(c.batch, c.f, c.es, c.device);
  KRON_CHECK(kron_api_saved_elems(p.get()) == saved.numel(),
              "kronlayer: internal: the plan saves ", kron_api_saved_elems(p.get()), " elements");
  char why[1024] = "";
  int rc = kron_api_fwd(p.get(), stream_of(c), x.data_ptr(), c.a.data(), y.data_ptr(), ptr(saved),
                        why, sizeof why);
  KRON_CHECK(rc == 0, "kronlayer: v3 forward failed: ", why);
  return {y, saved};
}

// gx, and every factor's gradient back to back in one flat tensor (gA_k after the f_j² of the
// factors before it)
std::tuple<at::Tensor, at::Tensor> v3_backward(const at::Tensor &x, at::TensorList factors,
                                               const at::Tensor &saved, const at::Tensor &gy) {
  RECORD_FUNCTION("kronlayer::v3_backward", std::vector<c10::IValue>());
  checked c = check_inputs(x, factors);
  int64_t m = (int64_t)c.f.size();
  check_like(gy, "gy (the gradient of y)", x, x.sizes());
  check_like(saved, "saved (the forward's intermediates)", x, {(m - 1) * c.batch * c.n});
#ifdef KRON_API_CUDA
  c10::cuda::OptionalCUDAGuard device_guard;
  if (c.device != KRON_API_CPU) device_guard.set_index((c10::DeviceIndex)c.device);
#endif
  at::Tensor gx = at::empty_like(x);
  at::Tensor gA = at::empty({c.na}, x.options());
  if (c.batch == 0) return {gx, gA.zero_()};
  auto p = plan_for(c.batch, c.f, c.es, c.device);
  at::Tensor scratch = at::empty({kron_api_scratch_elems(p.get())}, x.options());
  char why[1024] = "";
  int rc = kron_api_bwd(p.get(), stream_of(c), x.data_ptr(), c.a.data(), ptr(saved),
                        gy.data_ptr(), gx.data_ptr(), gA.data_ptr(), ptr(scratch), why, sizeof why);
  KRON_CHECK(rc == 0, "kronlayer: v3 backward failed: ", why);
  return {gx, gA};
}

std::vector<at::Tensor> contiguous_all(at::TensorList ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const at::Tensor &t : ts) out.push_back(t.contiguous());
  return out;
}

// kron_v3 with autograd: the forward keeps x, the factors and the forward's intermediates; the
// backward returns gx and each factor's gradient (views of v3_backward's flat gA).
class KronV3Fn : public torch::autograd::Function<KronV3Fn> {
public:
  static at::Tensor forward(torch::autograd::AutogradContext *ctx, const at::Tensor &x,
                            at::TensorList factors) {
    at::AutoDispatchBelowADInplaceOrView below;
    at::Tensor xc = x.contiguous();
    std::vector<at::Tensor> keep = contiguous_all(factors);
    auto [y, saved] = v3_forward(xc, keep);
    keep.push_back(xc);
    keep.push_back(saved);
    ctx->save_for_backward(keep);
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext *ctx,
                                                 torch::autograd::variable_list grad_out) {
    KRON_CHECK(!at::GradMode::is_enabled(),
               "kronlayer: v3's backward is not differentiable itself (create_graph=True, a "
               "double backward); use implementation v1 or v2 for higher-order gradients");
    torch::autograd::variable_list keep = ctx->get_saved_variables();
    const at::Tensor saved = keep.back();
    keep.pop_back();
    const at::Tensor x = keep.back();
    keep.pop_back();
    auto [gx, gA] = v3_backward(x, keep, saved, grad_out[0].contiguous());
    torch::autograd::variable_list grads{gx};
    int64_t start = 0;
    for (const at::Tensor &A : keep) {
      int64_t f = A.size(0);
      grads.push_back(gA.narrow(0, start, f * f).view({f, f}));
      start += f * f;
    }
    return grads;
  }
};

// y = x·(A_1 ⊗ ... ⊗ A_m)^T, differentiable in x and every factor (the Autograd key's kernel)
at::Tensor kron_v3_autograd(const at::Tensor &x, at::TensorList factors) {
  return KronV3Fn::apply(x, factors);
}

// the same below autograd (no_grad, inference mode): the forward alone
at::Tensor kron_v3_plain(const at::Tensor &x, at::TensorList factors) {
  return std::get<0>(v3_forward(x.contiguous(), contiguous_all(factors)));
}

// v3's plan as kronlayer's `plan` lines print it (fwd, then bwd, one line each); device -1: the
// CPU
std::string plan_line(long long batch, std::vector<int64_t> factors, bool fp64, int device) {
  check_factor_count(factors.size());
  std::vector<int> f;
  for (size_t k = 0; k < factors.size(); k++) {
    check_factor_size(k, factors[k]);
    f.push_back((int)factors[k]);
  }
  KRON_CHECK(device == KRON_API_CPU || kron_api_has_cuda(), kNoCuda);
#ifdef KRON_API_CUDA
  c10::cuda::OptionalCUDAGuard device_guard;
  if (device != KRON_API_CPU) device_guard.set_index((c10::DeviceIndex)device);
#endif
  auto p = plan_for(batch, f, fp64 ? 8 : 4, device);
  std::string out;
  for (int pass = 0; pass < 2; pass++) {
    char line[4096];
    kron_api_describe(p.get(), (kron_pass)pass, line, sizeof line);
    out += std::string(pass ? "\n" : "") + "plan impl=v3 pass=" + (pass ? "bwd " : "fwd ") + line;
  }
  return out;
}

} // namespace

TORCH_LIBRARY(kronlayer, m) {
  m.def("kron_v3(Tensor x, Tensor[] factors) -> Tensor");
  m.def("v3_forward(Tensor x, Tensor[] factors) -> (Tensor, Tensor)");
  m.def("v3_backward(Tensor x, Tensor[] factors, Tensor saved, Tensor gy) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(kronlayer, Autograd, m) { m.impl("kron_v3", &kron_v3_autograd); }

TORCH_LIBRARY_IMPL(kronlayer, CPU, m) {
  m.impl("kron_v3", &kron_v3_plain);
  m.impl("v3_forward", &v3_forward);
  m.impl("v3_backward", &v3_backward);
}

// registered in CPU-only builds too: check_inputs refuses CUDA tensors there with the reason
TORCH_LIBRARY_IMPL(kronlayer, CUDA, m) {
  m.impl("kron_v3", &kron_v3_plain);
  m.impl("v3_forward", &v3_forward);
  m.impl("v3_backward", &v3_backward);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "kronlayer_torch._C: v3 of the Kronecker layer (torch.ops.kronlayer.*)";
  m.def(
      "has_cuda", []() { return kron_api_has_cuda() != 0; },
      "whether this build launches on CUDA tensors");
  m.def("plan_line", &plan_line, "v3's plan lines for (batch, factors, fp64, device; -1: CPU)");
}
