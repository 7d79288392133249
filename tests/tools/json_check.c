/* json_check: strict checks of the JSON files minirt writes, for the CLI tests (no Python in core tests).
 *
 *   json_check valid FILE                  FILE is one JSON value (RFC 8259 syntax), nothing after it
 *   json_check bench FILE                  `minirt bench --json`: the statistics keys are numbers,
 *                                          min <= median <= p90 <= p95 <= p99 <= max, len(times_ms) = iterations
 *   json_check trace FILE [TOLERANCE]      `minirt bench --profile`: a Chrome trace (array of events; every "X"
 *                                          event has name, numeric ts >= 0 and dur >= 0, pid, tid; every Node
 *                                          event has args.op_name and args.provider), each Node event lies
 *                                          inside a model_run event, and the node durations sum to no more than
 *                                          1 + TOLERANCE (default 0.10) times their run's duration, and to at
 *                                          least 1 - TOLERANCE times it in most runs (a preempted run may have
 *                                          a gap between nodes)
 * Exit 0 when the checks hold, 1 with a message otherwise. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jkind;

typedef struct jval {
    jkind kind;
    double num;
    char *str;           /* J_STR */
    int n;               /* J_ARR / J_OBJ */
    char **keys;         /* J_OBJ */
    struct jval **items; /* J_ARR / J_OBJ */
} jval;

typedef struct parser {
    const char *p, *end;
    const char *err;
} parser;

static void ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static jval *fail(parser *ps, const char *msg)
{
    if (!ps->err) ps->err = msg;
    return NULL;
}

static jval *new_val(jkind k)
{
    jval *v = calloc(1, sizeof *v);
    if (v) v->kind = k;
    return v;
}

static void jfree(jval *v)
{
    if (!v) return;
    for (int i = 0; i < v->n; i++) {
        if (v->keys) free(v->keys[i]);
        jfree(v->items[i]);
    }
    free(v->keys);
    free(v->items);
    free(v->str);
    free(v);
}

static char *parse_string_raw(parser *ps)
{
    if (ps->p >= ps->end || *ps->p != '"') return fail(ps, "expected a string"), NULL;
    ps->p++;
    size_t cap = 16, len = 0;
    char *s = malloc(cap);
    while (s && ps->p < ps->end && *ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p++;
        if (c < 0x20) {
            free(s);
            return fail(ps, "control character in a string"), NULL;
        }
        if (c == '\\') {
            if (ps->p >= ps->end) break;
            char e = *ps->p++;
            if (e == 'u') {
                for (int i = 0; i < 4; i++)
                    if (ps->p >= ps->end || !strchr("0123456789abcdefABCDEF", *ps->p++)) {
                        free(s);
                        return fail(ps, "bad \\u escape"), NULL;
                    }
                c = '?';
            } else if (strchr("\"\\/bfnrt", e)) {
                c = (unsigned char)e;
            } else {
                free(s);
                return fail(ps, "bad escape in a string"), NULL;
            }
        }
        if (len + 2 > cap) {
            char *ns = realloc(s, cap *= 2);
            if (!ns) break;
            s = ns;
        }
        s[len++] = (char)c;
    }
    if (!s || ps->p >= ps->end) {
        free(s);
        return fail(ps, "unterminated string"), NULL;
    }
    ps->p++;
    s[len] = 0;
    return s;
}

static jval *parse_value(parser *ps, int depth);

static bool push(jval *v, char *key, jval *item)
{
    char **nk = v->kind == J_OBJ ? realloc(v->keys, (size_t)(v->n + 1) * sizeof *nk) : NULL;
    if (v->kind == J_OBJ && !nk) return false;
    if (nk) v->keys = nk;
    jval **ni = realloc(v->items, (size_t)(v->n + 1) * sizeof *ni);
    if (!ni) return false;
    v->items = ni;
    if (v->kind == J_OBJ) v->keys[v->n] = key;
    v->items[v->n++] = item;
    return true;
}

