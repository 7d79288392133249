"""The tables and constants of ops_cpu/vmath.c's sigmoid: 2^(j/32) for j = 0..31 as float hi + lo pairs, and ln2/32
split for the exact argument reduction.

exp(v) = 2^n 2^(j/32) e^r with k = 32 n + j = round(v 32 / ln 2) and r = v - k ln2/32, |r| <= ln2/64 (0.0108): there
e^r = 1 + r + r^2 (1/2 + r/6) is within 2^-30.7 relative (the r^4/24 term dropped), so no fitted polynomial is
needed. T_HI[j] is 2^(j/32) rounded to float, T_LO[j] the float nearest the rest (together within 2^-48).
Run: python3 scripts/gen_exp2_table_f32.py (prints the C that vmath.c holds; float64 is enough: 2^(j/32) in
float64 is within 2^-53, far below what T_LO keeps)
"""
import math
import numpy as np

f32 = np.float32
hi = [f32(2.0 ** (j / 32)) for j in range(32)]
lo = [f32(2.0 ** (j / 32) - float(h)) for j, h in enumerate(hi)]
ln2_32 = math.log(2.0) / 32
l_hi = f32(ln2_32)
l_lo = f32(ln2_32 - float(l_hi))


def hexf(v):
    """float v as a C hex literal with no trailing zero digits: 0x1.059b0ep+0f"""
    h = float(v).hex()
    if "p" not in h or float(v) == 0:
        return "0x0p+0f"
    m, e = h.split("p")
    m = m.rstrip("0").rstrip(".")
    return f"{m}p{e}f"


def row(vals):
    out, line = [], "   "
    for v in vals:
        item = f" {hexf(v)},"
        if len(line) + len(item) > 116:
            out.append(line)
            line = "   "
        line += item
    out.append(line)
    return "\n".join(out)


print("static const float SIG_T_HI[32] = {\n" + row(hi) + "\n};")
print("static const float SIG_T_LO[32] = {\n" + row(lo) + "\n};")
print(f"#define SIG_K {hexf(f32(32 / math.log(2.0)))}         /* 32 / ln 2 */")
print(f"#define SIG_LN2_32_HI {hexf(l_hi)}  /* ln2/32 rounded to float */")
print(f"#define SIG_LN2_32_LO {hexf(l_lo)} /* ln2/32 - SIG_LN2_32_HI */")
print(f"#define SIG_C3 {hexf(f32(1 / 6))}         /* 1/6 rounded to float */")
err = max(abs((1 + r + r * r * (0.5 + r / 6)) / math.exp(r) - 1) for r in np.linspace(-ln2_32 / 2, ln2_32 / 2, 10001))
print(f"/* e^r = 1 + r + r^2 (1/2 + r/6) on |r| <= ln2/64: max relative error {err:.2e} = 2^{math.log2(err):.1f} */")
