/* test_trace2svg.c - examples/tools/trace2svg.c: a hand-written trace drawn
 * into exactly the rects and ticks it holds, in well-formed SVG; a window
 * clips; bad traces and bad command lines are refused; and a generated
 * trace of 200,000 jobs (made up here, not a real run) stays under 1 MB.
 */
#define TRACE2SVG_NO_MAIN
#include "../examples/tools/trace2svg.c"
#include "test.h"

static char err[512];

/* ------------------------------------------------------------------------ */
/* Helpers                                                                  */
/* ------------------------------------------------------------------------ */

/* Renders `json` to a string (free it), or NULL with err set. */
static char *render(const char *json, size_t len, const struct trace2svg_options *opt,
                    struct trace2svg_counts *n) {
    FILE *f = tmpfile();
    char *svg = NULL;
    long size;
    if (!f) {
        snprintf(err, sizeof err, "tmpfile failed");
        return NULL;
    }
    if (trace2svg(json, len, opt, f, n, err, sizeof err) == 0 && (size = ftell(f)) >= 0 &&
        (svg = (char *)malloc((size_t)size + 1)) != NULL) {
        rewind(f);
        svg[fread(svg, 1, (size_t)size, f)] = 0;
    }
    fclose(f);
    return svg;
}

static long count(const char *hay, const char *needle) {
    long n = 0;
    for (; (hay = strstr(hay, needle)) != NULL; hay += strlen(needle)) n++;
    return n;
}

/* Well-formed XML, as far as an SVG writer needs: every tag closed in
   order, attributes quoted, no raw '<' or stray '&' in text, one root. */
static int well_formed(const char *s, char *why, size_t whylen) {
    char stack[32][32];
    int depth = 0, roots = 0;
    while (*s) {
        if (*s == '&') {
            if (strncmp(s, "&amp;", 5) && strncmp(s, "&lt;", 4) && strncmp(s, "&gt;", 4) &&
                strncmp(s, "&quot;", 6))
                return snprintf(why, whylen, "stray '&' at \"%.20s\"", s), 0;
            s++;
        } else if (*s != '<') {
            s++;
        } else if (strncmp(s, "<?", 2) == 0) {
            if (!(s = strstr(s, "?>"))) return snprintf(why, whylen, "unclosed <?"), 0;
            s += 2;
        } else if (s[1] == '/') { /* a closing tag */
            size_t n = strcspn(s + 2, ">");
            if (depth == 0 || strlen(stack[depth - 1]) != n ||
                strncmp(s + 2, stack[depth - 1], n) != 0)
                return snprintf(why, whylen, "</%.*s> closes <%s>", (int)n, s + 2,
                                depth ? stack[depth - 1] : "nothing"),
                       0;
            depth--;
            s += n + 3;
        } else { /* an opening tag: name, then name="value" pairs */
            size_t n = strcspn(s + 1, " />");
            if (n == 0 || n >= sizeof stack[0])
                return snprintf(why, whylen, "bad tag at \"%.20s\"", s), 0;
            if (depth == 0 && roots++) return snprintf(why, whylen, "a second root element"), 0;
            if (depth == 32) return snprintf(why, whylen, "too deep"), 0;
            memcpy(stack[depth], s + 1, n);
            stack[depth++][n] = 0;
            for (s += 1 + n; *s == ' ';) {
                const char *eq = strchr(s, '=');
                if (!eq || eq[1] != '"' || strcspn(s + 1, " =/>") != (size_t)(eq - s - 1))
                    return snprintf(why, whylen, "bad attribute at \"%.20s\"", s), 0;
                for (s = eq + 2; *s != '"'; s++)
                    if (!*s || *s == '<') return snprintf(why, whylen, "bad attribute value"), 0;
                s++;
            }
            if (s[0] == '/' && s[1] == '>') depth--, s += 2;
            else if (*s == '>') s++;
            else return snprintf(why, whylen, "bad tag end at \"%.20s\"", s), 0;
        }
    }
    if (depth != 0) return snprintf(why, whylen, "<%s> never closed", stack[depth - 1]), 0;
    return roots == 1 ? 1 : (snprintf(why, whylen, "no root element"), 0);
}

