// The recurrences' step loops, compiled (seq2seq/model/compiled.py builds and
// loads this file). The mathematics, the tensor layouts and the reasons are
// those of seq2seq/model/recurrence.py, whose Python loops are the reference
// these are tested against; the equations are written there, not here.
//
// Each loop runs a whole sequence: per step one GEMM (ATen's addmm, the
// recurrent weights) and one fused pass over the step's gates, vectorized
// with ATen's Vectorized<T> (compiled for AVX2 + FMA; exp and tanh from the
// SLEEF library inside libtorch). Everything that does not depend on the
// previous step (the input projection before, the weight gradients after)
// stays in recurrence.py as GEMMs over all steps.
#include <ATen/cpu/vec/vec.h>
#include <torch/extension.h>

#include <algorithm>
#include <vector>

namespace {

using at::Tensor;
using at::vec::Vectorized;

template <typename T>
inline Vectorized<T> sigmoid(const Vectorized<T>& x) {
  const Vectorized<T> one(T(1));
  return one / (one + x.neg().exp());
}

// Per-row views of (K, ...) tensors: the GEMM of recurrence k.
std::vector<Tensor> per_k(const Tensor& t) { return t.unbind(0); }

// The strides of one recurrence row of a (K, B, T, m H) tensor at step t.
struct Rows {
  int64_t rows, steps, hidden;
  int64_t at(int64_t row, int64_t t, int64_t width) const {
    return (row * steps + t) * width * hidden;  // element (row, t, 0)
  }
};

template <typename T>
void gru_gates(const Rows& s, int64_t t, const T* gi, const T* gh, T* h, T* hs,
               T* rz, T* n, T* ghn) {
  using V = Vectorized<T>;
  const int64_t H = s.hidden, W = V::size();
  for (int64_t b = 0; b < s.rows; ++b) {
    const T* gi_b = gi + s.at(b, t, 3);
    const T* gh_b = gh + b * 3 * H;
    T* h_b = h + b * H;
    T* hs_b = hs + s.at(b, t, 1);
    T* rz_b = rz + s.at(b, t, 2);
    T* n_b = n + s.at(b, t, 1);
    T* ghn_b = ghn + s.at(b, t, 1);
    for (int64_t j = 0; j < H; j += W) {
      const int64_t c = std::min(W, H - j);
      V r = sigmoid(V::loadu(gi_b + j, c) + V::loadu(gh_b + j, c));
      V z = sigmoid(V::loadu(gi_b + H + j, c) + V::loadu(gh_b + H + j, c));
      V g = V::loadu(gh_b + 2 * H + j, c);
      V nn = (V::loadu(gi_b + 2 * H + j, c) + r * g).tanh();
      V hn = nn + z * (V::loadu(h_b + j, c) - nn);
      r.store(rz_b + j, c);
      z.store(rz_b + H + j, c);
      nn.store(n_b + j, c);
      g.store(ghn_b + j, c);
      hn.store(hs_b + j, c);
      hn.store(h_b + j, c);
    }
  }
}

template <typename T>
void gru_back_gates(const Rows& s, int64_t t, const T* h0, T* dh, const T* grad,
                    const T* hs, const T* rz, const T* n, const T* ghn, T* dgi,
                    T* dgh) {
  using V = Vectorized<T>;
  const int64_t H = s.hidden, W = V::size();
  const V one(T(1));
  for (int64_t b = 0; b < s.rows; ++b) {
    T* dh_b = dh + b * H;
    const T* g_b = grad + s.at(b, t, 1);
    const T* hp_b = t > 0 ? hs + s.at(b, t - 1, 1) : h0 + b * H;  // h_{t-1}
    const T* rz_b = rz + s.at(b, t, 2);
    const T* n_b = n + s.at(b, t, 1);
    const T* ghn_b = ghn + s.at(b, t, 1);
    T* dgi_b = dgi + s.at(b, t, 3);
    T* dgh_b = dgh + s.at(b, t, 3);
    for (int64_t j = 0; j < H; j += W) {
      const int64_t c = std::min(W, H - j);
      V d = V::loadu(dh_b + j, c) + V::loadu(g_b + j, c);
      V r = V::loadu(rz_b + j, c), z = V::loadu(rz_b + H + j, c);
      V nn = V::loadu(n_b + j, c);
      V da_n = d * (one - z) * (one - nn * nn);
      V da_r = da_n * V::loadu(ghn_b + j, c) * r * (one - r);
      V da_z = d * (V::loadu(hp_b + j, c) - nn) * z * (one - z);
      da_r.store(dgi_b + j, c);
      da_z.store(dgi_b + H + j, c);
      da_n.store(dgi_b + 2 * H + j, c);
      da_r.store(dgh_b + j, c);
      da_z.store(dgh_b + H + j, c);
      (da_n * r).store(dgh_b + 2 * H + j, c);
      (d * z).store(dh_b + j, c);  // dh_{t-1} before the GEMM adds dgh W_hh
    }
  }
}

template <typename T>
void lstm_gates(const Rows& s, int64_t t, const T* a, T* c, T* h, T* act, T* hs,
                T* cs) {
  using V = Vectorized<T>;
  const int64_t H = s.hidden, W = V::size();
  for (int64_t b = 0; b < s.rows; ++b) {
    const T* a_b = a + b * 4 * H;
    T* c_b = c + b * H;
    T* h_b = h + b * H;
    T* act_b = act + s.at(b, t, 4);
    for (int64_t j = 0; j < H; j += W) {
      const int64_t m = std::min(W, H - j);
      V i = sigmoid(V::loadu(a_b + j, m));
      V f = sigmoid(V::loadu(a_b + H + j, m));
      V g = V::loadu(a_b + 2 * H + j, m).tanh();
      V o = sigmoid(V::loadu(a_b + 3 * H + j, m));
      V cn = f * V::loadu(c_b + j, m) + i * g;
      V hn = o * cn.tanh();
      i.store(act_b + j, m);
      f.store(act_b + H + j, m);
      g.store(act_b + 2 * H + j, m);
      o.store(act_b + 3 * H + j, m);
      cn.store(c_b + j, m);
      cn.store(cs + s.at(b, t, 1) + j, m);
      hn.store(h_b + j, m);
      hn.store(hs + s.at(b, t, 1) + j, m);
    }
  }
}

template <typename T>
void lstm_back_gates(const Rows& s, int64_t t, const T* c0, const T* dh, T* dc,
                     const T* grad_h, const T* grad_c, const T* cs, const T* act,
                     T* da) {
  using V = Vectorized<T>;
  const int64_t H = s.hidden, W = V::size();
  const V one(T(1));
  for (int64_t b = 0; b < s.rows; ++b) {
    const T* dh_b = dh + b * H;
    T* dc_b = dc + b * H;
    const T* act_b = act + s.at(b, t, 4);
    const T* cp_b = t > 0 ? cs + s.at(b, t - 1, 1) : c0 + b * H;  // c_{t-1}
    T* da_b = da + s.at(b, t, 4);
    for (int64_t j = 0; j < H; j += W) {
      const int64_t m = std::min(W, H - j);
      V i = V::loadu(act_b + j, m), f = V::loadu(act_b + H + j, m);
      V g = V::loadu(act_b + 2 * H + j, m), o = V::loadu(act_b + 3 * H + j, m);
      V tc = V::loadu(cs + s.at(b, t, 1) + j, m).tanh();
      V d_h = V::loadu(dh_b + j, m) + V::loadu(grad_h + s.at(b, t, 1) + j, m);
      V d_c = V::loadu(dc_b + j, m) + V::loadu(grad_c + s.at(b, t, 1) + j, m) +
              d_h * o * (one - tc * tc);
      (d_c * g * i * (one - i)).store(da_b + j, m);
      (d_c * V::loadu(cp_b + j, m) * f * (one - f)).store(da_b + H + j, m);
      (d_c * i * (one - g * g)).store(da_b + 2 * H + j, m);
      (d_h * tc * o * (one - o)).store(da_b + 3 * H + j, m);
      (d_c * f).store(dc_b + j, m);  // dc_{t-1}
    }
  }
}

void check(const std::vector<Tensor>& tensors) {
  for (const auto& t : tensors) {
    TORCH_CHECK(t.device().is_cpu(), "the compiled loops run on the CPU");
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(), "one dtype");
  }
}

}  // namespace

