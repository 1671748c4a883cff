"""A raw file (.ttr) as the tests check it, read after include/ticktrace/format.h
alone (not through the tools: what the runtime wrote, not what the tools make of it).

    f = Ttr(path)
    f.threads[index]     {"tid", "events", "dropped": [by cause], "flags", "name"}
    f.events[index]      [Event(tsc, kind, payload, value)], VALUE records folded in
    f.sites[address]     the site's name
    f.sched[index]       {"states": [(ns, cpu, what)], "unknown": [(from_ns, to_ns)], "lost": N}
    f.snapshot           the SNAPSHOT section, or None
    f.filtered[index]    {"min_dur_ns", "fns": {address: (calls, ticks)}} (FILTERED)
    f.counters[index]    {"flags", "readings": [Reading(ns, run_ns, wait_ns, timeslices,
                          minflt, majflt)]} (SCHEDSTAT)
    f.ns(tsc)            CLOCK_MONOTONIC ns, as the tools convert it
"""
import struct
from collections import namedtuple

HEADER = 144
SEC_PROCESS, SEC_SITES, SEC_THREAD, SEC_EVENTS, SEC_END = 1, 2, 4, 5, 6
SEC_EVENTS_PACKED, SEC_SCHED, SEC_SNAPSHOT, SEC_MACHINE = 0x61, 0x43, 0x44, 0x45
SEC_FILTERED, SEC_SCHEDSTAT = 0x46, 0x48
SCHEDSTAT_BUDGET = 1 << 4  # format.h: TT_SCHEDSTAT_BUDGET
SCHEDSTAT_STEAL = 1
Reading = namedtuple("Reading", "ns run_ns wait_ns timeslices minflt majflt")
REC_BEGIN, REC_END, REC_INSTANT, REC_INSTANT_ARG, REC_COUNTER = 1, 2, 4, 6, 7
REC_FUNC_ENTER, REC_FUNC_EXIT = 10, 11
REC_VALUE, REC_TEXT = 15, 21
DROP_FULL, DROP_NO_MEMORY, DROP_BEHIND, DROP_OVERWRITTEN, DROP_REENTERED = range(5)
THREAD_RUNTIME, THREAD_SCHED = 2, 8
FILE_RING, FILE_SNAPSHOT = 1 << 9, 1 << 12
SNAPSHOT_SPIKE, SNAPSHOT_TRIGGER = 1, 2
THRESHOLD_FROM_GLOBAL = 4
SCHED_RUNNING, SCHED_PREEMPTED, SCHED_BLOCKED = 0, 1, 2
NO_CPU = (1 << 32) - 1  # a RUNNING state no switch says (common.h: TT_NO_CPU)
# struct tt_snapshot_info: kind, thread_index, number, from_tsc, to_tsc, begin_tsc,
# end_tsc, threshold_ns, threshold_from, has_split, on_cpu_ns, preempted_ns,
# blocked_ns, name_len, cuts
SNAPSHOT_INFO = struct.Struct("<IIQQQQQqIIqqqII")
SNAPSHOT_SPLIT = struct.Struct("<qq")  # struct tt_snapshot_split: dur_ns, unknown_ns
# struct tt_snapshot_causes: from, flags, error_ns, stolen_ns, minor_faults, major_faults
SNAPSHOT_CAUSES = struct.Struct("<IIqqQQ")
CAUSES_FROM = {0: None, 1: "switches", 2: "schedstat"}
# struct tt_snapshot_unsplit: why, flags, start_ns, end_ns (why a spike has no split)
SNAPSHOT_UNSPLIT = struct.Struct("<IIqq")
# struct tt_snapshot_unknown: lost, without_ns, why, flags, start_ns, end_ns (its time
# without switches; why the part no reading covers is unknown)
SNAPSHOT_UNKNOWN = struct.Struct("<QqIIqq")
UNSPLIT_THREAD, UNSPLIT_NEVER_READ = 0, 5  # (its thread's flags say why; 1-4: the readings)
SNAPSHOT_CUT = struct.Struct("<IIQQQ")  # thread_index, reserved, events, lost_from, lost_to

# struct tt_machine_info (224 bytes) ends with two struct tt_clock_reading
MACHINE_INFO_SIZE = 224
CLOCK_READING = struct.Struct("<QqqqqiI")
CLOCK_READING_KEYS = "tsc realtime_ns tai_ns esterror_ns maxerror_ns state status".split()



def machine_info(body):
    """A MACHINE section's host name, ids, flags and clock readings (None for the first
    version's, time namespace offsets alone)."""
    if len(body) < MACHINE_INFO_SIZE:
        return None
    host_len = struct.unpack_from("<I", body, 56)[0]
    m = {"flags": struct.unpack_from("<I", body)[0], "boot_id": body[24:40].hex(),
         "machine_id": body[40:56].hex(), "host": body[64:64 + host_len].decode(errors="replace")}
    for name, at in (("start", 128), ("written", 176)):
        m[name] = dict(zip(CLOCK_READING_KEYS, CLOCK_READING.unpack_from(body, at)))
    return m


