/* fstsynth._walk: the apply tables walked in C, from UTF-8 lines to UTF-8 lines.
 *
 * An optional compiled helper: the byte front end of `fstsynth apply`
 * (`fstsynth.stream.ByteApplier`) and the batch path (`fstsynth.tables.Tables.outputs`)
 * use it where it is built; the pure-Python walker `fstsynth.word_walker` stays the
 * reference, and tests/backends.py runs both on the same programs. It needs no numpy.
 *
 * Walker(tokens, unk, seen, passes, full_steps_max=1 << 18)
 *     tokens: list of bytes (the UTF-8 of the tables' tokens, by index); unk: UNK's
 *     index; seen: bytes, 1 where the token is in the model's alphabet; passes: one
 *     dict per pass with the fields of `fstsynth.table_format.PassTables` (ints, and the
 *     little-endian bytes of its arrays) and their sizes `tags`, `classes`, `lefts`,
 *     `rights`, `left_rows`, `left_groups`, `right_rows`, `right_groups`,
 *     `left_masks`, `right_masks` (distinct masks), `next_tags`. Every array is
 *     checked for size and range here. An automaton's
 *     steps are expanded to one table where it has at most `full_steps_max` entries,
 *     and its masks to one row per state where those have at most `full_steps_max`
 *     words (tests set 0 to walk the compact form).
 * Walker.apply_block(data, sep) -> None | (bytes, list[int])
 *     data: complete lines (ending with a newline) of tokens separated by single
 *     spaces, valid UTF-8 (the caller checks that, and NFC). Each line's word is walked
 *     through the passes (exactly as `fstsynth.word_walker.walk_word`) and its output
 *     written as its tokens joined by `sep`, then a newline. Returns None for a block
 *     the caller must read another way (the same blocks the numpy block walker
 *     declines, `fstsynth.block_walker`): tabs, `#`, CRs, other white space, empty tokens other than empty
 *     lines, a one-token line whose token is not in the alphabet. The list: the lines
 *     (from 0) that hold a token not in the alphabet (the caller writes them again).
 *     Raises ValueError("damaged tables: ...") where the tables are.
 * Walker.walk_words(ids, bounds) -> (bytes, bytes)
 *     ids: the native int32 token indices of words one after the other; bounds: native
 *     int64, word k is ids[bounds[k] : bounds[k + 1]]. The outputs in the same form
 *     (the batch path of `fstsynth.tables.Tables.outputs`). The seen flags play no part.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { CONSTANT = 0, OFFSET = 1 };

/* One automaton's steps: from state s on class c to next[row[s] + column[c]] (the
 * tables' compact form, `fstsynth.table_format.PassTables`; row premultiplied by
 * `groups` here), or full[s * classes + c] where the expanded table is small: one
 * lookup a step instead of two dependent ones. */
typedef struct {
    int states, classes, rows, groups;
    int32_t *next;           /* rows x groups */
    int32_t *row;            /* states: the first step of the state's row in next */
    int32_t *column;         /* classes */
    int32_t *full;           /* states x classes, or NULL */
} Steps;

/* The most entries of a step table expanded at load (1 MiB of int32). */
#define FULL_STEPS_MAX (1 << 18)

static inline int32_t step(const Steps *s, int32_t state, int32_t c) {
    if (s->full) return s->full[(Py_ssize_t)state * s->classes + c];
    return s->next[s->row[state] + s->column[c]];
}

typedef struct {
    int rules, words, tags, classes, lefts, rights, left_start, right_start, left_masks, right_masks;
    int32_t *symbol_class;   /* tags x tokens: a symbol's class */
    Steps left_steps, right_steps;
    /* The distinct masks (left_masks x words), and where each state's starts in them
     * (its number x words); or, where the states' rows are few (`expand_masks`), a row
     * per state (lefts x words) and no left_mask_at: the walk then reads a state's
     * mask at state x words, without the lookup. */
    uint64_t *left_mask;
    int32_t *left_mask_at;
    uint64_t *right_mask;
    int32_t *right_mask_at;
    uint64_t *class_mask;    /* classes x words */
    uint64_t *start_mask;    /* words */
    int32_t *template_start; /* 2 (rules + 1) + 1 */
    int32_t *template_kind;
    int32_t *template_value;
    int32_t *out_tag;        /* rules + 1 */
    Py_ssize_t widest;       /* the most items of any template */
} Pass;

