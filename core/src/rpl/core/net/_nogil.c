/*
 * rpl.core.net._nogil: the compiled build's socket calls for rpl.core.net.nogil (core/setup.py).
 *
 * send_many: the group commit leader sends the OK of every transaction of its group.
 * Made one by one they either hold the interpreter lock through each system call (the
 * kernel's loopback send, which also wakes the client, runs while no Python thread can)
 * or release and take it back once per reply (two thread switches each). send_many
 * releases it once around all the sends of a group, so that the kernel's work runs on
 * one core while Python runs on the other.
 *
 * send_now, recv_now, epoll_mod: one system call that cannot block (MSG_DONTWAIT, or an
 * epoll re-arm), made holding the lock. The pure build makes them through ctypes, whose
 * argument conversion costs about twice the system call; here they cost the call.
 *
 * The C library offers no call that writes to many sockets, and Python's socket module
 * releases the lock around every call, so these are written by hand.
 *
 * send_many(fds: list[int], data: list[bytes-like]) -> list[int]
 *     Sends data[i] on the socket fds[i] with MSG_DONTWAIT | MSG_NOSIGNAL, once each
 *     (-1, a closed socket's fileno(), is skipped); returns how many bytes each send
 *     took (0 when it took nothing, failed or was skipped). Nothing
 *     here blocks or raises for a socket's sake: the caller finishes what a send did not
 *     take with a blocking send, which reports the socket's error.
 * send_now(fd: int, data: bytes-like) -> int
 *     One send with MSG_DONTWAIT | MSG_NOSIGNAL: the bytes it took, or -1 (nothing
 *     taken now, or an error the caller's blocking send will report).
 * recv_now(fd: int, buffer: writable bytes-like) -> int
 *     One recv with MSG_DONTWAIT into buffer: the bytes received, 0 at the peer's
 *     orderly close, -1 when nothing is there now (EAGAIN), -2 when the call failed
 *     otherwise (the caller's blocking recv reports the error).
 * epoll_mod(epfd: int, fd: int, events: int) -> int
 *     epoll_ctl(EPOLL_CTL_MOD) of fd to events (data: fd): 0, or -1 when it failed.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <limits.h>
#include <sys/epoll.h>
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

static PyObject *send_now(PyObject *module, PyObject *args)
{
    int fd;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "iy*:send_now", &fd, &view))
        return NULL;
    ssize_t n = send(fd, view.buf, (size_t)view.len, MSG_DONTWAIT | MSG_NOSIGNAL);
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(n < 0 ? -1 : n);
}

static PyObject *recv_now(PyObject *module, PyObject *args)
{
    int fd;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "iw*:recv_now", &fd, &view))
        return NULL;
    ssize_t n = recv(fd, view.buf, (size_t)view.len, MSG_DONTWAIT);
    int error = errno;
    PyBuffer_Release(&view);
    if (n < 0)
        n = (error == EAGAIN || error == EWOULDBLOCK) ? -1 : -2;
    return PyLong_FromSsize_t(n);
}

static PyObject *epoll_mod(PyObject *module, PyObject *args)
{
    int epfd, fd;
    unsigned int events;
    if (!PyArg_ParseTuple(args, "iiI:epoll_mod", &epfd, &fd, &events))
        return NULL;
    struct epoll_event event = {.events = events, .data.fd = fd};
    return PyLong_FromLong(epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &event) == 0 ? 0 : -1);
}

static PyMethodDef methods[] = {
    {"send_many", send_many, METH_VARARGS,
     "send_many(fds, data) -> list[int]: send data[i] on fds[i] without blocking, the "
     "interpreter lock released once; the bytes each send took."},
    {"send_now", send_now, METH_VARARGS,
     "send_now(fd, data) -> int: one send that never blocks, lock held; bytes or -1."},
    {"recv_now", recv_now, METH_VARARGS,
     "recv_now(fd, buffer) -> int: one recv that never blocks, lock held; bytes, 0 at "
     "the peer's close, -1 when nothing is there, or -2 on another failure."},
    {"epoll_mod", epoll_mod, METH_VARARGS,
     "epoll_mod(epfd, fd, events) -> int: EPOLL_CTL_MOD, lock held; 0 or -1."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "rpl.core.net._nogil",
    "Socket calls that never block: many sends with the interpreter lock released once, "
    "single ones holding it.", -1, methods,
};

PyMODINIT_FUNC PyInit__nogil(void)
{
    return PyModule_Create(&module);
}
