/* Windows' thread states: each recording thread's switches, from the kernel's context
 * switch events (ETW), which Windows gives an administrator alone. Elevated, ticktrace
 * starts a session of its own ("ticktrace-PID", a system logger session: Windows 8
 * and later), so no other tool's session is touched: not the one "NT Kernel Logger",
 * nor xperf's or WPR's, and a session of another name is never stopped. A session
 * of ticktrace's name is a run of this process id's that died before it stopped its
 * own: that one is stopped and started again. Its events come to tt-etw (ProcessTrace)
 * a buffer at a time; the thread states of one of ours are kept per thread
 * (TT_SEC_SCHED, as Linux's switches): switched in, running; out while ready,
 * preempted; out to wait, blocked. A thread's states are known from its first
 * switch after tt-sched first listed it. Not elevated, or where the session is refused (Wine has none),
 * the threads' CPU time alone splits spikes (counters.c).
 *
 * The session gives every switch of the machine: tt-etw keeps ours (a look in a table,
 * no lock), a cost of its own on a busy machine.
 *
 * Locks: tt__etw.lock guards the table and the stores; tt-etw takes it per event of
 * ours, tt-sched to add a thread, the dump (holding tt__run_lock) to copy, with a bounded
 * try as counters.c does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include "portable/portable.h"

#define TT__ETW_THREADS 4096u        /* the table: a power of two, open addressing */
#define TT__ETW_STATES (1u << 20)   /* a thread's at most (16 MiB): later ones lost */
#define TT__ETW_CSWITCH 36          /* the thread provider's context switch opcode */
#define TT__ETW_READY 1             /* KTHREAD_STATE: Ready, Standby, DeferredReady */
#define TT__ETW_STANDBY 3
#define TT__ETW_DEFERRED_READY 7

/* The kernel's thread events (ThreadGuid) */
static const GUID tt__etw_thread_guid = {0x3d6fa8d1, 0xfe05, 0x11d0,
					 {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}};

struct tt__etw_thread {
	uint32_t tid; /* 0: free */
	int64_t since_ns;
	struct tt_sched_state *at;
	size_t n, cap;
	uint64_t lost; /* after the last state kept */
};

static struct {
	struct tt_os_lock lock;
	int on;                 /* the session runs and tt-etw reads it */
	TRACEHANDLE session;
	EVENT_TRACE_PROPERTIES *properties;
	wchar_t name[64];
	uint64_t qpc_hz;
	struct tt__etw_thread threads[TT__ETW_THREADS];
} tt__etw;

/* Lock held: thread `tid`'s entry, or where it goes (tid 0 there), or NULL: full. */
static struct tt__etw_thread *tt__etw_find(uint32_t tid)
{
	for (uint32_t i = 0, at = tid * 2654435761u; i < TT__ETW_THREADS; i++, at++) {
		struct tt__etw_thread *t = &tt__etw.threads[at % TT__ETW_THREADS];
		if (t->tid == tid || !t->tid)
			return t;
	}
	return NULL;
}

/* Whether `tid` is one of ours, without the lock: the session gives every thread of
 * the machine's switches, and the lock is taken for ours alone. (A tid is stored once,
 * its entry made before, and never taken back.) */
static int tt__etw_ours(uint32_t tid)
{
	for (uint32_t i = 0, at = tid * 2654435761u; tid && i < TT__ETW_THREADS; i++, at++) {
		uint32_t held = __atomic_load_n(&tt__etw.threads[at % TT__ETW_THREADS].tid, __ATOMIC_ACQUIRE);
		if (held == tid)
			return 1;
		if (!held)
			return 0;
	}
	return 0;
}