// gi (K, B, T, 3H); h0 (K, B, H); w_hh (K, 3H, H); b_hh (K, 3H)
// -> hs (K, B, T, H), rz (K, B, T, 2H), n (K, B, T, H), ghn (K, B, T, H)
std::vector<Tensor> gru_forward(Tensor gi, Tensor h0, Tensor w_hh, Tensor b_hh) {
  check({gi, h0, w_hh, b_hh});
  gi = gi.contiguous();
  const int64_t K = gi.size(0), B = gi.size(1), T = gi.size(2), H = h0.size(2);
  const Rows s{K * B, T, H};
  auto hs = at::empty({K, B, T, H}, gi.options());
  auto rz = at::empty({K, B, T, 2 * H}, gi.options());
  auto n = at::empty({K, B, T, H}, gi.options());
  auto ghn = at::empty({K, B, T, H}, gi.options());
  auto h = h0.contiguous().clone();
  auto gh = at::empty({K, B, 3 * H}, gi.options());
  auto h_k = per_k(h), gh_k = per_k(gh), w_k = per_k(w_hh.transpose(1, 2));
  auto b_k = per_k(b_hh.unsqueeze(1));
  at::NoGradGuard no_grad;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k) at::addmm_out(gh_k[k], b_k[k], h_k[k], w_k[k]);
    AT_DISPATCH_FLOATING_TYPES(gi.scalar_type(), "gru_forward", [&] {
      gru_gates<scalar_t>(s, t, gi.const_data_ptr<scalar_t>(),
                          gh.const_data_ptr<scalar_t>(), h.data_ptr<scalar_t>(),
                          hs.data_ptr<scalar_t>(), rz.data_ptr<scalar_t>(),
                          n.data_ptr<scalar_t>(), ghn.data_ptr<scalar_t>());
    });
  }
  return {hs, rz, n, ghn};
}

