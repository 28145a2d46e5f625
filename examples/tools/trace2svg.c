/* examples/tools/trace2svg.c - draws a pool.h trace (pool_trace_write, built
 * with POOL_TRACE) as an SVG timeline: one lane per thread.
 *
 * Build and run from the repository root:
 *     cc -O2 -o trace2svg examples/tools/trace2svg.c
 *     ./trace2svg trace.json trace.svg                 the whole run
 *     ./trace2svg --from 1500 --to 2500 trace.json z.svg   1 ms of it (times in us)
 *     ./trace2svg --check trace.json                   validate, print counts per lane
 * Options: --width PX (default 1200), --title TEXT. `make trace-svg` runs
 * examples/trace.c and draws its trace into build/trace.svg.
 *
 * The trace is checked first (trace_json.h, beside this file: the same
 * checker the tests use) and refused with a message if it is not valid.
 * Lanes run top to bottom by tid: workers, then blocking threads (tid 100000 + k), then
 * threads outside the pool (200000 + k), each labelled with its thread name.
 * In a lane, a "job" is a blue bar, darker and thinner for each job it
 * runs inside (a join that runs other work while it waits); "blocking" is
 * orange; "sleep" (blocked in the kernel) is hatched grey; spans of any
 * other name are grey. Instant events are ticks: steal red at the top,
 * wake green at the bottom, inject purple across, anything else dark grey
 * in the middle.
 *
 * The file stays small whatever the trace holds: a span at least 2 pixels
 * wide is a rect of its own (with a tooltip from 8 pixels on), narrower
 * spans are merged into one rect per run of touched pixel columns, per
 * lane and nesting level, and ticks are merged per pixel column. A span
 * whose B was lost when the writer's ring buffer overflowed is not drawn;
 * a span still open at the end runs to the end of the trace.
 */
#include "trace_json.h"

#define LEVELS 4  /* nesting levels drawn apart; deeper ones as the last */
#define LANE_H 18 /* px */
#define LANE_GAP 6
#define TOP 46         /* title and axis */
#define RIGHT 24       /* margin right of the plot */
#define WIDE_PX 2.0    /* a span this wide gets a rect of its own */
#define TOOLTIP_PX 8.0 /* ... and from this width a tooltip */

enum { K_JOB, K_BLOCKING, K_OTHER, K_SLEEP, SPAN_KINDS };
enum { I_STEAL, I_WAKE, I_INJECT, I_OTHER, MARK_KINDS };
static const char span_class[SPAN_KINDS] = {'j', 'b', 'o', 's'};
static const char *const mark_class[MARK_KINDS] = {"steal", "wake", "inject", "tick"};

struct span {
    int lane;
    unsigned char kind, level, open;
    double t0, t1;
};

struct mark {
    int lane;
    int kind;
    double t;
};

struct trace2svg_options {
    int has_from, has_to;
    double from, to; /* microseconds; default: the whole trace */
    int width;       /* px; 0: 1200 */
    const char *title;
};

struct collected {
    struct span *spans;
    size_t nspans, span_cap;
    struct mark *marks;
    size_t nmarks, mark_cap;
    int oom;
};

/* Makes room for one more element in a growing array: 0, or -1. */
static int grow(void **items, size_t *cap, size_t n, size_t size) {
    void *p;
    if (n < *cap) return 0;
    if (!(p = realloc(*items, (*cap ? *cap * 2 : 1024) * size))) return -1;
    *items = p;
    *cap = *cap ? *cap * 2 : 1024;
    return 0;
}