#define CHECK_WELL_FORMED(svg) \
    do { \
        char why_[128] = ""; \
        CHECK_MSG(well_formed(svg, why_, sizeof why_), "%s", why_); \
    } while (0)

/* Every span rect (those before the legend) lies within [x0, x1]. */
static void check_rects_within(const char *svg, double x0, double x1) {
    const char *end = strstr(svg, "<g class=\"legend\">"), *r = svg;
    while ((r = strstr(r, "<rect class=\"")) != NULL && (!end || r < end)) {
        double x, w;
        char cls[8];
        if (sscanf(r, "<rect class=\"%7[^\"]\" x=\"%lf\" y=\"%*d\" width=\"%lf\"", cls, &x, &w) ==
                3 &&
            strcmp(cls, "lane") != 0)
            CHECK_MSG(x >= x0 - 0.05 && x + w <= x1 + 0.15,
                      "%s rect %.1f + %.1f outside [%.1f, %.1f]", cls, x, w, x0, x1);
        r++;
    }
}

/* Rects of class `cls` among the spans (not the legend's). */
static long span_rects(const char *svg, const char *cls) {
    char needle[32];
    const char *end = strstr(svg, "<g class=\"legend\">"), *r = svg;
    long n = 0;
    snprintf(needle, sizeof needle, "<rect class=\"%s\"", cls);
    while ((r = strstr(r, needle)) != NULL && (!end || r < end)) n++, r++;
    return n;
}

/* ------------------------------------------------------------------------ */
/* A small trace, every element checked                                     */
/* ------------------------------------------------------------------------ */

#define E_(s) "{\"cat\":\"pool\",\"pid\":1," s "},\n"
/* Lanes listed out of order (the drawing sorts them by tid); a thread name
   to escape; worker 1's first E lost its B; an unknown span and event. */
static const char small_trace[] = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n" E_(
    "\"name\":\"thread_name\",\"ph\":\"M\",\"tid\":2000,\"args\":{\"name\":\"outside-0\"}")
    E_("\"name\":\"thread_name\",\"ph\":\"M\",\"tid\":1000,\"args\":{\"name\":\"work-blk-0\"}") E_(
        "\"name\":\"thread_name\",\"ph\":\"M\",\"tid\":1,\"args\":{\"name\":\"w<&>-1\"}")
        E_("\"name\":\"thread_name\",\"ph\":\"M\",\"tid\":0,\"args\":{\"name\":\"work-0\"}") E_(
            "\"name\":\"inject\",\"ph\":\"i\",\"s\":\"t\",\"ts\":0,\"tid\":2000,\"args\":{"
            "\"tasks\":2}") E_("\"name\":\"inject\",\"ph\":\"i\",\"s\":\"t\",\"ts\":500,\"tid\":"
                               "2000,\"args\":{\"tasks\":1}")
            E_("\"name\":\"blocking\",\"ph\":\"B\",\"ts\":100,\"tid\":1000") E_(
                "\"name\":\"blocking\",\"ph\":\"E\",\"ts\":900,\"tid\":1000")
                E_("\"name\":\"job\",\"ph\":\"B\",\"ts\":10,\"tid\":0") E_(
                    "\"name\":\"wake\",\"ph\":\"i\",\"s\":\"t\",\"ts\":11,\"tid\":0,\"args\":{"
                    "\"worker\":1}") E_("\"name\":\"job\",\"ph\":\"B\",\"ts\":20,\"tid\":0")
                    E_("\"name\":\"job\",\"ph\":\"B\",\"ts\":30,\"tid\":0") E_(
                        "\"name\":\"job\",\"ph\":\"E\",\"ts\":30.1,\"tid\":0") /* narrow: merged */
    E_("\"name\":\"job\",\"ph\":\"B\",\"ts\":30.2,\"tid\":0")
        E_("\"name\":\"job\",\"ph\":\"E\",\"ts\":30.3,\"tid\":0") /* the same pixel column */
    E_("\"name\":\"job\",\"ph\":\"E\",\"ts\":400,\"tid\":0")
        E_("\"name\":\"sleep\",\"ph\":\"B\",\"ts\":450,\"tid\":0") /* a join waiting, asleep */
    E_("\"name\":\"sleep\",\"ph\":\"E\",\"ts\":600,\"tid\":0")
        E_("\"name\":\"job\",\"ph\":\"E\",\"ts\":700,\"tid\":0")
            E_("\"name\":\"sleep\",\"ph\":\"B\",\"ts\":800,\"tid\":0") /* asleep at the end */
    E_("\"name\":\"job\",\"ph\":\"E\",\"ts\":5,\"tid\":1")             /* its B was dropped */
    E_("\"name\":\"steal\",\"ph\":\"i\",\"s\":\"t\",\"ts\":12,\"tid\":1,\"args\":{\"victim\":0}")
        E_("\"name\":\"job\",\"ph\":\"B\",\"ts\":13,\"tid\":1")
            E_("\"name\":\"frob\",\"ph\":\"i\",\"s\":\"t\",\"ts\":14,\"tid\":1") E_(
                "\"name\":\"job\",\"ph\":\"E\",\"ts\":300,\"tid\":1")
                E_("\"name\":\"gc\",\"ph\":\"B\",\"ts\":310,\"tid\":1") E_(
                    "\"name\":\"gc\",\"ph\":\"E\",\"ts\":390,\"tid\":1") "{\"name\":\"job\",\"ph\":"
                                                                         "\"X\",\"ts\":950,\"dur\":"
                                                                         "50,\"pid\":1,\"tid\":1}\n"
                                                                         "]}\n";

