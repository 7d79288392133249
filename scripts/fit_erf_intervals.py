"""Fit the float64 tables of ops_cpu/vmath.c's erf (erf_only): 16 intervals of width 1/4 over [0, 4].

Interval k >= 1: erf(ctr + t) for t in [-1/8, 1/8], ctr = (k + 1/2) / 4, a degree-9 polynomial in t. Interval 0:
t * g(t) on [0, 1/4] with g(t) = erf(t) / t of degree 8 (so the constant term is 0 and the result keeps its
relative accuracy near 0). Chebyshev interpolation in mpmath (40 digits), power form, rounded to float64; prints
the worst relative error on a grid and the C tables (highest power first, one row per power).
Run: python3 scripts/fit_erf_intervals.py
"""
import textwrap

import mpmath as mp

mp.mp.dps = 40
DEG, NI = 9, 16
W = mp.mpf(4) / NI


def cheb_fit(f, lo, hi, deg):
    n = deg + 1
    nodes = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (2 * i + 1) / (2 * n)) for i in range(n)]
    c = mp.lu_solve(mp.matrix([[t**j for j in range(n)] for t in nodes]), mp.matrix([f(t) for t in nodes]))
    return [c[j] for j in range(n)]  # lowest power first


ctrs, tabs, worst = [], [], 0.0
for k in range(NI):
    if k == 0:
        ctr, lo, hi = mp.mpf(0), mp.mpf(0), W
        cs = [mp.mpf(0)] + cheb_fit(lambda t: mp.erf(t) / t if t else 2 / mp.sqrt(mp.pi), lo, hi, DEG - 1)
    else:
        ctr, lo, hi = (k + mp.mpf(1) / 2) * W, -W / 2, W / 2
        cs = cheb_fit(lambda t, c=ctr: mp.erf(t + c), lo, hi, DEG)
    cd = [float(c) for c in cs]
    for i in range(401):
        t = float(lo + (hi - lo) * i / 400)
        p = cd[-1]
        for c in reversed(cd[:-1]):
            p = p * t + c
        a = mp.mpf(t) + ctr
        if a:
            worst = max(worst, float(abs((mp.mpf(p) - mp.erf(a)) / mp.erf(a))))
    ctrs.append(float(ctr))
    tabs.append(cd)
print(f"worst relative error {worst:.2e}")


def row(vals, first="    {"):
    return textwrap.fill(", ".join(repr(v) for v in vals), 116, initial_indent=first, subsequent_indent="     ")


print(row(ctrs, "static _Alignas(64) const double erf_ctr[16] = {") + "};")
print(f"static _Alignas(64) const double erf_coef[{DEG + 1}][16] = {{")
for j in range(DEG, -1, -1):
    print(row([tabs[k][j] for k in range(NI)]) + "},")
print("};")
