cdef struct Entry:
    double time
    long long order
    Py_ssize_t slot

cdef class Environment

cdef class Event:
    cdef public object _value
    cdef public list callbacks
    cdef public Environment env

cdef class Timeout(Event):
    pass

cdef class Process(Event):
    cdef public object _send
    cdef public object _resume
    cpdef _step(self, Event event)

cdef class Environment:
    cdef Entry* heap
    cdef Py_ssize_t size, capacity
    cdef Py_ssize_t* free_slots
    cdef Py_ssize_t free_count
    cdef list events
    cdef readonly long long scheduled
    cdef readonly long long processed
    cdef public double now
    cdef void _push(self, double time, long long priority, Event event) except *
    cdef void _grow(self) except *
    cdef Event _pop(self)
    cpdef Timeout timeout(self, double delay, object value=*)
    cpdef Event event(self)
    cpdef run(self, Event until=*)
