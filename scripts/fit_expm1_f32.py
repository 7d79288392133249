"""Fit the float32 polynomial for expm1(r) on [-ln2/2, ln2/2] used by ops_cpu/vmath.c's float exp.

expm1(r) ~ r + r^2 * Q(r), Q of degree 4. Q is fitted to minimise the relative error of exp(r) = 1 + expm1(r)
(what the callers use), by Lawson's iteratively reweighted least squares (converges to the minimax fit), in
float64 with numpy; the coefficients are then rounded to float32 and the error is re-measured with them.
Run: python3 scripts/fit_expm1_f32.py
"""
import numpy as np

H = np.log(2.0) / 2
r = np.cos(np.linspace(0, np.pi, 4001)) * H  # Chebyshev-spaced points
target = np.expm1(r)
deg = 4
A = np.stack([r**2 * r**k for k in range(deg + 1)], axis=1)
b = target - r
scale = 1.0 / np.exp(r)  # relative error of exp(r)
w = np.ones_like(r)
for it in range(200):
    sw = np.sqrt(w) * scale
    c, *_ = np.linalg.lstsq(A * sw[:, None], b * sw, rcond=None)
    err = np.abs((A @ c - b) * scale)
    w = w * err
    w /= w.sum()
c32 = c.astype(np.float32).astype(np.float64)
err64 = np.max(np.abs((A @ c - b) * scale))
err32 = np.max(np.abs((A @ c32 - b) * scale))
print(f"max relative error of 1 + r + r^2 Q(r): {err64:.3e} (float64 coefficients), {err32:.3e} (float32), 2^{np.log2(err32):.1f}")
for k, v in enumerate(np.float32(c)):
    print(f"c{k + 2} = {float(v)!r}f  /* {v.view(np.uint32):#010x} */")