// grad_hs, hs, n, ghn (K, B, T, H); rz (K, B, T, 2H); h0 (K, B, H);
// w_hh (K, 3H, H) -> dgi, dgh (K, B, T, 3H) and dh0 (K, B, H)
std::vector<Tensor> gru_backward(Tensor grad_hs, Tensor h0, Tensor hs, Tensor rz,
                                 Tensor n, Tensor ghn, Tensor w_hh) {
  check({grad_hs, h0, hs, rz, n, ghn, w_hh});
  grad_hs = grad_hs.contiguous();
  h0 = h0.contiguous();
  hs = hs.contiguous();
  rz = rz.contiguous();
  n = n.contiguous();
  ghn = ghn.contiguous();
  const int64_t K = hs.size(0), B = hs.size(1), T = hs.size(2), H = hs.size(3);
  const Rows s{K * B, T, H};
  auto dgi = at::empty({K, B, T, 3 * H}, hs.options());
  auto dgh = at::empty({K, B, T, 3 * H}, hs.options());
  auto dh = at::zeros({K, B, H}, hs.options());
  auto dh_k = per_k(dh), dgh_k = per_k(dgh), w_k = per_k(w_hh);
  at::NoGradGuard no_grad;
  for (int64_t t = T - 1; t >= 0; --t) {
    AT_DISPATCH_FLOATING_TYPES(hs.scalar_type(), "gru_backward", [&] {
      gru_back_gates<scalar_t>(
          s, t, h0.const_data_ptr<scalar_t>(), dh.data_ptr<scalar_t>(),
          grad_hs.const_data_ptr<scalar_t>(), hs.const_data_ptr<scalar_t>(),
          rz.const_data_ptr<scalar_t>(), n.const_data_ptr<scalar_t>(),
          ghn.const_data_ptr<scalar_t>(), dgi.data_ptr<scalar_t>(),
          dgh.data_ptr<scalar_t>());
    });
    for (int64_t k = 0; k < K; ++k)  // dh_{t-1} = dh z + dgh_t W_hh
      dh_k[k].addmm_(dgh_k[k].select(1, t), w_k[k]);
  }
  return {dgi, dgh, dh};
}

