// The input-feeding decoder's step with additive attention, compiled: the
// loops of seq2seq/model/fast/feeding.py (its equations, layouts and reasons are
// written there), with the attention fused per sentence: scores, softmax and
// context in one pass forward; ds, dv, d(Uk) and dq in one pass backward,
// u recomputed from the saved queries.
#include "gates.h"

namespace {

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

}  // namespace

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