/* Lock held: a state of one of ours. */
static void tt__etw_add(uint32_t tid, int64_t ns, uint32_t cpu, uint32_t what)
{
	struct tt__etw_thread *t = tid ? tt__etw_find(tid) : NULL; /* (0: a CPU's idle thread) */
	if (!t || t->tid != tid || ns < t->since_ns)
		return;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct tt_sched_state *grown = cap <= TT__ETW_STATES ? realloc(t->at, cap * sizeof(*grown)) : NULL;
		if (!grown) {
			t->lost++;
			return;
		}
		t->at = grown;
		t->cap = cap;
	}
	if (t->lost) /* (lost ones are after the last kept: none is kept after them) */
		t->lost++;
	else
		t->at[t->n++] = (struct tt_sched_state){ns, cpu, what};
}

static void WINAPI tt__etw_event(EVENT_RECORD *e)
{
	if (e->EventHeader.EventDescriptor.Opcode != TT__ETW_CSWITCH || e->UserDataLength < 24 ||
	    memcmp(&e->EventHeader.ProviderId, &tt__etw_thread_guid, sizeof(GUID)) != 0)
		return;
	const uint8_t *d = e->UserData;
	uint32_t in, out;
	memcpy(&in, d, 4);
	memcpy(&out, d + 4, 4);
	uint8_t out_state = d[14]; /* OldThreadState */
	uint64_t qpc = (uint64_t)e->EventHeader.TimeStamp.QuadPart;
	int64_t ns = (int64_t)(qpc / tt__etw.qpc_hz * 1000000000u + qpc % tt__etw.qpc_hz * 1000000000u / tt__etw.qpc_hz);
	uint32_t cpu = GetEventProcessorIndex(e);
	if (!tt__etw_ours(in) && !tt__etw_ours(out))
		return;
	tt_os_lock(&tt__etw.lock);
	tt__etw_add(out, ns, cpu,
		    out_state == TT__ETW_READY || out_state == TT__ETW_STANDBY ||
				    out_state == TT__ETW_DEFERRED_READY
			    ? TT_SCHED_PREEMPTED
			    : TT_SCHED_BLOCKED);
	tt__etw_add(in, ns, cpu, TT_SCHED_RUNNING);
	tt_os_unlock(&tt__etw.lock);
}

static void *tt__etw_main(void *arg)
{
	TRACEHANDLE trace = (TRACEHANDLE)(uintptr_t)arg;
	ProcessTrace(&trace, 1, NULL, NULL); /* (until the session stops) */
	CloseTrace(trace);
	return NULL;
}

static int tt__elevated(void)
{
	HANDLE token;
	TOKEN_ELEVATION elevation = {0};
	DWORD size;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token))
		return 0;
	GetTokenInformation(token, TokenElevation, &elevation, sizeof elevation, &size);
	CloseHandle(token);
	return elevation.TokenIsElevated != 0;
}

static void tt__etw_stop(void)
{
	if (tt__etw.properties)
		ControlTraceW(tt__etw.session, NULL, tt__etw.properties, EVENT_TRACE_CONTROL_STOP);
}

/* The session's properties, its name after them. */
static EVENT_TRACE_PROPERTIES *tt__etw_properties(void)
{
	size_t size = sizeof(EVENT_TRACE_PROPERTIES) + sizeof tt__etw.name;
	EVENT_TRACE_PROPERTIES *p = calloc(1, size);
	if (!p)
		return NULL;
	p->Wnode.BufferSize = (ULONG)size;
	p->Wnode.Flags = WNODE_FLAG_TRACED_GUID;
	p->Wnode.ClientContext = 1; /* timestamps of QueryPerformanceCounter: the run's clock */
	p->LogFileMode = EVENT_TRACE_REAL_TIME_MODE | EVENT_TRACE_SYSTEM_LOGGER_MODE;
	p->EnableFlags = EVENT_TRACE_FLAG_CSWITCH;
	p->FlushTimer = 1;
	p->LoggerNameOffset = sizeof(EVENT_TRACE_PROPERTIES);
	return p;
}