// gi (K, B, T, 4H) with both biases; h0, c0 (K, B, H); w_hh (K, 4H, H)
// -> hs, cs (K, B, T, H) and the gate activations act (K, B, T, 4H)
std::vector<Tensor> lstm_forward(Tensor gi, Tensor h0, Tensor c0, Tensor w_hh) {
  check({gi, h0, c0, w_hh});
  gi = gi.contiguous();
  const int64_t K = gi.size(0), B = gi.size(1), T = gi.size(2), H = h0.size(2);
  const Rows s{K * B, T, H};
  auto hs = at::empty({K, B, T, H}, gi.options());
  auto cs = at::empty({K, B, T, H}, gi.options());
  auto act = at::empty({K, B, T, 4 * H}, gi.options());
  auto h = h0.contiguous().clone();
  auto c = c0.contiguous().clone();
  auto a = at::empty({K, B, 4 * H}, gi.options());
  auto h_k = per_k(h), a_k = per_k(a), w_k = per_k(w_hh.transpose(1, 2));
  auto gi_k = per_k(gi);
  at::NoGradGuard no_grad;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t k = 0; k < K; ++k)
      at::addmm_out(a_k[k], gi_k[k].select(1, t), h_k[k], w_k[k]);
    AT_DISPATCH_FLOATING_TYPES(gi.scalar_type(), "lstm_forward", [&] {
      lstm_gates<scalar_t>(s, t, a.const_data_ptr<scalar_t>(), c.data_ptr<scalar_t>(),
                           h.data_ptr<scalar_t>(), act.data_ptr<scalar_t>(),
                           hs.data_ptr<scalar_t>(), cs.data_ptr<scalar_t>());
    });
  }
  return {hs, cs, act};
}

// grad_hs, grad_cs, cs (K, B, T, H); act (K, B, T, 4H); c0 (K, B, H);
// w_hh (K, 4H, H) -> da (K, B, T, 4H), dh0 and dc0 (K, B, H)
std::vector<Tensor> lstm_backward(Tensor grad_hs, Tensor grad_cs, Tensor c0,
                                  Tensor cs, Tensor act, Tensor w_hh) {
  check({grad_hs, grad_cs, c0, cs, act, w_hh});
  grad_hs = grad_hs.contiguous();
  grad_cs = grad_cs.contiguous();
  c0 = c0.contiguous();
  cs = cs.contiguous();
  act = act.contiguous();
  const int64_t K = cs.size(0), B = cs.size(1), T = cs.size(2), H = cs.size(3);
  const Rows s{K * B, T, H};
  auto da = at::empty({K, B, T, 4 * H}, cs.options());
  auto dh = at::zeros({K, B, H}, cs.options());
  auto dc = at::zeros({K, B, H}, cs.options());
  auto dh_k = per_k(dh), da_k = per_k(da), w_k = per_k(w_hh);
  at::NoGradGuard no_grad;
  for (int64_t t = T - 1; t >= 0; --t) {
    AT_DISPATCH_FLOATING_TYPES(cs.scalar_type(), "lstm_backward", [&] {
      lstm_back_gates<scalar_t>(
          s, t, c0.const_data_ptr<scalar_t>(), dh.const_data_ptr<scalar_t>(),
          dc.data_ptr<scalar_t>(), grad_hs.const_data_ptr<scalar_t>(),
          grad_cs.const_data_ptr<scalar_t>(), cs.const_data_ptr<scalar_t>(),
          act.const_data_ptr<scalar_t>(), da.data_ptr<scalar_t>());
    });
    for (int64_t k = 0; k < K; ++k)  // dh_{t-1} = da_t W_hh
      at::mm_out(dh_k[k], da_k[k].select(1, t), w_k[k]);
  }
  return {da, dh, dc};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("gru_forward", &gru_forward, "a GRU's forward loop (recurrence.py)");
  m.def("gru_backward", &gru_backward, "a GRU's backward loop (recurrence.py)");
  m.def("lstm_forward", &lstm_forward, "an LSTM's forward loop (recurrence.py)");
  m.def("lstm_backward", &lstm_backward, "an LSTM's backward loop (recurrence.py)");
}