static int collect(void *ctx, const struct trace_event *ev) {
    struct collected *c = (struct collected *)ctx;
    if ((ev->ph == 'E' && !ev->orphan) || ev->ph == 'X') {
        struct span *s;
        if (grow((void **)&c->spans, &c->span_cap, c->nspans, sizeof *s) != 0) return c->oom = 1;
        s = &c->spans[c->nspans++];
        s->lane = ev->lane;
        s->kind = strcmp(ev->name, "job") == 0        ? K_JOB
                  : strcmp(ev->name, "blocking") == 0 ? K_BLOCKING
                  : strcmp(ev->name, "sleep") == 0    ? K_SLEEP
                                                      : K_OTHER;
        s->level = (unsigned char)(ev->depth < LEVELS ? ev->depth : LEVELS);
        s->open = (unsigned char)ev->unclosed;
        s->t0 = ev->begin;
        s->t1 = ev->ts;
    } else if (ev->ph == 'i' || ev->ph == 'I') {
        struct mark *m;
        if (grow((void **)&c->marks, &c->mark_cap, c->nmarks, sizeof *m) != 0) return c->oom = 1;
        m = &c->marks[c->nmarks++];
        m->lane = ev->lane;
        m->kind = strcmp(ev->name, "steal") == 0    ? I_STEAL
                  : strcmp(ev->name, "wake") == 0   ? I_WAKE
                  : strcmp(ev->name, "inject") == 0 ? I_INJECT
                                                    : I_OTHER;
        m->t = ev->ts;
    }
    return 0; /* B (drawn at its E), C and M events */
}

static void put_escaped(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            if ((unsigned char)*s >= 0x20 || *s == '\t') fputc(*s, f);
        }
    }
}

/* Units of time, in us: the largest that is at most `us`. */
static const double unit_us[] = {1e6, 1e3, 1, 1e-3};
static const char *const unit_name[] = {"s", "ms", "\xc2\xb5s", "ns"};

static int unit_for(double us) {
    int i;
    for (i = 0; i < 3 && unit_us[i] > us * 1.0001; i++) {
    }
    return i;
}

static void put_duration(FILE *f, double us) {
    int u = unit_for(us);
    fprintf(f, "%.3g %s", us / unit_us[u], unit_name[u]);
}

static const struct trace_summary *sort_summary; /* for qsort's comparison */

