/* trace_json.h - a strict JSON parser and a checker for the Chrome trace
 * event files that pool_trace_write() writes (POOL_TRACE).
 *
 * C99 and libc only, everything static: include it in one .c file. It
 * lives beside trace2svg.c, the tool that checks a trace with it before it
 * draws one; the tests include it from here (tests/test_trace_json.c
 * checks the checker, and the tests of a real trace use it).
 *
 * JSON (RFC 8259, nothing more): objects, arrays, strings with every escape
 * (a \u escape of a UTF-16 surrogate must be half of a pair), numbers in the
 * RFC's grammar only, true, false, null; whitespace is space, tab, CR, LF.
 * Rejected with a message that says where ("line L, column C: ..."): a
 * truncated text, a trailing comma, a bad escape, a raw control character
 * or invalid UTF-8 in a string, a leading zero, a number too large for a
 * double, a duplicate key, a byte order mark, nesting deeper than
 * TJ_MAX_DEPTH, anything after the value.
 *
 *   tj_doc doc;
 *   if (tj_parse(text, len, &doc, err, sizeof err) == 0) {
 *       const tj_value *v = tj_get(doc.root, "traceEvents");
 *       ...
 *       tj_free(&doc);
 *   }
 *
 * Traces. trace_check(json, len, &summary, err, errlen) returns 0 for a
 * valid trace and fills the summary (free it with trace_summary_free), or
 * nonzero with a message in err and the summary zeroed. Valid means:
 *   - the top level is an object with a "traceEvents" array (other members
 *     are allowed; "displayTimeUnit", if present, is "ms" or "ns");
 *   - every event is an object with a string "name", a "ph" among B E X i I
 *     M C, integer "pid" and "tid", a numeric "ts" (not needed for M), a
 *     "dur" >= 0 for X; "cat" a string, "s" one of g p t and "args" an
 *     object where present; the events pool.h writes carry their arguments:
 *     steal {"victim": int}, wake {"worker": int}, inject {"tasks": int},
 *     thread_name {"name": string};
 *   - on each lane (pid, tid), ts never decreases, and every E closes the
 *     innermost open B, which must have the same name. An E while nothing
 *     is open is the end of a span whose B was dropped when the writer's
 *     ring buffer overflowed (the oldest events go first, so such a span
 *     began before the lane's first event): it is counted in orphan_ends,
 *     or rejected with TRACE_NO_ORPHANS. At most TRACE_MAX_OPEN spans per
 *     lane may still be open at the end (a worker asleep when the trace was
 *     written has one); they are counted in open_at_end.
 * Unknown event names are counted under `other` and are no error.
 *
 * trace_walk() does the same and also hands every event to a callback,
 * with its span already paired: an E (or an X) comes with the time its
 * span began and its nesting depth, and after the last event every span
 * still open is handed over once more as an E with `unclosed` set and the
 * trace's last timestamp. That is what a renderer needs.
 */
#ifndef POOL_TRACE_JSON_H
#define POOL_TRACE_JSON_H

#include <float.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define TJ__UNUSED __attribute__((unused))
#else
#define TJ__UNUSED
#endif

#ifndef TJ_MAX_DEPTH
#define TJ_MAX_DEPTH 256 /* nested arrays and objects */
#endif
#ifndef TRACE_MAX_OPEN
#define TRACE_MAX_OPEN 128 /* spans a lane may leave open at the end */
#endif

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum { TJ_NULL, TJ_FALSE, TJ_TRUE, TJ_NUMBER, TJ_STRING, TJ_ARRAY, TJ_OBJECT } tj_type;

typedef struct tj_value tj_value;
struct tj_value {
    tj_type type;
    int is_integer;     /* NUMBER written without fraction or exponent */
    double number;      /* NUMBER */
    const char *string; /* STRING: decoded UTF-8, NUL-terminated (may hold \u0000) */
    size_t length;      /* STRING: bytes; ARRAY, OBJECT: elements */
    const char *key;    /* a member of an OBJECT: its decoded key */
    size_t key_length;
    tj_value *first; /* ARRAY, OBJECT: the first element or member */
    tj_value *next;  /* the next element or member of the parent */
};

/* Nodes and strings come from blocks; rewinding frees whole blocks. */
typedef struct tj__block {
    struct tj__block *prev;
    size_t used, size;
    double align[1]; /* the data starts here, suitably aligned */
} tj__block;

typedef struct tj_doc {
    tj_value *root;
    tj__block *blocks; /* private */
} tj_doc;

static void *tj__alloc(tj__block **blocks, size_t n) {
    tj__block *b = *blocks;
    n = (n + 15) & ~(size_t)15;
    if (!b || b->size - b->used < n) {
        size_t size = n > 65536 ? n : 65536;
        b = (tj__block *)malloc(offsetof(tj__block, align) + size);
        if (!b) return NULL;
        b->prev = *blocks;
        b->used = 0;
        b->size = size;
        *blocks = b;
    }
    b->used += n;
    return (char *)b->align + b->used - n;
}

/* Frees every block allocated after `mark` (a *blocks seen earlier) and
   empties `mark` from `used` on. */
static void tj__rewind(tj__block **blocks, tj__block *mark, size_t used) {
    while (*blocks && *blocks != mark) {
        tj__block *prev = (*blocks)->prev;
        free(*blocks);
        *blocks = prev;
    }
    if (*blocks) (*blocks)->used = used;
}

