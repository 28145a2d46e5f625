/* test_trace_json.c - the JSON parser and the trace checker of
 * examples/tools/trace_json.h, on hand-written texts: each good one must parse to
 * exactly the values written, each bad one must be rejected with the
 * message that names its fault.
 */
#include "../examples/tools/trace_json.h"
#include "test.h"

static char err[512];

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */
/* ------------------------------------------------------------------------ */

static int parse(const char *text, tj_doc *doc) {
    return tj_parse(text, strlen(text), doc, err, sizeof err);
}

/* `text` (of `len` bytes) is rejected with a message containing `want`. */
static void bad_json_n(const char *text, size_t len, const char *want, int line) {
    tj_doc doc;
    int rc = tj_parse(text, len, &doc, err, sizeof err);
    CHECK_MSG(rc != 0, "line %d: accepted", line);
    CHECK_MSG(strstr(err, want) != NULL, "line %d: \"%.60s\" not in \"%.150s\"", line, want, err);
    if (rc == 0) tj_free(&doc);
    else printf("  rejected as expected: %s\n", err);
}
#define BAD_JSON(text, want) bad_json_n(text, strlen(text), want, __LINE__)

static void test_json_values(void) {
    tj_doc doc;
    const tj_value *v;
    static const char *const numbers[] = {
        "0",     "-0",        "7",    "-12",      "1.5",
        "1e3",   "-12.25E-2", "2E+2", "0.000001", "9007199254740993",
        "1e-400"};
    static const double values[] = {
        0, 0, 7, -12, 1.5, 1000, -0.1225, 200, 0.000001, 9007199254740992.0, 0};
    static const int integer[] = {1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0};
    size_t i;

    CHECK(parse("true", &doc) == 0 && doc.root->type == TJ_TRUE);
    tj_free(&doc);
    CHECK(parse(" \t\r\nfalse\n", &doc) == 0 && doc.root->type == TJ_FALSE);
    tj_free(&doc);
    CHECK(parse("null", &doc) == 0 && doc.root->type == TJ_NULL);
    tj_free(&doc);
    for (i = 0; i < sizeof numbers / sizeof numbers[0]; i++) {
        CHECK_MSG(parse(numbers[i], &doc) == 0, "%s: %.200s", numbers[i], err);
        if (!doc.root) continue;
        CHECK_MSG(doc.root->type == TJ_NUMBER && doc.root->number == values[i] &&
                      doc.root->is_integer == integer[i],
                  "%s: %g, integer %d", numbers[i], doc.root->number, doc.root->is_integer);
        tj_free(&doc);
    }

    CHECK(parse("[]", &doc) == 0 && doc.root->type == TJ_ARRAY && doc.root->length == 0 &&
          !doc.root->first);
    tj_free(&doc);
    CHECK(parse("{}", &doc) == 0 && doc.root->type == TJ_OBJECT && doc.root->length == 0);
    tj_free(&doc);

    CHECK(parse("[1, [2, [3]], {\"a\": [true, null]}, \"x\"]", &doc) == 0);
    v = doc.root;
    CHECK(v->type == TJ_ARRAY && v->length == 4);
    v = v->first;
    CHECK(v->type == TJ_NUMBER && v->number == 1);
    v = v->next;
    CHECK(v->type == TJ_ARRAY && v->length == 2 && v->first->number == 2);
    CHECK(v->first->next->type == TJ_ARRAY && v->first->next->first->number == 3);
    v = v->next;
    CHECK(v->type == TJ_OBJECT && tj_get(v, "a") && tj_get(v, "a")->length == 2);
    CHECK(tj_get(v, "a")->first->type == TJ_TRUE && tj_get(v, "a")->first->next->type == TJ_NULL);
    CHECK(tj_get(v, "b") == NULL && tj_get(doc.root, "a") == NULL);
    v = v->next;
    CHECK(v->type == TJ_STRING && strcmp(v->string, "x") == 0 && !v->next);
    tj_free(&doc);

    /* Members keep their order; keys are decoded too. */
    CHECK(parse("{\"b\":1,\"a\":2,\"\\u0063\":3}", &doc) == 0);
    v = doc.root->first;
    CHECK(strcmp(v->key, "b") == 0 && strcmp(v->next->key, "a") == 0 &&
          strcmp(v->next->next->key, "c") == 0);
    CHECK(tj_get(doc.root, "c") && tj_get(doc.root, "c")->number == 3);
    tj_free(&doc);
}