static int lane_cmp(const void *a, const void *b) {
    const struct trace_lane *x = &sort_summary->lanes[*(const int *)a],
                            *y = &sort_summary->lanes[*(const int *)b];
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

struct layout {
    double from, to, scale; /* us -> px: x = x0 + (t - from) * scale */
    int width, height, x0, plot_w;
    int *row; /* lane index -> row from the top */
};

static double px(const struct layout *L, double t) { return L->x0 + (t - L->from) * L->scale; }
static int lane_y(const struct layout *L, int lane) {
    return TOP + L->row[lane] * (LANE_H + LANE_GAP);
}

/* Marks the pixel columns [x0, x1] (plot coordinates) of one lane row. */
static void touch(unsigned char *cols, const struct layout *L, double x0, double x1) {
    int a = (int)(x0 - L->x0), b = (int)(x1 - L->x0);
    if (a < 0) a = 0;
    if (b > L->plot_w - 1) b = L->plot_w - 1;
    for (; a <= b; a++) cols[a] = 1;
}

/* Every span of one kind and level: wide ones as rects, the rest merged
   per run of columns. `cols` has num_lanes * plot_w bytes. */
static long draw_spans(FILE *f, const struct layout *L, const struct collected *c, int num_lanes,
                       int kind, int level, unsigned char *cols) {
    int inset = (level - 1) * 2, h = LANE_H - 2 * inset, lane, a, b;
    long rects = 0;
    size_t i;
    memset(cols, 0, (size_t)num_lanes * (size_t)L->plot_w);
    for (i = 0; i < c->nspans; i++) {
        const struct span *s = &c->spans[i];
        double x0, x1;
        if (s->kind != kind || s->level != level || s->t1 < L->from || s->t0 > L->to) continue;
        x0 = px(L, s->t0 < L->from ? L->from : s->t0);
        x1 = px(L, s->t1 > L->to ? L->to : s->t1);
        if (x1 - x0 < WIDE_PX) {
            touch(cols + (size_t)s->lane * (size_t)L->plot_w, L, x0, x1);
            continue;
        }
        if (rects++ == 0)
            fputs("<g class=\"edge\">\n", f); /* outlined: where one job ends and the next begins */
        fprintf(f, "<rect class=\"%c%d\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"",
                span_class[kind], level, x0, lane_y(L, s->lane) + inset, x1 - x0, h);
        if (x1 - x0 >= TOOLTIP_PX) {
            fputs("><title>", f);
            put_duration(f, s->t1 - s->t0);
            fputs(s->open ? " (still open at the end)" : "", f);
            fputs(" at ", f);
            put_duration(f, s->t0);
            fputs("</title></rect>\n", f);
        } else {
            fputs("/>\n", f);
        }
    }
    if (rects) fputs("</g>\n", f);
    for (lane = 0; lane < num_lanes; lane++) {
        const unsigned char *row = cols + (size_t)lane * (size_t)L->plot_w;
        for (a = 0; a < L->plot_w; a = b) {
            if (!row[a]) {
                b = a + 1;
                continue;
            }
            for (b = a; b < L->plot_w && row[b]; b++) {
            }
            fprintf(f, "<rect class=\"%c%d\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
                    span_class[kind], level, L->x0 + a, lane_y(L, lane) + inset, b - a, h);
            rects++;
        }
    }
    return rects;
}

/* Instant events of one kind as ticks, one path per lane, one tick per
   touched pixel column. */
static long draw_marks(FILE *f, const struct layout *L, const struct collected *c, int num_lanes,
                       int kind, unsigned char *cols) {
    static const int top[MARK_KINDS] = {-3, LANE_H - 6, -3, LANE_H / 3};
    static const int len[MARK_KINDS] = {9, 9, LANE_H + 6, LANE_H / 3};
    int lane, x;
    long ticks = 0;
    size_t i;
    memset(cols, 0, (size_t)num_lanes * (size_t)L->plot_w);
    for (i = 0; i < c->nmarks; i++) {
        const struct mark *m = &c->marks[i];
        if (m->kind == kind && m->t >= L->from && m->t <= L->to)
            touch(cols + (size_t)m->lane * (size_t)L->plot_w, L, px(L, m->t), px(L, m->t));
    }
    for (lane = 0; lane < num_lanes; lane++) {
        const unsigned char *row = cols + (size_t)lane * (size_t)L->plot_w;
        int started = 0;
        for (x = 0; x < L->plot_w; x++) {
            if (!row[x]) continue;
            if (!started) fprintf(f, "<path class=\"%s\" d=\"", mark_class[kind]), started = 1;
            fprintf(f, "M%d.5 %dv%d", L->x0 + x, lane_y(L, lane) + top[kind], len[kind]);
            ticks++;
        }
        if (started) fputs("\"/>\n", f);
    }
    return ticks;
}

/* The time axis: a label and a grid line every "nice" step (1, 2, 5 x 10^k). */
static void draw_axis(FILE *f, const struct layout *L, int lanes_bottom) {
    static const double next[] = {2, 2.5, 2};
    double step = 0.001, unit, k;
    int i = 0, u;
    while ((L->to - L->from) / step > L->plot_w / 90.0) step *= next[i++ % 3];
    u = unit_for(step * 10); /* "0.5 ms" rather than "500 us" */
    unit = unit_us[u];
    fprintf(f, "<path class=\"grid\" d=\"");
    for (k = (double)(long long)(L->from / step); k * step <= L->to; k++)
        if (k * step >= L->from) fprintf(f, "M%.1f %dV%d", px(L, k * step), TOP - 6, lanes_bottom);
    fprintf(f, "\"/>\n");
    for (k = (double)(long long)(L->from / step); k * step <= L->to; k++) {
        char label[32];
        int n;
        if (k * step < L->from) continue;
        n = snprintf(label, sizeof label, "%.1f", k * step / unit);
        if (n > 2 && strcmp(label + n - 2, ".0") == 0) label[n - 2] = 0; /* "2", not "2.0" */
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s %s</text>\n",
                px(L, k * step), TOP - 9, label, unit_name[u]);
    }
}