/* A growable int32 array. */
typedef struct {
    int32_t *v;
    Py_ssize_t n, cap;
} Ints;

typedef struct {
    PyObject_HEAD
    int tokens, unk, npasses;
    Pass *passes;
    char *text;              /* the tokens' bytes, one after the other */
    Py_ssize_t *text_start;  /* tokens + 1 */
    Py_ssize_t longest;      /* the most bytes of any token */
    unsigned char *seen;
    int32_t *slots;          /* hash table: token index + 1, 0 empty */
    size_t slot_mask;
    Ints ids, tags, out_ids, out_tags, cls, rho;
} Walker;

static int ints_reserve(Ints *a, Py_ssize_t n) {
    if (n <= a->cap) return 0;
    Py_ssize_t cap = a->cap ? a->cap : 64;
    while (cap < n) cap *= 2;
    int32_t *v = PyMem_Realloc(a->v, (size_t)cap * sizeof(int32_t));
    if (!v) { PyErr_NoMemory(); return -1; }
    a->v = v;
    a->cap = cap;
    return 0;
}

static inline int ints_push(Ints *a, int32_t x) {
    if (a->n == a->cap && ints_reserve(a, a->n + 1) < 0) return -1;
    a->v[a->n++] = x;
    return 0;
}

#define HASH_START 1469598103934665603ULL /* FNV-1a */
#define HASH_STEP(h, c) (((h) ^ (unsigned char)(c)) * 1099511628211ULL)
#define HASH_END(h) ((h) ^ ((h) >> 29))

static uint64_t hash_bytes(const char *s, Py_ssize_t n) {
    uint64_t h = HASH_START;
    for (Py_ssize_t i = 0; i < n; i++) h = HASH_STEP(h, s[i]);
    return HASH_END(h);
}

static int damaged(const char *what) {
    PyErr_Format(PyExc_ValueError, "damaged tables: %s", what);
    return -1;
}

/* An int field of a pass dict. */
static int get_int(PyObject *d, const char *name, int *out) {
    PyObject *o = PyDict_GetItemString(d, name);
    if (!o) { PyErr_Format(PyExc_KeyError, "pass field %s", name); return -1; }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v > INT32_MAX) return damaged(name);
    *out = (int)v;
    return 0;
}

/* A copy of an array field of a pass dict, `count` items of `size` bytes. */
static void *get_array(PyObject *d, const char *name, Py_ssize_t count, size_t size) {
    PyObject *o = PyDict_GetItemString(d, name);
    if (!o) { PyErr_Format(PyExc_KeyError, "pass field %s", name); return NULL; }
    if (!PyBytes_Check(o)) { PyErr_Format(PyExc_TypeError, "pass field %s: bytes expected", name); return NULL; }
    if (PyBytes_GET_SIZE(o) != count * (Py_ssize_t)size) { damaged(name); return NULL; }
    void *v = PyMem_Malloc(count ? (size_t)count * size : 1);
    if (!v) { PyErr_NoMemory(); return NULL; }
    memcpy(v, PyBytes_AS_STRING(o), (size_t)count * size);
    return v;
}

static int in_range(const int32_t *v, Py_ssize_t n, int32_t lo, int32_t hi) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (v[i] < lo || v[i] >= hi) return 0;
    return 1;
}

static void free_steps(Steps *s) {
    PyMem_Free(s->next); PyMem_Free(s->row); PyMem_Free(s->column); PyMem_Free(s->full);
}

/* The steps of side `side` ("left", "right": its fields `{side}_next`, `_row`,
 * `_column`, and the sizes `{side}_rows`, `_groups`), checked for range. */