static void test_json_strings(void) {
    tj_doc doc;
    static const char want[] = "\"\\/\b\f\n\r\tA\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
    /* Every escape, a 2-, 3- and 4-byte character (the last as a surrogate pair). */
    CHECK(parse("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20AC\\ud83d\\ude00\"", &doc) == 0);
    CHECK(doc.root && doc.root->type == TJ_STRING && doc.root->length == sizeof want - 1 &&
          memcmp(doc.root->string, want, sizeof want) == 0);
    tj_free(&doc);
    /* The same characters raw. */
    CHECK(parse("\"A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", &doc) == 0);
    CHECK(doc.root && strcmp(doc.root->string, want + 8) == 0);
    tj_free(&doc);
    /* \u0000 is a character like any other: the length says where it ends. */
    CHECK(parse("\"a\\u0000b\"", &doc) == 0);
    CHECK(doc.root && doc.root->length == 3 && memcmp(doc.root->string, "a\0b", 4) == 0);
    tj_free(&doc);
    CHECK(parse("\"\"", &doc) == 0 && doc.root->length == 0 && doc.root->string[0] == 0);
    tj_free(&doc);
}

static void test_json_limits(void) {
    char deep[2 * (TJ_MAX_DEPTH + 1) + 1];
    tj_doc doc;
    int i;
    for (i = 0; i < TJ_MAX_DEPTH; i++) deep[i] = '[', deep[2 * TJ_MAX_DEPTH - 1 - i] = ']';
    deep[2 * TJ_MAX_DEPTH] = 0;
    CHECK_MSG(parse(deep, &doc) == 0, "%d levels: %.200s", TJ_MAX_DEPTH, err);
    tj_free(&doc);
    for (i = 0; i <= TJ_MAX_DEPTH; i++) deep[i] = '[', deep[2 * TJ_MAX_DEPTH + 1 - i] = ']';
    deep[2 * TJ_MAX_DEPTH + 2] = 0;
    BAD_JSON(deep, "nesting deeper than");
}

