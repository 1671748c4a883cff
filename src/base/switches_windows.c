/* Windows' thread states behind base.h's tt__switches_* (Linux's: switches.c): each
 * asked-for thread's switches, from the kernel's context switch events (ETW), which
 * Windows gives an administrator alone. Elevated, ticktrace starts a session of its
 * own ("ticktrace-PID", a system logger session: Windows 8 and later) at the first
 * thread asked for, so no other tool's session is touched: not the one "NT Kernel
 * Logger", nor xperf's or WPR's, and a session of another name is never stopped. A
 * session of ticktrace's name is a run of this process id's that died before it
 * stopped its own: that one is stopped and started again. Its events come to tt-etw
 * (ProcessTrace) a buffer at a time; the states of a thread asked for wait in its
 * entry until a read takes them: switched in, running; out while ready, preempted;
 * out to wait, blocked. Not elevated, or where the session is refused (Wine has none),
 * every thread is refused (*denied): the threads' counters split spikes instead.
 *
 * The session gives every switch of the machine: tt-etw keeps ours (a look in a table,
 * no lock), a cost of its own on a busy machine. Each CPU's buffer comes when full or
 * flushed, once a second at least: a read gives a thread's states only as far as
 * every buffer has come since (TT__ETW_LATE_NS ago, or the last tt__switches_flush),
 * so that its states go in time order; one that comes before a state a read gave is
 * counted as lost, never put out of order.
 *
 * Locks: tt__etw.lock, taken under any of the runtime's (a leaf: the platform's lock,
 * no rank), guards the entries and the table's
 * changes; tt-etw takes it per event of ours, and to compact the table, which it alone
 * reads without it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <evntcons.h>
#include <evntrace.h>

#include "base/base.h"

#define TT__ETW_THREADS 4096u        /* the table: a power of two, open addressing */
#define TT__ETW_GONE UINT32_MAX      /* a table's place whose thread was closed */
#define TT__ETW_STATES (1u << 20)   /* a thread's waiting at most (16 MiB): later ones lost */
#define TT__ETW_LATE_NS 2000000000   /* FlushTimer's second, and as much again */
#define TT__ETW_CSWITCH 36          /* the thread provider's context switch opcode */
#define TT__ETW_READY 1             /* KTHREAD_STATE: Ready, Standby, DeferredReady */
#define TT__ETW_STANDBY 3
#define TT__ETW_DEFERRED_READY 7

/* The kernel's thread events (ThreadGuid) */
static const GUID tt__etw_thread_guid = {0x3d6fa8d1, 0xfe05, 0x11d0,
					 {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}};

/* A thread asked for: struct tt__switches' `map` */
struct tt__etw_thread {
	uint32_t tid;
	int64_t since_ns;   /* asked for then: earlier switches are not its */
	int64_t read_ns;    /* the last state a read gave */
	struct tt_sched_state *at; /* waiting for a read, in time order */
	size_t n, cap;
	uint64_t lost; /* after the last state waiting: none is kept after them */
};

enum { TT__ETW_UNTRIED, TT__ETW_ON, TT__ETW_REFUSED };

static struct {
	struct tt_os_lock lock;
	int state;              /* enum above: the session, asked for once */
	int err;                /* why refused (-errno) */
	TRACEHANDLE session;
	EVENT_TRACE_PROPERTIES *properties;
	wchar_t name[64];
	uint64_t qpc_hz;
	int64_t flushed_ns;     /* every buffer up to then has come (tt__switches_flush) */
	uint32_t tids[TT__ETW_THREADS]; /* 0 free, TT__ETW_GONE; read by tt-etw without the lock */
	struct tt__etw_thread *of[TT__ETW_THREADS];
	uint32_t gone;          /* places TT__ETW_GONE: tt-etw compacts the table past a quarter */
} tt__etw;

/* Where thread `tid` is in the table (lock held, or tt-etw's look), or -1. */
static int tt__etw_place(uint32_t tid)
{
	for (uint32_t i = 0, at = tid * 2654435761u; tid && i < TT__ETW_THREADS; i++, at++) {
		uint32_t held = __atomic_load_n(&tt__etw.tids[at % TT__ETW_THREADS], __ATOMIC_ACQUIRE);
		if (held == tid)
			return (int)(at % TT__ETW_THREADS);
		if (!held)
			return -1;
	}
	return -1;
}

