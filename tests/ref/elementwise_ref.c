/* Naive reference for the elementwise family (see elementwise_ref.h): formulas straight from the ONNX spec. */
#include "elementwise_ref.h"

#include <math.h>
#include <string.h>

#define IS(name) (strcmp(op, name) == 0)

ref_ew_attrs ref_ew_defaults(const char *op)
{
    ref_ew_attrs a;
    memset(&a, 0, sizeof a);
    a.detect_neg = a.detect_pos = true;
    a.lo = -INFINITY;
    a.hi = INFINITY;
    if (IS("LeakyRelu")) a.alpha = 0.01f;
    else if (IS("Elu") || IS("Celu") || IS("ThresholdedRelu") || IS("Swish")) a.alpha = 1.0;
    else if (IS("Selu")) {
        a.alpha = 1.67326319217681884765625;
        a.gamma = 1.05070102214813232421875;
    } else if (IS("HardSigmoid")) {
        a.alpha = 0.2f;
        a.beta = 0.5f;
    }
    return a;
}

static double softplus(double x)
{
    /* log(exp(x) + 1), rewritten for large x where exp overflows: x + log(1 + exp(-x)) */
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

double ref_ew_unary(const char *op, double x, const ref_ew_attrs *a)
{
    if (IS("Abs")) return fabs(x);
    if (IS("Neg")) return -x;
    if (IS("Sqrt")) return sqrt(x);
    if (IS("Exp")) return exp(x);
    if (IS("Log")) return log(x);
    if (IS("Reciprocal")) return 1.0 / x;
    if (IS("Floor")) return floor(x);
    if (IS("Ceil")) return ceil(x);
    if (IS("Round")) {
        /* nearest integer, halves to even */
        if (isnan(x) || isinf(x)) return x;
        double f = floor(x), d = x - f;
        if (d < 0.5) return f == 0 && signbit(x) ? -0.0 : f;
        if (d > 0.5) return f + 1;
        return fmod(f, 2.0) == 0 ? f : f + 1;
    }
    if (IS("Sign")) return isnan(x) ? x : x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
    if (IS("Erf")) return erf(x);
    if (IS("Sin")) return sin(x);
    if (IS("Cos")) return cos(x);
    if (IS("Tan")) return tan(x);
    if (IS("Asin")) return asin(x);
    if (IS("Acos")) return acos(x);
    if (IS("Atan")) return atan(x);
    if (IS("Sinh")) return sinh(x);
    if (IS("Cosh")) return cosh(x);
    if (IS("Asinh")) return asinh(x);
    if (IS("Acosh")) return acosh(x);
    if (IS("Atanh")) return atanh(x);
    if (IS("IsNaN")) return isnan(x) ? 1 : 0;
    if (IS("IsInf")) return (isinf(x) && ((x > 0 && a->detect_pos) || (x < 0 && a->detect_neg))) ? 1 : 0;
    if (IS("Not")) return x == 0 ? 1 : 0;
    if (IS("Relu")) return isnan(x) ? x : x > 0 ? x : 0.0;
    if (IS("Sigmoid")) return sigmoid(x);
    if (IS("Tanh")) return tanh(x);
    if (IS("LeakyRelu")) return x < 0 ? a->alpha * x : x;
    if (IS("Elu")) return x < 0 ? a->alpha * (exp(x) - 1) : x;
    if (IS("Selu")) return x <= 0 ? a->gamma * (a->alpha * exp(x) - a->alpha) : a->gamma * x;
    if (IS("Celu")) {
        if (isnan(x)) return x;
        double pos = x > 0 ? x : 0, neg = a->alpha * (exp(x / a->alpha) - 1);
        return pos + (neg < 0 ? neg : 0);
    }
    if (IS("ThresholdedRelu")) return x > a->alpha ? x : 0.0;
    if (IS("HardSigmoid")) {
        if (isnan(x)) return x;
        double v = a->alpha * x + a->beta;
        return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    if (IS("HardSwish")) {
        if (isnan(x)) return x;
        double v = x / 6.0 + 0.5;
        return x * (v < 0 ? 0 : v > 1 ? 1 : v);
    }
    if (IS("Softplus")) return softplus(x);
    if (IS("Softsign")) return x / (1 + fabs(x));
    if (IS("Gelu")) {
        if (a->gelu_tanh) return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
        return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    }
    if (IS("Mish")) return x * tanh(softplus(x));
    if (IS("Swish")) return x * sigmoid(a->alpha * x);
    if (IS("Clip")) {
        if (isnan(x)) return x;
        double v = x < a->lo ? a->lo : x;
        return v > a->hi ? a->hi : v;
    }
    return NAN;
}

double ref_ew_binary_f(const char *op, double x, double y, const ref_ew_attrs *a)
{
    if (IS("Add") || IS("Sum")) return x + y;
    if (IS("Sub")) return x - y;
    if (IS("Mul")) return x * y;
    if (IS("Div")) return x / y;
    if (IS("Pow")) return pow(x, y);
    if (IS("Mod")) {
        if (a->fmod) return fmod(x, y);
        double r = fmod(x, y); /* Python: result takes the divisor's sign */
        if (r != 0 && (r < 0) != (y < 0)) r += y;
        return r;
    }
    if (IS("Max")) return isnan(x) || isnan(y) ? NAN : x > y ? x : y;
    if (IS("Min")) return isnan(x) || isnan(y) ? NAN : x < y ? x : y;
    if (IS("PRelu")) return x < 0 ? y * x : x;
    if (IS("Equal")) return x == y;
    if (IS("Less")) return x < y;
    if (IS("LessOrEqual")) return x <= y;
    if (IS("Greater")) return x > y;
    if (IS("GreaterOrEqual")) return x >= y;
    if (IS("And")) return (x != 0) && (y != 0);
    if (IS("Or")) return (x != 0) || (y != 0);
    if (IS("Xor")) return (x != 0) != (y != 0);
    return NAN;
}

static int dt_bits(mrt_dtype dt) { return mrt_dtype_bits(dt); }

static bool dt_signed(mrt_dtype dt)
{
    return dt == MRT_DTYPE_INT8 || dt == MRT_DTYPE_INT16 || dt == MRT_DTYPE_INT32 || dt == MRT_DTYPE_INT64;
}

int64_t ref_ew_wrap(int64_t v, mrt_dtype dt)
{
    int bits = dt_bits(dt);
    if (bits >= 64) return v;
    uint64_t u = (uint64_t)v & ((1ull << bits) - 1);
    if (dt_signed(dt) && (u >> (bits - 1)) & 1) u |= ~((1ull << bits) - 1);
    return (int64_t)u;
}

int64_t ref_ew_binary_i(const char *op, int64_t x, int64_t y, mrt_dtype dt, const ref_ew_attrs *a)
{
    bool sg = dt_signed(dt);
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
    if (IS("Add") || IS("Sum")) return ref_ew_wrap((int64_t)(ux + uy), dt);
    if (IS("Sub")) return ref_ew_wrap((int64_t)(ux - uy), dt);
    if (IS("Mul")) return ref_ew_wrap((int64_t)(ux * uy), dt);
    if (IS("Div")) {
        if (y == 0) return 0;
        if (!sg) return ref_ew_wrap((int64_t)(ux / uy), dt);
        if (y == -1) return ref_ew_wrap((int64_t)(0 - ux), dt);
        return ref_ew_wrap(x / y, dt);
    }
    if (IS("Mod")) {
        if (y == 0) return 0;
        if (!sg) return ref_ew_wrap((int64_t)(ux % uy), dt);
        if (y == -1) return 0;
        int64_t r = x % y;
        if (!a->fmod && r != 0 && (r < 0) != (y < 0)) r += y;
        return r;
    }
    if (IS("Pow")) {
        if (y < 0) return x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;
        uint64_t r = 1;
        for (int64_t k = 0; k < y; k++) r *= ux;
        return ref_ew_wrap((int64_t)r, dt);
    }
    bool lt = sg ? x < y : ux < uy, eq = x == y;
    if (IS("Max")) return lt ? y : x;
    if (IS("Min")) return lt ? x : y;
    if (IS("PRelu")) return sg && x < 0 ? ref_ew_wrap((int64_t)(ux * uy), dt) : x;
    if (IS("Equal")) return eq;
    if (IS("Less")) return lt;
    if (IS("LessOrEqual")) return lt || eq;
    if (IS("Greater")) return !lt && !eq;
    if (IS("GreaterOrEqual")) return !lt;
    if (IS("BitwiseAnd")) return ref_ew_wrap((int64_t)(ux & uy), dt);
    if (IS("BitwiseOr")) return ref_ew_wrap((int64_t)(ux | uy), dt);
    if (IS("BitwiseXor")) return ref_ew_wrap((int64_t)(ux ^ uy), dt);
    if (IS("BitShift")) {
        if (uy >= (uint64_t)dt_bits(dt)) return 0;
        return ref_ew_wrap((int64_t)(a->shift_left ? ux << uy : ux >> uy), dt);
    }
    return 0;
}

int64_t ref_ew_unary_i(const char *op, int64_t x, mrt_dtype dt, const ref_ew_attrs *a)
{
    bool sg = dt_signed(dt);
    if (IS("Abs")) return sg && x < 0 ? ref_ew_wrap((int64_t)(0 - (uint64_t)x), dt) : x;
    if (IS("Neg")) return ref_ew_wrap((int64_t)(0 - (uint64_t)x), dt);
    if (IS("Sign")) return sg ? (x > 0) - (x < 0) : x != 0;
    if (IS("Relu")) return x < 0 ? 0 : x;
    if (IS("BitwiseNot")) return ref_ew_wrap((int64_t)~(uint64_t)x, dt);
    if (IS("Clip")) {
        double v = (double)x < a->lo ? a->lo : (double)x;
        return (int64_t)(v > a->hi ? a->hi : v);
    }
    return 0;
}

bool ref_ew_broadcast_shape(int ra, const int64_t *a, int rb, const int64_t *b, int *rank, int64_t *shape)
{
    int r = ra > rb ? ra : rb;
    for (int i = 0; i < r; i++) {
        /* align from the right; missing leading dims count as 1 */
        int64_t da = i - (r - ra) >= 0 ? a[i - (r - ra)] : 1;
        int64_t db = i - (r - rb) >= 0 ? b[i - (r - rb)] : 1;
        if (da != db && da != 1 && db != 1) return false;
        shape[i] = da == 1 ? db : da;
    }
    *rank = r;
    return true;
}

int64_t ref_ew_src_index(int rank, const int64_t *out_shape, int64_t flat, int ri, const int64_t *in_shape)
{
    /* unravel the output index, then ravel it into the input with broadcast dims pinned to 0 */
    int64_t coord[MRT_MAX_RANK];
    for (int d = rank - 1; d >= 0; d--) {
        coord[d] = out_shape[d] ? flat % out_shape[d] : 0;
        flat = out_shape[d] ? flat / out_shape[d] : 0;
    }
    int64_t idx = 0;
    for (int d = 0; d < ri; d++) {
        int od = d + (rank - ri);
        int64_t c = in_shape[d] == 1 ? 0 : coord[od];
        idx = idx * in_shape[d] + c;
    }
    return idx;
}