static int read_steps(Steps *s, PyObject *d, const char *side, int states, int classes, Py_ssize_t full_max) {
    char name[32];
    s->states = states;
    s->classes = classes;
    snprintf(name, sizeof name, "%s_rows", side);
    if (get_int(d, name, &s->rows) < 0) return -1;
    snprintf(name, sizeof name, "%s_groups", side);
    if (get_int(d, name, &s->groups) < 0) return -1;
    if (s->rows < 1 || s->groups < 1 || (int64_t)s->rows * s->groups > INT32_MAX) return damaged("sizes");
    snprintf(name, sizeof name, "%s_next", side);
    if (!(s->next = get_array(d, name, (Py_ssize_t)s->rows * s->groups, 4))) return -1;
    if (!in_range(s->next, (Py_ssize_t)s->rows * s->groups, 0, states)) return damaged("automaton steps");
    snprintf(name, sizeof name, "%s_row", side);
    if (!(s->row = get_array(d, name, states, 4))) return -1;
    if (!in_range(s->row, states, 0, s->rows)) return damaged("automaton rows");
    snprintf(name, sizeof name, "%s_column", side);
    if (!(s->column = get_array(d, name, classes, 4))) return -1;
    if (!in_range(s->column, classes, 0, s->groups)) return damaged("automaton columns");
    for (Py_ssize_t k = 0; k < states; k++) s->row[k] *= s->groups;
    if ((Py_ssize_t)states * classes <= full_max) {
        s->full = PyMem_Malloc((size_t)states * (size_t)classes * sizeof(int32_t));
        if (!s->full) { PyErr_NoMemory(); return -1; }
        for (Py_ssize_t k = 0; k < states; k++)
            for (Py_ssize_t c = 0; c < classes; c++)
                s->full[k * classes + c] = s->next[s->row[k] + s->column[c]];
    }
    return 0;
}

/* The mask number of each of `states` states (field `name`), checked to be below
 * `masks`, premultiplied by `words`: where the state's mask starts. */
static int32_t *read_mask_at(PyObject *d, const char *name, int states, int masks, int words) {
    int32_t *at = get_array(d, name, states, 4);
    if (!at) return NULL;
    if (!in_range(at, states, 0, masks)) {
        PyMem_Free(at);
        damaged("masks");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < states; k++) at[k] *= words;
    return at;
}

/* A side's masks as a row per state where those are at most `full_max` words (the
 * mask lookup of each position saved: a small model walks as fast as when its tables
 * kept a row per state); `*at` is then freed and NULL. */
static int expand_masks(uint64_t **mask, int32_t **at, int states, int words, Py_ssize_t full_max) {
    if ((Py_ssize_t)states * words > full_max) return 0;
    uint64_t *rows = PyMem_Malloc((size_t)states * (size_t)words * sizeof(uint64_t));
    if (!rows) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t k = 0; k < states; k++)
        memcpy(rows + k * words, *mask + (*at)[k], (size_t)words * sizeof(uint64_t));
    PyMem_Free(*mask);
    PyMem_Free(*at);
    *mask = rows;
    *at = NULL;
    return 0;
}

static void free_pass(Pass *p) {
    PyMem_Free(p->symbol_class); free_steps(&p->left_steps); free_steps(&p->right_steps);
    PyMem_Free(p->left_mask); PyMem_Free(p->right_mask); PyMem_Free(p->class_mask);
    PyMem_Free(p->left_mask_at); PyMem_Free(p->right_mask_at);
    PyMem_Free(p->start_mask); PyMem_Free(p->template_start); PyMem_Free(p->template_kind);
    PyMem_Free(p->template_value); PyMem_Free(p->out_tag);
}

