# cython: language_level=3, boundscheck=False, wraparound=False
"""The compiled twin of ``sim.des.kernel`` (``sim.des.compiled``): the same queue, in C.

Events are kept in a binary heap of C structs (time, then priority and sequence number
packed in one integer), which orders them exactly as the ``.py``'s heap of tuples:
``(time, priority, sequence number)``.  The events themselves sit in a list the garbage
collector traverses, at the slot their entry names.  Every other line follows the ``.py``;
``tests/test_compiled.py`` runs both and compares every record bit for bit.
"""

from libc.stdlib cimport free, malloc, realloc

URGENT = 0
NORMAL = 1
_PENDING = object()


cdef class Event:
    """An event that is triggered once; its callbacks run when it is processed
    (``callbacks`` is None after that)."""

    def __init__(self, Environment env):
        self.env = env
        self.callbacks = []
        self._value = _PENDING

    @property
    def triggered(self):
        return self._value is not _PENDING

    @property
    def value(self):
        return self._value

    def succeed(self, value=None):
        """Trigger the event now (its callbacks run when the queue reaches it)."""
        if self._value is not _PENDING:
            raise RuntimeError(f"{self!r} has already been triggered")
        self._value = value
        self.env._push(self.env.now, NORMAL, self)
        return self


cdef class Timeout(Event):
    """An event processed ``delay`` seconds from now (made by ``Environment.timeout``)."""


cdef class Process(Event):
    """A generator that yields events and resumes when each is processed; as an event, it
    is triggered when the generator returns."""

    def __init__(self, Environment env, generator):
        self.env = env
        self.callbacks = []
        self._value = _PENDING
        self._send = generator.send
        self._resume = self._step
        cdef Event start = Event(env)
        start.callbacks = [self._resume]
        start._value = None
        env._push(env.now, URGENT, start)

    cpdef _step(self, Event event):
        send = self._send
        try:
            event = send(event._value)
            while event.callbacks is None:  # already processed: no wait
                event = send(event._value)
        except StopIteration as stop:
            self._value = stop.value
            self.env._push(self.env.now, NORMAL, self)
            return
        event.callbacks.append(self._resume)


cdef inline bint _before(Entry* a, Entry* b) noexcept:
    """The queue's order: time, then priority, then the order of scheduling."""
    return a.time < b.time or (a.time == b.time and a.order < b.order)


class _Stop(Exception):
    pass


def _stop(event):
    raise _Stop(event._value)


cdef class Environment:
    """Simulated time (``now``, seconds) and the queue of scheduled events; ``scheduled`` and
    ``processed`` count the events so far (what the benchmarks count, where the ``.py``
    queue is replaced by SimPy's to count them)."""

    def __cinit__(self):
        self.capacity = 1024
        self.size = 0
        self.heap = <Entry*>malloc(self.capacity * sizeof(Entry))
        self.free_slots = <Py_ssize_t*>malloc(self.capacity * sizeof(Py_ssize_t))
        self.free_count = 0
        self.events = []
        self.scheduled = 0
        self.processed = 0
        if self.heap is NULL or self.free_slots is NULL:
            raise MemoryError()

    def __init__(self):
        self.now = 0

    def __dealloc__(self):
        free(self.heap)
        free(self.free_slots)

    cdef void _push(self, double time, long long priority, Event event) except *:
        cdef Entry item
        cdef Py_ssize_t pos, parent
        if self.size == self.capacity:
            self._grow()
        item.time = time
        item.order = (priority << 56) | self.scheduled
        self.scheduled += 1
        # The events themselves are kept in a list the garbage collector sees: a cycle
        # through a pending event (a process waiting on it) is still found.
        if self.free_count:
            self.free_count -= 1
            item.slot = self.free_slots[self.free_count]
            self.events[item.slot] = event
        else:
            item.slot = len(self.events)
            self.events.append(event)
        pos = self.size
        self.size += 1
        while pos > 0:
            parent = (pos - 1) >> 1
            if _before(&item, &self.heap[parent]):
                self.heap[pos] = self.heap[parent]
                pos = parent
            else:
                break
        self.heap[pos] = item

    cdef void _grow(self) except *:
        cdef Entry* heap = <Entry*>realloc(self.heap, 2 * self.capacity * sizeof(Entry))
        if heap is NULL:
            raise MemoryError()
        self.heap = heap
        cdef Py_ssize_t* slots = <Py_ssize_t*>realloc(
            self.free_slots, 2 * self.capacity * sizeof(Py_ssize_t)
        )
        if slots is NULL:
            raise MemoryError()
        self.free_slots = slots
        self.capacity *= 2

    cdef Event _pop(self):
        """Remove the first event from the queue, set the clock to its time and return it."""
        cdef Entry top = self.heap[0]
        cdef Entry last
        cdef Py_ssize_t pos = 0, child, n
        self.size -= 1
        n = self.size
        if n > 0:
            last = self.heap[n]
            while True:
                child = 2 * pos + 1
                if child >= n:
                    break
                if child + 1 < n and _before(&self.heap[child + 1], &self.heap[child]):
                    child += 1
                if _before(&self.heap[child], &last):
                    self.heap[pos] = self.heap[child]
                    pos = child
                else:
                    break
            self.heap[pos] = last
        self.now = top.time
        event = <Event>self.events[top.slot]
        self.events[top.slot] = None
        self.free_slots[self.free_count] = top.slot
        self.free_count += 1
        return event

    cpdef Timeout timeout(self, double delay, object value=None):
        if delay < 0:
            raise ValueError(f"Negative delay {delay}")
        cdef Timeout timeout = Timeout.__new__(Timeout)
        timeout.env = self
        timeout.callbacks = []
        timeout._value = value
        self._push(self.now + delay, NORMAL, timeout)
        return timeout

    cpdef Event event(self):
        cdef Event event = Event.__new__(Event)
        event.env = self
        event.callbacks = []
        event._value = _PENDING
        return event

    def process(self, generator):
        return Process(self, generator)

    cpdef run(self, Event until=None):
        """Process events until ``until`` is processed (None: until none is left)."""
        cdef Event event
        cdef list callbacks
        if until is not None:
            if until.callbacks is None:
                return until._value
            until.callbacks.append(_stop)
        try:
            while self.size:
                event = self._pop()
                callbacks, event.callbacks = event.callbacks, None
                for callback in callbacks:
                    callback(event)
                self.processed += 1
        except _Stop as stop:
            return stop.args[0]
        if until is not None:
            raise RuntimeError(f"no events left before {until!r} was triggered")
        return None