static void test_small(void) {
    struct trace2svg_options opt;
    struct trace2svg_counts n;
    const char *a, *b, *c, *d;
    char *svg;
    memset(&opt, 0, sizeof opt);
    opt.width = 1000;
    svg = render(small_trace, strlen(small_trace), &opt, &n);
    CHECK_MSG(svg != NULL, "%.200s", err);
    if (!svg) return;
    CHECK_WELL_FORMED(svg);
    CHECK(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1000\" ") != NULL);
    /* lanes sorted by tid, labelled, the odd name escaped */
    a = strstr(svg, ">work-0</text>");
    b = strstr(svg, ">w&lt;&amp;&gt;-1</text>");
    c = strstr(svg, ">work-blk-0</text>");
    d = strstr(svg, ">outside-0</text>");
    CHECK(a && b && c && d && a < b && b < c && c < d);
    CHECK_EQ_I64(count(svg, "<rect class=\"lane\""), 4);
    CHECK_EQ_I64(n.lanes, 4);
    /* 9 spans: 5 jobs on worker 0 (1 + 1 + 2 nested + the X), 1 on worker
       1, 2 sleeps, the blocking one and gc; the orphan E draws nothing. */
    CHECK_EQ_I64(n.spans, 10);
    CHECK_EQ_I64(n.marks, 5);
    CHECK_EQ_I64(span_rects(svg, "j1"), 3); /* 10-700 on worker 0, 13-300 and the X on worker 1 */
    CHECK_EQ_I64(span_rects(svg, "j2"), 1); /* 20-400 */
    CHECK_EQ_I64(span_rects(svg, "j3"), 1); /* the two narrow ones, merged into one column */
    CHECK_EQ_I64(span_rects(svg, "j4"), 0);
    CHECK_EQ_I64(span_rects(svg, "s2"), 1); /* asleep inside the job */
    CHECK_EQ_I64(span_rects(svg, "s1"), 1); /* asleep at the end, to the end */
    CHECK_EQ_I64(span_rects(svg, "b1"), 1);
    CHECK_EQ_I64(span_rects(svg, "o1"), 1);
    {
        const char *r = strstr(svg, "<rect class=\"j3\"");
        int w = 0;
        CHECK(r && sscanf(r, "<rect class=\"j3\" x=\"%*d\" y=\"%*d\" width=\"%d\"", &w) == 1 &&
              w >= 1 && w <= 2);
    }
    CHECK(strstr(svg, "(still open at the end)") != NULL);
    CHECK(strstr(svg, "<title>690 \xc2\xb5s at 10 \xc2\xb5s</title>") != NULL);
    /* ticks: one path per lane and kind, one M per pixel column */
    CHECK_EQ_I64(count(svg, "<path class=\"steal\" d=\"M"), 2); /* lane + legend */
    CHECK_EQ_I64(count(svg, "<path class=\"wake\" d=\"M"), 2);
    CHECK_EQ_I64(count(svg, "<path class=\"tick\" d=\"M"), 2);
    CHECK_EQ_I64(count(svg, "<path class=\"inject\" d=\"M"), 2);
    CHECK(strstr(svg, "<path class=\"inject\" d=\"M") &&
          count(strstr(svg, "<path class=\"inject\" d=\"M"), "v") >=
              2); /* 0 and 500 us: two ticks */
    CHECK_EQ_I64(n.ticks, 5);
    /* the axis, and the legend */
    CHECK(strstr(svg, ">0 ms</text>") && strstr(svg, ">0.4 ms</text>") &&
          strstr(svg, ">1 ms</text>"));
    CHECK(strstr(svg, ">blocking</text>") && strstr(svg, ">sleep</text>") &&
          strstr(svg, ">steal</text>"));
    check_rects_within(svg, 50, 1000 - RIGHT);
    free(svg);

    /* A window: the blocking span fills it, what lies outside is gone. */
    opt.has_from = opt.has_to = 1;
    opt.from = 200, opt.to = 300;
    svg = render(small_trace, strlen(small_trace), &opt, &n);
    CHECK_MSG(svg != NULL, "%.200s", err);
    if (!svg) return;
    CHECK_WELL_FORMED(svg);
    CHECK_EQ_I64(span_rects(svg, "b1"), 1);
    CHECK_EQ_I64(span_rects(svg, "j3"), 0);
    CHECK_EQ_I64(span_rects(svg, "s1") + span_rects(svg, "s2") + span_rects(svg, "o1"), 0);
    CHECK_EQ_I64(n.ticks, 0);
    {
        const char *r = strstr(svg, "<rect class=\"b1\"");
        double x = 0, w = 0;
        CHECK(r && sscanf(r, "<rect class=\"b1\" x=\"%lf\" y=\"%*d\" width=\"%lf\"", &x, &w) == 2);
        CHECK_MSG(w > 1000 - RIGHT - x - 0.2 && w < 1000 - RIGHT - x + 0.2, "x %.1f width %.1f", x,
                  w);
    }
    check_rects_within(svg, 50, 1000 - RIGHT);
    free(svg);

    /* Bad windows and widths. */
    opt.from = 300, opt.to = 200;
    CHECK(render(small_trace, strlen(small_trace), &opt, &n) == NULL &&
          strstr(err, "is not below --to"));
    opt.has_from = opt.has_to = 0;
    opt.width = 100;
    CHECK(render(small_trace, strlen(small_trace), &opt, &n) == NULL &&
          strstr(err, "leaves no room"));
}

