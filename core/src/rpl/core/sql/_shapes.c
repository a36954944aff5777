/*
 * rpl.core.sql._shapes: a statement's shape key and literals (the compiled build only;
 * core/setup.py).
 *
 * rpl.core.sql.shapes.split cuts a statement into its shape and its literals with one
 * regular expression and a Python loop over the pieces: 4-6 µs an INSERT of sysbench's,
 * paid on every statement the source executes and every one its replicas' appliers
 * replay. This is the same scan in C, in one pass over the text; no library offers it,
 * so it is written by hand. rpl.core.sql.shapes holds the rules, and its tests check
 * that both give the same answer for the same text.
 *
 * split(sql: str, unescape: Callable[[str], str]) -> tuple[str, list] | None
 *     None when sql is not shapeable; else (key, values) as shapes.split returns them.
 *     unescape is called on a string literal's body only when it holds a backslash or a
 *     doubled quote (shapes passes lexer.unescape_string).
 *
 * The scan, position by position, as the regular expression shapes._SPLIT finds its
 * matches:
 *   `...`   a backquoted identifier (`` inside it is one backquote): kept as written;
 *           one left open makes the text unshapeable;
 *   '...'   not after an identifier character, a dot or a quote: a string literal (\x
 *           escapes any character but a newline, '' is one quote), made ?; one left
 *           open, or after such a character, makes the text unshapeable;
 *   digits  an ASCII digit not after an identifier character, a dot or a quote, with
 *           the decimal digits after it and no identifier character, dot or quote
 *           right after them: an integer, made ?; otherwise left in the text;
 *   " @ # \ ? and the openings of comments (/ *, --) make the text unshapeable.
 * Identifier characters are 0-9 A-Z a-z _ $ and everything from U+0080 on.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* "?", "s", "n", "\0" and "", made once at import. */
static PyObject *QUESTION, *STRING_KIND, *NUMBER_KIND, *NUL, *EMPTY;

typedef struct {
    int kind;
    const void *data;
    Py_ssize_t length;
} Text;

static Py_UCS4 at(const Text *text, Py_ssize_t i)
{
    return i < text->length ? PyUnicode_READ(text->kind, text->data, i) : 0;
}

static int is_ident(Py_UCS4 c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           c == '_' || c == '$' || c >= 0x80;
}

/* The end (one past the closing backquote) of the identifier opening at start, or -1. */
static Py_ssize_t backquoted_end(const Text *text, Py_ssize_t start)
{
    for (Py_ssize_t i = start + 1; i < text->length; i++) {
        if (at(text, i) != '`')
            continue;
        if (at(text, i + 1) != '`')
            return i + 1;
        i++;
    }
    return -1;
}

/* The end of the string literal opening at start, or -1; *plain is cleared when its
 * body holds an escape or a doubled quote. */
static Py_ssize_t string_end(const Text *text, Py_ssize_t start, int *plain)
{
    *plain = 1;
    for (Py_ssize_t i = start + 1; i < text->length; i++) {
        Py_UCS4 c = at(text, i);
        if (c == '\\') {
            if (i + 1 >= text->length || at(text, i + 1) == '\n')
                return -1;
            *plain = 0;
            i++;
        } else if (c == '\'') {
            if (at(text, i + 1) != '\'')
                return i + 1;
            *plain = 0;
            i++;
        }
    }
    return -1;
}

/* The end of the integer starting at start, or -1 when the digits run into an
 * identifier character, a dot or a quote. */
static Py_ssize_t integer_end(const Text *text, Py_ssize_t start)
{
    Py_ssize_t i = start;
    while (i < text->length && Py_UNICODE_ISDECIMAL(at(text, i)))
        i++;
    Py_UCS4 next = at(text, i);
    if (i < text->length && (is_ident(next) || next == '.' || next == '\''))
        return -1;
    return i;
}

static int append_slice(PyObject *list, PyObject *sql, Py_ssize_t start, Py_ssize_t end)
{
    PyObject *piece = PyUnicode_Substring(sql, start, end);
    if (piece == NULL)
        return -1;
    int failed = PyList_Append(list, piece);
    Py_DECREF(piece);
    return failed;
}

static int append(PyObject *list, PyObject *item)
{
    return PyList_Append(list, item);
}

static int append_new(PyObject *list, PyObject *item)
{
    if (item == NULL)
        return -1;
    int failed = PyList_Append(list, item);
    Py_DECREF(item);
    return failed;
}