/* Lock held: `t` in the table: 0, or -EBUSY (its tid is there: an exited thread's,
 * not closed yet), -ENOSPC (full). */
static int tt__etw_insert(struct tt__etw_thread *t)
{
	if (tt__etw_place(t->tid) >= 0)
		return -EBUSY;
	for (uint32_t i = 0, at = t->tid * 2654435761u; i < TT__ETW_THREADS; i++, at++) {
		uint32_t *held = &tt__etw.tids[at % TT__ETW_THREADS];
		if (*held && *held != TT__ETW_GONE)
			continue;
		tt__etw.gone -= *held == TT__ETW_GONE;
		tt__etw.of[at % TT__ETW_THREADS] = t;
		__atomic_store_n(held, t->tid, __ATOMIC_RELEASE); /* (tt-etw's look reads it) */
		return 0;
	}
	return -ENOSPC;
}

/* tt-etw, lock held: the table again without its gone places (no other thread reads
 * it without the lock). */
static void tt__etw_compact(void)
{
	static struct tt__etw_thread *live[TT__ETW_THREADS];
	uint32_t n = 0;
	for (uint32_t i = 0; i < TT__ETW_THREADS; i++)
		if (tt__etw.tids[i] && tt__etw.tids[i] != TT__ETW_GONE)
			live[n++] = tt__etw.of[i];
	memset(tt__etw.tids, 0, sizeof tt__etw.tids);
	tt__etw.gone = 0;
	for (uint32_t i = 0; i < n; i++)
		tt__etw_insert(live[i]);
}

/* Lock held: a state of one of ours, in time order among those waiting. */
static void tt__etw_add(uint32_t tid, int64_t ns, uint32_t cpu, uint32_t what)
{
	int at = tid ? tt__etw_place(tid) : -1; /* (0: a CPU's idle thread) */
	struct tt__etw_thread *t = at >= 0 ? tt__etw.of[at] : NULL;
	if (!t || ns < t->since_ns)
		return;
	/* (after one lost, or later than a read that went past it: never out of order) */
	if (t->lost || ns < t->read_ns) {
		t->lost++;
		return;
	}
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
	size_t i = t->n++;
	for (; i && t->at[i - 1].ns > ns; i--) /* (another CPU's buffer came first) */
		t->at[i] = t->at[i - 1];
	t->at[i] = (struct tt_sched_state){ns, cpu, what};
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
	if (tt__etw_place(in) < 0 && tt__etw_place(out) < 0)
		return;
	tt_os_lock(&tt__etw.lock);
	tt__etw_add(out, ns, cpu,
		    out_state == TT__ETW_READY || out_state == TT__ETW_STANDBY ||
				    out_state == TT__ETW_DEFERRED_READY
			    ? TT_SCHED_PREEMPTED
			    : TT_SCHED_BLOCKED);
	tt__etw_add(in, ns, cpu, TT_SCHED_RUNNING);
	if (tt__etw.gone > TT__ETW_THREADS / 4)
		tt__etw_compact();
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

/* Lock held, once: the session and tt-etw, or why not (-errno). */
static int tt__etw_start(void)
{
	if (!tt__elevated())
		return -EACCES;
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
		return rc == ERROR_OUTOFMEMORY ? -ENOMEM : rc == ERROR_ACCESS_DENIED ? -EACCES : -ENOSYS;
	}
	tt__etw.properties = p;
	EVENT_TRACE_LOGFILEW log = {.LoggerName = tt__etw.name,
				    .ProcessTraceMode = PROCESS_TRACE_MODE_REAL_TIME |
							PROCESS_TRACE_MODE_EVENT_RECORD,
				    .EventRecordCallback = tt__etw_event};
	TRACEHANDLE trace = OpenTraceW(&log);
	if (trace == (TRACEHANDLE)INVALID_HANDLE_VALUE) { /* (Wine's: a session, no events) */
		tt__etw_stop();
		return -ENOSYS;
	}
	int err = tt_os_thread_start(NULL, tt__etw_main, (void *)(uintptr_t)trace, 0);
	if (err) {
		CloseTrace(trace);
		tt__etw_stop();
		return err;
	}
	atexit(tt__etw_stop); /* (after the dump at exit, registered after this) */
	return 0;
}