static void test_edges(void) {
    static const char empty[] = "{\"traceEvents\":[]}";
    static const char bad[] =
        "{\"traceEvents\":[{\"name\":\"job\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":0},"
        "{\"name\":\"sleep\",\"ph\":\"E\",\"ts\":2,\"pid\":1,\"tid\":0}]}";
    struct trace2svg_options opt;
    struct trace2svg_counts n;
    char *svg;
    memset(&opt, 0, sizeof opt);
    opt.title = "a \"title\" & more";
    svg = render(empty, strlen(empty), &opt, &n);
    CHECK_MSG(svg != NULL, "%.200s", err);
    if (svg) {
        CHECK_WELL_FORMED(svg);
        CHECK(n.lanes == 0 && n.rects == 0 && n.ticks == 0);
        CHECK(strstr(svg, ">a &quot;title&quot; &amp; more</text>") != NULL);
        free(svg);
    }
    CHECK(render(bad, strlen(bad), &opt, &n) == NULL);
    CHECK_MSG(strstr(err, "unbalanced E") != NULL, "%.200s", err);
}

/* ------------------------------------------------------------------------ */
/* A made-up big trace: the size bound                                      */
/* ------------------------------------------------------------------------ */

struct buf {
    char *s;
    size_t len, cap;
};

