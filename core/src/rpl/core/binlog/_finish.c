/*
 * rpl.core.binlog._finish: the last touch on a group's events before they are written
 * (the compiled build only; core/setup.py).
 *
 * The group commit leader encodes a group's events with log_pos and CRC left open, then
 * sets both for the file offset the group is written at. In Python that is a loop of
 * small calls per event (unpack the size, pack log_pos, slice, crc32, pack the CRC) with
 * the interpreter lock held: a few percent of a commit's CPU. This is the same loop in
 * C, over the bytearray in place. No library offers it, so it is written by hand.
 *
 * finish_events(buf: bytearray, file_position: int, checksum: bool) -> int
 *     For every event in buf (whole events back to back): when file_position >= 0, set
 *     its log_pos (header bytes 13-16) to file_position + the offset of its end; then,
 *     when checksum is true or the event is a FORMAT_DESCRIPTION, set its last four
 *     bytes to the CRC32 of the bytes before them (an FD's LOG_EVENT_BINLOG_IN_USE_F
 *     flag counted as clear, as MySQL does). Returns -1 when every event was finished,
 *     else the buffer offset of the first event whose size is impossible (shorter than
 *     a header, or past the end of buf); the events before it are finished, it and
 *     what follows are left as they were.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <zlib.h>

#define HEADER_LEN 19
#define CHECKSUM_LEN 4
#define FORMAT_DESCRIPTION_EVENT 15
#define FLAGS_AT 17
#define BINLOG_IN_USE 0x1

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(unsigned char *p, uint32_t value)
{
    p[0] = (unsigned char)value;
    p[1] = (unsigned char)(value >> 8);
    p[2] = (unsigned char)(value >> 16);
    p[3] = (unsigned char)(value >> 24);
}

static uint32_t event_crc(const unsigned char *event, size_t length)
{
    if (event[4] == FORMAT_DESCRIPTION_EVENT && (event[FLAGS_AT] & BINLOG_IN_USE)) {
        unsigned char flag = event[FLAGS_AT] & (unsigned char)~BINLOG_IN_USE;
        uLong crc = crc32(0L, event, FLAGS_AT);
        crc = crc32(crc, &flag, 1);
        return (uint32_t)crc32(crc, event + FLAGS_AT + 1, (uInt)(length - FLAGS_AT - 1));
    }
    return (uint32_t)crc32(0L, event, (uInt)length);
}

static PyObject *finish_events(PyObject *module, PyObject *args)
{
    PyObject *buffer;
    long long file_position;
    int checksum;
    if (!PyArg_ParseTuple(args, "O!Lp:finish_events", &PyByteArray_Type, &buffer,
                          &file_position, &checksum))
        return NULL;
    unsigned char *buf = (unsigned char *)PyByteArray_AS_STRING(buffer);
    Py_ssize_t end = PyByteArray_GET_SIZE(buffer);
    Py_ssize_t offset = 0;
    while (offset < end) {
        if (end - offset < HEADER_LEN)
            return PyLong_FromSsize_t(offset);
        uint32_t size = get_u32(buf + offset + 9);
        if (size < HEADER_LEN || (Py_ssize_t)size > end - offset)
            return PyLong_FromSsize_t(offset);
        unsigned char *event = buf + offset;
        if (file_position >= 0)
            put_u32(event + 13, (uint32_t)(file_position + offset + size));
        if (checksum || event[4] == FORMAT_DESCRIPTION_EVENT) {
            if (size < HEADER_LEN + CHECKSUM_LEN)
                return PyLong_FromSsize_t(offset);
            size_t covered = size - CHECKSUM_LEN;
            put_u32(event + covered, event_crc(event, covered));
        }
        offset += size;
    }
    return PyLong_FromLong(-1);
}

static PyMethodDef methods[] = {
    {"finish_events", finish_events, METH_VARARGS,
     "Set every event's log_pos (file_position >= 0) and CRC in a bytearray, in place; "
     "-1, or the offset of the first event whose size is impossible."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_finish",
    "The compiled build's event finishing loop (rpl.core.binlog.events.fastpath).", -1, methods,
};

PyMODINIT_FUNC PyInit__finish(void)
{
    return PyModule_Create(&module);
}