static void draw_legend(FILE *f, int y) {
    static const char *const items[][2] = {
        {"j1", "job"},           {"j4", "job inside a job (darker: deeper)"},
        {"s1", "sleep"},         {"b1", "blocking"},
        {"o1", "other span"},    {"steal", "steal"},
        {"wake", "wake"},        {"inject", "inject"},
        {"tick", "other event"},
    };
    size_t i;
    int x = 10;
    fputs("<g class=\"legend\">\n", f);
    for (i = 0; i < sizeof items / sizeof items[0]; i++) {
        if (strlen(items[i][0]) == 2)
            fprintf(f, "<rect class=\"%s\" x=\"%d\" y=\"%d\" width=\"12\" height=\"10\"/>",
                    items[i][0], x, y);
        else fprintf(f, "<path class=\"%s\" d=\"M%d.5 %dv12\"/>", items[i][0], x + 5, y - 1);
        fprintf(f, "<text x=\"%d\" y=\"%d\">%s</text>\n", x + 16, y + 9, items[i][1]);
        x += 16 + (int)(6.2 * (double)strlen(items[i][1])) + 14;
    }
    fputs("</g>\n", f);
}

static const char svg_style[] =
    "<style>text{font:11px "
    "sans-serif;fill:#333}.label{text-anchor:end}.title{font-size:13px;font-weight:bold}"
    ".lane{fill:#f6f6f6}.edge rect{stroke:#fff;stroke-width:.6}.grid{stroke:#e0e0e0;stroke-width:1}"
    ".j1{fill:#c6dbef}.j2{fill:#9ecae1}.j3{fill:#6baed6}.j4{fill:#3182bd}"
    ".b1{fill:#fdae6b}.b2{fill:#fd8d3c}.b3{fill:#e6550d}.b4{fill:#a63603}"
    ".o1{fill:#d9d9d9}.o2{fill:#bdbdbd}.o3{fill:#969696}.o4{fill:#737373}"
    ".s1,.s2,.s3,.s4{fill:url(#hatch)}"
    ".steal,.wake,.inject,.tick{fill:none;stroke-width:1.5}"
    ".steal{stroke:#d62728}.wake{stroke:#2ca02c}.inject{stroke:#9467bd}.tick{stroke:#444}</style>\n"
    "<defs><pattern id=\"hatch\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" "
    "patternTransform=\"rotate(45)\"><rect width=\"4\" height=\"4\" fill=\"#ececec\"/>"
    "<path d=\"M0 0V4\" stroke=\"#a0a0a0\" stroke-width=\"1.5\"/></pattern></defs>\n";

struct trace2svg_counts {
    int lanes;
    long spans, marks, rects, ticks;
};