static int read_pass(Pass *p, PyObject *d, int tokens, int tags_expected, Py_ssize_t full_max) {
    int next_tags;
    if (!PyDict_Check(d)) { PyErr_SetString(PyExc_TypeError, "a pass is a dict"); return -1; }
    if (get_int(d, "rules", &p->rules) < 0 || get_int(d, "tags", &p->tags) < 0 ||
        get_int(d, "classes", &p->classes) < 0 || get_int(d, "lefts", &p->lefts) < 0 ||
        get_int(d, "rights", &p->rights) < 0 || get_int(d, "left_start", &p->left_start) < 0 ||
        get_int(d, "right_start", &p->right_start) < 0 || get_int(d, "next_tags", &next_tags) < 0 ||
        get_int(d, "left_masks", &p->left_masks) < 0 || get_int(d, "right_masks", &p->right_masks) < 0)
        return -1;
    if (p->tags != tags_expected) return damaged("tags");
    if (p->classes < 1 || p->lefts < 1 || p->rights < 1 || next_tags < 1 || p->left_masks < 1 || p->right_masks < 1)
        return damaged("sizes");
    if (p->left_start >= p->lefts || p->right_start >= p->rights) return damaged("start states");
    p->words = p->rules ? (p->rules + 63) / 64 : 1;
    Py_ssize_t decisions = (Py_ssize_t)p->rules + 1, w = p->words;
    if (!(p->symbol_class = get_array(d, "symbol_class", (Py_ssize_t)p->tags * tokens, 4))) return -1;
    if (!in_range(p->symbol_class, (Py_ssize_t)p->tags * tokens, 0, p->classes)) return damaged("symbol classes");
    if (read_steps(&p->left_steps, d, "left", p->lefts, p->classes, full_max) < 0) return -1;
    if (read_steps(&p->right_steps, d, "right", p->rights, p->classes, full_max) < 0) return -1;
    if ((int64_t)p->left_masks * w > INT32_MAX || (int64_t)p->right_masks * w > INT32_MAX) return damaged("sizes");
    if (!(p->left_mask = get_array(d, "left_mask", p->left_masks * w, 8))) return -1;
    if (!(p->right_mask = get_array(d, "right_mask", p->right_masks * w, 8))) return -1;
    if (!(p->left_mask_at = read_mask_at(d, "left_mask_of", p->lefts, p->left_masks, p->words))) return -1;
    if (!(p->right_mask_at = read_mask_at(d, "right_mask_of", p->rights, p->right_masks, p->words))) return -1;
    if (expand_masks(&p->left_mask, &p->left_mask_at, p->lefts, w, full_max) < 0) return -1;
    if (expand_masks(&p->right_mask, &p->right_mask_at, p->rights, w, full_max) < 0) return -1;
    if (!(p->class_mask = get_array(d, "class_mask", p->classes * w, 8))) return -1;
    if (!(p->start_mask = get_array(d, "start_mask", w, 8))) return -1;
    if (!(p->template_start = get_array(d, "template_start", 2 * decisions + 1, 4))) return -1;
    Py_ssize_t items = p->template_start[2 * decisions];
    if (p->template_start[0] != 0) return damaged("templates");
    for (Py_ssize_t k = 0; k < 2 * decisions; k++)
        if (p->template_start[k] > p->template_start[k + 1]) return damaged("templates");
    if (!(p->template_kind = get_array(d, "template_kind", items, 4))) return -1;
    if (!(p->template_value = get_array(d, "template_value", items, 4))) return -1;
    for (Py_ssize_t k = 0; k < items; k++) {
        int32_t kind = p->template_kind[k], value = p->template_value[k];
        if (kind != CONSTANT && kind != OFFSET) return damaged("template kinds");
        if (kind == CONSTANT && (value < 0 || value >= tokens)) return damaged("template tokens");
    }
    p->widest = 0;
    for (Py_ssize_t k = 0; k < 2 * decisions; k++)
        if (p->template_start[k + 1] - p->template_start[k] > p->widest)
            p->widest = p->template_start[k + 1] - p->template_start[k];
    if (!(p->out_tag = get_array(d, "out_tag", decisions, 4))) return -1;
    if (!in_range(p->out_tag, decisions, 0, next_tags)) return damaged("output tags");
    return next_tags;
}