static void test_json_bad(void) {
    BAD_JSON("", "empty input");
    BAD_JSON(" \n ", "empty input");
    BAD_JSON("\xef\xbb\xbf{}", "byte order mark");
    /* truncated */
    BAD_JSON("{\"a\":1", "unexpected end of input in an object (truncated?)");
    BAD_JSON("{\"a\"", "unexpected end of input in an object (truncated?)");
    BAD_JSON("{\"a\":", "expected a value (truncated?)");
    BAD_JSON("[1,2", "unexpected end of input in an array (truncated?)");
    BAD_JSON("[1,", "unexpected end of input in an array (truncated?)");
    BAD_JSON("\"abc", "unexpected end of input in a string (truncated?)");
    BAD_JSON("\"abc\\\"", "unexpected end of input in a string (truncated?)");
    BAD_JSON("tru", "unexpected end of input in true (truncated?)");
    BAD_JSON("-", "unexpected end of input in a number (truncated?)");
    /* commas and colons */
    BAD_JSON("[1,2,]", "trailing comma in an array");
    BAD_JSON("{\"a\":1,}", "trailing comma in an object");
    BAD_JSON("[,1]", "unexpected ',', expected a value");
    BAD_JSON("[1 2]", "expected ',' or ']' in an array, found '2'");
    BAD_JSON("{\"a\":1 \"b\":2}", "expected ',' or '}' in an object, found '\"'");
    BAD_JSON("{\"a\" 1}", "expected ':' after a key, found '1'");
    BAD_JSON("{a:1}", "expected a string key in an object, found 'a'");
    BAD_JSON("{1:2}", "expected a string key in an object, found '1'");
    BAD_JSON("{\"a\":1,\"a\":2}", "duplicate key \"a\"");
    /* strings */
    BAD_JSON("\"\\q\"", "bad escape in a string: 'q' after '\\'");
    BAD_JSON("\"\\x41\"", "bad escape in a string: 'x' after '\\'");
    BAD_JSON("\"\\u12G4\"", "bad \\u escape: 4 hex digits must follow");
    BAD_JSON("\"\\u12\"", "bad \\u escape: 4 hex digits must follow");
    BAD_JSON("\"\\ud800\"", "high surrogate \\ud800 not followed by a low one");
    BAD_JSON("\"\\ud800\\u0041\"", "high surrogate \\ud800 not followed by a low one");
    BAD_JSON("\"\\udc00\"", "a low surrogate \\udc00 without a high one");
    BAD_JSON("\"a\tb\"", "raw control character 0x09 in a string");
    BAD_JSON("\"a\nb\"", "raw control character 0x0a in a string");
    BAD_JSON("\"\xff\"", "invalid UTF-8");
    BAD_JSON("\"\xc0\xaf\"", "invalid UTF-8");         /* overlong '/' */
    BAD_JSON("\"\xed\xa0\x80\"", "invalid UTF-8");     /* a surrogate in UTF-8 */
    BAD_JSON("\"\xf4\x90\x80\x80\"", "invalid UTF-8"); /* above U+10FFFF */
    BAD_JSON("\"\xe2\x82\"", "invalid UTF-8");         /* cut short */
    BAD_JSON("'a'", "unexpected ''', expected a value");
    /* numbers */
    BAD_JSON("01", "bad number: leading zero");
    BAD_JSON("-01", "bad number: leading zero");
    BAD_JSON("-a", "a digit must follow '-'");
    BAD_JSON("1.]", "a digit must follow '.'");
    BAD_JSON("1.", "unexpected end of input in a number (truncated?)");
    BAD_JSON("1.e5", "a digit must follow '.'");
    BAD_JSON("[1e]", "the exponent has no digits");
    BAD_JSON("[1e+]", "the exponent has no digits");
    BAD_JSON("1e+", "unexpected end of input in a number (truncated?)");
    BAD_JSON(".5", "unexpected '.', expected a value");
    BAD_JSON("+1", "unexpected '+', expected a value");
    BAD_JSON("1e999", "number out of range");
    BAD_JSON("-1e999", "number out of range");
    BAD_JSON("NaN", "unexpected 'N'");
    BAD_JSON("Infinity", "unexpected 'I'");
    BAD_JSON("0x10", "unexpected 'x' after the JSON value");
    /* literals and the end */
    BAD_JSON("trux", "unexpected 't', expected a value");
    BAD_JSON("nul", "truncated");
    BAD_JSON("True", "unexpected 'T'");
    BAD_JSON("[1] x", "unexpected 'x' after the JSON value");
    BAD_JSON("{} {}", "unexpected '{' after the JSON value");
    BAD_JSON("[1]\x01", "unexpected byte 0x01 after the JSON value");
    bad_json_n("[1\0]", 4, "found byte 0x00", __LINE__);
    /* where: line and column */
    BAD_JSON("[\n 1,\n x]", "line 3, column 2: unexpected 'x'");
}

/* ------------------------------------------------------------------------ */
/* Traces                                                                   */
/* ------------------------------------------------------------------------ */

/* The traces below are written one event per line, whatever the formatter
   thinks: */
/* clang-format off */
#define EV(s) "{" s "},\n"
#define LAST(s) "{" s "}\n"
#define HEAD "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
#define TAIL "]}\n"

/* What pool_trace_write writes, every kind of event: two workers, one
   blocking thread, one outside thread. Worker 0 lost its oldest events
   (the first E is an orphan) and sleeps at the end; worker 1's job joins
   and runs a nested job inside it. */
