// The pieces every compiled loop shares (loops.cpp, feeding.cpp): ATen's
// vector types, rows of a step on ATen's threads, and the GRU's and LSTM's
// gates for one step, forward and backward. The equations are those of
// seq2seq/model/fast/recurrence.py.
#pragma once

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

void check(const std::vector<Tensor>& tensors) {
  for (const auto& t : tensors) {
    TORCH_CHECK(t.device().is_cpu(), "the compiled loops run on the CPU");
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(), "one dtype");
  }
}

}  // namespace
