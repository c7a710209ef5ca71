cimport cython
from sim.des.kernel cimport Environment, Event
from sim.des.pools cimport ServerPool

@cython.locals(join=_SideJoin)
cpdef Event join_side(Environment env, ServerPool pool, double alongside_s, double side_s, double after_s, object delays, tuple cell)

cdef class _SideJoin:
    cdef public double after_s
    cdef public tuple cell
    cdef public object delays
    cdef public Event done
    cdef public double ends_at_s
    cdef public Environment env
    cdef public double joins_at_s
    cdef public double overrun_s
    cdef public long pending
    @cython.locals(now_s=double)
    cpdef side_done(self)
    cpdef joined(self, Event _event)
    @cython.locals(done=Event)
    cpdef _finish(self, double delay_s)
