/*
 * rpl.core.net._sendmany: many small writes to many sockets, with CPython's interpreter
 * lock released once for all of them (the compiled build only; core/setup.py).
 *
 * The group commit leader sends the OK of every transaction of its group. Made one by one
 * they either hold the interpreter lock through each system call (nogil.sendall: the
 * kernel's loopback send, which also wakes the client, runs while no Python thread can)
 * or release and take it back once per reply (socket.sendall: two thread switches each).
 * send_many releases it once around all the sends of a group, so that the kernel's work
 * runs on one core while Python runs on the other. The C library offers no call that
 * writes to many sockets, so this is written by hand.
 *
 * send_many(fds: list[int], data: list[bytes-like]) -> list[int]
 *     Sends data[i] on the socket fds[i] with MSG_DONTWAIT | MSG_NOSIGNAL, once each
 *     (-1, a closed socket's fileno(), is skipped); returns how many bytes each send
 *     took (0 when it took nothing, failed or was skipped). Nothing
 *     here blocks or raises for a socket's sake: the caller finishes what a send did not
 *     take with a blocking send, which reports the socket's error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <sys/socket.h>
#include <sys/types.h>

static void release_views(Py_buffer *views, Py_ssize_t count)
{
    for (Py_ssize_t i = 0; i < count; i++)
        PyBuffer_Release(&views[i]);
}

static PyObject *send_many(PyObject *module, PyObject *args)
{
    PyObject *fds, *data;
    if (!PyArg_ParseTuple(args, "O!O!:send_many", &PyList_Type, &fds, &PyList_Type, &data))
        return NULL;
    Py_ssize_t count = PyList_GET_SIZE(fds);
    if (PyList_GET_SIZE(data) != count) {
        PyErr_SetString(PyExc_ValueError, "send_many: fds and data differ in length");
        return NULL;
    }
    int *fd = PyMem_Calloc(count ? count : 1, sizeof(int));
    ssize_t *sent = PyMem_Calloc(count ? count : 1, sizeof(ssize_t));
    Py_buffer *views = PyMem_Calloc(count ? count : 1, sizeof(Py_buffer));
    PyObject *result = NULL;
    Py_ssize_t held = 0;
    if (fd == NULL || sent == NULL || views == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* Views hold their objects: the buffers stay valid while the lock is released. */
    for (; held < count; held++) {
        long value = PyLong_AsLong(PyList_GET_ITEM(fds, held));
        if (value == -1 && PyErr_Occurred())
            goto done;
        if (value < -1 || value > INT_MAX) {
            PyErr_SetString(PyExc_ValueError, "send_many: not a file descriptor");
            goto done;
        }
        fd[held] = (int)value;
        if (PyObject_GetBuffer(PyList_GET_ITEM(data, held), &views[held], PyBUF_SIMPLE) < 0)
            goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++) {
        if (fd[i] < 0)
            continue; /* a closed socket (fileno() -1): nothing sent */
        ssize_t n = send(fd[i], views[i].buf, (size_t)views[i].len, MSG_DONTWAIT | MSG_NOSIGNAL);
        sent[i] = n < 0 ? 0 : n;
    }
    Py_END_ALLOW_THREADS
    result = PyList_New(count);
    if (result == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *n = PyLong_FromSsize_t(sent[i]);
        if (n == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, i, n);
    }
done:
    if (views != NULL)
        release_views(views, held);
    PyMem_Free(views);
    PyMem_Free(sent);
    PyMem_Free(fd);
    return result;
}

static PyMethodDef methods[] = {
    {"send_many", send_many, METH_VARARGS,
     "send_many(fds, data) -> list[int]: send data[i] on fds[i] without blocking, the "
     "interpreter lock released once; the bytes each send took."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rpl.core.net._sendmany",
    "Many non-blocking socket writes with the interpreter lock released once.", -1, methods,
};

PyMODINIT_FUNC PyInit__sendmany(void)
{
    return PyModule_Create(&module);
}
