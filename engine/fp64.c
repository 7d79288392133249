/* float64 oracle support (see fp64.h). */
#include "engine/fp64.h"

#include <stdlib.h>
#include <string.h>

#include "engine/dtype.h"
#include "engine/status.h"

bool mrt_fp64_widens(mrt_dtype dt)
{
    return dt == MRT_DTYPE_FLOAT || dt == MRT_DTYPE_FLOAT16 || dt == MRT_DTYPE_BFLOAT16;
}

mrt_status mrt_fp64_widen_tensor(const mrt_tensor *src, mrt_tensor *dst)
{
    MRT_TRY(mrt_tensor_alloc(dst, MRT_DTYPE_DOUBLE, src->rank, src->shape));
    int64_t n = mrt_tensor_numel(src);
    double *d = dst->data;
    for (int64_t i = 0; i < n; i++) d[i] = mrt_load_f64(src->dtype, src->data, i);
    return MRT_STATUS_OK;
}

/* Which attributes of this node change under fp64. */
static bool attr_needs_rewrite(const mrt_node *n, const mrt_attr *a)
{
    if (a->type == MRT_ATTR_INT &&
        (strcmp(a->name, "to") == 0 || strcmp(a->name, "dtype") == 0 || strcmp(a->name, "output_dtype") == 0 ||
         strcmp(a->name, "stash_type") == 0 || strcmp(a->name, "output_datatype") == 0))
        return mrt_fp64_widens((mrt_dtype)a->i);
    if (a->type == MRT_ATTR_TENSOR && a->t) return mrt_fp64_widens(a->t->dtype);
    if (strcmp(n->op_type, "Constant") == 0 && !n->domain[0])
        return (a->type == MRT_ATTR_FLOAT && strcmp(a->name, "value_float") == 0) ||
               (a->type == MRT_ATTR_FLOATS && strcmp(a->name, "value_floats") == 0);
    return false;
}

static mrt_status rewrite_attr(const mrt_attr *src, mrt_attr *dst)
{
    memset(dst, 0, sizeof *dst);
    dst->name = strdup(src->type == MRT_ATTR_FLOAT || src->type == MRT_ATTR_FLOATS ? "value" : src->name);
    if (!dst->name) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (fp64 attribute)");
    if (src->type == MRT_ATTR_INT) {
        dst->type = MRT_ATTR_INT;
        dst->i = MRT_DTYPE_DOUBLE;
        return MRT_STATUS_OK;
    }
    dst->type = MRT_ATTR_TENSOR;
    dst->t = calloc(1, sizeof *dst->t);
    if (!dst->t) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (fp64 attribute)");
    if (src->type == MRT_ATTR_TENSOR) return mrt_fp64_widen_tensor(src->t, dst->t);
    int64_t n = src->type == MRT_ATTR_FLOAT ? 1 : src->n;
    MRT_TRY(mrt_tensor_alloc(dst->t, MRT_DTYPE_DOUBLE, src->type == MRT_ATTR_FLOAT ? 0 : 1, &n));
    for (int64_t i = 0; i < n; i++)
        ((double *)dst->t->data)[i] = src->type == MRT_ATTR_FLOAT ? src->f : src->floats[i];
    return MRT_STATUS_OK;
}

/* Rewritten attributes are owned by the shadow; the others are shallow copies (marked by name == NULL
   in `owned` bookkeeping: we keep a parallel flag array after the attrs). */
typedef struct shadow_node {
    mrt_node node;
    bool *owned;
} shadow_node;

mrt_status mrt_fp64_shadow_node(const mrt_node *node, mrt_node **out)
{
    *out = NULL;
    int k = 0;
    for (int i = 0; i < node->n_attrs; i++) k += attr_needs_rewrite(node, &node->attrs[i]);
    if (!k) return MRT_STATUS_OK;
    shadow_node *s = calloc(1, sizeof *s);
    if (!s) return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (fp64 node)");
    s->node = *node;
    s->node.attrs = calloc((size_t)node->n_attrs, sizeof(mrt_attr));
    s->owned = calloc((size_t)node->n_attrs, sizeof(bool));
    if (!s->node.attrs || !s->owned) {
        free(s->node.attrs);
        free(s->owned);
        free(s);
        return mrt_fail(MRT_STATUS_OUT_OF_MEMORY, "out of memory (fp64 node)");
    }
    mrt_status st = MRT_STATUS_OK;
    for (int i = 0; i < node->n_attrs; i++) {
        if (!st && attr_needs_rewrite(node, &node->attrs[i])) {
            s->owned[i] = true;
            st = rewrite_attr(&node->attrs[i], &s->node.attrs[i]);
        } else {
            s->node.attrs[i] = node->attrs[i];
        }
    }
    *out = &s->node;
    if (st) {
        mrt_fp64_free_shadow(*out);
        *out = NULL;
    }
    return st;
}

void mrt_fp64_free_shadow(mrt_node *shadow)
{
    if (!shadow) return;
    shadow_node *s = (shadow_node *)shadow;
    for (int i = 0; i < s->node.n_attrs; i++)
        if (s->owned[i]) mrt_attr_clear(&s->node.attrs[i]);
    free(s->node.attrs);
    free(s->owned);
    free(s);
}