static PyObject *string_value(PyObject *sql, Py_ssize_t start, Py_ssize_t end, int plain,
                              PyObject *unescape)
{
    PyObject *body = PyUnicode_Substring(sql, start + 1, end - 1);
    if (body == NULL || plain)
        return body;
    PyObject *value = PyObject_CallOneArg(unescape, body);
    Py_DECREF(body);
    return value;
}

/* Scan sql, appending the pieces of the key to parts and the literals to values; 1 when
 * the text is shapeable, 0 when not, -1 on an error. */
static int scan(PyObject *sql, const Text *text, PyObject *unescape, PyObject *parts,
                PyObject *values, PyObject *kinds)
{
    Py_ssize_t kept = 0; /* the text from here on is not yet in parts */
    Py_ssize_t i = 0;
    while (i < text->length) {
        Py_UCS4 c = at(text, i);
        Py_UCS4 before = i > 0 ? at(text, i - 1) : 0;
        int after_word = i > 0 && (is_ident(before) || before == '.' || before == '\'');
        Py_ssize_t end;
        PyObject *value;
        PyObject *kind;
        if (c == '`') {
            end = backquoted_end(text, i);
            if (end < 0)
                return 0;
            i = end;
            continue;
        }
        if (c == '\'' && !after_word) {
            int plain;
            end = string_end(text, i, &plain);
            if (end < 0)
                return 0;
            value = string_value(sql, i, end, plain, unescape);
            kind = STRING_KIND;
        } else if (c >= '0' && c <= '9' && !after_word && (end = integer_end(text, i)) >= 0) {
            PyObject *digits = PyUnicode_Substring(sql, i, end);
            value = digits == NULL ? NULL : PyLong_FromUnicodeObject(digits, 10);
            Py_XDECREF(digits);
            kind = NUMBER_KIND;
        } else if (c == '\'' || c == '"' || c == '@' || c == '#' || c == '\\' || c == '?' ||
                   (c == '/' && at(text, i + 1) == '*') ||
                   (c == '-' && at(text, i + 1) == '-')) {
            return 0;
        } else {
            i++;
            continue;
        }
        if (append_new(values, value) < 0 || append_slice(parts, sql, kept, i) < 0 ||
            append(parts, QUESTION) < 0 || append(kinds, kind) < 0)
            return -1;
        kept = i = end;
    }
    return append_slice(parts, sql, kept, text->length) < 0 ? -1 : 1;
}

static PyObject *key_of(PyObject *parts, PyObject *kinds)
{
    PyObject *kind_text = PyUnicode_Join(EMPTY, kinds);
    PyObject *key = NULL;
    if (kind_text != NULL && append(parts, NUL) == 0 && append(parts, kind_text) == 0)
        key = PyUnicode_Join(EMPTY, parts);
    Py_XDECREF(kind_text);
    return key;
}

static PyObject *split(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyUnicode_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "split(sql: str, unescape: Callable[[str], str])");
        return NULL;
    }
    PyObject *sql = args[0];
    if (PyUnicode_READY(sql) < 0)
        return NULL;
    Text text = {PyUnicode_KIND(sql), PyUnicode_DATA(sql), PyUnicode_GET_LENGTH(sql)};
    PyObject *parts = PyList_New(0), *values = PyList_New(0), *kinds = PyList_New(0);
    PyObject *result = NULL;
    if (parts != NULL && values != NULL && kinds != NULL) {
        int shapeable = scan(sql, &text, args[1], parts, values, kinds);
        if (shapeable == 0) {
            result = Py_NewRef(Py_None);
        } else if (shapeable > 0) {
            PyObject *key = key_of(parts, kinds);
            if (key != NULL)
                result = PyTuple_Pack(2, key, values);
            Py_XDECREF(key);
        }
    }
    Py_XDECREF(parts);
    Py_XDECREF(values);
    Py_XDECREF(kinds);
    return result;
}

static PyMethodDef methods[] = {
    {"split", (PyCFunction)(void (*)(void))split, METH_FASTCALL,
     "split(sql, unescape) -> (key, values) | None: rpl.core.sql.shapes.split in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rpl.core.sql._shapes", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__shapes(void)
{
    QUESTION = PyUnicode_InternFromString("?");
    STRING_KIND = PyUnicode_InternFromString("s");
    NUMBER_KIND = PyUnicode_InternFromString("n");
    NUL = PyUnicode_FromStringAndSize("\0", 1);
    EMPTY = PyUnicode_InternFromString("");
    if (QUESTION == NULL || STRING_KIND == NULL || NUMBER_KIND == NULL || NUL == NULL ||
        EMPTY == NULL)
        return NULL;
    return PyModule_Create(&module);
}