int tt__switches_open(struct tt__switches *s, int tid, int small, int *denied)
{
	(void)small; /* (one session for every thread: nothing of a thread's to map) */
	*s = (struct tt__switches){0};
	*denied = 0;
	struct tt__etw_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	*t = (struct tt__etw_thread){.tid = tid ? (uint32_t)tid : tt_os_thread_id()};
	tt_os_lock(&tt__etw.lock);
	if (tt__etw.state == TT__ETW_UNTRIED) {
		tt__etw.err = tt__etw_start();
		tt__etw.state = tt__etw.err ? TT__ETW_REFUSED : TT__ETW_ON;
	}
	int err = tt__etw.state == TT__ETW_ON ? 0 : tt__etw.err;
	*denied = err != 0;
	/* (after the session began: every switch of its from now on is there) */
	t->since_ns = t->read_ns = tt_os_monotonic_ns();
	if (!err)
		err = tt__etw_insert(t);
	tt_os_unlock(&tt__etw.lock);
	if (err)
		free(t);
	else
		s->map = t;
	return err;
}

int tt__switches_grow(struct tt__switches *s, int tid)
{
	(void)s, (void)tid; /* (each thread's states grow as they come) */
	return 0;
}

void tt__switches_close(struct tt__switches *s)
{
	struct tt__etw_thread *t = s->map;
	if (!t)
		return;
	tt_os_lock(&tt__etw.lock);
	int at = tt__etw_place(t->tid);
	if (at >= 0 && tt__etw.of[at] == t) {
		__atomic_store_n(&tt__etw.tids[at], TT__ETW_GONE, __ATOMIC_RELEASE);
		tt__etw.of[at] = NULL;
		tt__etw.gone++;
	}
	tt_os_unlock(&tt__etw.lock);
	free(t->at);
	free(t);
	s->map = NULL;
}

size_t tt__switches_read(struct tt__switches *s, struct tt_sched_state *out, size_t cap)
{
	struct tt__etw_thread *t = s->map;
	if (!t)
		return 0;
	int64_t settled = tt_os_monotonic_ns() - TT__ETW_LATE_NS;
	tt_os_lock(&tt__etw.lock);
	if (settled < tt__etw.flushed_ns)
		settled = tt__etw.flushed_ns;
	size_t n = 0;
	while (n < cap && n < t->n && t->at[n].ns <= settled)
		n++;
	memcpy(out, t->at, n * sizeof(*out));
	memmove(t->at, t->at + n, (t->n - n) * sizeof(*t->at));
	t->n -= n;
	if (n && out[n - 1].ns > t->read_ns)
		t->read_ns = out[n - 1].ns; /* (one that comes before it from now on is late) */
	if (!t->n && t->lost) { /* (those lost come after every state given) */
		s->lost = t->lost;
		s->gap = 1;
		t->lost = 0;
	}
	tt_os_unlock(&tt__etw.lock);
	return n;
}

uint32_t tt__switches_refusal(int err, int *said)
{
	(void)err;
	*said = 0;
	return TT_THREAD_NO_STATES_FLAGS(TT_NO_STATES_WINDOWS, 0);
}

void tt__switches_flush(void)
{
	tt_os_lock(&tt__etw.lock);
	int on = tt__etw.state == TT__ETW_ON;
	tt_os_unlock(&tt__etw.lock);
	if (!on)
		return;
	int64_t asked = tt_os_monotonic_ns();
	ControlTraceW(tt__etw.session, NULL, tt__etw.properties, EVENT_TRACE_CONTROL_FLUSH);
	Sleep(30); /* (what the kernel's buffers held comes to tt-etw within a moment) */
	tt_os_lock(&tt__etw.lock);
	if (asked > tt__etw.flushed_ns)
		tt__etw.flushed_ns = asked;
	tt_os_unlock(&tt__etw.lock);
}

int tt__switches_unsaid(const struct tt__switches *s)
{
	(void)s; /* (what a thread lost is told as its read comes to it) */
	return 0;
}

void tt__switches_told(struct tt__switches *s)
{
	(void)s;
}
