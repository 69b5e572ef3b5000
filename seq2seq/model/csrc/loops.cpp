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
#include <ATen/Parallel.h>
#include <ATen/cpu/vec/vec.h>
#include <torch/extension.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace {

using at::Tensor;
using at::vec::Vectorized;

template <typename T>
inline Vectorized<T> sigmoid(const Vectorized<T>& x) {
  const Vectorized<T> one(T(1));
  return one / (one + x.neg().exp());
}

// Row b of a step's work, for every b in [0, n), on ATen's threads (rows are
// independent within a step).
template <class F>
void each_row(int64_t n, const F& f) {
  at::parallel_for(0, n, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) f(b);
  });
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

// gi_t: row 0 of step t's input part, rows gi_row apart.
template <typename T>
void gru_gates(const Rows& s, int64_t t, const T* gi_t, int64_t gi_row, const T* gh,
               T* h, T* hs, T* rz, T* n, T* ghn) {
  using V = Vectorized<T>;
  const int64_t H = s.hidden, W = V::size();
  each_row(s.rows, [&](int64_t b) {
    const T* gi_b = gi_t + b * gi_row;
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
  });
}

template <typename T>
void gru_back_gates(const Rows& s, int64_t t, const T* h0, T* dh, const T* grad,
                    const T* hs, const T* rz, const T* n, const T* ghn, T* dgi,
                    T* dgh) {
  using V = Vectorized<T>;
  const int64_t H = s.hidden, W = V::size();
  const V one(T(1));
  each_row(s.rows, [&](int64_t b) {
    T* dh_b = dh + b * H;
    const T* g_b = grad ? grad + s.at(b, t, 1) : nullptr;  // null: dh holds it all
    const T* hp_b = t > 0 ? hs + s.at(b, t - 1, 1) : h0 + b * H;  // h_{t-1}
    const T* rz_b = rz + s.at(b, t, 2);
    const T* n_b = n + s.at(b, t, 1);
    const T* ghn_b = ghn + s.at(b, t, 1);
    T* dgi_b = dgi + s.at(b, t, 3);
    T* dgh_b = dgh + s.at(b, t, 3);
    for (int64_t j = 0; j < H; j += W) {
      const int64_t c = std::min(W, H - j);
      V d = grad ? V::loadu(dh_b + j, c) + V::loadu(g_b + j, c) : V::loadu(dh_b + j, c);
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
  });
}

template <typename T>
void lstm_gates(const Rows& s, int64_t t, const T* a, T* c, T* h, T* act, T* hs,
                T* cs) {
  using V = Vectorized<T>;
  const int64_t H = s.hidden, W = V::size();
  each_row(s.rows, [&](int64_t b) {
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
  });
}

template <typename T>
void lstm_back_gates(const Rows& s, int64_t t, const T* c0, const T* dh, T* dc,
                     const T* grad_h, const T* grad_c, const T* cs, const T* act,
                     T* da) {
  using V = Vectorized<T>;
  const int64_t H = s.hidden, W = V::size();
  const V one(T(1));
  each_row(s.rows, [&](int64_t b) {
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
  });
}

// Additive attention for one step, row by row (feeding.py's equations):
// scores s_j = v . tanh(q + P_j) on real j, a = softmax(s), c = sum_j a_j k_j.
template <typename T>
void attend(int64_t B, int64_t S, int64_t A, int64_t D, const T* q, const T* P,
            const bool* mask, const T* v, const T* keys, T* a, int64_t a_row, T* c,
            int64_t c_row) {
  using V = Vectorized<T>;
  const int64_t W = V::size();
  each_row(B, [&](int64_t b) {
    std::vector<T> scores(S);
    const T* q_b = q + b * A;
    T top = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < S; ++j) {
      if (!mask[b * S + j]) {
        scores[j] = -std::numeric_limits<T>::infinity();
        continue;
      }
      const T* p = P + (b * S + j) * A;
      V acc(T(0));
      for (int64_t x = 0; x < A; x += W) {
        const int64_t m = std::min(W, A - x);
        V u = (V::loadu(q_b + x, m) + V::loadu(p + x, m)).tanh();
        acc = at::vec::fmadd(u, V::loadu(v + x, m), acc);  // zeros past m
      }
      scores[j] = at::vec::vec_reduce_all<T>(
          [](const V& l, const V& r) { return l + r; }, acc);
      top = std::max(top, scores[j]);
    }
    T total = 0;
    for (int64_t j = 0; j < S; ++j) {
      scores[j] = mask[b * S + j] ? std::exp(scores[j] - top) : T(0);
      total += scores[j];
    }
    T* a_b = a + b * a_row;
    T* c_b = c + b * c_row;
    std::fill(c_b, c_b + D, T(0));
    for (int64_t j = 0; j < S; ++j) {
      a_b[j] = scores[j] / total;
      if (a_b[j] == T(0)) continue;
      const V w(a_b[j]);
      const T* k = keys + (b * S + j) * D;
      for (int64_t x = 0; x < D; x += W) {
        const int64_t m = std::min(W, D - x);
        at::vec::fmadd(w, V::loadu(k + x, m), V::loadu(c_b + x, m)).store(c_b + x, m);
      }
    }
  });
}