static void put(struct buf *b, const char *fmt, ...) {
    va_list ap;
    int n;
    if (b->cap - b->len < 256) {
        b->cap = b->cap ? b->cap * 2 : 1 << 20;
        if (!(b->s = (char *)realloc(b->s, b->cap))) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    va_start(ap, fmt);
    n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void ev(struct buf *b, const char *name, char ph, double ts, int tid) {
    put(b, "{\"name\":\"%s\",\"cat\":\"pool\",\"ph\":\"%c\",\"ts\":%.3f,\"pid\":1,\"tid\":%d},\n",
        name, ph, ts, tid);
}

/* A fork-join tree: a job that forks two halves and runs them one after
   the other (nobody steals in this made-up trace); `*left` jobs to go. */
static double job_tree(struct buf *b, double t, double dur, int tid, long *left) {
    ev(b, "job", 'B', t, tid);
    --*left;
    if (*left > 0 && dur > 0.05) {
        t = job_tree(b, t + dur * 0.01, dur * 0.55, tid, left);
        t = *left > 0 ? job_tree(b, t + dur * 0.01, dur * 0.40, tid, left) : t + dur * 0.41;
        t += dur * 0.02;
    } else {
        t += dur;
    }
    ev(b, "job", 'E', t, tid);
    return t;
}

/* Two workers and an outside thread: bursts of fork-join work, steals,
   wake-ups, injects and sleeps in between, `jobs` jobs in all. */
static char *fake_trace(long jobs, size_t *len) {
    struct buf b = {NULL, 0, 0};
    int w;
    put(&b, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    for (w = 0; w < 2; w++)
        put(&b,
            "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"pool-"
            "%d\"}},\n",
            w, w);
    put(&b, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2000,\"args\":{\"name\":"
            "\"outside-0\"}},\n");
    for (w = 0; w < 2; w++) {
        long left = jobs / 2;
        double t = 10.0 + w * 3;
        int burst = 0;
        ev(&b, "job", 'E', t - 5, w); /* lost its B to the ring */
        while (left > 0) {
            long n = left < 5000 ? left : 5000;
            left -= n;
            if (w == 1)
                put(&b,
                    "{\"name\":\"steal\",\"cat\":\"pool\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f,"
                    "\"pid\":1,"
                    "\"tid\":1,\"args\":{\"victim\":0}},\n",
                    t);
            else
                put(&b,
                    "{\"name\":\"wake\",\"cat\":\"pool\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f,"
                    "\"pid\":1,"
                    "\"tid\":0,\"args\":{\"worker\":1}},\n",
                    t);
            while (n > 0) t = job_tree(&b, t + 0.2, 40.0 + (double)(burst % 7) * 30, w, &n) + 0.1;
            ev(&b, "sleep", 'B', t + 2, w);
            t += 700.0 + (double)(burst++ % 3) * 400;
            if (left > 0) ev(&b, "sleep", 'E', t, w);
        }
    }
    for (w = 0; w < 40; w++)
        put(&b,
            "{\"name\":\"inject\",\"cat\":\"pool\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%.3f,\"pid\":1,"
            "\"tid\":2000,"
            "\"args\":{\"tasks\":64}},\n",
            5.0 + w * 1000.0);
    b.len -= 2; /* the last ",\n" */
    put(&b, "\n]}\n");
    *len = b.len;
    return b.s;
}

static void test_big(void) {
    long jobs = test_scaled(200000, 5000);
    struct trace2svg_options opt;
    struct trace2svg_counts n;
    struct trace_summary s;
    size_t len;
    char *json = fake_trace(jobs, &len), *svg;
    long sleeps;
    CHECK_MSG(trace_check(json, len, &s, err, sizeof err) == 0, "%.200s", err);
    CHECK_EQ_I64(s.total.jobs, jobs);
    printf("made-up trace: %ld jobs, %zu bytes of JSON\n", s.total.jobs, len);
    sleeps = s.total.sleeps;
    trace_summary_free(&s);
    memset(&opt, 0, sizeof opt);
    svg = render(json, len, &opt, &n);
    CHECK_MSG(svg != NULL, "%.200s", err);
    if (svg) {
        printf("drawn: %ld spans -> %ld rects, %ld ticks, %zu bytes of SVG\n", n.spans, n.rects,
               n.ticks, strlen(svg));
        CHECK_EQ_I64(n.spans, jobs + sleeps);
        CHECK_MSG(strlen(svg) < 1000000, "%zu bytes", strlen(svg));
        CHECK_WELL_FORMED(svg);
        check_rects_within(svg, 50, 1200 - RIGHT);
        free(svg);
    }
    /* Zoomed into 1 ms, the narrow jobs come apart. */
    opt.has_from = opt.has_to = 1;
    opt.from = 1000, opt.to = 2000;
    svg = render(json, len, &opt, &n);
    CHECK_MSG(svg != NULL, "%.200s", err);
    if (svg) {
        printf("zoomed to 1 ms: %ld rects, %zu bytes of SVG\n", n.rects, strlen(svg));
        CHECK_WELL_FORMED(svg);
        check_rects_within(svg, 50, 1200 - RIGHT);
        free(svg);
    }
    free(json);
}

/* ------------------------------------------------------------------------ */
/* The command line                                                         */
/* ------------------------------------------------------------------------ */

static int cli(const char *a1, const char *a2, const char *a3, const char *a4, const char *a5) {
    char *argv[7];
    int argc = 0;
    argv[argc++] = (char *)"trace2svg";
    if (a1) argv[argc++] = (char *)a1;
    if (a2) argv[argc++] = (char *)a2;
    if (a3) argv[argc++] = (char *)a3;
    if (a4) argv[argc++] = (char *)a4;
    if (a5) argv[argc++] = (char *)a5;
    argv[argc] = NULL;
    return trace2svg_main(argc, argv);
}

static void test_cli(void) {
    char dir[256], in[300], out[300], bad[300];
    size_t len;
    char *svg;
    FILE *f;
    if (test_temp_dir(dir, sizeof dir, "test_trace2svg") != 0) {
        CHECK_MSG(0, "no temporary directory");
        return;
    }
    snprintf(in, sizeof in, "%s/t.json", dir);
    snprintf(out, sizeof out, "%s/t.svg", dir);
    snprintf(bad, sizeof bad, "%s/bad.json", dir);
    f = fopen(in, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(small_trace, f);
    fclose(f);
    f = fopen(bad, "w");
    if (f) fputs("{\"traceEvents\":[}", f), fclose(f);

    CHECK_EQ_I64(cli(in, out, NULL, NULL, NULL), 0);
    svg = read_file(out, &len, err, sizeof err);
    CHECK(svg && len > 1000 && strstr(svg, ">work-0</text>"));
    if (svg) CHECK_WELL_FORMED(svg);
    free(svg);
    CHECK_EQ_I64(cli("--width", "640", "--from", "0", in), 2); /* no output file */
    CHECK_EQ_I64(cli("--width", "640", "--title", "T", in), 2);
    CHECK_EQ_I64(cli("--width", "640", "--to", "100", in), 2);
    CHECK_EQ_I64(cli("--width", "640", in, out, NULL), 0);
    svg = read_file(out, &len, err, sizeof err);
    CHECK(svg && strstr(svg, "width=\"640\""));
    free(svg);
    CHECK_EQ_I64(cli("--check", in, NULL, NULL, NULL), 0);
    CHECK_EQ_I64(cli("--check", bad, NULL, NULL, NULL), 1);
    CHECK_EQ_I64(cli(bad, out, NULL, NULL, NULL), 1);
    f = fopen(out, "r");
    CHECK(f == NULL); /* no half-written file left behind */
    if (f) fclose(f);
    CHECK_EQ_I64(cli(NULL, NULL, NULL, NULL, NULL), 2);
    CHECK_EQ_I64(cli(in, NULL, NULL, NULL, NULL), 2);
    CHECK_EQ_I64(cli("--width", "abc", in, out, NULL), 2);
    CHECK_EQ_I64(cli("--width", "0", in, out, NULL), 2);
    CHECK_EQ_I64(cli("--frobnicate", in, out, NULL, NULL), 2);
    CHECK_EQ_I64(cli(in, out, "third", NULL, NULL), 2);
    CHECK_EQ_I64(cli("/nonexistent/t.json", out, NULL, NULL, NULL), 1);
    remove(in);
    remove(bad);
    remove(out);
    rmdir(dir);
}

int main(void) {
    test_watchdog(120, "test_trace2svg");
    test_small();
    test_edges();
    test_big();
    test_cli();
    return test_finish("test_trace2svg");
}