static void Walker_dealloc(Walker *self) {
    for (int k = 0; k < self->npasses; k++) free_pass(&self->passes[k]);
    PyMem_Free(self->passes);
    PyMem_Free(self->text);
    PyMem_Free(self->text_start);
    PyMem_Free(self->seen);
    PyMem_Free(self->slots);
    Ints *scratch[] = {&self->ids, &self->tags, &self->out_ids, &self->out_tags, &self->cls, &self->rho};
    for (size_t k = 0; k < sizeof scratch / sizeof *scratch; k++) PyMem_Free(scratch[k]->v);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Walker_init(Walker *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"tokens", "unk", "seen", "passes", "full_steps_max", NULL};
    PyObject *tokens, *passes;
    const char *seen;
    Py_ssize_t seen_len, full_steps_max = FULL_STEPS_MAX;
    int unk;
    if (self->passes || self->text) {
        PyErr_SetString(PyExc_RuntimeError, "Walker initialized twice");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!iy#O!|n", kwlist, &PyList_Type, &tokens, &unk, &seen,
                                     &seen_len, &PyList_Type, &passes, &full_steps_max))
        return -1;
    Py_ssize_t count = PyList_GET_SIZE(tokens);
    if (count < 1 || count >= INT32_MAX / 4 || unk < 0 || unk >= count || seen_len != count)
        return damaged("token list");
    self->tokens = (int)count;
    self->unk = unk;
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *t = PyList_GET_ITEM(tokens, i);
        if (!PyBytes_Check(t)) { PyErr_SetString(PyExc_TypeError, "tokens are bytes"); return -1; }
        total += PyBytes_GET_SIZE(t);
    }
    self->text = PyMem_Malloc(total ? (size_t)total : 1);
    self->text_start = PyMem_Malloc((size_t)(count + 1) * sizeof(Py_ssize_t));
    self->seen = PyMem_Malloc((size_t)count);
    size_t size = 16;
    while (size < 2 * (size_t)count) size *= 2;
    self->slots = PyMem_Calloc(size, sizeof(int32_t));
    if (!self->text || !self->text_start || !self->seen || !self->slots) { PyErr_NoMemory(); return -1; }
    self->slot_mask = size - 1;
    memcpy(self->seen, seen, (size_t)count);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *t = PyList_GET_ITEM(tokens, i);
        Py_ssize_t n = PyBytes_GET_SIZE(t);
        memcpy(self->text + at, PyBytes_AS_STRING(t), (size_t)n);
        self->text_start[i] = at;
        size_t slot = hash_bytes(self->text + at, n) & self->slot_mask;
        while (self->slots[slot]) slot = (slot + 1) & self->slot_mask;
        self->slots[slot] = (int32_t)i + 1; /* (a repeated token: the first one is found) */
        at += n;
    }
    self->text_start[count] = at;
    self->longest = 0;
    for (Py_ssize_t i = 0; i < count; i++)
        if (self->text_start[i + 1] - self->text_start[i] > self->longest)
            self->longest = self->text_start[i + 1] - self->text_start[i];
    Py_ssize_t npasses = PyList_GET_SIZE(passes);
    self->passes = PyMem_Calloc(npasses ? (size_t)npasses : 1, sizeof(Pass));
    if (!self->passes) { PyErr_NoMemory(); return -1; }
    int tags = 1;
    for (Py_ssize_t k = 0; k < npasses; k++) {
        self->npasses = (int)k + 1; /* so that dealloc frees what was read */
        tags = read_pass(&self->passes[k], PyList_GET_ITEM(passes, k), self->tokens, tags, full_steps_max);
        if (tags < 0) return -1;
    }
    if (tags != 1) return damaged("the last pass's output tags");
    return 0;
}

/* The index of token `s` (`n` bytes, `hash_bytes` `hash`), or UNK's. */
static inline int32_t lookup(Walker *self, const char *s, Py_ssize_t n, uint64_t hash) {
    size_t slot = hash & self->slot_mask;
    for (;;) {
        int32_t i = self->slots[slot];
        if (!i) return self->unk;
        i -= 1;
        Py_ssize_t a = self->text_start[i];
        if (self->text_start[i + 1] - a == n && memcmp(self->text + a, s, (size_t)n) == 0) return i;
        slot = (slot + 1) & self->slot_mask;
    }
}

/* The decision of masks a & b & c (`words` words each): the lowest rule in all three,
 * or `rules` if none. */
static inline int32_t decide(const uint64_t *a, const uint64_t *b, const uint64_t *c, int words, int rules) {
    for (int w = 0; w < words; w++) {
        uint64_t m = a[w] & b[w] & c[w];
        if (m) return (int32_t)(64 * w + __builtin_ctzll(m));
    }
    return rules;
}

/* Write template `t`'s items for the position `at` (-1: the start position) of a word
 * of `n` tokens `ids` at out_ids / out_tags[*used] (room reserved by the caller). */
static inline int emit(const Pass *p, int32_t t, Py_ssize_t at, const int32_t *ids, Py_ssize_t n, int32_t tag,
                       int32_t *out_ids, int32_t *out_tags, Py_ssize_t *used) {
    Py_ssize_t u = *used;
    for (int32_t k = p->template_start[t]; k < p->template_start[t + 1]; k++) {
        int32_t value = p->template_value[k];
        if (p->template_kind[k] == OFFSET) {
            Py_ssize_t read = at + value;
            if (read < 0 || read >= n) return damaged("a template reads outside the word");
            value = ids[read];
        }
        out_ids[u] = value;
        out_tags[u++] = tag;
    }
    *used = u;
    return 0;
}