/* Draws the trace `json` into `out`: 0, or -1 with err set. */
static int trace2svg(const char *json, size_t len, const struct trace2svg_options *opt, FILE *out,
                     struct trace2svg_counts *counts, char *err, size_t errlen) {
    struct trace_summary s;
    struct collected c;
    struct layout L;
    int *order = NULL, k, label_w = 40, lanes_bottom, rc = -1, kind, level;
    unsigned char *cols = NULL;
    struct trace2svg_counts n;
    memset(&c, 0, sizeof c);
    memset(&L, 0, sizeof L);
    memset(&n, 0, sizeof n);
    if (trace_walk(json, len, 0, collect, &c, &s, err, errlen) != 0) {
        if (c.oom) snprintf(err, errlen, "out of memory");
        free(c.spans);
        free(c.marks);
        return -1;
    }
    L.from = opt->has_from ? opt->from : s.ts_min;
    L.to = opt->has_to ? opt->to : s.ts_max;
    if (L.to <= L.from) {
        if (opt->has_from && opt->has_to) {
            snprintf(err, errlen, "--from %.3f is not below --to %.3f", opt->from, opt->to);
            goto out;
        }
        L.to = L.from + 1; /* an empty or one-instant trace */
    }
    /* Lanes sorted by (pid, tid); the label column fits the longest name. */
    order = (int *)malloc((size_t)(s.num_lanes + 1) * sizeof *order);
    L.row = (int *)malloc((size_t)(s.num_lanes + 1) * sizeof *L.row);
    if (!order || !L.row) goto oom;
    for (k = 0; k < s.num_lanes; k++) {
        int w = (int)strlen(s.lanes[k].name[0] ? s.lanes[k].name : "tid 0000000") * 7 + 12;
        order[k] = k;
        if (w > label_w) label_w = w;
    }
    sort_summary = &s;
    qsort(order, (size_t)s.num_lanes, sizeof *order, lane_cmp);
    for (k = 0; k < s.num_lanes; k++) L.row[order[k]] = k;
    L.width = opt->width > 0 ? opt->width : 1200;
    L.x0 = label_w < 200 ? label_w : 200;
    L.plot_w = L.width - L.x0 - RIGHT;
    if (L.plot_w < 50) {
        snprintf(err, errlen, "--width %d leaves no room to draw (at least %d)", L.width,
                 L.x0 + RIGHT + 50);
        goto out;
    }
    L.scale = L.plot_w / (L.to - L.from);
    lanes_bottom = TOP + s.num_lanes * (LANE_H + LANE_GAP);
    L.height = lanes_bottom + 34;
    if (!(cols = (unsigned char *)malloc((size_t)(s.num_lanes + 1) * (size_t)L.plot_w))) goto oom;

    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d "
            "%d\">\n%s"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n<text class=\"title\" "
            "x=\"10\" y=\"16\">",
            L.width, L.height, L.width, L.height, svg_style);
    put_escaped(out, opt->title ? opt->title : "pool.h trace");
    fprintf(out,
            "</text>\n<text x=\"%d\" y=\"16\" text-anchor=\"end\">%d lanes, %ld jobs, %ld steals, "
            "%ld sleeps; ",
            L.width - RIGHT, s.num_lanes, s.total.jobs, s.total.steals, s.total.sleeps);
    put_duration(out, L.to - L.from);
    fputs(" shown</text>\n", out);
    for (k = 0; k < s.num_lanes; k++) {
        const struct trace_lane *l = &s.lanes[order[k]];
        int y = lane_y(&L, order[k]);
        fprintf(out,
                "<rect class=\"lane\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>"
                "<text class=\"label\" x=\"%d\" y=\"%d\">",
                L.x0, y, L.plot_w, LANE_H, L.x0 - 6, y + LANE_H / 2 + 4);
        if (l->name[0]) put_escaped(out, l->name);
        else fprintf(out, "tid %lld", (long long)l->tid);
        fputs("</text>\n", out);
    }
    draw_axis(out, &L, lanes_bottom);
    for (kind = 0; kind < SPAN_KINDS; kind++) /* sleep last: hatched over the job it waits in */
        for (level = 1; level <= LEVELS; level++)
            n.rects += draw_spans(out, &L, &c, s.num_lanes, kind, level, cols);
    for (kind = 0; kind < MARK_KINDS; kind++)
        n.ticks += draw_marks(out, &L, &c, s.num_lanes, kind, cols);
    draw_legend(out, lanes_bottom + 12);
    fputs("</svg>\n", out);
    n.lanes = s.num_lanes;
    n.spans = (long)c.nspans;
    n.marks = (long)c.nmarks;
    if (counts) *counts = n;
    rc = ferror(out) ? (snprintf(err, errlen, "write error"), -1) : 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
out:
    free(cols);
    free(order);
    free(L.row);
    free(c.spans);
    free(c.marks);
    trace_summary_free(&s);
    return rc;
}