// Its backward for one step, row by row: da_j = dc . k_j, ds = a (da - sum a da),
// u recomputed, dv += ds_j u_j, du_j = ds_j v (1 - u_j^2) into dP_j and dq.
template <typename T>
void attend_back(int64_t B, int64_t S, int64_t A, int64_t D, const T* q,
                 const T* P, const T* v, const T* keys, const T* a, int64_t a_row,
                 const T* dc, T* dq, T* dP, T* dv_parts) {
  using V = Vectorized<T>;
  const int64_t W = V::size();
  const V one(T(1));
  each_row(B, [&](int64_t b) {
    std::vector<T> ds(S);
    T* dv = dv_parts + at::get_thread_num() * A;  // this thread's share of dv
    const T* a_b = a + b * a_row;
    const T* dc_b = dc + b * D;
    T weighted = 0;
    for (int64_t j = 0; j < S; ++j) {
      ds[j] = 0;
      if (a_b[j] == T(0)) continue;
      const T* k = keys + (b * S + j) * D;
      V acc(T(0));
      for (int64_t x = 0; x < D; x += W) {
        const int64_t m = std::min(W, D - x);
        acc = at::vec::fmadd(V::loadu(dc_b + x, m), V::loadu(k + x, m), acc);
      }
      ds[j] = at::vec::vec_reduce_all<T>(
          [](const V& l, const V& r) { return l + r; }, acc);
      weighted += a_b[j] * ds[j];
    }
    T* dq_b = dq + b * A;
    std::fill(dq_b, dq_b + A, T(0));
    for (int64_t j = 0; j < S; ++j) {
      if (a_b[j] == T(0)) continue;
      const T g = a_b[j] * (ds[j] - weighted);
      const V gv(g);
      const T* p = P + (b * S + j) * A;
      T* dp = dP + (b * S + j) * A;
      for (int64_t x = 0; x < A; x += W) {
        const int64_t m = std::min(W, A - x);
        V u = (V::loadu(q + b * A + x, m) + V::loadu(p + x, m)).tanh();
        at::vec::fmadd(gv, u, V::loadu(dv + x, m)).store(dv + x, m);
        V du = gv * V::loadu(v + x, m) * (one - u * u);
        (V::loadu(dp + x, m) + du).store(dp + x, m);
        (V::loadu(dq_b + x, m) + du).store(dq_b + x, m);
      }
    }
  });
}