/* One pass over the word in self->ids / self->tags; its output in self->out_ids /
 * self->out_tags (as `fstsynth.word_walker.walk_word`). `left_rows`: the left masks
 * are a row per state (`expand_masks`; a constant where it is inlined, so each form
 * has its own loop). */
static inline __attribute__((always_inline)) int walk_pass_as(Walker *self, const Pass *p, const int left_rows) {
    Py_ssize_t n = self->ids.n;
    const int32_t *ids = self->ids.v, *tags = self->tags.v;
    int words = p->words;
    if (ints_reserve(&self->cls, n) < 0 || ints_reserve(&self->rho, n) < 0) return -1;
    int32_t *cls = self->cls.v, *rho = self->rho.v;
    for (Py_ssize_t i = 0; i < n; i++) cls[i] = p->symbol_class[(Py_ssize_t)tags[i] * self->tokens + ids[i]];
    /* rho[i]: where the mask of the right state at i starts (the state is read for
     * nothing else). */
    const int32_t *right_at = p->right_mask_at;
    int32_t state = p->right_start;
    if (p->rights > 1) {
        for (Py_ssize_t i = n - 1; i >= 0; i--) {
            rho[i] = right_at ? right_at[state] : state * words;
            state = step(&p->right_steps, state, cls[i]);
        }
    } else {
        for (Py_ssize_t i = 0; i < n; i++) rho[i] = right_at ? right_at[state] : state * words;
    }
    /* Room for the most any template writes, at every position and the start. */
    Py_ssize_t room = (n + 1) * p->widest, used = 0;
    if (ints_reserve(&self->out_ids, room) < 0 || ints_reserve(&self->out_tags, room) < 0) return -1;
    int32_t *out_ids = self->out_ids.v, *out_tags = self->out_tags.v;
    const int32_t *left_at = p->left_mask_at;
    int32_t left = p->left_start;
#define LEFT_MASK(s) (p->left_mask + (left_rows ? (Py_ssize_t)(s) * words : left_at[s]))
    int32_t d = decide(LEFT_MASK(left), p->start_mask,
                       p->right_mask + (right_at ? right_at[state] : (Py_ssize_t)state * words), words, p->rules);
    if (d > p->rules) return damaged("a decision outside the rules");
    if (emit(p, p->rules + 1 + d, -1, ids, n, p->out_tag[d], out_ids, out_tags, &used) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int32_t c = cls[i];
        d = decide(LEFT_MASK(left), p->class_mask + (Py_ssize_t)c * words, p->right_mask + rho[i], words, p->rules);
        if (d > p->rules) return damaged("a decision outside the rules");
        if (emit(p, d, i, ids, n, p->out_tag[d], out_ids, out_tags, &used) < 0) return -1;
        left = step(&p->left_steps, left, c);
    }
#undef LEFT_MASK
    self->out_ids.n = self->out_tags.n = used;
    /* The output is the next pass's input. */
    Ints swap = self->ids;
    self->ids = self->out_ids;
    self->out_ids = swap;
    swap = self->tags;
    self->tags = self->out_tags;
    self->out_tags = swap;
    return 0;
}

static int walk_pass(Walker *self, const Pass *p) {
    return p->left_mask_at ? walk_pass_as(self, p, 0) : walk_pass_as(self, p, 1);
}

/* A growable byte buffer. */
typedef struct {
    char *v;
    Py_ssize_t n, cap;
} Buffer;

static int buffer_reserve(Buffer *b, Py_ssize_t n) {
    if (b->n + n > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        char *v = PyMem_Realloc(b->v, (size_t)cap);
        if (!v) { PyErr_NoMemory(); return -1; }
        b->v = v;
        b->cap = cap;
    }
    return 0;
}

/* Does the block hold a byte or character the caller reads differently: tab, `#`, CR,
 * the other ASCII white space but the space and the newline, or (in valid UTF-8) the
 * white space beyond ASCII that `str.split` splits at? */