static const char good_trace[] =
    HEAD
    EV("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"pool-0\"}")
    EV("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,\"args\":{\"name\":\"pool-1\"}")
    EV("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1000,\"args\":{\"name\":\"pool-blk-0\"}")
    EV("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2000,\"args\":{\"name\":\"outside-0\"}")
    EV("\"name\":\"job\",\"cat\":\"pool\",\"ph\":\"E\",\"ts\":10.000,\"pid\":1,\"tid\":0")
    EV("\"name\":\"job\",\"cat\":\"pool\",\"ph\":\"B\",\"ts\":12.345,\"pid\":1,\"tid\":0")
    EV("\"name\":\"wake\",\"cat\":\"pool\",\"ph\":\"i\",\"s\":\"t\",\"ts\":12.500,\"pid\":1,\"tid\":0,\"args\":{\"worker\":1}")
    EV("\"name\":\"job\",\"cat\":\"pool\",\"ph\":\"E\",\"ts\":13.001,\"pid\":1,\"tid\":0")
    EV("\"name\":\"inject\",\"cat\":\"pool\",\"ph\":\"i\",\"s\":\"t\",\"ts\":5.000,\"pid\":1,\"tid\":2000,\"args\":{\"tasks\":64}")
    EV("\"name\":\"inject\",\"cat\":\"pool\",\"ph\":\"i\",\"s\":\"t\",\"ts\":6.000,\"pid\":1,\"tid\":2000,\"args\":{\"tasks\":1}")
    EV("\"name\":\"sleep\",\"cat\":\"pool\",\"ph\":\"B\",\"ts\":8.000,\"pid\":1,\"tid\":1")
    EV("\"name\":\"sleep\",\"cat\":\"pool\",\"ph\":\"E\",\"ts\":12.600,\"pid\":1,\"tid\":1")
    EV("\"name\":\"steal\",\"cat\":\"pool\",\"ph\":\"i\",\"s\":\"t\",\"ts\":12.700,\"pid\":1,\"tid\":1,\"args\":{\"victim\":0}")
    EV("\"name\":\"job\",\"cat\":\"pool\",\"ph\":\"B\",\"ts\":12.800,\"pid\":1,\"tid\":1")
    EV("\"name\":\"job\",\"cat\":\"pool\",\"ph\":\"B\",\"ts\":13.000,\"pid\":1,\"tid\":1")
    EV("\"name\":\"job\",\"cat\":\"pool\",\"ph\":\"E\",\"ts\":13.500,\"pid\":1,\"tid\":1")
    EV("\"name\":\"job\",\"cat\":\"pool\",\"ph\":\"E\",\"ts\":14.000,\"pid\":1,\"tid\":1")
    EV("\"name\":\"blocking\",\"cat\":\"pool\",\"ph\":\"B\",\"ts\":9.000,\"pid\":1,\"tid\":1000")
    EV("\"name\":\"blocking\",\"cat\":\"pool\",\"ph\":\"E\",\"ts\":19.000,\"pid\":1,\"tid\":1000")
    LAST("\"name\":\"sleep\",\"cat\":\"pool\",\"ph\":\"B\",\"ts\":14.000,\"pid\":1,\"tid\":0")
    TAIL;

/* Everything trace_walk hands over, as text: one line per event. */
struct recorder {
    char text[4096];
    size_t len;
};

static int record(void *ctx, const struct trace_event *ev) {
    struct recorder *r = (struct recorder *)ctx;
    int n = snprintf(r->text + r->len, sizeof r->text - r->len, "%ld %s %c tid=%lld lane=%d %.3f-%.3f d%d%s%s\n",
                     ev->index, ev->name, ev->ph, (long long)ev->tid, ev->lane, ev->begin, ev->ts, ev->depth,
                     ev->orphan ? " orphan" : "", ev->unclosed ? " unclosed" : "");
    if (n > 0 && (size_t)n < sizeof r->text - r->len) r->len += (size_t)n;
    return 0;
}