void tt__etw_start(void)
{
	if (!tt__elevated())
		return;
	LARGE_INTEGER hz;
	QueryPerformanceFrequency(&hz);
	tt__etw.qpc_hz = (uint64_t)hz.QuadPart;
	swprintf(tt__etw.name, sizeof tt__etw.name / sizeof *tt__etw.name, L"ticktrace-%u",
		 (unsigned)GetCurrentProcessId());
	EVENT_TRACE_PROPERTIES *p = tt__etw_properties();
	ULONG rc = p ? StartTraceW(&tt__etw.session, tt__etw.name, p) : ERROR_OUTOFMEMORY;
	if (rc == ERROR_ALREADY_EXISTS) { /* ticktrace's own name: a dead run's */
		ControlTraceW(0, tt__etw.name, p, EVENT_TRACE_CONTROL_STOP);
		free(p);
		p = tt__etw_properties();
		rc = p ? StartTraceW(&tt__etw.session, tt__etw.name, p) : ERROR_OUTOFMEMORY;
	}
	if (rc != ERROR_SUCCESS) { /* (said in the file, as each thread's lack of states) */
		free(p);
		return;
	}
	tt__etw.properties = p;
	EVENT_TRACE_LOGFILEW log = {.LoggerName = tt__etw.name,
				    .ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME |
							PROCESS_TRACE_MODE_EVENT_RECORD,
				    .EventRecordCallback = tt__etw_event};
	TRACEHANDLE trace = OpenTraceW(&log);
	if (trace == (TRACEHANDLE)INVALID_HANDLE_VALUE || /* (Wine's: a session, no events) */
	    tt_os_thread_start(NULL, tt__etw_main, (void *)(uintptr_t)trace, 0) != 0) {
		tt__etw_stop();
		return;
	}
	__atomic_store_n(&tt__etw.on, 1, __ATOMIC_RELEASE); /* (the dump's threads read it) */
	atexit(tt__etw_stop); /* (after the dump at exit, registered after this) */
}

void tt__etw_track(uint32_t tid)
{
	if (!__atomic_load_n(&tt__etw.on, __ATOMIC_ACQUIRE))
		return;
	tt_os_lock(&tt__etw.lock);
	struct tt__etw_thread *t = tt__etw_find(tid);
	if (t && !t->tid) {
		*t = (struct tt__etw_thread){.since_ns = tt_os_monotonic_ns()};
		__atomic_store_n(&t->tid, tid, __ATOMIC_RELEASE); /* (tt__etw_ours reads it) */
	}
	tt_os_unlock(&tt__etw.lock);
}

void tt__etw_flush(void)
{
	if (!__atomic_load_n(&tt__etw.on, __ATOMIC_ACQUIRE))
		return;
	ControlTraceW(tt__etw.session, NULL, tt__etw.properties, EVENT_TRACE_CONTROL_FLUSH);
	Sleep(30); /* (what the kernel's buffers held comes to tt-etw within a moment) */
}

struct tt_sched_state *tt__etw_states(const struct tt__slot *s, size_t *n, struct tt_sched_info *info,
				      uint64_t *lost_after)
{
	*n = 0;
	if (!__atomic_load_n(&tt__etw.on, __ATOMIC_ACQUIRE))
		return NULL;
	int taken = 0;
	for (int tries = 0; tries < 50 && !(taken = tt_os_trylock(&tt__etw.lock)); tries++)
		Sleep(1);
	if (!taken)
		return NULL;
	struct tt__etw_thread *t = tt__etw_find(s->tid);
	struct tt_sched_state *copy = NULL;
	/* Known from its first state on: followed from when tt-sched listed it, it may have
	 * been asleep then (unlike Linux's, which ask as they start: running), so nothing
	 * before its first switch is said; a thread with none has no states. */
	if (t && t->tid == s->tid && t->n && (copy = malloc(t->n * sizeof(*copy)))) {
		memcpy(copy, t->at, t->n * sizeof(*copy));
		*n = t->n;
		*info = (struct tt_sched_info){.thread_index = s->index, .since_ns = t->at[0].ns};
		*lost_after = t->lost;
	}
	tt_os_unlock(&tt__etw.lock);
	return copy;
}