def read_machine(path):
    """The start anchor (tsc, monotonic ns) and machine_info of a file's MACHINE section,
    read without the rest (a streamed file's packed events too)."""
    data = open(path, "rb").read()
    at = HEADER
    while at + 16 <= len(data):
        kind, _, size = struct.unpack_from("<IIQ", data, at)
        if kind == SEC_MACHINE:
            return struct.unpack_from("<Qq", data, 40), machine_info(data[at + 16:at + 16 + size])
        at += 16 + ((size + 15) & ~15)
    return struct.unpack_from("<Qq", data, 40), None


Event = namedtuple("Event", "tsc kind payload value")


class BadFile(Exception):
    pass


class Ttr:
    def __init__(self, path, packed_events=False):
        """packed_events: a streamed file's EVENTS sections (packed) left unread, its
        other sections read (else refused)."""
        self.path, self.packed_events = path, packed_events
        data = open(path, "rb").read()
        if len(data) < HEADER or data[:8] != b"TICKTRC\x1a":
            raise BadFile("%s: not a ticktrace raw file" % path)
        self.flags = struct.unpack_from("<I", data, 16)[0]
        self.start = struct.unpack_from("<Qq", data, 40)  # tsc, monotonic ns
        self.end = struct.unpack_from("<Qq", data, 72)
        self.pid = struct.unpack_from("<I", data, 104)[0]
        self.threads, self.events, self.sites, self.sched = {}, {}, {}, {}
        self.filtered, self.counters = {}, {}
        self.snapshot, self.has_end = None, False
        self.timens = (0, 0)  # a time namespace's CLOCK_MONOTONIC and BOOTTIME offsets
        self.machine = None  # the MACHINE section's host, ids and clock readings (format.h)
        at = HEADER
        while at + 16 <= len(data):
            kind, _, size = struct.unpack_from("<IIQ", data, at)
            body = data[at + 16:at + 16 + size]
            if len(body) != size:
                raise BadFile("%s: the section at %d runs past the end" % (path, at))
            self._section(kind, body, at)
            at += 16 + ((size + 15) & ~15)

    def _section(self, kind, body, at):
        if kind == SEC_THREAD:
            index, tid, events = struct.unpack_from("<IIQ", body)
            dropped = list(struct.unpack_from("<5Q", body, 16))
            name_len, flags = struct.unpack_from("<II", body, 56)
            self.threads[index] = {"tid": tid, "events": events, "dropped": dropped,
                                   "flags": flags, "name": body[64:64 + name_len].decode()}
            self.events.setdefault(index, [])
        elif kind == SEC_EVENTS:
            index = struct.unpack_from("<I", body)[0]
            out = self.events.setdefault(index, [])
            for tsc, word in struct.iter_unpack("<QQ", body[16:]):
                k = word >> 56
                if k == REC_VALUE and out:
                    out[-1] = out[-1]._replace(value=tsc)
                elif k not in (0, REC_VALUE, REC_TEXT):
                    out.append(Event(tsc, k, word & ((1 << 56) - 1), None))
        elif kind == SEC_EVENTS_PACKED and not self.packed_events:
            raise BadFile("%s: a packed EVENTS section at %d (mode stream): not read here"
                          % (self.path, at))
        elif kind == SEC_SITES:
            count, pos = struct.unpack_from("<Q", body)[0], 8
            for _ in range(count):
                address, _, name_len, file_len, func_len = struct.unpack_from("<QIIII", body, pos)
                pos += 24
                self.sites[address] = body[pos:pos + name_len].decode(errors="replace")
                pos += name_len + file_len + func_len
        elif kind == SEC_SCHED:
            index, _, lost, since, exited = struct.unpack_from("<IIQqq", body)
            s = self.sched.setdefault(index, {"states": [], "unknown": [], "lost": 0, "exited": 0})
            s["lost"] += lost
            s["exited"] = exited or s["exited"]  # (0: not said)
            states = list(struct.iter_unpack("<qII", body[32:]))
            # as common/sched.c's tt_sched_head reads it: not known, back to the last
            # state before (or from the start), until since_ns, when switches were lost
            # or not asked for yet; then, up to a first switch out, it ran
            last = s["states"][-1][0] if s["states"] else None
            if lost or last is None or since > last:
                s["unknown"].append((-1 << 63 if last is None else last, since))
                if (states[0][2] != SCHED_RUNNING and since < states[0][0]) if states else not lost:
                    s["states"].append((since, NO_CPU, SCHED_RUNNING))
            s["states"] += states
        elif kind == SEC_SNAPSHOT:
            fields = SNAPSHOT_INFO.unpack_from(body)
            keys = ("kind thread_index number from_tsc to_tsc begin_tsc end_tsc threshold_ns "
                    "threshold_from has_split on_cpu_ns preempted_ns blocked_ns name_len "
                    "cuts").split()
            snap = dict(zip(keys, fields))
            pos = SNAPSHOT_INFO.size
            snap["name"] = body[pos:pos + snap["name_len"]].decode(errors="replace")
            pos = (pos + snap["name_len"] + 7) & ~7
            snap["cut"] = {}
            for _ in range(snap["cuts"]):
                index, _, events, lost_from, lost_to = SNAPSHOT_CUT.unpack_from(body, pos)
                snap["cut"][index] = {"events": events, "lost_from_tsc": lost_from,
                                      "lost_to_tsc": lost_to}
                pos += SNAPSHOT_CUT.size
            # struct tt_snapshot_split, where this version wrote one: the duration the
            # split makes up, and its unknown part
            if len(body) >= pos + SNAPSHOT_SPLIT.size:
                snap["dur_ns"], snap["unknown_ns"] = SNAPSHOT_SPLIT.unpack_from(body, pos)
            # struct tt_snapshot_causes, after it where this version wrote one
            pos += SNAPSHOT_SPLIT.size
            if len(body) >= pos + SNAPSHOT_CAUSES.size:
                keys = "causes_from causes_flags causes_error_ns stolen_ns minor_faults major_faults".split()
                snap.update(zip(keys, SNAPSHOT_CAUSES.unpack_from(body, pos)))
            # struct tt_snapshot_unsplit, after that where this version wrote one
            pos += SNAPSHOT_CAUSES.size
            if len(body) >= pos + SNAPSHOT_UNSPLIT.size:
                keys = "unsplit_why unsplit_flags unsplit_start_ns unsplit_end_ns".split()
                snap.update(zip(keys, SNAPSHOT_UNSPLIT.unpack_from(body, pos)))
            pos += SNAPSHOT_UNSPLIT.size
            if len(body) >= pos + SNAPSHOT_UNKNOWN.size:
                keys = "switches_lost without_switches_ns unknown_why unknown_flags unknown_start_ns unknown_end_ns"
                snap.update(zip(keys.split(), SNAPSHOT_UNKNOWN.unpack_from(body, pos)))
            self.snapshot = snap
        elif kind == SEC_MACHINE:
            self.timens = struct.unpack_from("<qq", body, 8)
            self.machine = machine_info(body)
        elif kind == SEC_FILTERED:
            index, count, min_dur = struct.unpack_from("<IIQ", body)
            fns = {a: (calls, ticks) for a, calls, ticks in
                   struct.iter_unpack("<QQQ", body[16:16 + 24 * count])}
            self.filtered[index] = {"min_dur_ns": min_dur, "fns": fns}
        elif kind == SEC_SCHEDSTAT:
            index, flags, _lost = struct.unpack_from("<IIQ", body)
            c = self.counters.setdefault(index, {"flags": flags, "readings": [], "unread": 0})
            at = 16
            if flags & SCHEDSTAT_BUDGET:  # (the scopes tt-sched's budget left unread)
                c["unread"] = max(c["unread"], struct.unpack_from("<Q", body, at)[0])
                at += 16
            c["readings"] += [Reading(*r) for r in struct.iter_unpack("<qQQQQQ", body[at:])]
        elif kind == SEC_END:
            self.has_end = True

    def ns(self, tsc):
        """CLOCK_MONOTONIC ns of a TSC, between the two anchors (format.h's
        TT_TSC_ANCHORS), rounded down as exact integers."""
        (t0, n0), (t1, n1) = self.start, self.end
        return n0 + (tsc - t0) * (n1 - n0) // (t1 - t0)

    def ticks(self, ns):
        """The TSC ticks of `ns` nanoseconds."""
        (t0, n0), (t1, n1) = self.start, self.end
        return ns * (t1 - t0) // (n1 - n0)

    def index_of(self, tid):
        return next((i for i, t in self.threads.items() if t["tid"] == tid), None)

    def name(self, event):
        return self.sites.get(event.payload)

    def off_cpu(self, index, begin_ns, end_ns):
        """(preempted, blocked, unknown) ns of [begin_ns, end_ns] by the thread's
        states: each state holds from its time to the next; what the SCHED sections
        say is not known, and the time before the first state, are unknown."""
        s = self.sched.get(index)
        if not s or not s["states"]:
            return 0, 0, end_ns - begin_ns
        spent = {SCHED_PREEMPTED: 0, SCHED_BLOCKED: 0}
        states = s["states"]
        for i, (ns, _, what) in enumerate(states):
            until = states[i + 1][0] if i + 1 < len(states) else end_ns
            lo, hi = max(ns, begin_ns), min(until, end_ns)
            if hi > lo and what in spent:
                spent[what] += hi - lo
        unknown, reached = 0, begin_ns
        for lo, hi in sorted(s["unknown"] + [(-1 << 63, states[0][0])]):
            lo, hi = max(lo, reached), min(hi, end_ns)
            if hi > lo:
                unknown += hi - lo
                reached = hi
        return spent[SCHED_PREEMPTED], spent[SCHED_BLOCKED], unknown