static int declined(const unsigned char *s, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '\t' || c == 0x0b || c == 0x0c || c == '\r' || (c >= 0x1c && c <= 0x1f) || c == '#') return 1;
        if (c < 0xc2) continue;
        unsigned char c1 = i + 1 < n ? s[i + 1] : 0, c2 = i + 2 < n ? s[i + 2] : 0;
        if (c == 0xc2 && (c1 == 0x85 || c1 == 0xa0)) return 1;                    /* U+0085 U+00A0 */
        if (c == 0xe1 && c1 == 0x9a && c2 == 0x80) return 1;                      /* U+1680 */
        if (c == 0xe2 && c1 == 0x80 && ((c2 >= 0x80 && c2 <= 0x8a) || c2 == 0xa8 || c2 == 0xa9 || c2 == 0xaf))
            return 1;                                                             /* U+2000-200A 2028 2029 202F */
        if (c == 0xe2 && c1 == 0x81 && c2 == 0x9f) return 1;                      /* U+205F */
        if (c == 0xe3 && c1 == 0x80 && c2 == 0x80) return 1;                      /* U+3000 */
    }
    return 0;
}

static PyObject *Walker_apply_block(Walker *self, PyObject *args) {
    Py_buffer data, sep;
    if (!self->passes) { PyErr_SetString(PyExc_RuntimeError, "Walker not initialized"); return NULL; }
    if (!PyArg_ParseTuple(args, "y*y*", &data, &sep)) return NULL;
    const char *s = data.buf, *end = s + data.len;
    Buffer out = {NULL, 0, 0};
    PyObject *fix = PyList_New(0), *result = NULL;
    if (!fix) goto done;
    if (data.len == 0 || s[data.len - 1] != '\n' || declined((const unsigned char *)s, data.len)) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    Py_ssize_t line = 0;
    while (s < end) {
        /* A Ctrl-C stops the walk every 4,096 lines (a block holds ~20,000 short lines). */
        if ((line & 4095) == 0 && line && PyErr_CheckSignals() < 0) goto done;
        /* The line's tokens, each hashed as it is scanned (the block ends with a newline). */
        const char *eol = s;
        self->ids.n = self->tags.n = 0;
        int unseen = 0;
        if (*s != '\n') {
            for (const char *t = s;;) {
                const char *stop = t;
                uint64_t hash = HASH_START;
                while (*stop != ' ' && *stop != '\n') hash = HASH_STEP(hash, *stop++);
                if (stop == t) goto decline; /* an empty token: spacing the caller reads */
                int32_t id = lookup(self, t, stop - t, HASH_END(hash));
                if (!self->seen[id]) unseen = 1;
                if (ints_push(&self->ids, id) < 0 || ints_push(&self->tags, 0) < 0) goto done;
                if (*stop == '\n') {
                    eol = stop;
                    break;
                }
                t = stop + 1;
            }
            if (unseen) {
                if (self->ids.n == 1) goto decline; /* perhaps an unspaced word: the caller splits it */
                PyObject *k = PyLong_FromSsize_t(line);
                if (!k || PyList_Append(fix, k) < 0) { Py_XDECREF(k); goto done; }
                Py_DECREF(k);
            }
        }
        for (int k = 0; k < self->npasses; k++)
            if (walk_pass(self, &self->passes[k]) < 0) goto done;
        Py_ssize_t n = self->ids.n;
        if (buffer_reserve(&out, n * (self->longest + sep.len) + 1) < 0) goto done;
        char *o = out.v + out.n;
        for (Py_ssize_t i = 0; i < n; i++) {
            int32_t id = self->ids.v[i];
            /* (Byte by byte: tokens are a few bytes, shorter than a call to memcpy.) */
            for (const char *b = self->text + self->text_start[id], *e = self->text + self->text_start[id + 1]; b < e;)
                *o++ = *b++;
            if (i + 1 < n)
                for (Py_ssize_t k = 0; k < sep.len; k++) *o++ = ((const char *)sep.buf)[k];
        }
        *o++ = '\n';
        out.n = o - out.v;
        s = eol + 1;
        line++;
    }
    result = Py_BuildValue("(y#O)", out.v ? out.v : "", out.n, fix);
    goto done;
decline:
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(fix);
    PyMem_Free(out.v);
    PyBuffer_Release(&data);
    PyBuffer_Release(&sep);
    return result;
}