TJ__UNUSED static void tj_free(tj_doc *doc) {
    tj__rewind(&doc->blocks, NULL, 0);
    doc->root = NULL;
}

/* The member `key` of an object, or NULL (also when obj is no object). */
TJ__UNUSED static const tj_value *tj_get(const tj_value *obj, const char *key) {
    const tj_value *m;
    size_t n = strlen(key);
    if (!obj || obj->type != TJ_OBJECT) return NULL;
    for (m = obj->first; m; m = m->next)
        if (m->key_length == n && memcmp(m->key, key, n) == 0) return m;
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct tj__parser tj__parser;
/* Called for each element of an array parsed with it; the element's memory
   is reused after the call. Nonzero stops the parse (err already set). */
typedef int (*tj__each_fn)(tj__parser *ps, tj_value *elem, void *ctx);
/* Parses the value of one object member itself (see tj__object). */
typedef int (*tj__member_fn)(tj__parser *ps, const char *key, size_t key_length, tj_value *out,
                             void *ctx);

struct tj__parser {
    const char *begin, *p, *end;
    tj__block *blocks;
    char *err;
    size_t errlen;
    int depth;
    const char *elem_start; /* where the element handed to an each_fn began */
};

/* Line and column (1-based, in bytes) of `at`. */
static void tj__where(const tj__parser *ps, const char *at, long *line, long *col) {
    const char *q, *bol = ps->begin;
    *line = 1;
    for (q = ps->begin; q < at; q++)
        if (*q == '\n') ++*line, bol = q + 1;
    *col = (long)(at - bol) + 1;
}

static int tj__fail(tj__parser *ps, const char *at, const char *fmt, ...) {
    va_list ap;
    long line, col;
    int n;
    if (!ps->err || ps->errlen == 0) return -1;
    tj__where(ps, at, &line, &col);
    n = snprintf(ps->err, ps->errlen, "line %ld, column %ld: ", line, col);
    if (n >= 0 && (size_t)n < ps->errlen) {
        va_start(ap, fmt);
        vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* "'x'" for a printable character, "byte 0xNN" otherwise. */
static const char *tj__show(char c, char buf[16]) {
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7f) snprintf(buf, 16, "'%c'", c);
    else snprintf(buf, 16, "byte 0x%02x", u);
    return buf;
}

static int tj__at_end(const tj__parser *ps) { return ps->p >= ps->end; }

static void tj__ws(tj__parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int tj__truncated(tj__parser *ps, const char *in) {
    return tj__fail(ps, ps->p, "unexpected end of input in %s (truncated?)", in);
}

static int tj__value(tj__parser *ps, tj_value *v);

static tj_value *tj__node(tj__parser *ps) {
    tj_value *v = (tj_value *)tj__alloc(&ps->blocks, sizeof *v);
    if (!v) {
        tj__fail(ps, ps->p, "out of memory");
        return NULL;
    }
    memset(v, 0, sizeof *v);
    return v;
}

static int tj__hex4(const char *s, unsigned *out) {
    int i;
    *out = 0;
    for (i = 0; i < 4; i++) {
        char c = s[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16) return -1;
        *out = *out * 16 + d;
    }
    return 0;
}

static char *tj__put_utf8(char *o, unsigned cp) {
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    return o;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0: no
   overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t tj__utf8_len(const unsigned char *s, size_t n) {
    size_t len, i;
    unsigned cp, min;
    if (s[0] < 0x80) return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf) len = 2, cp = s[0] & 0x1fu, min = 0x80;
    else if (s[0] >= 0xe0 && s[0] <= 0xef) len = 3, cp = s[0] & 0x0fu, min = 0x800;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4) len = 4, cp = s[0] & 0x07u, min = 0x10000;
    else return 0;
    if (len > n) return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

/* A string at ps->p (the opening quote), decoded into new memory. */
static int tj__string(tj__parser *ps, const char **out, size_t *out_len) {
    const char *s = ++ps->p, *q = s;
    char *buf, *o, c[16];
    /* Find the closing quote first: the decoded text is never longer. */
    while (q < ps->end && *q != '"') q += *q == '\\' ? 2 : 1;
    if (q >= ps->end) {
        ps->p = ps->end;
        return tj__truncated(ps, "a string");
    }
    if (!(buf = (char *)tj__alloc(&ps->blocks, (size_t)(q - s) + 1)))
        return tj__fail(ps, s, "out of memory");
    for (o = buf; s < q;) {
        unsigned char u = (unsigned char)*s;
        if (u < 0x20)
            return tj__fail(ps, s, "raw control character 0x%02x in a string (escape it)", u);
        if (u >= 0x80) {
            size_t n = tj__utf8_len((const unsigned char *)s, (size_t)(q - s));
            if (n == 0) return tj__fail(ps, s, "invalid UTF-8 in a string");
            memcpy(o, s, n), o += n, s += n;
            continue;
        }
        if (u != '\\') {
            *o++ = *s++;
            continue;
        }
        switch (s[1]) {
        case '"':
            *o++ = '"';
            break;
        case '\\':
            *o++ = '\\';
            break;
        case '/':
            *o++ = '/';
            break;
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'u': {
            unsigned cp, lo;
            if (q - s < 6 || tj__hex4(s + 2, &cp) != 0)
                return tj__fail(ps, s, "bad \\u escape: 4 hex digits must follow");
            if (cp >= 0xdc00 && cp <= 0xdfff)
                return tj__fail(ps, s, "bad \\u escape: a low surrogate \\u%04x without a high one",
                                cp);
            if (cp >= 0xd800 && cp <= 0xdbff) {
                if (q - s < 12 || s[6] != '\\' || s[7] != 'u' || tj__hex4(s + 8, &lo) != 0 ||
                    lo < 0xdc00 || lo > 0xdfff)
                    return tj__fail(
                        ps, s, "bad \\u escape: high surrogate \\u%04x not followed by a low one",
                        cp);
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                s += 6;
            }
            o = tj__put_utf8(o, cp);
            s += 4;
            break;
        }
        default:
            return tj__fail(ps, s, "bad escape in a string: %s after '\\'", tj__show(s[1], c));
        }
        s += 2;
    }
    *o = 0;
    *out = buf;
    *out_len = (size_t)(o - buf);
    ps->p = q + 1;
    return 0;
}

static int tj__digits(tj__parser *ps) {
    const char *start = ps->p;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') ps->p++;
    return ps->p > start;
}

static int tj__number(tj__parser *ps, tj_value *v) {
    const char *start = ps->p;
    char small[64], *text = small;
    size_t n;
    v->type = TJ_NUMBER;
    v->is_integer = 1;
    if (*ps->p == '-') ps->p++;
    if (tj__at_end(ps)) return tj__truncated(ps, "a number");
    if (*ps->p == '0') {
        ps->p++;
        if (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
            return tj__fail(ps, start, "bad number: leading zero");
    } else if (!tj__digits(ps)) {
        return tj__fail(ps, ps->p, "bad number: a digit must follow '-'");
    }
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        v->is_integer = 0;
        if (tj__at_end(ps)) return tj__truncated(ps, "a number");
        if (!tj__digits(ps)) return tj__fail(ps, ps->p, "bad number: a digit must follow '.'");
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        v->is_integer = 0;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
        if (tj__at_end(ps)) return tj__truncated(ps, "a number");
        if (!tj__digits(ps)) return tj__fail(ps, ps->p, "bad number: the exponent has no digits");
    }
    /* strtod wants a terminated string ("C" locale: the decimal point is '.'). */
    n = (size_t)(ps->p - start);
    if (n >= sizeof small && !(text = (char *)tj__alloc(&ps->blocks, n + 1)))
        return tj__fail(ps, start, "out of memory");
    memcpy(text, start, n);
    text[n] = 0;
    v->number = strtod(text, NULL);
    if (v->number > DBL_MAX || v->number < -DBL_MAX)
        return tj__fail(ps, start, "number out of range: %s", text);
    return 0;
}

static int tj__literal(tj__parser *ps, const char *word, tj_type type, tj_value *v) {
    size_t n = strlen(word), have = (size_t)(ps->end - ps->p);
    char c[16];
    if (have < n && memcmp(ps->p, word, have) == 0) {
        ps->p = ps->end;
        return tj__truncated(ps, word);
    }
    if (have < n || memcmp(ps->p, word, n) != 0)
        return tj__fail(ps, ps->p, "unexpected %s, expected a value", tj__show(*ps->p, c));
    ps->p += n;
    v->type = type;
    return 0;
}

static int tj__enter(tj__parser *ps) {
    if (++ps->depth > TJ_MAX_DEPTH)
        return tj__fail(ps, ps->p, "nesting deeper than %d", TJ_MAX_DEPTH);
    ps->p++; /* the '[' or '{' */
    tj__ws(ps);
    return 0;
}

/* After an element or member: 1 at the closing bracket, 0 after a comma
   (with another element to come), -1 on an error. */
static int tj__after_item(tj__parser *ps, char close, const char *what) {
    char c[16];
    tj__ws(ps);
    if (tj__at_end(ps)) return tj__truncated(ps, what);
    if (*ps->p == close) {
        ps->p++;
        ps->depth--;
        return 1;
    }
    if (*ps->p != ',')
        return tj__fail(ps, ps->p, "expected ',' or '%c' in %s, found %s", close, what,
                        tj__show(*ps->p, c));
    ps->p++;
    tj__ws(ps);
    if (tj__at_end(ps)) return tj__truncated(ps, what);
    if (*ps->p == close) return tj__fail(ps, ps->p, "trailing comma in %s", what);
    return 0;
}

/* An array; with `each`, every element is handed to it and then freed. */
static int tj__array(tj__parser *ps, tj_value *v, tj__each_fn each, void *ctx) {
    tj_value **tail = &v->first, local;
    int rc;
    v->type = TJ_ARRAY;
    if (tj__enter(ps) != 0) return -1;
    if (tj__at_end(ps)) return tj__truncated(ps, "an array");
    if (*ps->p == ']') {
        ps->p++;
        ps->depth--;
        return 0;
    }
    do {
        if (each) {
            tj__block *mark = ps->blocks;
            size_t used = mark ? mark->used : 0;
            memset(&local, 0, sizeof local);
            ps->elem_start = ps->p;
            rc = tj__value(ps, &local) != 0 || each(ps, &local, ctx) != 0 ? -1 : 0;
            tj__rewind(&ps->blocks, mark, used);
            if (rc != 0) return -1;
        } else {
            tj_value *e = tj__node(ps);
            if (!e || tj__value(ps, e) != 0) return -1;
            *tail = e;
            tail = &e->next;
        }
        v->length++;
    } while ((rc = tj__after_item(ps, ']', "an array")) == 0);
    return rc < 0 ? -1 : 0;
}

/* An object; with `member`, each member's value is parsed by it. */
static int tj__object(tj__parser *ps, tj_value *v, tj__member_fn member, void *ctx) {
    tj_value **tail = &v->first, *m, *o;
    char c[16];
    int rc;
    v->type = TJ_OBJECT;
    if (tj__enter(ps) != 0) return -1;
    if (tj__at_end(ps)) return tj__truncated(ps, "an object");
    if (*ps->p == '}') {
        ps->p++;
        ps->depth--;
        return 0;
    }
    do {
        const char *key_at = ps->p;
        if (*ps->p != '"')
            return tj__fail(ps, ps->p, "expected a string key in an object, found %s",
                            tj__show(*ps->p, c));
        if (!(m = tj__node(ps)) || tj__string(ps, &m->key, &m->key_length) != 0) return -1;
        for (o = v->first; o; o = o->next)
            if (o->key_length == m->key_length && memcmp(o->key, m->key, m->key_length) == 0)
                return tj__fail(ps, key_at, "duplicate key \"%s\" in an object", m->key);
        tj__ws(ps);
        if (tj__at_end(ps)) return tj__truncated(ps, "an object");
        if (*ps->p != ':')
            return tj__fail(ps, ps->p, "expected ':' after a key, found %s", tj__show(*ps->p, c));
        ps->p++;
        rc = member ? member(ps, m->key, m->key_length, m, ctx) : tj__value(ps, m);
        if (rc != 0) return -1;
        *tail = m;
        tail = &m->next;
        v->length++;
    } while ((rc = tj__after_item(ps, '}', "an object")) == 0);
    return rc < 0 ? -1 : 0;
}

static int tj__value(tj__parser *ps, tj_value *v) {
    char c[16];
    tj__ws(ps);
    if (tj__at_end(ps))
        return tj__fail(ps, ps->p, "unexpected end of input, expected a value (truncated?)");
    switch (*ps->p) {
    case '{':
        return tj__object(ps, v, NULL, NULL);
    case '[':
        return tj__array(ps, v, NULL, NULL);
    case '"':
        v->type = TJ_STRING;
        return tj__string(ps, &v->string, &v->length);
    case 't':
        return tj__literal(ps, "true", TJ_TRUE, v);
    case 'f':
        return tj__literal(ps, "false", TJ_FALSE, v);
    case 'n':
        return tj__literal(ps, "null", TJ_NULL, v);
    default:
        if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) return tj__number(ps, v);
        return tj__fail(ps, ps->p, "unexpected %s, expected a value", tj__show(*ps->p, c));
    }
}

static void tj__init(tj__parser *ps, const char *text, size_t len, char *err, size_t errlen) {
    memset(ps, 0, sizeof *ps);
    ps->begin = ps->p = text;
    ps->end = text + len;
    ps->err = err;
    ps->errlen = errlen;
    if (err && errlen) err[0] = 0;
}

/* The start of a text: no byte order mark, not empty. */
static int tj__start(tj__parser *ps) {
    if (ps->end - ps->p >= 3 && memcmp(ps->p, "\xef\xbb\xbf", 3) == 0)
        return tj__fail(ps, ps->p, "byte order mark at the start (not allowed in JSON)");
    tj__ws(ps);
    if (tj__at_end(ps)) return tj__fail(ps, ps->p, "empty input");
    return 0;
}

static int tj__finish(tj__parser *ps) {
    char c[16];
    tj__ws(ps);
    if (!tj__at_end(ps))
        return tj__fail(ps, ps->p, "unexpected %s after the JSON value", tj__show(*ps->p, c));
    return 0;
}

/* Parses a whole JSON text. 0: doc->root is the value (free with tj_free);
   -1: err says why, nothing to free. */
TJ__UNUSED static int tj_parse(const char *text, size_t len, tj_doc *doc, char *err,
                               size_t errlen) {
    tj__parser ps;
    tj__init(&ps, text, len, err, errlen);
    doc->root = NULL;
    doc->blocks = NULL;
    if (tj__start(&ps) != 0 || !(doc->root = tj__node(&ps)) || tj__value(&ps, doc->root) != 0 ||
        tj__finish(&ps) != 0) {
        doc->blocks = ps.blocks;
        tj_free(doc);
        return -1;
    }
    doc->blocks = ps.blocks;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Traces                                                                   */
/* ------------------------------------------------------------------------ */

#define TRACE_NO_ORPHANS 1u /* trace_walk flag: every E must close a B */

struct trace_lane {
    int64_t pid, tid;
    char name[64];               /* from its thread_name event; "" if none */
    long events;                 /* events other than M */
    long jobs;                   /* spans named "job" (B or X) */
    long sleeps;                 /* spans named "sleep" */
    long blocking;               /* spans named "blocking" */
    long steals, wakes, injects; /* instant events of these names */
    long injected_tasks;         /* the sum of the injects' "tasks" */
    long other;                  /* B, X, i, I and C events of any other name */
    long orphan_ends;            /* E with no B (dropped by the writer) */
    long open_at_end;            /* B never closed */
    int max_depth;               /* deepest nesting of spans */
    double ts_min, ts_max;
};

struct trace_summary {
    int num_lanes;
    struct trace_lane *lanes; /* in order of first appearance */
    long events;              /* in traceEvents, M included */
    long metadata;            /* M events */
    struct trace_lane total;  /* every count summed (pid, tid, name: unused) */
    double ts_min, ts_max;    /* over every timed event; 0 if there is none */
};

/* One event, as trace_walk hands it to its callback. Pointers are valid
   during the call only. */
struct trace_event {
    long index; /* position in traceEvents; -1 for a span left open */
    const char *name;
    char ph; /* 'B' 'E' 'X' 'i' 'I' 'M' 'C' */
    int64_t pid, tid;
    int lane;             /* index into the summary's lanes; -1 for metadata
                             other than thread_name */
    double ts;            /* microseconds; X: its end (ts + dur); M: 0 */
    double begin;         /* E, X: when the span began; B: ts */
    int depth;            /* B, E, X: the span's nesting depth, 1 = outermost;
                             others: how many spans are open around it */
    int orphan;           /* E closing a B that was dropped (depth 0) */
    int unclosed;         /* E made up for a span still open at the end;
                             ts is the trace's last timestamp */
    const tj_value *args; /* the "args" object, or NULL */
};

typedef int (*trace_handler)(void *ctx, const struct trace_event *ev);

struct trace__open {
    char *name;
    double ts;
};

struct trace__lane_state {
    struct trace__open *stack;
    int depth, cap;
    int timed; /* has a timed event: last_ts is valid */
    double last_ts;
};

struct trace__walk {
    struct trace_summary *sum;
    struct trace__lane_state *state; /* parallel to sum->lanes */
    int cap;
    int *slots; /* hash of (pid, tid) -> lane index + 1 */
    size_t nslots;
    trace_handler fn;
    void *ctx;
    unsigned flags;
    int have_events;
    long index;
};

TJ__UNUSED static void trace_summary_free(struct trace_summary *s) {
    free(s->lanes);
    memset(s, 0, sizeof *s);
}

static size_t trace__hash(int64_t pid, int64_t tid, size_t nslots) {
    uint64_t h = (uint64_t)pid * 0x9e3779b97f4a7c15u ^ (uint64_t)tid * 0xc2b2ae3d27d4eb4fu;
    return (size_t)(h ^ h >> 29) & (nslots - 1);
}

/* The lane (pid, tid), made on first sight; -1 when out of memory. */
static int trace__lane(struct trace__walk *w, int64_t pid, int64_t tid) {
    struct trace_summary *s = w->sum;
    size_t i;
    int k;
    if ((size_t)s->num_lanes * 2 >= w->nslots) { /* grow the hash */
        size_t n = w->nslots ? w->nslots * 2 : 64;
        int *slots = (int *)calloc(n, sizeof *slots);
        if (!slots) return -1;
        for (k = 0; k < s->num_lanes; k++) {
            for (i = trace__hash(s->lanes[k].pid, s->lanes[k].tid, n); slots[i];
                 i = (i + 1) & (n - 1)) {
            }
            slots[i] = k + 1;
        }
        free(w->slots);
        w->slots = slots;
        w->nslots = n;
    }
    for (i = trace__hash(pid, tid, w->nslots); w->slots[i]; i = (i + 1) & (w->nslots - 1)) {
        k = w->slots[i] - 1;
        if (s->lanes[k].pid == pid && s->lanes[k].tid == tid) return k;
    }
    if (s->num_lanes == w->cap) {
        int cap = w->cap ? w->cap * 2 : 16;
        void *lanes = realloc(s->lanes, (size_t)cap * sizeof *s->lanes);
        if (!lanes) return -1;
        s->lanes = (struct trace_lane *)lanes;
        lanes = realloc(w->state, (size_t)cap * sizeof *w->state);
        if (!lanes) return -1;
        w->state = (struct trace__lane_state *)lanes;
        w->cap = cap;
    }
    k = s->num_lanes++;
    memset(&s->lanes[k], 0, sizeof s->lanes[k]);
    memset(&w->state[k], 0, sizeof w->state[k]);
    s->lanes[k].pid = pid;
    s->lanes[k].tid = tid;
    w->slots[i] = k + 1;
    return k;
}

static int trace__is(const tj_value *v, const char *s) {
    return v && v->type == TJ_STRING && v->length == strlen(s) &&
           memcmp(v->string, s, v->length) == 0;
}

/* An integer member (an integer-valued number within +-2^53), or an error. */
static int trace__int(tj__parser *ps, const char *where, const tj_value *obj, const char *key,
                      int64_t *out) {
    const tj_value *v = tj_get(obj, key);
    if (!v) return tj__fail(ps, ps->elem_start, "%s: missing \"%s\"", where, key);
    if (v->type != TJ_NUMBER || !v->is_integer || v->number > 9007199254740992.0 ||
        v->number < -9007199254740992.0)
        return tj__fail(ps, ps->elem_start, "%s: \"%s\" is not an integer", where, key);
    *out = (int64_t)v->number;
    return 0;
}

static int trace__number(tj__parser *ps, const char *where, const tj_value *obj, const char *key,
                         double *out) {
    const tj_value *v = tj_get(obj, key);
    if (!v) return tj__fail(ps, ps->elem_start, "%s: missing \"%s\"", where, key);
    if (v->type != TJ_NUMBER)
        return tj__fail(ps, ps->elem_start, "%s: \"%s\" is not a number", where, key);
    *out = v->number;
    return 0;
}

static int trace__call(tj__parser *ps, struct trace__walk *w, const struct trace_event *ev) {
    int rc;
    if (!w->fn || (rc = w->fn(w->ctx, ev)) == 0) return 0;
    return tj__fail(ps, ps->elem_start, "traceEvents[%ld]: the callback failed (%d)", ev->index,
                    rc);
}

/* Counts a B, X, i, I or C event by its name. */
static void trace__count(struct trace_lane *l, const struct trace_event *ev, long tasks) {
    int span = ev->ph == 'B' || ev->ph == 'X', instant = ev->ph == 'i' || ev->ph == 'I';
    l->events++;
    if (span && strcmp(ev->name, "job") == 0) l->jobs++;
    else if (span && strcmp(ev->name, "sleep") == 0) l->sleeps++;
    else if (span && strcmp(ev->name, "blocking") == 0) l->blocking++;
    else if (instant && strcmp(ev->name, "steal") == 0) l->steals++;
    else if (instant && strcmp(ev->name, "wake") == 0) l->wakes++;
    else if (instant && strcmp(ev->name, "inject") == 0) l->injects++, l->injected_tasks += tasks;
    else l->other++;
}

/* The arguments the events that pool.h writes must have. */
static int trace__args(tj__parser *ps, const char *where, const struct trace_event *ev,
                       long *tasks) {
    static const char *const need[][2] = {
        {"steal", "victim"}, {"wake", "worker"}, {"inject", "tasks"}};
    size_t i;
    int64_t v;
    if (ev->ph == 'M' && strcmp(ev->name, "thread_name") == 0) {
        const tj_value *name = tj_get(ev->args, "name");
        if (!name || name->type != TJ_STRING)
            return tj__fail(ps, ps->elem_start, "%s: needs a string \"args\".\"name\"", where);
        return 0;
    }
    for (i = 0; i < sizeof need / sizeof need[0]; i++) {
        if ((ev->ph != 'i' && ev->ph != 'I') || strcmp(ev->name, need[i][0]) != 0) continue;
        if (!ev->args) return tj__fail(ps, ps->elem_start, "%s: missing \"args\"", where);
        if (trace__int(ps, where, ev->args, need[i][1], &v) != 0) return -1;
        if (i == 2) {
            if (v < 0)
                return tj__fail(ps, ps->elem_start, "%s: inject of %lld tasks", where,
                                (long long)v);
            *tasks = (long)v;
        }
    }
    return 0;
}

static int trace__push(struct trace__lane_state *st, const char *name, double ts) {
    size_t n = strlen(name) + 1;
    if (st->depth == st->cap) {
        int cap = st->cap ? st->cap * 2 : 16;
        void *p = realloc(st->stack, (size_t)cap * sizeof *st->stack);
        if (!p) return -1;
        st->stack = (struct trace__open *)p;
        st->cap = cap;
    }
    if (!(st->stack[st->depth].name = (char *)malloc(n))) return -1;
    memcpy(st->stack[st->depth].name, name, n);
    st->stack[st->depth++].ts = ts;
    return 0;
}

/* One element of traceEvents: checked, paired, counted, handed over. */
static int trace__event(tj__parser *ps, tj_value *obj, void *ctx) {
    struct trace__walk *w = (struct trace__walk *)ctx;
    struct trace_event ev;
    struct trace_lane *l;
    struct trace__lane_state *st;
    const tj_value *name = tj_get(obj, "name"), *ph = tj_get(obj, "ph"), *v;
    char where[160];
    long tasks = 0;
    memset(&ev, 0, sizeof ev);
    ev.index = w->index++;
    w->sum->events++;
    snprintf(where, sizeof where, "traceEvents[%ld]", ev.index);
    if (obj->type != TJ_OBJECT) return tj__fail(ps, ps->elem_start, "%s: not an object", where);
    if (!name) return tj__fail(ps, ps->elem_start, "%s: missing \"name\"", where);
    if (name->type != TJ_STRING)
        return tj__fail(ps, ps->elem_start, "%s: \"name\" is not a string", where);
    ev.name = name->string;
    snprintf(where, sizeof where, "traceEvents[%ld] \"%.60s\"", ev.index, ev.name);
    if (!ph) return tj__fail(ps, ps->elem_start, "%s: missing \"ph\"", where);
    if (ph->type != TJ_STRING || ph->length != 1 || !strchr("BEXiIMC", ph->string[0]))
        return tj__fail(ps, ps->elem_start, "%s: \"ph\" must be one of B E X i I M C", where);
    ev.ph = ph->string[0];
    if (trace__int(ps, where, obj, "pid", &ev.pid) != 0 ||
        trace__int(ps, where, obj, "tid", &ev.tid) != 0)
        return -1;
    snprintf(where, sizeof where, "traceEvents[%ld] \"%.60s\" (%c, tid %lld)", ev.index, ev.name,
             ev.ph, (long long)ev.tid);
    if (ev.ph != 'M' && trace__number(ps, where, obj, "ts", &ev.ts) != 0) return -1;
    if ((v = tj_get(obj, "cat")) && v->type != TJ_STRING)
        return tj__fail(ps, ps->elem_start, "%s: \"cat\" is not a string", where);
    if ((v = tj_get(obj, "s")) && !trace__is(v, "g") && !trace__is(v, "p") && !trace__is(v, "t"))
        return tj__fail(ps, ps->elem_start, "%s: \"s\" must be \"g\", \"p\" or \"t\"", where);
    if ((v = tj_get(obj, "args")) && v->type != TJ_OBJECT)
        return tj__fail(ps, ps->elem_start, "%s: \"args\" is not an object", where);
    ev.args = v;
    if (trace__args(ps, where, &ev, &tasks) != 0) return -1;
    ev.lane = -1;
    if (ev.ph == 'M') { /* only a thread's name makes a lane; other metadata is passed on */
        w->sum->metadata++;
        if (strcmp(ev.name, "thread_name") == 0) {
            if ((ev.lane = trace__lane(w, ev.pid, ev.tid)) < 0)
                return tj__fail(ps, ps->elem_start, "out of memory");
            snprintf(w->sum->lanes[ev.lane].name, sizeof w->sum->lanes[ev.lane].name, "%s",
                     tj_get(ev.args, "name")->string);
        }
        return trace__call(ps, w, &ev);
    }
    if ((ev.lane = trace__lane(w, ev.pid, ev.tid)) < 0)
        return tj__fail(ps, ps->elem_start, "out of memory");
    l = &w->sum->lanes[ev.lane];
    st = &w->state[ev.lane];
    if (st->timed && ev.ts < st->last_ts)
        return tj__fail(ps, ps->elem_start,
                        "%s: ts %.3f goes backwards (the lane's previous event is at %.3f)", where,
                        ev.ts, st->last_ts);
    if (!st->timed) l->ts_min = l->ts_max = ev.ts;
    st->timed = 1;
    st->last_ts = ev.ts;
    if (ev.ts > l->ts_max) l->ts_max = ev.ts;
    if (!w->have_events || ev.ts < w->sum->ts_min) w->sum->ts_min = ev.ts;
    if (!w->have_events || ev.ts > w->sum->ts_max) w->sum->ts_max = ev.ts;
    w->have_events = 1;
    ev.begin = ev.ts;
    ev.depth = st->depth;
    switch (ev.ph) {
    case 'B':
        if (trace__push(st, ev.name, ev.ts) != 0)
            return tj__fail(ps, ps->elem_start, "out of memory");
        ev.depth = st->depth;
        break;
    case 'E':
        l->events++;
        if (st->depth == 0) {
            if (w->flags & TRACE_NO_ORPHANS)
                return tj__fail(ps, ps->elem_start, "%s: unbalanced E: no B is open on this lane",
                                where);
            l->orphan_ends++;
            ev.orphan = 1;
            return trace__call(ps, w, &ev);
        }
        if (strcmp(st->stack[st->depth - 1].name, ev.name) != 0)
            return tj__fail(ps, ps->elem_start,
                            "%s: unbalanced E: the innermost open span is \"%.60s\" (B at ts %.3f)",
                            where, st->stack[st->depth - 1].name, st->stack[st->depth - 1].ts);
        ev.begin = st->stack[--st->depth].ts;
        free(st->stack[st->depth].name);
        ev.depth = st->depth + 1;
        return trace__call(ps, w, &ev);
    case 'X':
        if (trace__number(ps, where, obj, "dur", &ev.ts) != 0) return -1;
        if (ev.ts < 0) return tj__fail(ps, ps->elem_start, "%s: negative \"dur\"", where);
        ev.ts += ev.begin;
        ev.depth = st->depth + 1;
        if (ev.ts > l->ts_max) l->ts_max = ev.ts;
        if (ev.ts > w->sum->ts_max) w->sum->ts_max = ev.ts;
        break;
    }
    trace__count(l, &ev, tasks);
    if (ev.depth > l->max_depth) l->max_depth = ev.depth;
    return trace__call(ps, w, &ev);
}

static int trace__top_member(tj__parser *ps, const char *key, size_t key_length, tj_value *out,
                             void *ctx) {
    struct trace__walk *w = (struct trace__walk *)ctx;
    if (key_length == 11 && memcmp(key, "traceEvents", 11) == 0) {
        tj__ws(ps);
        if (tj__at_end(ps)) return tj__truncated(ps, "an object");
        if (*ps->p != '[') return tj__fail(ps, ps->p, "\"traceEvents\" is not an array");
        return tj__array(ps, out, trace__event, w);
    }
    if (tj__value(ps, out) != 0) return -1;
    if (key_length == 15 && memcmp(key, "displayTimeUnit", 15) == 0 && !trace__is(out, "ms") &&
        !trace__is(out, "ns"))
        return tj__fail(ps, ps->p, "\"displayTimeUnit\" must be \"ms\" or \"ns\"");
    return 0;
}

/* The end of the walk: spans still open, and the totals. */
static int trace__finish(tj__parser *ps, struct trace__walk *w) {
    struct trace_summary *s = w->sum;
    struct trace_lane *t = &s->total;
    int k;
    for (k = 0; k < s->num_lanes; k++) {
        struct trace_lane *l = &s->lanes[k];
        struct trace__lane_state *st = &w->state[k];
        if (st->depth > TRACE_MAX_OPEN)
            return tj__fail(ps, ps->p, "tid %lld: %d spans left open at the end (at most %d)",
                            (long long)l->tid, st->depth, TRACE_MAX_OPEN);
        l->open_at_end = st->depth;
        while (st->depth > 0) {
            struct trace_event ev;
            memset(&ev, 0, sizeof ev);
            ev.index = -1;
            ev.name = st->stack[st->depth - 1].name;
            ev.ph = 'E';
            ev.pid = l->pid;
            ev.tid = l->tid;
            ev.lane = k;
            ev.ts = s->ts_max;
            ev.begin = st->stack[st->depth - 1].ts;
            ev.depth = st->depth;
            ev.unclosed = 1;
            if (trace__call(ps, w, &ev) != 0) return -1;
            free(st->stack[--st->depth].name);
        }
        t->events += l->events, t->jobs += l->jobs, t->sleeps += l->sleeps,
            t->blocking += l->blocking;
        t->steals += l->steals, t->wakes += l->wakes, t->injects += l->injects;
        t->injected_tasks += l->injected_tasks, t->other += l->other;
        t->orphan_ends += l->orphan_ends, t->open_at_end += l->open_at_end;
        if (l->max_depth > t->max_depth) t->max_depth = l->max_depth;
    }
    t->ts_min = s->ts_min;
    t->ts_max = s->ts_max;
    return 0;
}

/* Checks a trace and hands each event to fn (which may be NULL): 0, or -1
   with err set. `out` may be NULL; on success free it with
   trace_summary_free, on failure it is zeroed. */
TJ__UNUSED static int trace_walk(const char *json, size_t len, unsigned flags, trace_handler fn,
                                 void *ctx, struct trace_summary *out, char *err, size_t errlen) {
    struct trace_summary local;
    struct trace__walk w;
    tj__parser ps;
    tj_value top;
    int rc, k;
    if (!out) out = &local;
    memset(out, 0, sizeof *out);
    memset(&w, 0, sizeof w);
    memset(&top, 0, sizeof top);
    w.sum = out;
    w.fn = fn;
    w.ctx = ctx;
    w.flags = flags;
    tj__init(&ps, json, len, err, errlen);
    rc = tj__start(&ps);
    if (rc == 0 && *ps.p != '{')
        rc = tj__fail(&ps, ps.p, "the top level must be an object with a \"traceEvents\" array");
    if (rc == 0) rc = tj__object(&ps, &top, trace__top_member, &w);
    if (rc == 0) rc = tj__finish(&ps);
    if (rc == 0 && !tj_get(&top, "traceEvents"))
        rc = tj__fail(&ps, ps.begin, "no \"traceEvents\" array");
    if (rc == 0) rc = trace__finish(&ps, &w);
    for (k = 0; k < out->num_lanes; k++) {
        while (w.state[k].depth > 0) free(w.state[k].stack[--w.state[k].depth].name);
        free(w.state[k].stack);
    }
    free(w.state);
    free(w.slots);
    tj__rewind(&ps.blocks, NULL, 0);
    if (rc != 0 || out == &local) trace_summary_free(out);
    return rc;
}

TJ__UNUSED static int trace_check(const char *json, size_t len, struct trace_summary *out,
                                  char *err, size_t errlen) {
    return trace_walk(json, len, 0, NULL, NULL, out, err, errlen);
}

/* The lane (pid, tid) of a summary, or NULL. */
TJ__UNUSED static const struct trace_lane *trace_lane_find(const struct trace_summary *s,
                                                           int64_t pid, int64_t tid) {
    int k;
    for (k = 0; k < s->num_lanes; k++)
        if (s->lanes[k].pid == pid && s->lanes[k].tid == tid) return &s->lanes[k];
    return NULL;
}

/* A table of the summary, one line per lane and a total. */
TJ__UNUSED static void trace_summary_print(const struct trace_summary *s, FILE *f) {
    int k;
    fprintf(f, "%-16s %5s %8s %8s %7s %7s %7s %7s %8s %6s %6s %5s\n", "lane", "tid", "events",
            "jobs", "steals", "sleeps", "wakes", "injects", "blocking", "other", "orphan", "open");
    for (k = 0; k <= s->num_lanes; k++) {
        const struct trace_lane *l = k < s->num_lanes ? &s->lanes[k] : &s->total;
        char tid[24];
        snprintf(tid, sizeof tid, "%lld", (long long)l->tid);
        fprintf(f, "%-16.16s %5s %8ld %8ld %7ld %7ld %7ld %7ld %8ld %6ld %6ld %5ld\n",
                k < s->num_lanes ? (l->name[0] ? l->name : "?") : "total",
                k < s->num_lanes ? tid : "", l->events, l->jobs, l->steals, l->sleeps, l->wakes,
                l->injects, l->blocking, l->other, l->orphan_ends, l->open_at_end);
    }
    fprintf(f, "%d lanes, %ld events (%ld metadata), ts %.3f to %.3f us\n", s->num_lanes, s->events,
            s->metadata, s->ts_min, s->ts_max);
}

#endif /* POOL_TRACE_JSON_H */