static jval *parse_container(parser *ps, int depth, bool obj)
{
    jval *v = new_val(obj ? J_OBJ : J_ARR);
    ps->p++;
    ws(ps);
    if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
        ps->p++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        ws(ps);
        if (obj) {
            if (!(key = parse_string_raw(ps))) return jfree(v), NULL;
            ws(ps);
            if (ps->p >= ps->end || *ps->p++ != ':') return free(key), jfree(v), fail(ps, "expected ':'");
        }
        jval *item = parse_value(ps, depth + 1);
        if (!item || !push(v, key, item)) return free(key), jfree(item), jfree(v), fail(ps, "bad value");
        ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
            ps->p++;
            return v;
        }
        jfree(v);
        return fail(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static jval *parse_value(parser *ps, int depth)
{
    if (depth > 200) return fail(ps, "nested too deeply");
    ws(ps);
    if (ps->p >= ps->end) return fail(ps, "unexpected end");
    char c = *ps->p;
    if (c == '{' || c == '[') return parse_container(ps, depth, c == '{');
    if (c == '"') {
        jval *v = new_val(J_STR);
        if (!(v->str = parse_string_raw(ps))) return jfree(v), NULL;
        return v;
    }
    static const char *const words[] = {"true", "false", "null"};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, words[i], n) == 0) {
            ps->p += n;
            jval *v = new_val(i == 2 ? J_NULL : J_BOOL);
            v->num = i == 0;
            return v;
        }
    }
    /* number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
    const char *s = ps->p;
    if (ps->p < ps->end && *ps->p == '-') ps->p++;
    if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return fail(ps, "unexpected character");
    if (*ps->p == '0') ps->p++;
    else
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return fail(ps, "bad number");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9') return fail(ps, "bad exponent");
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    }
    jval *v = new_val(J_NUM);
    char buf[64];
    size_t len = (size_t)(ps->p - s) < sizeof buf - 1 ? (size_t)(ps->p - s) : sizeof buf - 1;
    memcpy(buf, s, len);
    buf[len] = 0;
    v->num = strtod(buf, NULL);
    return v;
}

static const jval *get(const jval *o, const char *key)
{
    if (!o || o->kind != J_OBJ) return NULL;
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0) return o->items[i];
    return NULL;
}

static bool num(const jval *o, const char *key, double *out)
{
    const jval *v = get(o, key);
    if (!v || v->kind != J_NUM) return false;
    *out = v->num;
    return true;
}

static int check_bench(const jval *root)
{
    static const char *const keys[] = {"min_ms", "median_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"};
    double prev = -INFINITY, it, mean, cv;
    for (int i = 0; i < 6; i++) {
        double v;
        if (!num(root, keys[i], &v)) return fprintf(stderr, "json_check: '%s' missing or not a number\n", keys[i]), 1;
        if (v < prev) return fprintf(stderr, "json_check: '%s' = %g is below the previous statistic\n", keys[i], v), 1;
        prev = v;
    }
    if (!num(root, "iterations", &it) || !num(root, "mean_ms", &mean) || !num(root, "cv", &cv))
        return fprintf(stderr, "json_check: iterations, mean_ms or cv missing\n"), 1;
    const jval *t = get(root, "times_ms");
    if (!t || t->kind != J_ARR || t->n != (int)it)
        return fprintf(stderr, "json_check: times_ms must be an array of 'iterations' (%g) numbers\n", it), 1;
    const jval *pv = get(root, "provenance");
    static const char *const pkeys[] = {"version", "commit", "device", "threads", "blas_core"};
    for (int i = 0; i < 5; i++)
        if (!get(pv, pkeys[i])) return fprintf(stderr, "json_check: provenance.%s missing\n", pkeys[i]), 1;
    printf("bench json: %d iterations, median %.3f ms\n", (int)it, get(root, "median_ms")->num);
    return 0;
}

static int check_trace(const jval *root, double tol)
{
    if (root->kind != J_ARR) return fprintf(stderr, "json_check: a trace is a JSON array of events\n"), 1;
    int runs = 0, nodes = 0, gaps = 0;
    double run_ts = 0, run_dur = -1, node_sum = 0;
    for (int i = 0; i <= root->n; i++) {
        const jval *e = i < root->n ? root->items[i] : NULL;
        const jval *cat = get(e, "cat");
        bool is_run = e && cat && cat->kind == J_STR && strcmp(cat->str, "Session") == 0;
        if ((is_run || !e) && run_dur >= 0) { /* close the previous run */
            /* Nodes that add up to more than their run overlap or are counted twice: always an error. Nodes that
               add up to less leave a gap, which a bug (a node missing from the trace) makes in every run but the
               scheduler can make in any one (a tiny model's 0.2 ms run preempted for 4 ms on a loaded CI machine):
               so a gap fails only when most runs have one. */
            if (node_sum > (1 + tol) * run_dur)
                return fprintf(stderr, "json_check: run %d lasts %.3f us but its nodes sum to %.3f us\n", runs, run_dur,
                               node_sum), 1;
            if (node_sum < (1 - tol) * run_dur) {
                fprintf(stderr, "json_check: run %d lasts %.3f us, its nodes sum to %.3f us (a gap)\n", runs, run_dur,
                        node_sum);
                gaps++;
            }
            runs++;
        }
        if (!e) break;
        const jval *ph = get(e, "ph");
        if (!ph || ph->kind != J_STR) return fprintf(stderr, "json_check: event %d has no \"ph\"\n", i), 1;
        if (strcmp(ph->str, "X") != 0) continue;
        double ts, dur, pid, tid;
        const jval *name = get(e, "name");
        if (!name || name->kind != J_STR || !num(e, "ts", &ts) || !num(e, "dur", &dur) || !num(e, "pid", &pid) ||
            !num(e, "tid", &tid) || ts < 0 || dur < 0)
            return fprintf(stderr, "json_check: event %d lacks name/ts/dur/pid/tid or has negative times\n", i), 1;
        if (is_run) {
            run_ts = ts;
            run_dur = dur;
            node_sum = 0;
            continue;
        }
        const jval *args = get(e, "args"), *op = get(args, "op_name"), *prov = get(args, "provider");
        if (!op || op->kind != J_STR || !prov || prov->kind != J_STR)
            return fprintf(stderr, "json_check: node event %d has no args.op_name / args.provider\n", i), 1;
        if (run_dur < 0 || ts < run_ts - 1e-3 || ts + dur > run_ts + run_dur + 1e-3)
            return fprintf(stderr, "json_check: node event %d ('%s') is outside its model_run\n", i, name->str), 1;
        node_sum += dur;
        nodes++;
    }
    if (runs == 0 || nodes == 0) return fprintf(stderr, "json_check: no model_run or node events\n"), 1;
    if (2 * gaps > runs)
        return fprintf(stderr, "json_check: %d of %d runs have nodes summing to less than %.0f%% of the run\n", gaps,
                       runs, 100 * (1 - tol)), 1;
    printf("trace: %d runs, %d node events, node sums within %.0f%% of the run in %d of them, never above\n", runs,
           nodes, 100 * tol, runs - gaps);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: json_check valid|bench|trace FILE [TOLERANCE]\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "rb");
    if (!f) return fprintf(stderr, "json_check: cannot open %s\n", argv[2]), 1;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) return fprintf(stderr, "json_check: read error\n"), 1;
    fclose(f);
    parser ps = {buf, buf + size, NULL};
    jval *root = parse_value(&ps, 0);
    ws(&ps);
    int rc;
    if (!root || ps.p != ps.end) {
        fprintf(stderr, "json_check: %s: invalid JSON at byte %ld: %s\n", argv[2], (long)(ps.p - buf),
                ps.err ? ps.err : "trailing characters");
        rc = 1;
    } else if (strcmp(argv[1], "valid") == 0) {
        rc = 0;
    } else if (strcmp(argv[1], "bench") == 0) {
        rc = check_bench(root);
    } else if (strcmp(argv[1], "trace") == 0) {
        rc = check_trace(root, argc > 3 ? atof(argv[3]) : 0.10);
    } else {
        fprintf(stderr, "json_check: unknown mode '%s'\n", argv[1]);
        rc = 2;
    }
    jfree(root);
    free(buf);
    return rc;
}
