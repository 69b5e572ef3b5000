// The recurrences' step loops, compiled (seq2seq/model/fast/compiled.py builds and
// loads this file). The mathematics, the tensor layouts and the reasons are
// those of seq2seq/model/fast/recurrence.py, whose Python loops are the reference
// these are tested against; the equations are written there, not here.
//
// Each loop runs a whole sequence: per step one GEMM (ATen's addmm, the
// recurrent weights) and one fused pass over the step's gates, vectorized
// with ATen's Vectorized<T> (compiled for AVX2 + FMA; exp and tanh from the
// SLEEF library inside libtorch). Everything that does not depend on the
// previous step (the input projection before, the weight gradients after)
// stays in recurrence.py as GEMMs over all steps.
#include "gates.h"

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
      gru_gates<scalar_t>(s, t, gi.const_data_ptr<scalar_t>() + t * 3 * H, T * 3 * H,
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

// feeding.cpp
std::vector<at::Tensor> feeding_forward(at::Tensor gi_e, at::Tensor h0, at::Tensor keys,
                                        at::Tensor projected, at::Tensor mask,
                                        at::Tensor w_f, at::Tensor w_hh, at::Tensor b_hh,
                                        at::Tensor w_q, at::Tensor v, at::Tensor w_c,
                                        at::Tensor b_c);
std::vector<at::Tensor> feeding_backward(at::Tensor grad_f, at::Tensor h0,
                                         at::Tensor keys, at::Tensor projected,
                                         at::Tensor w_f, at::Tensor w_hh, at::Tensor w_q,
                                         at::Tensor v, at::Tensor w_c, at::Tensor hs,
                                         at::Tensor fs, at::Tensor rz, at::Tensor n,
                                         at::Tensor ghn, at::Tensor qs, at::Tensor as,
                                         at::Tensor cs);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("gru_forward", &gru_forward, "a GRU's forward loop (recurrence.py)");
  m.def("gru_backward", &gru_backward, "a GRU's backward loop (recurrence.py)");
  m.def("lstm_forward", &lstm_forward, "an LSTM's forward loop (recurrence.py)");
  m.def("lstm_backward", &lstm_backward, "an LSTM's backward loop (recurrence.py)");
  m.def("feeding_forward", &feeding_forward, "the input-feeding step (feeding.py)");
  m.def("feeding_backward", &feeding_backward, "its backward loop (feeding.py)");
}