static void test_trace_good(void) {
    struct trace_summary s;
    const struct trace_lane *l;
    struct recorder r;
    int rc = trace_check(good_trace, strlen(good_trace), &s, err, sizeof err);
    CHECK_MSG(rc == 0, "%.200s", err);
    if (rc != 0) return;
    trace_summary_print(&s, stdout);
    CHECK_EQ_I64(s.num_lanes, 4);
    CHECK_EQ_I64(s.events, 20);
    CHECK_EQ_I64(s.metadata, 4);
    CHECK(s.ts_min == 5.0 && s.ts_max == 19.0);
    /* lanes in order of first appearance */
    CHECK(s.lanes[0].tid == 0 && s.lanes[1].tid == 1 && s.lanes[2].tid == 1000 && s.lanes[3].tid == 2000);
    CHECK(strcmp(s.lanes[2].name, "pool-blk-0") == 0 && strcmp(s.lanes[3].name, "outside-0") == 0);
    l = trace_lane_find(&s, 1, 0);
    CHECK(l && strcmp(l->name, "pool-0") == 0);
    if (l) {
        CHECK_EQ_I64(l->events, 5);
        CHECK_EQ_I64(l->jobs, 1);
        CHECK_EQ_I64(l->wakes, 1);
        CHECK_EQ_I64(l->sleeps, 1);
        CHECK_EQ_I64(l->orphan_ends, 1);
        CHECK_EQ_I64(l->open_at_end, 1);
        CHECK(l->ts_min == 10.0 && l->ts_max == 14.0);
    }
    l = trace_lane_find(&s, 1, 1);
    CHECK(l && l->jobs == 2 && l->steals == 1 && l->sleeps == 1 && l->max_depth == 2 && l->open_at_end == 0);
    l = trace_lane_find(&s, 1, 2000);
    CHECK(l && l->injects == 2 && l->injected_tasks == 65 && l->events == 2);
    l = trace_lane_find(&s, 1, 1000);
    CHECK(l && l->blocking == 1);
    CHECK(trace_lane_find(&s, 2, 0) == NULL);
    CHECK(s.total.jobs == 3 && s.total.steals == 1 && s.total.wakes == 1 && s.total.injects == 2 &&
          s.total.sleeps == 2 && s.total.blocking == 1 && s.total.other == 0 && s.total.orphan_ends == 1 &&
          s.total.open_at_end == 1 && s.total.injected_tasks == 65 && s.total.max_depth == 2);
    trace_summary_free(&s);
    CHECK(s.lanes == NULL && s.num_lanes == 0);

    /* The walk pairs each E with its B; the sleep still open at the end
       comes last, ending at the trace's last timestamp. */
    memset(&r, 0, sizeof r);
    CHECK(trace_walk(good_trace, strlen(good_trace), 0, record, &r, NULL, err, sizeof err) == 0);
    printf("%s", r.text);
    CHECK(strstr(r.text, "4 job E tid=0 lane=0 10.000-10.000 d0 orphan\n") != NULL);
    CHECK(strstr(r.text, "7 job E tid=0 lane=0 12.345-13.001 d1\n") != NULL);
    CHECK(strstr(r.text, "14 job B tid=1 lane=1 13.000-13.000 d2\n") != NULL);
    CHECK(strstr(r.text, "15 job E tid=1 lane=1 13.000-13.500 d2\n") != NULL);
    CHECK(strstr(r.text, "16 job E tid=1 lane=1 12.800-14.000 d1\n") != NULL);
    CHECK(strstr(r.text, "12 steal i tid=1 lane=1 12.700-12.700 d0\n") != NULL);
    CHECK(strstr(r.text, "-1 sleep E tid=0 lane=0 14.000-19.000 d1 unclosed\n") != NULL);
    CHECK(strstr(r.text, "0 thread_name M tid=0 lane=0") == r.text);

    /* A writer that never drops events can ask for every E to match. */
    CHECK(trace_walk(good_trace, strlen(good_trace), TRACE_NO_ORPHANS, NULL, NULL, NULL, err, sizeof err) != 0);
    CHECK_MSG(strstr(err, "traceEvents[4] \"job\" (E, tid 0): unbalanced E: no B is open on this lane") != NULL,
              "%.200s", err);
}