static PyObject *Walker_walk_words(Walker *self, PyObject *args) {
    Py_buffer ids, bounds;
    if (!self->passes) { PyErr_SetString(PyExc_RuntimeError, "Walker not initialized"); return NULL; }
    if (!PyArg_ParseTuple(args, "y*y*", &ids, &bounds)) return NULL;
    PyObject *result = NULL;
    Ints out = {NULL, 0, 0};
    int64_t *out_bounds = NULL;
    Py_ssize_t count = ids.len / 4, n = bounds.len / 8 - 1;
    if (ids.len % 4 || bounds.len % 8 || n < 0) {
        PyErr_SetString(PyExc_ValueError, "walk_words: int32 ids and int64 bounds expected");
        goto done;
    }
    const char *in = ids.buf, *b = bounds.buf;
    int64_t first, last;
    memcpy(&first, b, 8);
    memcpy(&last, b + 8 * n, 8);
    if (first != 0 || last != count) { PyErr_SetString(PyExc_ValueError, "walk_words: bounds"); goto done; }
    out_bounds = PyMem_Malloc((size_t)(n + 1) * sizeof(int64_t));
    if (!out_bounds) { PyErr_NoMemory(); goto done; }
    out_bounds[0] = 0;
    for (Py_ssize_t w = 0; w < n; w++) {
        if ((w & 4095) == 0 && w && PyErr_CheckSignals() < 0) goto done;
        int64_t a, z;
        memcpy(&a, b + 8 * w, 8);
        memcpy(&z, b + 8 * (w + 1), 8);
        if (z < a || z > count) { PyErr_SetString(PyExc_ValueError, "walk_words: bounds"); goto done; }
        Py_ssize_t len = (Py_ssize_t)(z - a);
        if (ints_reserve(&self->ids, len) < 0 || ints_reserve(&self->tags, len) < 0) goto done;
        memcpy(self->ids.v, in + 4 * a, (size_t)len * 4);
        for (Py_ssize_t i = 0; i < len; i++) {
            if (self->ids.v[i] < 0 || self->ids.v[i] >= self->tokens) {
                PyErr_SetString(PyExc_ValueError, "walk_words: a token index out of range");
                goto done;
            }
            self->tags.v[i] = 0;
        }
        self->ids.n = self->tags.n = len;
        for (int k = 0; k < self->npasses; k++)
            if (walk_pass(self, &self->passes[k]) < 0) goto done;
        if (ints_reserve(&out, out.n + self->ids.n) < 0) goto done;
        memcpy(out.v + out.n, self->ids.v, (size_t)self->ids.n * 4);
        out.n += self->ids.n;
        out_bounds[w + 1] = out.n;
    }
    result = Py_BuildValue("(y#y#)", out.v ? (const char *)out.v : "", out.n * 4, (const char *)out_bounds,
                           (n + 1) * 8);
done:
    PyMem_Free(out.v);
    PyMem_Free(out_bounds);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&bounds);
    return result;
}

static PyMethodDef Walker_methods[] = {
    {"apply_block", (PyCFunction)Walker_apply_block, METH_VARARGS,
     "apply_block(data, sep) -> None | (bytes, list[int]): see the module docstring."},
    {"walk_words", (PyCFunction)Walker_walk_words, METH_VARARGS,
     "walk_words(ids, bounds) -> (bytes, bytes): see the module docstring."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fstsynth._walk.Walker",
    .tp_basicsize = sizeof(Walker),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The apply tables of one column pair, walked in C (see the module docstring).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Walker_init,
    .tp_dealloc = (destructor)Walker_dealloc,
    .tp_methods = Walker_methods,
};

static struct PyModuleDef walk_module = {
    PyModuleDef_HEAD_INIT, "_walk", "The apply tables walked in C (optional; see fstsynth.stream).", -1, NULL,
};

PyMODINIT_FUNC PyInit__walk(void) {
    if (PyType_Ready(&WalkerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&walk_module);
    if (!m) return NULL;
    Py_INCREF(&WalkerType);
    if (PyModule_AddObject(m, "Walker", (PyObject *)&WalkerType) < 0) {
        Py_DECREF(&WalkerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