/* The whole file, NUL-terminated; NULL with err set. */
static char *read_file(const char *path, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 16, n = 0, got;
    char *buf = NULL, *p;
    if (!f) {
        snprintf(err, errlen, "cannot open %s", path);
        return NULL;
    }
    do {
        if (!(p = (char *)realloc(buf, cap + 1))) {
            snprintf(err, errlen, "out of memory reading %s", path);
            free(buf);
            fclose(f);
            return NULL;
        }
        buf = p;
        n += got = fread(buf + n, 1, cap - n, f);
        if (n == cap) cap *= 2;
    } while (got > 0);
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s", path);
        free(buf);
        buf = NULL;
    } else {
        buf[n] = 0;
        *len = n;
    }
    fclose(f);
    return buf;
}

static int usage(void) {
    fputs("usage: trace2svg [--from US] [--to US] [--width PX] [--title TEXT] trace.json out.svg\n"
          "       trace2svg --check trace.json\n",
          stderr);
    return 2;
}

/* The command line; main() calls it, and so does the test. */
static int trace2svg_main(int argc, char **argv) {
    struct trace2svg_options opt;
    struct trace2svg_counts n;
    char err[512], *json, *end;
    const char *files[2];
    int i, nfiles = 0, check = 0, rc;
    size_t len = 0;
    FILE *out;
    memset(&opt, 0, sizeof opt);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--check") == 0) {
            check = 1;
        } else if ((strcmp(a, "--from") == 0 || strcmp(a, "--to") == 0 ||
                    strcmp(a, "--width") == 0) &&
                   i + 1 < argc) {
            double v = strtod(argv[++i], &end);
            if (*end || end == argv[i] || v != v) return usage();
            if (a[2] == 'f') opt.from = v, opt.has_from = 1;
            else if (a[2] == 't') opt.to = v, opt.has_to = 1;
            else if (v < 1 || v > 100000) return usage();
            else opt.width = (int)v;
        } else if (strcmp(a, "--title") == 0 && i + 1 < argc) {
            opt.title = argv[++i];
        } else if (a[0] == '-' && a[1] != 0) {
            return usage();
        } else if (nfiles < 2) {
            files[nfiles++] = a;
        } else {
            return usage();
        }
    }
    if (nfiles != (check ? 1 : 2)) return usage();
    if (!(json = read_file(files[0], &len, err, sizeof err))) {
        fprintf(stderr, "trace2svg: %s\n", err);
        return 1;
    }
    if (check) {
        struct trace_summary s;
        if ((rc = trace_check(json, len, &s, err, sizeof err)) == 0) {
            trace_summary_print(&s, stdout);
            trace_summary_free(&s);
        } else {
            fprintf(stderr, "trace2svg: %s: %s\n", files[0], err);
        }
        free(json);
        return rc == 0 ? 0 : 1;
    }
    if (!(out = strcmp(files[1], "-") == 0 ? stdout : fopen(files[1], "w"))) {
        fprintf(stderr, "trace2svg: cannot write %s\n", files[1]);
        free(json);
        return 1;
    }
    rc = trace2svg(json, len, &opt, out, &n, err, sizeof err);
    free(json);
    if (out != stdout && fclose(out) != 0 && rc == 0)
        rc = -1, snprintf(err, sizeof err, "write error");
    if (rc != 0) {
        fprintf(stderr, "trace2svg: %s: %s\n", files[0], err);
        if (out != stdout) remove(files[1]);
        return 1;
    }
    fprintf(stderr,
            "trace2svg: %d lanes, %ld spans, %ld instant events -> %s: %ld rects, %ld ticks\n",
            n.lanes, n.spans, n.marks, files[1], n.rects, n.ticks);
    return 0;
}

#ifndef TRACE2SVG_NO_MAIN
int main(int argc, char **argv) { return trace2svg_main(argc, argv); }
#endif