template <typename T>
void tanh_rows(int64_t B, int64_t H, T* x, T* out, int64_t out_row) {
  using V = Vectorized<T>;
  const int64_t W = V::size();
  each_row(B, [&](int64_t b) {
    for (int64_t j = 0; j < H; j += W) {
      const int64_t m = std::min(W, H - j);
      V y = V::loadu(x + b * H + j, m).tanh();
      y.store(x + b * H + j, m);
      y.store(out + b * out_row + j, m);
    }
  });
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

// The input-feeding decoder's step with additive attention (feeding.py):
// gi_e (B, T, 3H); h0 (B, H); keys (B, S, D); projected (B, S, A); mask (B, S);
// w_f, w_hh (3H, H); b_hh (3H); w_q (A, H); v (1, A); w_c (H, H + D); b_c (H)
// -> h, f (B, T, H), rz (B, T, 2H), n, ghn (B, T, H), q (B, T, A), a (B, T, S),
//    c (B, T, D)
std::vector<Tensor> feeding_forward(Tensor gi_e, Tensor h0, Tensor keys,
                                    Tensor projected, Tensor mask, Tensor w_f,
                                    Tensor w_hh, Tensor b_hh, Tensor w_q, Tensor v,
                                    Tensor w_c, Tensor b_c) {
  check({gi_e, h0, keys, projected, w_f, w_hh, b_hh, w_q, v, w_c, b_c});
  gi_e = gi_e.contiguous();
  keys = keys.contiguous();
  projected = projected.contiguous();
  mask = mask.to(at::kBool).contiguous();
  v = v.contiguous();
  const int64_t B = gi_e.size(0), T = gi_e.size(1), H = h0.size(1);
  const int64_t S = keys.size(1), D = keys.size(2), A = projected.size(2);
  const Rows s{B, T, H};
  auto o = gi_e.options();
  auto hs = at::empty({B, T, H}, o), fs = at::empty({B, T, H}, o);
  auto rz = at::empty({B, T, 2 * H}, o), n = at::empty({B, T, H}, o);
  auto ghn = at::empty({B, T, H}, o), qs = at::empty({B, T, A}, o);
  auto as = at::empty({B, T, S}, o), cs = at::empty({B, T, D}, o);
  auto h = h0.contiguous().clone(), f = at::zeros({B, H}, o);
  auto gi = at::empty({B, 3 * H}, o), gh = at::empty({B, 3 * H}, o);
  auto q = at::empty({B, A}, o), c = at::empty({B, D}, o), p = at::empty({B, H}, o);
  auto w_f_t = w_f.t(), w_hh_t = w_hh.t(), w_q_t = w_q.t();
  auto w_c_h_t = w_c.narrow(1, 0, H).t(), w_c_c_t = w_c.narrow(1, H, D).t();
  at::NoGradGuard no_grad;
  for (int64_t t = 0; t < T; ++t) {
    at::addmm_out(gi, gi_e.select(1, t), f, w_f_t);
    at::addmm_out(gh, b_hh, h, w_hh_t);
    AT_DISPATCH_FLOATING_TYPES(gi.scalar_type(), "feeding_forward", [&] {
      gru_gates<scalar_t>(s, t, gi.const_data_ptr<scalar_t>(), 3 * H,
                          gh.const_data_ptr<scalar_t>(), h.data_ptr<scalar_t>(),
                          hs.data_ptr<scalar_t>(), rz.data_ptr<scalar_t>(),
                          n.data_ptr<scalar_t>(), ghn.data_ptr<scalar_t>());
    });
    at::mm_out(q, h, w_q_t);
    qs.select(1, t).copy_(q);
    AT_DISPATCH_FLOATING_TYPES(gi.scalar_type(), "feeding_attend", [&] {
      attend<scalar_t>(B, S, A, D, q.const_data_ptr<scalar_t>(),
                       projected.const_data_ptr<scalar_t>(), mask.const_data_ptr<bool>(),
                       v.const_data_ptr<scalar_t>(), keys.const_data_ptr<scalar_t>(),
                       as.data_ptr<scalar_t>() + t * S, T * S, c.data_ptr<scalar_t>(), D);
    });
    cs.select(1, t).copy_(c);
    at::addmm_out(p, b_c, h, w_c_h_t);
    p.addmm_(c, w_c_c_t);
    AT_DISPATCH_FLOATING_TYPES(gi.scalar_type(), "feeding_combine", [&] {
      tanh_rows<scalar_t>(B, H, p.data_ptr<scalar_t>(), fs.data_ptr<scalar_t>() + t * H,
                          T * H);
    });
    f.copy_(p);
  }
  return {hs, fs, rz, n, ghn, qs, as, cs};
}

// Its reverse loop: grad_f (B, T, H) and feeding_forward's outputs ->
// dp (B, T, H), dc (B, T, D), dq (B, T, A), dgi, dgh (B, T, 3H), dh0 (B, H),
// d(Uk) (B, S, A), dv (1, A)
std::vector<Tensor> feeding_backward(Tensor grad_f, Tensor h0, Tensor keys,
                                     Tensor projected, Tensor w_f, Tensor w_hh,
                                     Tensor w_q, Tensor v, Tensor w_c, Tensor hs,
                                     Tensor fs, Tensor rz, Tensor n, Tensor ghn,
                                     Tensor qs, Tensor as, Tensor cs) {
  check({grad_f, h0, keys, projected, w_f, w_hh, w_q, v, w_c, hs, fs, rz, n, ghn,
         qs, as});
  grad_f = grad_f.contiguous();
  h0 = h0.contiguous();
  keys = keys.contiguous();
  projected = projected.contiguous();
  v = v.contiguous();
  hs = hs.contiguous();
  fs = fs.contiguous();
  rz = rz.contiguous();
  n = n.contiguous();
  ghn = ghn.contiguous();
  qs = qs.contiguous();
  as = as.contiguous();
  const int64_t B = hs.size(0), T = hs.size(1), H = hs.size(2);
  const int64_t S = keys.size(1), D = keys.size(2), A = projected.size(2);
  const Rows s{B, T, H};
  auto o = hs.options();
  auto dp = at::empty({B, T, H}, o), dc = at::empty({B, T, D}, o);
  auto dq = at::empty({B, T, A}, o);
  auto dgi = at::empty({B, T, 3 * H}, o), dgh = at::empty({B, T, 3 * H}, o);
  auto dh = at::zeros({B, H}, o), df = at::zeros({B, H}, o);
  auto d_projected = at::zeros({B, S, A}, o);
  auto dv_parts = at::zeros({at::get_num_threads(), A}, o);  // summed at the end
  auto dc_t = at::empty({B, D}, o), dq_t = at::empty({B, A}, o);
  auto q_t = at::empty({B, A}, o);
  auto w_c_h = w_c.narrow(1, 0, H), w_c_c = w_c.narrow(1, H, D);
  at::NoGradGuard no_grad;
  for (int64_t t = T - 1; t >= 0; --t) {
    AT_DISPATCH_FLOATING_TYPES(hs.scalar_type(), "feeding_dp", [&] {
      using V = Vectorized<scalar_t>;
      const V one(scalar_t(1));
      const int64_t W = V::size();
      for (int64_t b = 0; b < B; ++b) {
        const int64_t at_bt = (b * T + t) * H;
        const scalar_t* g = grad_f.const_data_ptr<scalar_t>() + at_bt;
        const scalar_t* f = fs.const_data_ptr<scalar_t>() + at_bt;
        const scalar_t* d_f = df.const_data_ptr<scalar_t>() + b * H;
        scalar_t* out = dp.data_ptr<scalar_t>() + at_bt;
        for (int64_t j = 0; j < H; j += W) {
          const int64_t m = std::min(W, H - j);
          V fv = V::loadu(f + j, m);
          ((V::loadu(g + j, m) + V::loadu(d_f + j, m)) * (one - fv * fv)).store(out + j, m);
        }
      }
    });
    auto dp_t = dp.select(1, t);
    at::mm_out(dc_t, dp_t, w_c_c);
    dc.select(1, t).copy_(dc_t);
    dh.addmm_(dp_t, w_c_h);
    q_t.copy_(qs.select(1, t));
    AT_DISPATCH_FLOATING_TYPES(hs.scalar_type(), "feeding_attend_back", [&] {
      attend_back<scalar_t>(B, S, A, D, q_t.const_data_ptr<scalar_t>(),
                            projected.const_data_ptr<scalar_t>(),
                            v.const_data_ptr<scalar_t>(), keys.const_data_ptr<scalar_t>(),
                            as.const_data_ptr<scalar_t>() + t * S, T * S,
                            dc_t.const_data_ptr<scalar_t>(), dq_t.data_ptr<scalar_t>(),
                            d_projected.data_ptr<scalar_t>(),
                            dv_parts.data_ptr<scalar_t>());
    });
    dq.select(1, t).copy_(dq_t);
    dh.addmm_(dq_t, w_q);
    AT_DISPATCH_FLOATING_TYPES(hs.scalar_type(), "feeding_gates_back", [&] {
      gru_back_gates<scalar_t>(
          s, t, h0.const_data_ptr<scalar_t>(), dh.data_ptr<scalar_t>(), nullptr,
          hs.const_data_ptr<scalar_t>(), rz.const_data_ptr<scalar_t>(),
          n.const_data_ptr<scalar_t>(), ghn.const_data_ptr<scalar_t>(),
          dgi.data_ptr<scalar_t>(), dgh.data_ptr<scalar_t>());
    });
    at::mm_out(df, dgi.select(1, t), w_f);
    dh.addmm_(dgh.select(1, t), w_hh);
  }
  return {dp, dc, dq, dgi, dgh, dh, d_projected, dv_parts.sum(0, true)};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("gru_forward", &gru_forward, "a GRU's forward loop (recurrence.py)");
  m.def("gru_backward", &gru_backward, "a GRU's backward loop (recurrence.py)");
  m.def("lstm_forward", &lstm_forward, "an LSTM's forward loop (recurrence.py)");
  m.def("lstm_backward", &lstm_backward, "an LSTM's backward loop (recurrence.py)");
  m.def("feeding_forward", &feeding_forward, "the input-feeding step (feeding.py)");
  m.def("feeding_backward", &feeding_backward, "its backward loop (feeding.py)");
}
