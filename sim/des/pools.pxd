cimport cython
from sim.des.kernel cimport Environment, Event, Timeout

cdef class TimeWeighted:
    cdef public Environment _env
    cdef public double start_s
    cdef public double end_s
    cdef public long level
    cdef public double offset
    @cython.locals(now_s=double, at_s=double)
    cpdef change(self, long delta)
    cpdef double area(self)
    cpdef double mean(self)

cdef class ServerPool:
    cdef public object name
    cdef public long capacity
    cdef public long free
    cdef public Environment _env
    cdef public object _queue
    cdef public object _give_back
    cdef public TimeWeighted busy
    cdef public TimeWeighted waiting
    @cython.locals(busy=TimeWeighted, now_s=double)
    cpdef bint take(self)
    cpdef wait(self, object start)
    cpdef Event hold(self, double service_s)
    @cython.locals(busy=TimeWeighted, now_s=double)
    cpdef release(self)
    cpdef _release_held(self, Event _event)
    cpdef double utilization(self)

cdef class _AsideHolding:
    cdef ServerPool pool
    cdef double service_s
    cdef object done
    cpdef start(self)
    cpdef finish(self, Event _event)