static void test_trace_other_forms(void) {
    struct trace_summary s;
    /* An empty trace; other top-level members; unknown names and
       metadata; X, I and C events; lanes of two processes; lanes may
       interleave with their clocks apart. */
    static const char other[] =
        "{\"traceEvents\":[],\"otherData\":{\"version\":[1,2]},\"displayTimeUnit\":\"ms\"}";
    static const char mixed[] =
        "{\"traceEvents\":[\n"
        EV("\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"demo\"}")
        EV("\"name\":\"frobnicate\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":5")
        EV("\"name\":\"job\",\"ph\":\"X\",\"ts\":2,\"dur\":3.5,\"pid\":1,\"tid\":5")
        EV("\"name\":\"frobnicate\",\"ph\":\"E\",\"ts\":7,\"pid\":1,\"tid\":5")
        EV("\"name\":\"tick\",\"ph\":\"I\",\"ts\":0.5,\"pid\":2,\"tid\":5")
        EV("\"name\":\"steal\",\"ph\":\"I\",\"ts\":0.75,\"pid\":2,\"tid\":5,\"args\":{\"victim\":3}")
        EV("\"name\":\"queue\",\"ph\":\"C\",\"ts\":1e1,\"pid\":2,\"tid\":5,\"args\":{\"depth\":4}")
        LAST("\"name\":\"job\",\"ph\":\"X\",\"ts\":20,\"dur\":0,\"pid\":1,\"tid\":5")
        "]}";
    CHECK_MSG(trace_check(other, strlen(other), &s, err, sizeof err) == 0, "%.200s", err);
    CHECK(s.num_lanes == 0 && s.events == 0 && s.ts_min == 0 && s.ts_max == 0);
    trace_summary_free(&s);
    CHECK_MSG(trace_check(mixed, strlen(mixed), &s, err, sizeof err) == 0, "%.200s", err);
    if (s.num_lanes == 2) {
        CHECK(s.lanes[0].pid == 1 && s.lanes[0].jobs == 2 && s.lanes[0].other == 1 && s.lanes[0].max_depth == 2);
        CHECK(s.lanes[0].ts_max == 20 && s.lanes[0].events == 4);
        CHECK(s.lanes[1].pid == 2 && s.lanes[1].other == 2 && s.lanes[1].steals == 1);
        CHECK(s.ts_min == 0.5 && s.ts_max == 20);
        CHECK(s.lanes[0].name[0] == 0); /* process_name names no thread */
    } else {
        CHECK_EQ_I64(s.num_lanes, 2);
    }
    trace_summary_free(&s);
}

/* The trace `text` is rejected with a message containing `want`. */
static void bad_trace_n(const char *text, const char *want, int line) {
    struct trace_summary s;
    int rc = trace_check(text, strlen(text), &s, err, sizeof err);
    CHECK_MSG(rc != 0, "line %d: accepted", line);
    CHECK_MSG(strstr(err, want) != NULL, "line %d: \"%.60s\" not in \"%.150s\"", line, want, err);
    CHECK_MSG(s.lanes == NULL && s.num_lanes == 0, "line %d: summary not zeroed", line);
    if (rc == 0) trace_summary_free(&s);
    else printf("  rejected as expected: %s\n", err);
}
#define BAD_TRACE(text, want) bad_trace_n(text, want, __LINE__)
#define ONE(ev) HEAD LAST(ev) TAIL
#define JOB_B(ts, tid) "\"name\":\"job\",\"ph\":\"B\",\"ts\":" #ts ",\"pid\":1,\"tid\":" #tid
#define JOB_E(ts, tid) "\"name\":\"job\",\"ph\":\"E\",\"ts\":" #ts ",\"pid\":1,\"tid\":" #tid

static void test_trace_bad(void) {
    char many[64 * (TRACE_MAX_OPEN + 2) + 64], *o = many;
    int i;
    size_t cut;

    /* the frame */
    BAD_TRACE("[]", "the top level must be an object with a \"traceEvents\" array");
    BAD_TRACE("{\"events\":[]}", "no \"traceEvents\" array");
    BAD_TRACE("{\"traceEvents\":{}}", "\"traceEvents\" is not an array");
    BAD_TRACE("{\"traceEvents\":[],\"traceEvents\":[]}", "duplicate key \"traceEvents\"");
    BAD_TRACE("{\"traceEvents\":[],\"displayTimeUnit\":\"s\"}", "\"displayTimeUnit\" must be \"ms\" or \"ns\"");
    BAD_TRACE("{\"traceEvents\":[1]}", "traceEvents[0]: not an object");
    BAD_TRACE("", "empty input");
    /* JSON faults inside a trace */
    BAD_TRACE(HEAD EV(JOB_B(1, 0)) TAIL, "line 3, column 1: trailing comma in an array");
    BAD_TRACE(HEAD EV(JOB_B(1, 0)) "{\"name\":\"job\",\"ph\":\"E\",\"ts\":2,\"pid\":1,\"tid\":0,}" TAIL,
              "trailing comma in an object");
    BAD_TRACE(ONE("\"name\":\"jo\\b\\x\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":0"), "bad escape in a string: 'x'");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"ts\":1,\"ts\":2,\"pid\":1,\"tid\":0"), "duplicate key \"ts\"");
    /* truncated anywhere: every prefix of a good trace is rejected */
    for (cut = 0; cut < strlen(good_trace) - 1; cut++) {
        struct trace_summary s;
        if (trace_check(good_trace, cut, &s, err, sizeof err) == 0) {
            CHECK_MSG(0, "the first %zu bytes were accepted", cut);
            trace_summary_free(&s);
            break;
        }
        if (cut > 0 && !strstr(err, "truncated?")) {
            CHECK_MSG(0, "cut at %zu: %.200s", cut, err);
            break;
        }
    }
    BAD_TRACE(HEAD EV(JOB_B(1, 0)), "unexpected end of input in an array (truncated?)");
    /* missing or mistyped fields */
    BAD_TRACE(ONE("\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":0"), "traceEvents[0]: missing \"name\"");
    BAD_TRACE(ONE("\"name\":7,\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":0"), "\"name\" is not a string");
    BAD_TRACE(ONE("\"name\":\"job\",\"ts\":1,\"pid\":1,\"tid\":0"), "traceEvents[0] \"job\": missing \"ph\"");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"Q\",\"ts\":1,\"pid\":1,\"tid\":0"), "\"ph\" must be one of B E X i I M C");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"BE\",\"ts\":1,\"pid\":1,\"tid\":0"), "\"ph\" must be one of");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"pid\":1,\"tid\":0"), "traceEvents[0] \"job\" (B, tid 0): missing \"ts\"");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"ts\":\"1\",\"pid\":1,\"tid\":0"), "\"ts\" is not a number");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"ts\":1,\"tid\":0"), "missing \"pid\"");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"ts\":1,\"pid\":1"), "missing \"tid\"");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":0.5"), "\"tid\" is not an integer");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":1e2"), "\"tid\" is not an integer");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"ts\":1,\"pid\":\"1\",\"tid\":0"), "\"pid\" is not an integer");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":0,\"cat\":1"), "\"cat\" is not a string");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"B\",\"ts\":1,\"pid\":1,\"tid\":0,\"args\":[]"), "\"args\" is not an object");
    BAD_TRACE(ONE("\"name\":\"x\",\"ph\":\"i\",\"s\":\"q\",\"ts\":1,\"pid\":1,\"tid\":0"), "\"s\" must be \"g\", \"p\" or \"t\"");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"X\",\"ts\":1,\"pid\":1,\"tid\":0"), "missing \"dur\"");
    BAD_TRACE(ONE("\"name\":\"job\",\"ph\":\"X\",\"ts\":1,\"dur\":-1,\"pid\":1,\"tid\":0"), "negative \"dur\"");
    BAD_TRACE(ONE("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0"), "needs a string \"args\".\"name\"");
    BAD_TRACE(ONE("\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":3}"),
              "needs a string \"args\".\"name\"");
    BAD_TRACE(ONE("\"name\":\"steal\",\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":0"), "(i, tid 0): missing \"args\"");
    BAD_TRACE(ONE("\"name\":\"steal\",\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":0,\"args\":{}"), "missing \"victim\"");
    BAD_TRACE(ONE("\"name\":\"wake\",\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":0,\"args\":{\"worker\":\"1\"}"),
              "\"worker\" is not an integer");
    BAD_TRACE(ONE("\"name\":\"inject\",\"ph\":\"i\",\"ts\":1,\"pid\":1,\"tid\":0,\"args\":{\"tasks\":-2}"),
              "inject of -2 tasks");
    /* order and nesting */
    BAD_TRACE(HEAD EV(JOB_B(2, 0)) LAST(JOB_E(1.999, 0)) TAIL,
              "traceEvents[1] \"job\" (E, tid 0): ts 1.999 goes backwards (the lane's previous event is at 2.000)");
    BAD_TRACE(HEAD EV("\"name\":\"wake\",\"ph\":\"i\",\"ts\":5,\"pid\":1,\"tid\":3,\"args\":{\"worker\":0}")
                  LAST("\"name\":\"wake\",\"ph\":\"i\",\"ts\":4,\"pid\":1,\"tid\":3,\"args\":{\"worker\":0}") TAIL,
              "ts 4.000 goes backwards");
    BAD_TRACE(HEAD EV(JOB_B(1, 0)) LAST("\"name\":\"sleep\",\"ph\":\"E\",\"ts\":2,\"pid\":1,\"tid\":0") TAIL,
              "traceEvents[1] \"sleep\" (E, tid 0): unbalanced E: the innermost open span is \"job\" (B at ts 1.000)");
    BAD_TRACE(HEAD EV(JOB_B(1, 0)) EV("\"name\":\"sleep\",\"ph\":\"B\",\"ts\":2,\"pid\":1,\"tid\":0")
                  LAST(JOB_E(3, 0)) TAIL,
              "unbalanced E: the innermost open span is \"sleep\"");
    /* a B on another lane does not open anything here */
    BAD_TRACE(HEAD EV(JOB_B(1, 0)) EV(JOB_B(1, 1)) EV("\"name\":\"sleep\",\"ph\":\"B\",\"ts\":2,\"pid\":1,\"tid\":0")
                  LAST(JOB_E(3, 0)) TAIL,
              "unbalanced E");

    /* A bounded number of spans may stay open: one more is an error. */
    o += sprintf(o, "%s", HEAD);
    for (i = 0; i < TRACE_MAX_OPEN; i++) o += sprintf(o, "{" JOB_B(1, 0) "},\n");
    o += sprintf(o, "{" JOB_B(2, 0) "}\n%s", TAIL);
    BAD_TRACE(many, "tid 0: 129 spans left open at the end (at most 128)");
    o = many + strlen(many) - strlen("{" JOB_B(2, 0) "}\n" TAIL);
    o[-2] = '\n', o[-1] = 0; /* drop the last B and its comma */
    strcat(many, TAIL);
    {
        struct trace_summary s;
        CHECK_MSG(trace_check(many, strlen(many), &s, err, sizeof err) == 0, "%.200s", err);
        CHECK(s.num_lanes == 1 && s.lanes[0].open_at_end == TRACE_MAX_OPEN && s.lanes[0].max_depth == TRACE_MAX_OPEN);
        trace_summary_free(&s);
    }
}

/* clang-format on */

int main(void) {
    test_watchdog(60, "test_trace_json");
    test_json_values();
    test_json_strings();
    test_json_limits();
    test_json_bad();
    test_trace_good();
    test_trace_other_forms();
    test_trace_bad();
    return test_finish("test_trace_json");
}
