/* The platform layer on Windows x64 (platform.h): Win32 alone, nothing of the C
 * library's threads or POSIX emulation. Functions Windows gained later
 * (GetThreadDescription, 10 1607; QueryInterruptTimePrecise, 10) are looked up, and
 * missing they say nothing rather than fail. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <intrin.h>
#include <io.h>
#include <windows.h>
#include <psapi.h>
#include <tlhelp32.h>
#include <winternl.h>

#include "platform/platform.h"

/* ---- threads ---- */

uintptr_t tt_os_thread_key(void)
{
	uintptr_t self; /* (as asm/record_win64.asm reads it; __readgsqword(0x30) warns) */
	__asm__("mov %%gs:0x30, %0" : "=r"(self));
	return self;
}

uint32_t tt_os_thread_id(void)
{
	return GetCurrentThreadId();
}

int tt_os_thread_alive(uint32_t tid)
{
	HANDLE thread = OpenThread(SYNCHRONIZE, FALSE, tid);
	if (!thread)
		return 0;
	int alive = WaitForSingleObject(thread, 0) == WAIT_TIMEOUT;
	CloseHandle(thread);
	return alive;
}

static FARPROC tt_os_kernel_function(const char *name)
{
	HMODULE kernel = GetModuleHandleW(L"kernelbase.dll");
	FARPROC fn = kernel ? GetProcAddress(kernel, name) : NULL;
	if (!fn && (kernel = GetModuleHandleW(L"kernel32.dll")))
		fn = GetProcAddress(kernel, name);
	return fn;
}

/* UTF-16 to UTF-8, cut to size - 1 bytes, NUL-ended: the length. */
static size_t tt_os_utf8(const wchar_t *text, char *out, size_t size)
{
	if (!size)
		return 0;
	int n = WideCharToMultiByte(CP_UTF8, 0, text, -1, out, (int)size, NULL, NULL);
	if (n <= 0) {
		/* too long for `out`: the whole (however long: a longer TICKTRACE_OUT came out
		 * empty, the default name), then cut where a character begins (common's
		 * tt_utf8_cut, which this layer does not call) */
		int whole_size = WideCharToMultiByte(CP_UTF8, 0, text, -1, NULL, 0, NULL, NULL);
		char *whole = whole_size > 0 ? HeapAlloc(GetProcessHeap(), 0, (size_t)whole_size) : NULL;
		size_t len = 0;
		if (whole && WideCharToMultiByte(CP_UTF8, 0, text, -1, whole, whole_size, NULL, NULL) > 0) {
			len = strlen(whole) < size - 1 ? strlen(whole) : size - 1;
			while (len > 0 && ((unsigned char)whole[len] & 0xC0) == 0x80)
				len--;
			memcpy(out, whole, len);
		}
		if (whole)
			HeapFree(GetProcessHeap(), 0, whole);
		out[len] = 0;
		return len;
	}
	return (size_t)n - 1;
}

/* GetThreadDescription and SetThreadDescription (Windows 10 1607 on), looked up once:
 * never by a thread's exit callback, which runs under the lock of fiber local storage,
 * where the loader's lock that GetProcAddress takes deadlocked against threads
 * starting. */
typedef HRESULT(WINAPI *tt_os_describe_fn)(HANDLE, PWSTR *);
typedef HRESULT(WINAPI *tt_os_name_fn)(HANDLE, PCWSTR);
static INIT_ONCE tt_os_describe_once = INIT_ONCE_STATIC_INIT;
static tt_os_describe_fn tt_os_describe;
static tt_os_name_fn tt_os_name;

static BOOL CALLBACK tt_os_describe_find(PINIT_ONCE once, PVOID unused, PVOID *unused_too)
{
	(void)once;
	(void)unused;
	(void)unused_too;
	tt_os_describe = (tt_os_describe_fn)(void (*)(void))tt_os_kernel_function("GetThreadDescription");
	tt_os_name = (tt_os_name_fn)(void (*)(void))tt_os_kernel_function("SetThreadDescription");
	return TRUE;
}

void tt_os_thread_set_name(const char *name)
{
	wchar_t wide[64];
	InitOnceExecuteOnce(&tt_os_describe_once, tt_os_describe_find, NULL, NULL);
	if (tt_os_name && MultiByteToWideChar(CP_UTF8, 0, name, -1, wide, 64))
		tt_os_name(GetCurrentThread(), wide);
}

static size_t tt_os_thread_name_by(HANDLE thread, char *name, size_t size)
{
	InitOnceExecuteOnce(&tt_os_describe_once, tt_os_describe_find, NULL, NULL);
	tt_os_describe_fn describe = tt_os_describe;
	PWSTR text = NULL;
	size_t len = 0;
	if (size)
		name[0] = 0;
	if (describe && SUCCEEDED(describe(thread, &text)) && text) {
		len = tt_os_utf8(text, name, size);
		LocalFree(text);
	}
	return len;
}

size_t tt_os_thread_name(char *name, size_t size)
{
	return tt_os_thread_name_by(GetCurrentThread(), name, size);
}

size_t tt_os_thread_name_of(uint32_t tid, char *name, size_t size)
{
	HANDLE thread = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, tid);
	if (!thread) {
		if (size)
			name[0] = 0;
		return 0;
	}
	size_t len = tt_os_thread_name_by(thread, name, size);
	CloseHandle(thread);
	return len;
}

/* One fiber local storage index, whose callback Windows calls as each thread that set
 * a value exits (in a DLL and in a program linked with the static library alike), and
 * as the process ends, for the thread that ends it: tt_os_at_exit's end() then runs
 * too, where the process ends without the C library's exit (_exit, ExitProcess): a
 * DLL's atexit runs at its detach, but a program's, linked with the static library,
 * never did (its run was lost, silently). (A program's TLS callbacks are not called as
 * it ends under Wine.) Its value is the thread's values of every key, which the
 * callback runs in rounds, as glibc does its keys' destructors: Windows calls each
 * index's callback once. A thread local storage index finds them too while the
 * callback runs (Windows may clear the fiber's value before it calls). */
#define TT_OS_EXIT_KEYS 8
struct tt_os_exits {
	void *value[TT_OS_EXIT_KEYS];
};
static INIT_ONCE tt_os_exit_once = INIT_ONCE_STATIC_INIT;
static DWORD tt_os_exit_index = FLS_OUT_OF_INDEXES, tt_os_exits_mine = TLS_OUT_OF_INDEXES;
static SRWLOCK tt_os_keys_lock = SRWLOCK_INIT;
static void (*tt_os_key_exits[TT_OS_EXIT_KEYS])(void *value);
static uint32_t tt_os_keys;
/* A thread's values once its exits ran: set no more */
static struct tt_os_exits tt_os_exits_done;
static BOOLEAN(NTAPI *tt_os_shutting_down)(void); /* ntdll's RtlDllShutdownInProgress */
static void (*tt_os_end)(void);

static void NTAPI tt_os_exiting(PVOID values)
{
	struct tt_os_exits *mine = values;
	uint32_t keys = __atomic_load_n(&tt_os_keys, __ATOMIC_ACQUIRE);
	for (int round = 0, called = 1; called && round < TT_OS_EXIT_ROUNDS; round++) {
		called = 0;
		for (uint32_t k = 0; k < keys; k++) {
			void *value = mine->value[k];
			if (!value)
				continue;
			mine->value[k] = NULL;
			called = 1;
			tt_os_key_exits[k](value);
		}
	}
	TlsSetValue(tt_os_exits_mine, &tt_os_exits_done);
	HeapFree(GetProcessHeap(), 0, mine);
	if (tt_os_end && tt_os_shutting_down && tt_os_shutting_down())
		tt_os_end();
}

static BOOL CALLBACK tt_os_exit_alloc(PINIT_ONCE once, PVOID unused, PVOID *unused_too)
{
	(void)once;
	(void)unused;
	(void)unused_too;
	InitOnceExecuteOnce(&tt_os_describe_once, tt_os_describe_find, NULL, NULL); /* (for the exits) */
	tt_os_shutting_down = (BOOLEAN(NTAPI *)(void))(void (*)(void))GetProcAddress(GetModuleHandleA("ntdll.dll"),
										    "RtlDllShutdownInProgress");
	tt_os_exits_mine = TlsAlloc();
	if (tt_os_exits_mine == TLS_OUT_OF_INDEXES)
		return FALSE;
	tt_os_exit_index = FlsAlloc(tt_os_exiting);
	return tt_os_exit_index != FLS_OUT_OF_INDEXES;
}

int tt_os_exit_key_make(struct tt_os_exit_key *key)
{
	if (__atomic_load_n(&key->id, __ATOMIC_ACQUIRE))
		return 0;
	if (!InitOnceExecuteOnce(&tt_os_exit_once, tt_os_exit_alloc, NULL, NULL))
		return -EAGAIN;
	int err = 0;
	AcquireSRWLockExclusive(&tt_os_keys_lock);
	if (!key->id && tt_os_keys == TT_OS_EXIT_KEYS) {
		err = -EAGAIN;
	} else if (!key->id) {
		tt_os_key_exits[tt_os_keys] = key->exit;
		__atomic_store_n(&tt_os_keys, tt_os_keys + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&key->id, tt_os_keys, __ATOMIC_RELEASE);
	}
	ReleaseSRWLockExclusive(&tt_os_keys_lock);
	return err;
}

int tt_os_exit_set(struct tt_os_exit_key *key, void *value)
{
	if (!key->id) /* (not made) */
		return -EINVAL;
	struct tt_os_exits *mine = TlsGetValue(tt_os_exits_mine);
	if (mine == &tt_os_exits_done)
		return value ? -ESRCH : 0;
	if (!mine) {
		if (!value)
			return 0;
		mine = HeapAlloc(GetProcessHeap(), HEAP_ZERO_MEMORY, sizeof *mine);
		if (!mine)
			return -ENOMEM;
		if (!FlsSetValue(tt_os_exit_index, mine)) {
			HeapFree(GetProcessHeap(), 0, mine);
			return -ENOMEM;
		}
		TlsSetValue(tt_os_exits_mine, mine);
	}
	mine->value[key->id - 1] = value;
	return 0;
}

/* The watch of the program's last thread (below), ended and waited for as the C
 * library's exit begins (before ExitProcess ends the threads still running): ended by
 * ExitProcess, its thread took Wine down now and then as the process ended (SIGSEGV in
 * Wine's own code, that thread's, past the program's exit: 7 of 8800 short runs). */
static HANDLE tt_os_watch_stop; /* set: the watch returns */
static struct tt_os_thread tt_os_watch;
static DWORD tt_os_watch_id;

static void tt_os_ending(void)
{
	if (tt_os_watch.handle && GetCurrentThreadId() != tt_os_watch_id) {
		SetEvent(tt_os_watch_stop);
		WaitForSingleObject((HANDLE)tt_os_watch.handle, 1000); /* (a look takes ms) */
	}
	tt_os_end();
}

static int __cdecl tt_os_end_onexit(void)
{
	tt_os_ending();
	return 0;
}

/* ticktrace's own threads (tt_os_thread_start's) while they run, which the watch of
 * the program's last thread does not count: their ids, 0 free, TT_OS_CLAIMED taken for
 * one starting (ids are multiples of 4). */
#define TT_OS_OWN_THREADS 16
#define TT_OS_CLAIMED 1
static DWORD tt_os_own[TT_OS_OWN_THREADS];

static int tt_os_is_own(DWORD tid)
{
	for (int i = 0; i < TT_OS_OWN_THREADS; i++)
		if (__atomic_load_n(&tt_os_own[i], __ATOMIC_ACQUIRE) == tid)
			return 1;
	return 0;
}

/* Windows ends a process as its last thread ends, ticktrace's included: once the
 * program's own have all ended (main left by ExitThread, a thread ended by a stack
 * overflow), ticktrace's kept it alive, with no trace written. Checked every
 * TT_OS_WATCH_MS (a snapshot of the system's threads: a few ms on a busy machine,
 * so seldom):
 * then the run ends and the process exits with the code of the program's thread last
 * seen to end (0 when more than TT_OS_WATCHED were running at the last look). */
#define TT_OS_WATCH_MS 1000
#define TT_OS_WATCHED 8

/* A crash: 1 once the first began (its trace written once); the exception it was (0:
 * abort()'s, or none yet) */
static LONG tt_os_crash_once;
static DWORD tt_os_crash_code;

static int tt_os_crash_first(DWORD code)
{
	if (InterlockedExchange(&tt_os_crash_once, 1) != 0)
		return 0;
	__atomic_store_n(&tt_os_crash_code, code, __ATOMIC_RELEASE);
	return 1;
}

static int tt_os_wine(void)
{
	return GetProcAddress(GetModuleHandleA("ntdll.dll"), "wine_get_version") != NULL;
}

/* The program's threads now, their handles into `seen` (up to TT_OS_WATCHED, *n of
 * them): the number; -1: no snapshot. */
static int tt_os_program_threads(HANDLE *seen, size_t *n)
{
	HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
	if (snap == INVALID_HANDLE_VALUE)
		return -1;
	int threads = 0;
	DWORD pid = GetCurrentProcessId();
	THREADENTRY32 t = {.dwSize = sizeof t};
	for (BOOL more = Thread32First(snap, &t); more; more = Thread32Next(snap, &t)) {
		if (t.th32OwnerProcessID != pid || tt_os_is_own(t.th32ThreadID))
			continue;
		if (threads++ < TT_OS_WATCHED)
			seen[(*n)++] = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, t.th32ThreadID);
	}
	CloseHandle(snap);
	return threads;
}

static void *tt_os_watch_last(void *unused)
{
	(void)unused;
	HANDLE seen[TT_OS_WATCHED] = {0};
	size_t nseen = 0;
	for (int threads;;) {
		HANDLE now[TT_OS_WATCHED];
		size_t n = 0;
		if ((threads = tt_os_program_threads(now, &n)) == 0)
			break;
		for (size_t i = 0; i < nseen; i++)
			if (seen[i])
				CloseHandle(seen[i]);
		nseen = threads > 0 && threads <= TT_OS_WATCHED ? n : 0;
		memcpy(seen, now, nseen * sizeof *seen);
		for (size_t i = nseen; i < n; i++)
			if (now[i])
				CloseHandle(now[i]);
		if (WaitForSingleObject(tt_os_watch_stop, TT_OS_WATCH_MS) != WAIT_TIMEOUT) {
			for (size_t i = 0; i < nseen; i++)
				if (seen[i])
					CloseHandle(seen[i]);
			return NULL; /* (the program's exit began) */
		}
	}
	DWORD code = 0;
	ULONGLONG last = 0;
	for (size_t i = 0; i < nseen; i++) {
		FILETIME created, exited, kernel, user;
		DWORD c;
		if (seen[i] && GetThreadTimes(seen[i], &created, &exited, &kernel, &user) &&
		    GetExitCodeThread(seen[i], &c)) {
			ULONGLONG at = (ULONGLONG)exited.dwHighDateTime << 32 | exited.dwLowDateTime;
			if (at >= last) {
				last = at;
				code = c;
			}
		}
	}
	/* After a crash, its code, as Windows ends the process (the last thread's was 0:
	 * Wine ends a thread whose stack overflowed alone, with no code of its own, and an
	 * unhandled exception's end raced the look: exit 0 after a crash, r50 #2, #4);
	 * Wine, without ticktrace's threads, exits 1 as that thread ends */
	DWORD crash = __atomic_load_n(&tt_os_crash_code, __ATOMIC_ACQUIRE);
	if (crash)
		code = crash == EXCEPTION_STACK_OVERFLOW && tt_os_wine() ? 1 : crash;
	tt_os_end();
	ExitProcess(code);
}

int tt_os_at_exit(void (*end)(void))
{
	tt_os_end = end;
	HMODULE crt = GetModuleHandleA("msvcrt.dll"), self;
	_onexit_t (*crt_onexit)(_onexit_t) =
		crt ? (_onexit_t(*)(_onexit_t))(void (*)(void))GetProcAddress(crt, "_onexit") : NULL;
	if (crt_onexit && GetModuleHandleExA(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
					     (LPCSTR)(void *)tt_os_end_onexit, &self))
		crt_onexit(tt_os_end_onexit);
	if (atexit(tt_os_ending))
		return -ENOMEM;
	if (!(tt_os_watch_stop = CreateEventW(NULL, TRUE, FALSE, NULL)))
		return -ENOMEM;
	int err = tt_os_thread_start(&tt_os_watch, tt_os_watch_last, NULL, 0);
	if (!err)
		tt_os_watch_id = GetThreadId((HANDLE)tt_os_watch.handle);
	return err;
}

_Static_assert(sizeof(INIT_ONCE) == sizeof(struct tt_os_once), "a zeroed struct tt_os_once is an INIT_ONCE");

struct tt_os_once_call {
	void (*init)(void);
};

static BOOL CALLBACK tt_os_once_run(INIT_ONCE *once, void *call, void **context)
{
	(void)once;
	(void)context;
	((struct tt_os_once_call *)call)->init();
	return TRUE;
}

void tt_os_once(struct tt_os_once *once, void (*init)(void))
{
	struct tt_os_once_call call = {init};
	InitOnceExecuteOnce((INIT_ONCE *)(void *)once, tt_os_once_run, &call, NULL);
}

struct tt_os_start {
	void *(*main)(void *arg);
	void *arg;
	DWORD *own; /* its entry in tt_os_own */
};

static DWORD WINAPI tt_os_thread_main(void *p)
{
	struct tt_os_start start = *(struct tt_os_start *)p;
	HeapFree(GetProcessHeap(), 0, p);
	start.main(start.arg);
	__atomic_store_n(start.own, 0, __ATOMIC_RELEASE);
	return 0;
}

int tt_os_thread_start(struct tt_os_thread *thread, void *(*main)(void *arg), void *arg, size_t stack)
{
	HMODULE self;
	if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_PIN,
				(LPCWSTR)(void *)tt_os_thread_main, &self))
		return -EINVAL;
	DWORD *own = NULL;
	for (int i = 0; !own && i < TT_OS_OWN_THREADS; i++) {
		DWORD none = 0;
		if (__atomic_compare_exchange_n(&tt_os_own[i], &none, TT_OS_CLAIMED, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			own = &tt_os_own[i];
	}
	if (!own)
		return -EAGAIN;
	struct tt_os_start *start = HeapAlloc(GetProcessHeap(), 0, sizeof *start);
	if (!start) {
		__atomic_store_n(own, 0, __ATOMIC_RELEASE);
		return -ENOMEM;
	}
	*start = (struct tt_os_start){main, arg, own};
	/* (suspended until its id is listed: the watch never takes it for the program's) */
	DWORD tid;
	HANDLE handle = CreateThread(NULL, stack ? stack : 64 * 1024, tt_os_thread_main, start,
				     CREATE_SUSPENDED | (stack ? STACK_SIZE_PARAM_IS_A_RESERVATION : 0), &tid);
	if (!handle) {
		HeapFree(GetProcessHeap(), 0, start);
		__atomic_store_n(own, 0, __ATOMIC_RELEASE);
		return -EAGAIN;
	}
	__atomic_store_n(own, tid, __ATOMIC_RELEASE);
	ResumeThread(handle);
	if (thread)
		thread->handle = (uintptr_t)handle;
	else
		CloseHandle(handle);
	return 0;
}

void tt_os_thread_join(struct tt_os_thread *thread)
{
	WaitForSingleObject((HANDLE)thread->handle, INFINITE);
	CloseHandle((HANDLE)thread->handle);
}

int tt_os_thread_join_within(struct tt_os_thread *thread, int64_t timeout_ns)
{
	int64_t ms = timeout_ns > 0 ? (timeout_ns + 999999) / 1000000 : 0;
	if (WaitForSingleObject((HANDLE)thread->handle, ms < INFINITE ? (DWORD)ms : INFINITE - 1) != WAIT_OBJECT_0)
		return -ETIMEDOUT;
	CloseHandle((HANDLE)thread->handle);
	return 0;
}

void tt_os_signals_block(struct tt_os_signals *old)
{
	old->none = 0;
}

void tt_os_signals_restore(const struct tt_os_signals *old)
{
	(void)old;
}

void tt_os_signals_blocked_for_good(void)
{
}

void tt_os_writing_begin(struct tt_os_writing *w)
{
	w->mask.none = 0;
	w->pending = 0;
}

void tt_os_writing_end(struct tt_os_writing *w)
{
	(void)w;
}

void tt_os_cancel_hold(int *was)
{
	*was = 0;
}

void tt_os_cancel_restore(int was)
{
	(void)was;
}

void tt_os_yield(void)
{
	SwitchToThread();
}

void tt_os_sleep_ns(int64_t ns)
{
	Sleep((DWORD)((ns + 999999) / 1000000));
}

uint32_t tt_os_cpus(void)
{
	DWORD_PTR mine, system;
	if (GetProcessAffinityMask(GetCurrentProcess(), &mine, &system) && mine)
		return (uint32_t)__builtin_popcountll((unsigned long long)mine);
	SYSTEM_INFO info;
	GetSystemInfo(&info);
	return info.dwNumberOfProcessors ? info.dwNumberOfProcessors : 1;
}

uint64_t tt_os_memory_size(void)
{
	MEMORYSTATUSEX status = {.dwLength = sizeof status};
	return GlobalMemoryStatusEx(&status) ? status.ullTotalPhys : 0;
}

uint64_t tt_os_processes_limit(void)
{
	return 0;
}

int tt_os_usage(int thread, struct tt_os_usage *usage)
{
	(void)thread;
	*usage = (struct tt_os_usage){0};
	return -ENOSYS;
}

/* ---- locks ---- */

_Static_assert(sizeof(SRWLOCK) == sizeof(struct tt_os_lock), "an SRW lock is a pointer");

/* At the process's end (ExitProcess, _exit, abort()'s _exit: every other thread ended
 * wherever it was, then the exiting thread's fiber storage callback and the DLLs'
 * detach run: the thread's exit and the run's end), a lock found held is a thread's
 * that ExitProcess ended, never to let it go: taken over, as Windows takes over a
 * critical section then (RtlDllShutdownInProgress), not waited for for ever. (abort()'s
 * _exit ended tt-sched inside its tick, the sched lock held, and the exiting thread's
 * exit waited for it: 1 run in 8 hung, its trace written.) */
void tt_os_lock(struct tt_os_lock *lock)
{
	if (TryAcquireSRWLockExclusive((PSRWLOCK)lock) || tt_os_others_ended())
		return;
	AcquireSRWLockExclusive((PSRWLOCK)lock);
}

int tt_os_others_ended(void)
{
	return tt_os_shutting_down && tt_os_shutting_down();
}

void tt_os_unlock(struct tt_os_lock *lock)
{
	ReleaseSRWLockExclusive((PSRWLOCK)lock);
}

int tt_os_trylock(struct tt_os_lock *lock)
{
	return TryAcquireSRWLockExclusive((PSRWLOCK)lock) != 0;
}

void tt_os_wait(uint32_t *word, uint32_t value, int64_t timeout_ns)
{
	DWORD ms = INFINITE;
	if (timeout_ns >= 0) /* (rounded up: a wait of less than a millisecond still waits) */
		ms = timeout_ns / 1000000 >= INFINITE - 1 ? INFINITE - 1 : (DWORD)((timeout_ns + 999999) / 1000000);
	WaitOnAddress(word, &value, sizeof value, ms);
}

void tt_os_wake(uint32_t *word)
{
	WakeByAddressSingle(word);
}

void tt_os_wake_all(uint32_t *word)
{
	WakeByAddressAll(word);
}

/* ---- memory ---- */

void *tt_os_reserve(size_t size)
{
	/* (VirtualAlloc's regions start on the 64 KiB allocation granularity) */
	return VirtualAlloc(NULL, size, MEM_RESERVE, PAGE_NOACCESS);
}

void *tt_os_reserve_growable(size_t size, uint64_t away)
{
	(void)away;
	return tt_os_reserve(size);
}

int tt_os_grow(void *at, size_t size, size_t new_size)
{
	(void)at;
	(void)size;
	(void)new_size;
	return -ENOSYS;
}

/* The view tt_os_map_view made of a file (the live arena's: one at a time): its
 * address space reserved whole, the file mapped into it as commits ask, view after
 * view at the reservation's addresses (a view cannot outgrow its file). Wine 8 has no
 * placeholder to map a view into (VirtualAlloc2's MEM_RESERVE_PLACEHOLDER:
 * ERROR_INVALID_PARAMETER), so what is left of the reservation is let go, the view
 * mapped in its place and the rest reserved again past it; a thread of the program's
 * that maps in between takes the place, and the commit is refused. */
static struct {
	SRWLOCK lock;
	char *base, *mapped, *end, *limit; /* [base, mapped) mapped; [mapped, end) reserved */
	HANDLE file;               /* (a copy of the caller's) */
	uint64_t offset;           /* the file's byte at base */
} tt_os_view = {SRWLOCK_INIT, NULL, NULL, NULL, NULL, NULL, 0};

/* View lock held: the view mapped up to `to` at least, as far as the file covers it
 * (its length now): 0 or -ENOMEM. */
static int tt_os_view_map(char *to)
{
	LARGE_INTEGER length;
	if (!GetFileSizeEx(tt_os_view.file, &length) || (uint64_t)length.QuadPart <= tt_os_view.offset)
		return -ENOMEM;
	uint64_t covered = (uint64_t)length.QuadPart - tt_os_view.offset;
	char *upto = covered < (uint64_t)(tt_os_view.end - tt_os_view.base) ? tt_os_view.base + covered :
									      tt_os_view.end;
	upto = tt_os_view.base + (size_t)(upto - tt_os_view.base) / (64u << 10) * (64u << 10);
	if (upto < to)
		return -ENOMEM;
	HANDLE section = CreateFileMappingW(tt_os_view.file, NULL, PAGE_READWRITE, 0, 0, NULL);
	if (!section)
		return -ENOMEM;
	char *at = tt_os_view.mapped;
	uint64_t offset = tt_os_view.offset + (uint64_t)(at - tt_os_view.base);
	VirtualFree(at, 0, MEM_RELEASE);
	void *view = MapViewOfFileEx(section, FILE_MAP_WRITE, (DWORD)(offset >> 32), (DWORD)offset,
				     (size_t)(upto - at), at);
	CloseHandle(section);
	if (view != at) {
		if (view)
			UnmapViewOfFile(view);
		tt_os_view.end = at; /* (its place taken, or not to be had: no more) */
		return -ENOMEM;
	}
	tt_os_view.mapped = upto;
	if (upto < tt_os_view.end &&
	    VirtualAlloc(upto, (size_t)(tt_os_view.end - upto), MEM_RESERVE, PAGE_NOACCESS) != upto)
		tt_os_view.end = upto;
	return 0;
}

int tt_os_commit_unfaulted(void *at, size_t size)
{
	char *to = (char *)at + size;
	AcquireSRWLockExclusive(&tt_os_view.lock);
	int view = (char *)at >= tt_os_view.base && to <= tt_os_view.limit;
	int err = view && to > tt_os_view.mapped ? tt_os_view_map(to) : 0;
	ReleaseSRWLockExclusive(&tt_os_view.lock);
	return err || (!view && !VirtualAlloc(at, size, MEM_COMMIT, PAGE_READWRITE)) ? -ENOMEM : 0;
}

int tt_os_commit(void *at, size_t size)
{
	if (tt_os_commit_unfaulted(at, size) != 0)
		return -ENOMEM;
	tt_os_fault_in(at, size); /* (committed pages are zero, but not yet there) */
	return 0;
}

void tt_os_fault_in(void *at, size_t size)
{
	/* each page written once, by an atomic add of 0 that changes nothing a thread
	 * wrote there */
	SYSTEM_INFO info;
	GetSystemInfo(&info);
	for (size_t off = 0; off < size; off += info.dwPageSize)
		__atomic_fetch_add((char *)at + off, 0, __ATOMIC_RELAXED);
}

void *tt_os_alloc(size_t size)
{
	return VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

void *tt_os_map_view(struct tt_os_file *file, uint64_t offset, size_t size, void *at)
{
	if (!file || at || tt_os_view.base || offset % (64u << 10))
		return NULL;
	HANDLE self = GetCurrentProcess(), copy;
	if (!DuplicateHandle(self, (HANDLE)file->handle, self, &copy, 0, FALSE, DUPLICATE_SAME_ACCESS))
		return NULL;
	char *base = VirtualAlloc(NULL, size, MEM_RESERVE, PAGE_NOACCESS);
	if (!base) {
		CloseHandle(copy);
		return NULL;
	}
	AcquireSRWLockExclusive(&tt_os_view.lock);
	tt_os_view.file = copy;
	tt_os_view.offset = offset;
	tt_os_view.base = tt_os_view.mapped = base;
	tt_os_view.end = tt_os_view.limit = base + size;
	ReleaseSRWLockExclusive(&tt_os_view.lock);
	return base;
}

uint64_t tt_os_address_limit(void)
{
	return UINT64_MAX;
}

uint64_t tt_os_address_mapped(void)
{
	uint64_t mapped = 0;
	MEMORY_BASIC_INFORMATION region;
	for (const char *at = NULL; VirtualQuery(at, &region, sizeof region) == sizeof region;
	     at = (const char *)region.BaseAddress + region.RegionSize)
		if (region.State != MEM_FREE)
			mapped += region.RegionSize;
	return mapped;
}

void tt_os_huge_pages(void *at, size_t size)
{
	(void)at, (void)size;
}

void tt_os_zero(void *at, size_t size)
{
	memset(at, 0, size);
}

void tt_os_free(void *at, size_t size)
{
	(void)size; /* (a region goes whole) */
	VirtualFree(at, 0, MEM_RELEASE);
}

/* ---- files ---- */

static int tt_os_file_error(DWORD err)
{
	return err == ERROR_ACCESS_DENIED ? -EACCES : err == ERROR_INVALID_HANDLE ? -EBADF :
	       err == ERROR_DISK_FULL || err == ERROR_HANDLE_DISK_FULL ? -ENOSPC :
	       err == ERROR_PATH_NOT_FOUND || err == ERROR_FILE_NOT_FOUND ? -ENOENT :
	       err == ERROR_FILENAME_EXCED_RANGE ? -ENAMETOOLONG : -EIO;
}

/* A UTF-8 path as the W calls take it: in `small` where it fits, else from the heap,
 * made whole (GetFullPathNameW) and given the `\\?\` prefix that lifts MAX_PATH on
 * every Windows: a trace bound for a deep directory, where the program itself writes,
 * was lost ("File name too long": outside test r51, #1). 0, -ENAMETOOLONG (a name in
 * it longer than the 255 characters a file system takes, as Linux says it), -ENOMEM. */
struct tt_os_wide {
	wchar_t *path;
	wchar_t *block; /* (from the heap: a long path's) */
	wchar_t small[MAX_PATH - 12]; /* (CreateDirectoryW's limit: room for an 8.3 name) */
};

/* (keeps GetLastError as the call on the path left it: HeapFree may change it) */
static void tt_os_wide_done(struct tt_os_wide *wide)
{
	DWORD err = GetLastError();
	if (wide->block)
		HeapFree(GetProcessHeap(), 0, wide->block);
	wide->block = NULL;
	SetLastError(err);
}

static int tt_os_wide(const char *path, struct tt_os_wide *wide)
{
	enum { room = 8 }; /* before the whole path: \\?\UNC, less the \ it begins with */
	int chars = MultiByteToWideChar(CP_UTF8, 0, path, -1, NULL, 0);
	wide->path = wide->block = NULL;
	for (const char *name = path, *end; *name; name = *end ? end + 1 : end) {
		end = name + strcspn(name, "\\/");
		if (end - name > 255 && MultiByteToWideChar(CP_UTF8, 0, name, (int)(end - name), NULL, 0) > 255)
			return -ENAMETOOLONG;
	}
	if (chars <= 0)
		return -ENOMEM;
	if (chars <= (int)(sizeof wide->small / sizeof *wide->small)) {
		wide->path = MultiByteToWideChar(CP_UTF8, 0, path, -1, wide->small, chars) ? wide->small : NULL;
		return wide->path ? 0 : -ENOMEM;
	}
	wchar_t *given = HeapAlloc(GetProcessHeap(), 0, (size_t)chars * sizeof *given);
	DWORD whole = given && MultiByteToWideChar(CP_UTF8, 0, path, -1, given, chars) ?
			      GetFullPathNameW(given, 0, NULL, NULL) : 0;
	wide->block = whole ? HeapAlloc(GetProcessHeap(), 0, (room + whole) * sizeof *wide->block) : NULL;
	wchar_t *full = wide->block ? wide->block + room : NULL;
	if (full && GetFullPathNameW(given, whole, full, NULL) < whole) {
		if (full[0] == L'\\' && full[1] == L'\\' && (full[2] == L'?' || full[2] == L'.'))
			wide->path = full; /* (prefixed already, or a device) */
		else if (full[0] == L'\\' && full[1] == L'\\') /* \\server\share\... */
			wide->path = memcpy(full + 1 - 7, L"\\\\?\\UNC", 7 * sizeof(wchar_t));
		else
			wide->path = memcpy(full - 4, L"\\\\?\\", 4 * sizeof(wchar_t));
	}
	if (given)
		HeapFree(GetProcessHeap(), 0, given);
	if (!wide->path)
		tt_os_wide_done(wide);
	return wide->path ? 0 : -ENOMEM;
}

/* A module's path (GetModuleFileNameW, which cuts a path at the buffer it is given: a
 * library loaded from deeper than MAX_PATH was described cut, its file not found, its
 * functions unnamed) in wide->path: on the stack where it fits, else from the heap
 * (tt_os_wide_done). 0, -ENOENT, -ENOMEM. */
static int tt_os_module_wide(HMODULE module, struct tt_os_wide *wide)
{
	DWORD size = sizeof wide->small / sizeof *wide->small, n;
	wide->block = NULL;
	wide->path = wide->small;
	while ((n = GetModuleFileNameW(module, wide->path, size)) == size && size < 32768) {
		tt_os_wide_done(wide);
		size = 32768; /* (the longest path Windows has) */
		wide->path = wide->block = HeapAlloc(GetProcessHeap(), 0, size * sizeof *wide->block);
		if (!wide->path)
			return -ENOMEM;
	}
	if (n && n < size)
		return 0;
	tt_os_wide_done(wide);
	return -ENOENT;
}

/* GetFileAttributesW of a UTF-8 path (INVALID_FILE_ATTRIBUTES: GetLastError says why). */
static DWORD tt_os_attributes(const char *path)
{
	struct tt_os_wide wide;
	int wrong = tt_os_wide(path, &wide);
	DWORD attributes = wrong ? INVALID_FILE_ATTRIBUTES : GetFileAttributesW(wide.path);
	tt_os_wide_done(&wide);
	if (wrong)
		SetLastError(wrong == -ENAMETOOLONG ? ERROR_FILENAME_EXCED_RANGE : ERROR_NOT_ENOUGH_MEMORY);
	return attributes;
}

int tt_os_is_device(const char *path)
{
	struct tt_os_wide wide;
	HANDLE f = !tt_os_wide(path, &wide) ? CreateFileW(wide.path, 0, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
							 OPEN_EXISTING, 0, NULL) :
					     INVALID_HANDLE_VALUE;
	tt_os_wide_done(&wide);
	if (f == INVALID_HANDLE_VALUE)
		return 0;
	int device = tt_os_file_is_device(&(struct tt_os_file){(intptr_t)f});
	CloseHandle(f);
	return device;
}

int tt_os_file_is_device(struct tt_os_file *file)
{
	DWORD type = GetFileType((HANDLE)file->handle);
	return type == FILE_TYPE_CHAR || type == FILE_TYPE_PIPE;
}

size_t tt_os_read_file(const char *path, char *buf, size_t size)
{
	struct tt_os_wide wide;
	HANDLE file = !tt_os_wide(path, &wide) ?
			      CreateFileW(wide.path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
					  NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL) :
			      INVALID_HANDLE_VALUE;
	tt_os_wide_done(&wide);
	if (file == INVALID_HANDLE_VALUE)
		return 0;
	size_t len = 0;
	DWORD n;
	while (len < size && ReadFile(file, buf + len, (DWORD)(size - len < 1u << 30 ? size - len : 1u << 30), &n, NULL) &&
	       n > 0)
		len += n;
	CloseHandle(file);
	return len;
}

size_t tt_os_current_dir(char *dir, size_t size)
{
	/* (on the stack where it fits, as at a crash; a longer one, whole, from the heap) */
	wchar_t small[MAX_PATH], *wdir = small;
	DWORD n = GetCurrentDirectoryW(MAX_PATH, small), chars = MAX_PATH;
	if (n >= MAX_PATH) { /* (n: its length with the NUL) */
		chars = n;
		wdir = HeapAlloc(GetProcessHeap(), 0, chars * sizeof *wdir);
		n = wdir ? GetCurrentDirectoryW(chars, wdir) : 0;
	}
	size_t len = n && n < chars ? tt_os_utf8(wdir, dir, size) : 0;
	if (wdir && wdir != small)
		HeapFree(GetProcessHeap(), 0, wdir);
	return len + 1 < size ? len : 0;
}

int tt_os_path_in(const char *dir, const char *path, char *buf, size_t size)
{
	size_t len = path[0] == '\\' || path[0] == '/' || (path[0] && path[1] == ':') || tt_os_is_device(path) ?
			     0 : strlen(dir);
	const char *slash = len && dir[len - 1] != '\\' && dir[len - 1] != '/' ? "\\" : "";
	int n = snprintf(buf, size, "%s%s%s", len ? dir : "", slash, path);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* (No owner's rule: a directory's ACLs say who may replace its files.) */
int tt_os_dir_ours(const char *dir, char *why, size_t cap)
{
	if (tt_os_attributes(dir) == INVALID_FILE_ATTRIBUTES) {
		snprintf(why, cap, "%s", strerror(-tt_os_file_error(GetLastError())));
		return 0;
	}
	return 1;
}

int tt_os_is_dir(const char *path)
{
	DWORD attributes = tt_os_attributes(path);
	return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY);
}

int tt_os_dir_writable(const char *dir)
{
	DWORD attributes = tt_os_attributes(dir);
	if (attributes == INVALID_FILE_ATTRIBUTES)
		return tt_os_file_error(GetLastError());
	return attributes & FILE_ATTRIBUTE_DIRECTORY ? 0 : -ENOTDIR;
}

int tt_os_dir_make(const char *path)
{
	struct tt_os_wide wide;
	int wrong = tt_os_wide(path, &wide);
	if (wrong)
		return wrong;
	BOOL made = CreateDirectoryW(wide.path, NULL);
	tt_os_wide_done(&wide);
	return made ? 0 : GetLastError() == ERROR_ALREADY_EXISTS ? -EEXIST : tt_os_file_error(GetLastError());
}

uint64_t tt_os_file_room(const char *path)
{
	struct tt_os_wide wide;
	if (tt_os_wide(path, &wide))
		return 0;
	DWORD high = 0, low = GetCompressedFileSizeW(wide.path, &high);
	tt_os_wide_done(&wide);
	if (low == INVALID_FILE_SIZE && GetLastError() != NO_ERROR)
		return 0;
	return (uint64_t)high << 32 | low;
}

int64_t tt_os_disk_room(const char *dir)
{
	struct tt_os_wide wide;
	ULARGE_INTEGER available;
	int wrong = tt_os_wide(dir, &wide);
	if (wrong)
		return wrong;
	BOOL known = GetDiskFreeSpaceExW(wide.path, &available, NULL, NULL);
	tt_os_wide_done(&wide);
	return known ? (int64_t)available.QuadPart : tt_os_file_error(GetLastError());
}

int tt_os_dir_theirs(const char *dir, char *why, size_t cap)
{
	(void)dir;
	(void)why;
	(void)cap;
	return 0;
}

int tt_os_file_theirs(const char *dir, const char *path, uint32_t *owner, int *link)
{
	(void)dir;
	(void)owner;
	(void)link;
	return tt_os_is_dir(path) ? -EISDIR : 0;
}

uint32_t tt_os_user(void)
{
	return 0;
}

/* MoveFileExW of names in UTF-8: 0, or its error (ERROR_FILENAME_EXCED_RANGE: a name
 * too long). */
static DWORD tt_os_move(const char *from, const char *to, DWORD flags)
{
	struct tt_os_wide wfrom, wto = {0};
	int wrong = tt_os_wide(from, &wfrom);
	wrong = wrong ? wrong : tt_os_wide(to, &wto);
	DWORD err = wrong == -ENAMETOOLONG ? ERROR_FILENAME_EXCED_RANGE : wrong ? ERROR_NOT_ENOUGH_MEMORY :
		    MoveFileExW(wfrom.path, wto.path, flags | MOVEFILE_WRITE_THROUGH) ? 0 : GetLastError();
	tt_os_wide_done(&wfrom);
	tt_os_wide_done(&wto);
	return err;
}

int tt_os_rename(const char *from, const char *to)
{
	DWORD err = tt_os_move(from, to, MOVEFILE_REPLACE_EXISTING);
	return !err ? 0 : err == ERROR_FILENAME_EXCED_RANGE ? -ENAMETOOLONG : err == ERROR_ACCESS_DENIED ? -EACCES : -EIO;
}

int tt_os_remove(const char *path)
{
	struct tt_os_wide wide;
	int wrong = tt_os_wide(path, &wide);
	if (wrong)
		return wrong;
	int err = _wremove(wide.path) == 0 ? 0 : -errno;
	tt_os_wide_done(&wide);
	return err;
}

/* (getenv's text is in the ANSI code page: a name not in it came out changed, "Ωmega"
 * as "Omega", or as bytes the UTF-8 calls refused) */
const char *tt_os_getenv(const char *name, char *value, size_t size)
{
	wchar_t wname[64], wvalue[MAX_PATH];
	if (!MultiByteToWideChar(CP_UTF8, 0, name, -1, wname, 64))
		return NULL;
	SetLastError(0);
	DWORD n = GetEnvironmentVariableW(wname, wvalue, MAX_PATH);
	if (n == 0 && GetLastError() == ERROR_ENVVAR_NOT_FOUND)
		return NULL;
	if (n >= MAX_PATH) { /* (longer than any path: cut) */
		wchar_t *whole = HeapAlloc(GetProcessHeap(), 0, n * sizeof *whole);
		if (!whole)
			return NULL;
		GetEnvironmentVariableW(wname, whole, n);
		tt_os_utf8(whole, value, size);
		HeapFree(GetProcessHeap(), 0, whole);
		return value;
	}
	tt_os_utf8(wvalue, value, size);
	return value;
}

int tt_os_env_set(char *setting)
{
	return putenv(setting) == 0 ? 0 : -errno;
}

int tt_os_file_create(const char *path, struct tt_os_file *file)
{
	struct tt_os_wide wide;
	int wrong = tt_os_wide(path, &wide);
	if (wrong)
		return wrong;
	/* (FILE_SHARE_DELETE: removed by its name while mapped, as on Linux) */
	HANDLE f = CreateFileW(wide.path, GENERIC_READ | GENERIC_WRITE,
			       FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL, CREATE_NEW,
			       FILE_ATTRIBUTE_NORMAL, NULL);
	tt_os_wide_done(&wide);
	DWORD err = GetLastError();
	if (f == INVALID_HANDLE_VALUE) {
		return err == ERROR_FILE_EXISTS || err == ERROR_ALREADY_EXISTS ? -EEXIST :
		       err == ERROR_ACCESS_DENIED ? -EACCES : -EIO;
	}
	file->handle = (intptr_t)f;
	return 0;
}

void *tt_os_file_map(struct tt_os_file *file, uint64_t offset, size_t size)
{
	/* A section as long as the file, or as offset + size when that is longer (which
	 * makes the file that long); the view keeps the section. */
	LARGE_INTEGER now;
	if (!GetFileSizeEx((HANDLE)file->handle, &now))
		return NULL;
	uint64_t length = (uint64_t)now.QuadPart > offset + size ? (uint64_t)now.QuadPart : offset + size;
	HANDLE section = CreateFileMappingW((HANDLE)file->handle, NULL, PAGE_READWRITE, (DWORD)(length >> 32),
					    (DWORD)length, NULL);
	if (!section)
		return NULL;
	void *at = MapViewOfFile(section, FILE_MAP_WRITE, (DWORD)(offset >> 32), (DWORD)offset, size);
	CloseHandle(section);
	return at;
}

/* `path` (UTF-8) opened by CreateFileW with `access`, `share` and `disposition` into
 * *file: 0 or -errno. */
static int tt_os_open_path(const char *path, DWORD access, DWORD share, DWORD disposition, struct tt_os_file *file)
{
	struct tt_os_wide wide;
	int wrong = tt_os_wide(path, &wide);
	if (wrong)
		return wrong;
	HANDLE f = CreateFileW(wide.path, access, share, NULL, disposition, FILE_ATTRIBUTE_NORMAL, NULL);
	tt_os_wide_done(&wide);
	if (f == INVALID_HANDLE_VALUE)
		return tt_os_file_error(GetLastError());
	file->handle = (intptr_t)f;
	return 0;
}

int tt_os_file_open(const char *path, struct tt_os_file *file)
{
	/* (a device, NUL, opened as it is: OPEN_ALWAYS, emptied only when a file) */
	int err = tt_os_open_path(path, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, OPEN_ALWAYS, file);
	if (!err && GetFileType((HANDLE)file->handle) == FILE_TYPE_DISK && !SetEndOfFile((HANDLE)file->handle)) {
		err = tt_os_file_error(GetLastError());
		tt_os_file_close(file);
	}
	return err;
}

int tt_os_device_open(const char *path, struct tt_os_file *file)
{
	int err = tt_os_open_path(path, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, OPEN_EXISTING, file);
	if (!err && !tt_os_file_is_device(file)) {
		tt_os_file_close(file);
		err = -EPERM;
	}
	return err;
}

int tt_os_file_append(const char *path, const void *buf, size_t size)
{
	struct tt_os_file file;
	if (size > MAXDWORD)
		return -EFBIG;
	/* (FILE_APPEND_DATA alone: each write goes at the end, whoever else wrote) */
	int err = tt_os_open_path(path, FILE_APPEND_DATA, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
				  OPEN_ALWAYS, &file);
	if (err)
		return err;
	DWORD n;
	err = !WriteFile((HANDLE)file.handle, buf, (DWORD)size, &n, NULL) ? tt_os_file_error(GetLastError()) :
	      n < size ? -EIO : 0;
	tt_os_file_close(&file);
	return err;
}

int tt_os_descriptor_file(int fd, struct tt_os_file *file)
{
	intptr_t handle = fd < 0 ? -1 : _get_osfhandle(fd);
	if (handle == -1 || handle == -2) /* (-2: a standard stream with none behind it) */
		return -EBADF;
	file->handle = handle;
	return 0;
}

int tt_os_file_seek(struct tt_os_file *file, uint64_t offset)
{
	LARGE_INTEGER to = {.QuadPart = (LONGLONG)offset};
	if (GetFileType((HANDLE)file->handle) != FILE_TYPE_DISK)
		return 0;
	return SetFilePointerEx((HANDLE)file->handle, to, NULL, FILE_BEGIN) ? 0 : tt_os_file_error(GetLastError());
}

int64_t tt_os_file_offset(struct tt_os_file *file)
{
	LARGE_INTEGER at;
	if (GetFileType((HANDLE)file->handle) != FILE_TYPE_DISK)
		return -ESPIPE;
	if (!SetFilePointerEx((HANDLE)file->handle, (LARGE_INTEGER){0}, &at, FILE_CURRENT))
		return tt_os_file_error(GetLastError());
	return at.QuadPart;
}

int tt_os_file_close(struct tt_os_file *file)
{
	int rc = CloseHandle((HANDLE)file->handle) ? 0 : tt_os_file_error(GetLastError());
	file->handle = (intptr_t)INVALID_HANDLE_VALUE;
	return rc;
}

int tt_os_file_reserve(struct tt_os_file *file, uint64_t from, uint64_t to)
{
	(void)from; /* (an allocation covers the file from its start) */
	FILE_ALLOCATION_INFO room = {.AllocationSize.QuadPart = (LONGLONG)to};
	LARGE_INTEGER now;
	HANDLE f = (HANDLE)file->handle;
	if (!SetFileInformationByHandle(f, FileAllocationInfo, &room, sizeof room)) {
		DWORD err = GetLastError();
		/* (Wine: not implemented) */
		return err == ERROR_INVALID_PARAMETER || err == ERROR_NOT_SUPPORTED ||
				       err == ERROR_CALL_NOT_IMPLEMENTED || err == ERROR_INVALID_FUNCTION ?
			       -EOPNOTSUPP : tt_os_file_error(err);
	}
	if (!GetFileSizeEx(f, &now))
		return tt_os_file_error(GetLastError());
	return (uint64_t)now.QuadPart >= to ? 0 : tt_os_file_resize(file, to);
}

int tt_os_file_resize(struct tt_os_file *file, uint64_t size)
{
	FILE_END_OF_FILE_INFO end = {.EndOfFile.QuadPart = (LONGLONG)size};
	return SetFileInformationByHandle((HANDLE)file->handle, FileEndOfFileInfo, &end, sizeof end) ?
		       0 : tt_os_file_error(GetLastError());
}

int tt_os_file_reserve_past(struct tt_os_file *file, uint64_t from, uint64_t to)
{
	(void)from; /* (an allocation covers the file from its start) */
	FILE_ALLOCATION_INFO room = {.AllocationSize.QuadPart = (LONGLONG)to};
	LARGE_INTEGER now;
	HANDLE f = (HANDLE)file->handle;
	/* (an allocation below the file's end would cut it there) */
	if (!GetFileSizeEx(f, &now))
		return tt_os_file_error(GetLastError());
	if ((uint64_t)now.QuadPart >= to)
		return 0;
	if (SetFileInformationByHandle(f, FileAllocationInfo, &room, sizeof room))
		return 0;
	DWORD err = GetLastError();
	return err == ERROR_INVALID_PARAMETER || err == ERROR_NOT_SUPPORTED || err == ERROR_CALL_NOT_IMPLEMENTED ||
			       err == ERROR_INVALID_FUNCTION ?
		       -EOPNOTSUPP : tt_os_file_error(err);
}

/* tt_os_file_write_at's and _read_at's: one WriteFile or ReadFile at `at`, the file
 * pointer, which it moves, put back after it. */
static int64_t tt_os_file_at(struct tt_os_file *file, void *buf, size_t size, uint64_t at, int write)
{
	HANDLE f = (HANDLE)file->handle;
	if (GetFileType(f) != FILE_TYPE_DISK)
		return -ESPIPE;
	LARGE_INTEGER zero = {.QuadPart = 0}, place;
	if (!SetFilePointerEx(f, zero, &place, FILE_CURRENT))
		return tt_os_file_error(GetLastError());
	OVERLAPPED where = {.Offset = (DWORD)at, .OffsetHigh = (DWORD)(at >> 32)};
	DWORD n = 0, want = size > (1u << 30) ? 1u << 30 : (DWORD)size;
	BOOL done = write ? WriteFile(f, buf, want, &n, &where) : ReadFile(f, buf, want, &n, &where);
	DWORD why = done ? 0 : GetLastError();
	if (!SetFilePointerEx(f, place, NULL, FILE_BEGIN) && done) {
		done = FALSE;
		why = GetLastError();
	}
	/* (a read at or past the end: ERROR_HANDLE_EOF) */
	return done ? (int64_t)n : !write && why == ERROR_HANDLE_EOF ? 0 : tt_os_file_error(why);
}

int64_t tt_os_file_write_at(struct tt_os_file *file, const void *buf, size_t size, uint64_t at)
{
	return tt_os_file_at(file, (void *)buf, size, at, 1);
}

int64_t tt_os_file_read_at(struct tt_os_file *file, void *buf, size_t size, uint64_t at)
{
	return tt_os_file_at(file, buf, size, at, 0);
}

void tt_os_file_unmap(void *at, size_t size)
{
	(void)size; /* (a view goes whole) */
	if (at != tt_os_view.base || !at) {
		UnmapViewOfFile(at);
		return;
	}
	AcquireSRWLockExclusive(&tt_os_view.lock);
	MEMORY_BASIC_INFORMATION freed; /* (each view let go leaves as much free) */
	for (char *view = tt_os_view.base; view < tt_os_view.mapped; view += freed.RegionSize)
		if (!UnmapViewOfFile(view) || VirtualQuery(view, &freed, sizeof freed) != sizeof freed)
			break;
	if (tt_os_view.mapped < tt_os_view.end)
		VirtualFree(tt_os_view.mapped, 0, MEM_RELEASE);
	CloseHandle(tt_os_view.file);
	tt_os_view.base = tt_os_view.mapped = tt_os_view.end = tt_os_view.limit = NULL;
	ReleaseSRWLockExclusive(&tt_os_view.lock);
}

int tt_os_file_new(const char *path, int unnamed, struct tt_os_file *file, struct tt_os_new_file *made)
{
	(void)unnamed; /* (every file has a name) */
	made->unnamed = 0;
	made->tmp[0] = 0;
	DWORD attributes = tt_os_attributes(path);
	if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY))
		return -EISDIR;
	unsigned pid = (unsigned)GetCurrentProcessId();
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		int n = attempt ? snprintf(made->tmp, sizeof made->tmp, "%s.%u.%u.tmp", path, pid, attempt) :
				  snprintf(made->tmp, sizeof made->tmp, "%s.%u.tmp", path, pid);
		struct tt_os_wide wtmp;
		int wrong = n >= (int)sizeof made->tmp ? -ENAMETOOLONG : tt_os_wide(made->tmp, &wtmp);
		if (wrong) {
			made->tmp[0] = 0;
			return wrong;
		}
		/* (CREATE_NEW: a file or link planted at the name is never written through;
		 * FILE_SHARE_DELETE: renamed and removed by its name as on Linux) */
		HANDLE f = CreateFileW(wtmp.path, GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL,
				       CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
		tt_os_wide_done(&wtmp);
		DWORD err = GetLastError();
		if (f != INVALID_HANDLE_VALUE) {
			file->handle = (intptr_t)f;
			return 0;
		}
		if (err != ERROR_FILE_EXISTS && err != ERROR_ALREADY_EXISTS) {
			made->tmp[0] = 0;
			return tt_os_file_error(err);
		}
	}
	made->tmp[0] = 0;
	return -EEXIST;
}

int tt_os_file_name(struct tt_os_file *file, const char *path, struct tt_os_new_file *made)
{
	(void)file, (void)path, (void)made; /* (named as it was made) */
	return 0;
}

int tt_os_file_put(struct tt_os_new_file *made, const char *path)
{
	int err = made->tmp[0] ? tt_os_rename(made->tmp, path) : 0;
	if (!err)
		made->tmp[0] = 0;
	return err;
}

void tt_os_file_discard(struct tt_os_new_file *made)
{
	if (made->tmp[0])
		tt_os_remove(made->tmp);
	made->tmp[0] = 0;
}

/* (A byte far past any file's end: Windows' holds are mandatory, and one over the
 * file's bytes would keep every other reader and writer out, where Linux's flock
 * keeps out only another hold.) */
int tt_os_file_hold(struct tt_os_file *file)
{
	OVERLAPPED at = {.Offset = 0xfffffffe, .OffsetHigh = 0x7fffffff};
	if (LockFileEx((HANDLE)file->handle, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at))
		return 0;
	DWORD err = GetLastError();
	return err == ERROR_LOCK_VIOLATION || err == ERROR_IO_PENDING ? -EWOULDBLOCK : tt_os_file_error(err);
}

/* A time of day, FILETIME's 100 ns since 1601, as ns since 1970. */
static int64_t tt_os_unix_ns(FILETIME t)
{
	uint64_t units = (uint64_t)t.dwHighDateTime << 32 | t.dwLowDateTime;
	return (int64_t)(units - UINT64_C(116444736000000000)) * 100;
}

int tt_os_file_stamp(struct tt_os_file *file, struct tt_os_file_stamp *stamp)
{
	BY_HANDLE_FILE_INFORMATION info;
	if (!GetFileInformationByHandle((HANDLE)file->handle, &info))
		return tt_os_file_error(GetLastError());
	stamp->dev = info.dwVolumeSerialNumber;
	stamp->ino = ((uint64_t)info.nFileIndexHigh << 32) | info.nFileIndexLow;
	stamp->written_ns = tt_os_unix_ns(info.ftLastWriteTime);
	return 0;
}

/* `path` itself (a link's own: FILE_FLAG_OPEN_REPARSE_POINT), opened with `access`,
 * shared with any other opening; INVALID_HANDLE_VALUE as CreateFileW. */
static HANDLE tt_os_open_there(const char *path, DWORD access)
{
	struct tt_os_wide wide;
	int wrong = tt_os_wide(path, &wide);
	if (wrong) {
		SetLastError(wrong == -ENAMETOOLONG ? ERROR_FILENAME_EXCED_RANGE : ERROR_NOT_ENOUGH_MEMORY);
		return INVALID_HANDLE_VALUE;
	}
	HANDLE f = CreateFileW(wide.path, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS, NULL);
	tt_os_wide_done(&wide);
	return f;
}

int tt_os_path_stamp(const char *path, struct tt_os_file_stamp *stamp)
{
	HANDLE f = tt_os_open_there(path, FILE_READ_ATTRIBUTES);
	if (f == INVALID_HANDLE_VALUE)
		return tt_os_file_error(GetLastError());
	int err = tt_os_file_stamp(&(struct tt_os_file){(intptr_t)f}, stamp);
	CloseHandle(f);
	return err;
}

int tt_os_path_regular(const char *path)
{
	HANDLE f = tt_os_open_there(path, FILE_READ_ATTRIBUTES);
	if (f == INVALID_HANDLE_VALUE)
		return 1;
	FILE_ATTRIBUTE_TAG_INFO tag;
	int regular = GetFileType(f) == FILE_TYPE_DISK &&
		      GetFileInformationByHandleEx(f, FileAttributeTagInfo, &tag, sizeof tag) &&
		      !(tag.FileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT));
	CloseHandle(f);
	return regular;
}

int tt_os_file_open_held(const char *path, struct tt_os_file *file)
{
	HANDLE f = tt_os_open_there(path, GENERIC_READ);
	if (f == INVALID_HANDLE_VALUE) {
		DWORD err = GetLastError();
		return err == ERROR_SHARING_VIOLATION ? -EWOULDBLOCK : tt_os_file_error(err);
	}
	FILE_ATTRIBUTE_TAG_INFO tag;
	if (GetFileInformationByHandleEx(f, FileAttributeTagInfo, &tag, sizeof tag) &&
	    (tag.FileAttributes & FILE_ATTRIBUTE_REPARSE_POINT)) {
		CloseHandle(f);
		return -ELOOP;
	}
	file->handle = (intptr_t)f;
	int err = tt_os_file_hold(file);
	if (err)
		CloseHandle(f);
	return err;
}

/* tt_os_move's answer: -EEXIST where the name is taken, -EBUSY where a file in the
 * way is open, not for deleting. */
static int tt_os_move_placing(const char *from, const char *to, DWORD flags)
{
	DWORD err = tt_os_move(from, to, flags);
	return !err ? 0 : err == ERROR_FILENAME_EXCED_RANGE ? -ENAMETOOLONG :
	       err == ERROR_ALREADY_EXISTS || err == ERROR_FILE_EXISTS ? -EEXIST :
	       err == ERROR_SHARING_VIOLATION || err == ERROR_ACCESS_DENIED ? -EBUSY : tt_os_file_error(err);
}

int tt_os_file_link(struct tt_os_new_file *made, const char *path)
{
	int err = tt_os_move_placing(made->tmp, path, 0);
	if (!err)
		made->tmp[0] = 0;
	return err;
}

/* Windows renames over no file that is open: the one held is moved aside first (its
 * opening lets it be), the new one put at the name where nothing is then, and the old
 * one removed. */
int tt_os_file_replace(struct tt_os_new_file *made, const char *path, struct tt_os_file *held)
{
	char aside[sizeof made->tmp + 8];
	if (!held) {
		int err = tt_os_move_placing(made->tmp, path, MOVEFILE_REPLACE_EXISTING);
		if (!err)
			made->tmp[0] = 0;
		return err;
	}
	int err = snprintf(aside, sizeof aside, "%s.old", made->tmp) >= (int)sizeof aside ? -ENAMETOOLONG :
		  tt_os_move_placing(path, aside, 0);
	if (!err) {
		err = tt_os_file_link(made, path);
		tt_os_file_close(held);
		tt_os_remove(aside);
	} else {
		tt_os_file_close(held);
	}
	return err;
}

/* ntdll's NtQueryInformationFile, class FileInternalInformation (6): a file's index,
 * GetFileInformationByHandle's without the volume's serial number, which Wine asks
 * its mount manager for (3 ms a call under Wine at load 6: a stream's drain checks its
 * file before each write, and fell behind threads recording 300 000 events a second). */
typedef LONG(NTAPI *tt_os_query_file_fn)(HANDLE, IO_STATUS_BLOCK *, void *, ULONG, ULONG);

static int tt_os_file_index(HANDLE h, uint64_t *index)
{
	static tt_os_query_file_fn query;
	tt_os_query_file_fn q = __atomic_load_n(&query, __ATOMIC_RELAXED);
	if (!q) {
		q = (tt_os_query_file_fn)(void (*)(void))GetProcAddress(GetModuleHandleA("ntdll.dll"),
									"NtQueryInformationFile");
		__atomic_store_n(&query, q, __ATOMIC_RELAXED);
	}
	IO_STATUS_BLOCK io;
	LARGE_INTEGER internal; /* (FILE_INTERNAL_INFORMATION) */
	if (q && q(h, &io, &internal, sizeof internal, 6) >= 0) {
		*index = (uint64_t)internal.QuadPart;
		return 0;
	}
	BY_HANDLE_FILE_INFORMATION info;
	if (!GetFileInformationByHandle(h, &info))
		return tt_os_file_error(GetLastError());
	*index = (uint64_t)info.nFileIndexHigh << 32 | info.nFileIndexLow;
	return 0;
}

int tt_os_file_identify(struct tt_os_file file, struct tt_os_file_id *id, int exact)
{
	/* (no number a program reuses: no close-on-exec to tell by, no flags) */
	int flags = exact ? 0 : id->flags;
	HANDLE h = (HANDLE)file.handle;
	DWORD type = GetFileType(h);
	if (type == FILE_TYPE_UNKNOWN && GetLastError() != NO_ERROR)
		return -EBADF;
	if (type != FILE_TYPE_DISK) {
		*id = (struct tt_os_file_id){.ino = type, .flags = flags};
		return 0;
	}
	/* (its volume's serial number left out: Wine gave one as a DLL started and 0 for
	 * the same handle later, from another thread) */
	uint64_t index;
	int err = tt_os_file_index(h, &index);
	if (!err)
		*id = (struct tt_os_file_id){.ino = index, .flags = flags};
	return err;
}

uint64_t tt_os_files_limit(void)
{
	return UINT64_MAX;
}

int tt_os_file_copy(struct tt_os_file file, int from, struct tt_os_file *copy)
{
	(void)from; /* (a handle is no number a program takes by range: any will do) */
	if (file.handle < 0) /* (none; -1 would name the process itself) */
		return -EBADF;
	HANDLE self = GetCurrentProcess(), h;
	if (!DuplicateHandle(self, (HANDLE)file.handle, self, &h, 0, FALSE, DUPLICATE_SAME_ACCESS))
		return tt_os_file_error(GetLastError());
	copy->handle = (intptr_t)h;
	return 0;
}

int tt_os_file_reopen(const char *path, const struct tt_os_file_id *id, struct tt_os_file *file)
{
	struct tt_os_wide wide;
	if (tt_os_wide(path, &wide))
		return -EBADF;
	/* (never through a link: the reparse point itself, which is not the file) */
	HANDLE h = CreateFileW(wide.path, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
			       OPEN_EXISTING, FILE_FLAG_OPEN_REPARSE_POINT, NULL);
	tt_os_wide_done(&wide);
	if (h == INVALID_HANDLE_VALUE)
		return -EBADF;
	struct tt_os_file_id now;
	if (GetFileType(h) != FILE_TYPE_DISK || tt_os_file_identify((struct tt_os_file){(intptr_t)h}, &now, 1) != 0 ||
	    now.dev != id->dev || now.ino != id->ino) {
		CloseHandle(h);
		return -EBADF;
	}
	file->handle = (intptr_t)h;
	return 0;
}

static int tt_os_file_sink_put(struct tt_os_sink *sink, const void *a, size_t a_size, const void *b,
			       size_t b_size, uint64_t at)
{
	struct tt_os_file_sink *s = (struct tt_os_file_sink *)sink;
	const char *part[2] = {a, b};
	size_t size[2] = {a_size, b_size};
	int rechecked = 0;
	for (int i = 0; i < 2; i++)
		while (size[i]) {
			/* (checked last before the call: nothing between them) */
			int err = s->check ? s->check(s, at) : 0;
			if (err)
				return err;
			DWORD n, want = size[i] > (1u << 30) ? 1u << 30 : (DWORD)size[i];
			if (s->io)
				s->io(1);
			BOOL wrote = WriteFile((HANDLE)s->file.handle, part[i], want, &n, NULL);
			DWORD why = wrote ? 0 : GetLastError();
			if (s->io)
				s->io(0);
			if (!wrote && why == ERROR_INVALID_HANDLE && s->check && !rechecked++)
				continue; /* (closed since it was checked: checked again) */
			if (!wrote)
				return tt_os_file_error(why);
			if (!n)
				return -EIO;
			rechecked = 0;
			part[i] += n;
			size[i] -= n;
			at += n;
		}
	return 0;
}

void tt_os_file_sink(struct tt_os_file_sink *sink, struct tt_os_file file)
{
	*sink = (struct tt_os_file_sink){.sink = {tt_os_file_sink_put}, .file = file};
}

/* ---- time ---- */

static int64_t tt_os_ticks_ns(uint64_t ticks, uint64_t hz)
{
	return (int64_t)(ticks / hz * 1000000000u + ticks % hz * 1000000000u / hz);
}

int64_t tt_os_monotonic_ns(void)
{
	LARGE_INTEGER now, hz;
	QueryPerformanceCounter(&now);
	QueryPerformanceFrequency(&hz);
	return tt_os_ticks_ns((uint64_t)now.QuadPart, (uint64_t)hz.QuadPart);
}

int64_t tt_os_boottime_ns(void)
{
	typedef void(WINAPI * interrupt_time_fn)(PULONGLONG);
	static interrupt_time_fn interrupt_time;
	static int looked;
	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
		interrupt_time = (interrupt_time_fn)(void (*)(void))tt_os_kernel_function(
			"QueryInterruptTimePrecise");
		__atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
	}
	if (!interrupt_time) /* (older Windows, Wine: milliseconds) */
		return (int64_t)GetTickCount64() * 1000000;
	ULONGLONG units; /* 100 ns since boot, time asleep included */
	interrupt_time(&units);
	return (int64_t)units * 100;
}

int64_t tt_os_realtime_ns(void)
{
	FILETIME now;
	GetSystemTimePreciseAsFileTime(&now);
	return tt_os_unix_ns(now);
}

int64_t tt_os_file_clock_ns(void)
{
	/* (16 ms back: Windows' tick at most; under Wine the files are Linux's, stamped
	 * on its coarse clock, 10 ms behind at most, while this clock is precise) */
	FILETIME now;
	GetSystemTimeAsFileTime(&now);
	return tt_os_unix_ns(now) - 16000000;
}

/* The greatest divisor of every thread time read, in 100 ns (0: none read yet): the
 * step the system's tick moves them by, or a multiple of it while few were read.
 * Neither the system's word serves: under Wine GetSystemTimeAdjustment says 15.625 ms
 * and NtQueryTimerResolution 1 ms, where its thread times, Linux's utime and stime,
 * move by 10 ms. */
static uint64_t tt_os_times_step;

static uint64_t tt_os_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;
		a = b;
		b = r;
	}
	return a;
}

/* FILETIME's 100 ns units. */
static uint64_t tt_os_filetime_units(FILETIME t)
{
	return (uint64_t)t.dwHighDateTime << 32 | t.dwLowDateTime;
}

/* ... as nanoseconds. */
static int64_t tt_os_filetime_ns(FILETIME t)
{
	return (int64_t)tt_os_filetime_units(t) * 100;
}

static void tt_os_times_seen(FILETIME kernel, FILETIME user)
{
	uint64_t seen = tt_os_gcd(tt_os_filetime_units(kernel), tt_os_filetime_units(user));
	uint64_t was = __atomic_load_n(&tt_os_times_step, __ATOMIC_RELAXED), step;
	do
		step = tt_os_gcd(was, seen);
	while (step != was && !__atomic_compare_exchange_n(&tt_os_times_step, &was, step, false,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

int64_t tt_os_thread_cpu_ns(void)
{
	int64_t ns = tt_os_thread_cpu_ns_of((uintptr_t)GetCurrentThread());
	return ns < 0 ? 0 : ns;
}

int64_t tt_os_process_cpu_ns(void)
{
	FILETIME created, exited, kernel, user;
	if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user))
		return 0;
	return tt_os_filetime_ns(kernel) + tt_os_filetime_ns(user);
}

uintptr_t tt_os_thread_open(uint32_t tid)
{
	HANDLE thread = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, tid);
	return (uintptr_t)thread;
}

int64_t tt_os_thread_cpu_ns_of(uintptr_t thread)
{
	FILETIME created, exited, kernel, user;
	if (!GetThreadTimes((HANDLE)thread, &created, &exited, &kernel, &user))
		return -1;
	tt_os_times_seen(kernel, user);
	return tt_os_filetime_ns(kernel) + tt_os_filetime_ns(user);
}

void tt_os_thread_close(uintptr_t thread)
{
	CloseHandle((HANDLE)thread);
}

size_t tt_os_thread_name_at(uintptr_t thread, char *name, size_t size)
{
	return tt_os_thread_name_by((HANDLE)thread, name, size);
}

void tt_os_clock_reading(const struct tt_anchor *anchor, struct tt_clock_reading *reading)
{
	*reading = (struct tt_clock_reading){
		.tsc = anchor->tsc, .realtime_ns = anchor->realtime_ns, .tai_ns = anchor->realtime_ns, .state = -1};
}

int tt_os_clock_by_tsc(void)
{
	return 0;
}

void tt_os_machine_ids(struct tt_machine_info *machine)
{
	machine->flags |= TT_MACHINE_WINDOWS;
}

void tt_os_machine_tick(struct tt_machine_info *machine)
{
	uint64_t ns = __atomic_load_n(&tt_os_times_step, __ATOMIC_RELAXED) * 100;
	if (ns < 1000000 || ns > UINT32_MAX) /* (finer: not a tick's steps) */
		return;
	machine->tick_ns = (uint32_t)ns;
	machine->flags |= TT_MACHINE_TICK;
	if (tt_os_wine())
		machine->flags |= TT_MACHINE_TICK_EACH;
}

static void (*tt_os_crashed)(uint32_t cause);
static LPTOP_LEVEL_EXCEPTION_FILTER tt_os_crash_next;

static LONG WINAPI tt_os_crash_filter(EXCEPTION_POINTERS *e)
{
	void (*crashed)(uint32_t) = __atomic_load_n(&tt_os_crashed, __ATOMIC_ACQUIRE);
	if (crashed && tt_os_crash_first(e->ExceptionRecord->ExceptionCode))
		crashed((uint32_t)e->ExceptionRecord->ExceptionCode);
	return tt_os_crash_next ? tt_os_crash_next(e) : EXCEPTION_CONTINUE_SEARCH;
}

/* The filter is set as the module loads (a TLS callback, called before the program's C
 * runtime starts), else at start-up: mingw-w64's runtime keeps the filter it finds as
 * it starts and calls it from main's thread's own handler, before the program's filter
 * (a crash reporter's, which may end the process without calling the one it replaced).
 * The DLL's was set so, at its load; the static library's, in a constructor that runs
 * after the runtime's start, was not: a program's filter left no trace (r50 #3). */
static LONG tt_os_filter_set;

static void tt_os_crash_filter_set(void)
{
	if (InterlockedExchange(&tt_os_filter_set, 1) == 0)
		tt_os_crash_next = SetUnhandledExceptionFilter(tt_os_crash_filter);
}

static void NTAPI tt_os_loaded(PVOID module, DWORD reason, PVOID reserved)
{
	(void)module;
	(void)reserved;
	if (reason == DLL_PROCESS_ATTACH)
		tt_os_crash_filter_set();
}

/* (mingw-w64's TLS directory lists the callbacks from .CRT$XLA to .CRT$XLZ) */
static PIMAGE_TLS_CALLBACK tt_os_loaded_callback __attribute__((used, section(".CRT$XLT"))) = tt_os_loaded;

static DWORD WINAPI tt_os_overflowed(void *unused)
{
	(void)unused;
	tt_os_crashed(EXCEPTION_STACK_OVERFLOW);
	return 0;
}

/* A stack overflow, as it happens: the search for a handler, on the page or two the
 * stack has left, overflows it again before any filter runs (Wine then ends the
 * thread alone, the process left to ticktrace's threads). So the trace is written
 * first, by a thread of its own (a program that handles its overflow is rare: its
 * trace is then the overflow's). */
static LONG WINAPI tt_os_overflow_first(EXCEPTION_POINTERS *e)
{
	if (e->ExceptionRecord->ExceptionCode != EXCEPTION_STACK_OVERFLOW ||
	    !tt_os_crash_first(EXCEPTION_STACK_OVERFLOW))
		return EXCEPTION_CONTINUE_SEARCH;
	HANDLE writer = CreateThread(NULL, 0, tt_os_overflowed, NULL, 0, NULL);
	if (writer) {
		WaitForSingleObject(writer, INFINITE);
		CloseHandle(writer);
	}
	return EXCEPTION_CONTINUE_SEARCH;
}

/* abort() and a failed assert: the C runtime raises SIGABRT (the handler reset to the
 * default as it runs), then ends the process with exit code 3 (_exit: ExitProcess, no
 * atexit), no exception raised. Said as Linux's SIGABRT, the file's number (format.h),
 * the run then ended as the C library's exit ends it (ticktrace's threads ended and
 * waited for: ExitProcess would end them wherever they are, tt-sched inside its tick,
 * the sched lock held, and Wine's own calls midway), then the program's own handler,
 * if it had one. (A C runtime other than the one this module links, ucrt beside
 * msvcrt, keeps its own handlers: its abort is not seen.) */
#define TT_OS_FILE_SIGABRT 6
static void (*tt_os_abort_next)(int);

static void tt_os_aborted(int sig)
{
	if (tt_os_crash_first(0)) {
		tt_os_crashed(TT_OS_FILE_SIGABRT);
		if (tt_os_end)
			tt_os_ending();
	}
	if (tt_os_abort_next != SIG_DFL && tt_os_abort_next != SIG_IGN && tt_os_abort_next != SIG_ERR)
		tt_os_abort_next(sig);
}

int tt_os_on_crash(void (*crashed)(uint32_t cause), int ends)
{
	(void)ends; /* (no signal ends a program by default: a console's Ctrl-C, say, is not taken) */
	__atomic_store_n(&tt_os_crashed, crashed, __ATOMIC_RELEASE);
	tt_os_abort_next = signal(SIGABRT, tt_os_aborted);
	tt_os_crash_filter_set();
	return AddVectoredExceptionHandler(1, tt_os_overflow_first) ? 0 : -ENOMEM;
}

int tt_os_dump_signal(const char *name)
{
	(void)name;
	return -ENOSYS;
}

int tt_os_on_signal(int sig, void (*asked)(void))
{
	(void)sig;
	(void)asked;
	return -ENOSYS;
}

int tt_os_at_fork(void (*before)(void), void (*parent)(void), void (*child)(void))
{
	(void)before;
	(void)parent;
	(void)child;
	return 0;
}

/* ---- a thread's counters ---- */

/* ntdll's NtQueryInformationThread, class ThreadSystemThreadInformation: the thread's
 * SYSTEM_THREAD_INFORMATION, one system call (Windows 10's later builds and 11; Wine 8
 * answers STATUS_NOT_IMPLEMENTED, and its whole-system SystemProcessInformation counts
 * no switches: 0; a whole-system snapshot too costly to read every few milliseconds
 * anyway). */
#define TT_OS_THREAD_SYSTEM_INFORMATION 40
struct tt_os_system_thread_information { /* (winternl.h's SYSTEM_THREAD_INFORMATION) */
	LARGE_INTEGER kernel_time, user_time, create_time;
	ULONG wait_time;
	void *start_address;
	HANDLE process, thread;
	LONG priority, base_priority;
	ULONG context_switches, state, wait_reason;
};
_Static_assert(sizeof(struct tt_os_system_thread_information) == 80, "the class's length, which ntdll demands");
typedef LONG(NTAPI *tt_os_query_thread_fn)(HANDLE, ULONG, void *, ULONG, ULONG *);

static INIT_ONCE tt_os_counters_once = INIT_ONCE_STATIC_INIT;
static struct {
	int cycles; /* QueryThreadCycleTime answers */
	tt_os_query_thread_fn query_thread; /* it answers ThreadSystemThreadInformation, or NULL */
	uint64_t cycles_hz; /* the cycle time's rate: the TSC's, measured once */
} tt_os_counters;

/* The thread's context switches so far; false where ntdll does not say. */
static int tt_os_switches(HANDLE thread, uint64_t *switches)
{
	struct tt_os_system_thread_information info;
	if (!tt_os_counters.query_thread ||
	    tt_os_counters.query_thread(thread, TT_OS_THREAD_SYSTEM_INFORMATION, &info, sizeof info, NULL) < 0)
		return 0;
	*switches = info.context_switches;
	return 1;
}

static BOOL CALLBACK tt_os_counters_find(PINIT_ONCE once, PVOID unused, PVOID *unused_too)
{
	(void)once;
	(void)unused;
	(void)unused_too;
	ULONG64 cycles;
	uint64_t switches;
	tt_os_counters.cycles = QueryThreadCycleTime(GetCurrentThread(), &cycles) != 0;
	/* (once, over 100 us: a rate measured again at each reading moved with the clocks'
	 * reading apart, and a thread that did not run could read less than before) */
	tt_os_counters.cycles_hz = tt_os_counters.cycles ? tt_os_ns_in_ticks(1000000000) : 0;
	tt_os_counters.query_thread = (tt_os_query_thread_fn)(void (*)(void))GetProcAddress(
		GetModuleHandleA("ntdll.dll"), "NtQueryInformationThread");
	if (!tt_os_switches(GetCurrentThread(), &switches))
		tt_os_counters.query_thread = NULL;
	return TRUE;
}

uint32_t tt_os_counters_flags(void)
{
	InitOnceExecuteOnce(&tt_os_counters_once, tt_os_counters_find, NULL, NULL);
	return TT_SCHEDSTAT_RUN_ONLY | (tt_os_counters.cycles ? 0 : TT_SCHEDSTAT_TICK_STEPS) |
	       (tt_os_counters.query_thread ? TT_SCHEDSTAT_SWITCH_COUNT : 0);
}

int tt_os_counters_dir(void)
{
	return -ENOSYS; /* (a thread is opened by its id) */
}

int tt_os_counters_open(struct tt_os_counters *c, uint32_t tid, int dir)
{
	HANDLE thread = (HANDLE)tt_os_thread_open(tid);
	*c = (struct tt_os_counters){.handle = thread ? (intptr_t)thread : -1, .stat = -1, .dir = dir,
				     .tid = thread ? tid : 0};
	return thread ? 0 : -ESRCH;
}

void tt_os_counters_close(struct tt_os_counters *c)
{
	if (c->handle != -1)
		CloseHandle((HANDLE)c->handle);
	c->handle = -1;
	c->tid = 0;
}

/* The thread's CPU time in ns; false where it cannot be read. */
static int tt_os_counters_cpu_ns(HANDLE thread, uint64_t *ns)
{
	ULONG64 cycles;
	if (tt_os_counters.cycles && QueryThreadCycleTime(thread, &cycles)) {
		if (!tt_os_counters.cycles_hz)
			return 0;
		*ns = (uint64_t)((unsigned __int128)cycles * 1000000000u / tt_os_counters.cycles_hz);
		return 1;
	}
	int64_t times = tt_os_thread_cpu_ns_of((uintptr_t)thread);
	*ns = (uint64_t)times;
	return times >= 0;
}

/* (`thread`: a HANDLE; no faults, no wait: RUN_ONLY, 0. None of a thread that has
 * ended, as on Linux: Wine says 0 CPU time of one TerminateThread ended, 6 times in
 * 20, a reading less than the one before, which the converter refuses: CI's
 * windows_ends_terminated, 1 run in 23) */
static int tt_os_counters_of(HANDLE thread, struct tt_schedstat_sample *out)
{
	uint64_t run, switches = 0;
	DWORD code;
	tt_os_counters_flags();
	if (!tt_os_counters_cpu_ns(thread, &run) || (tt_os_counters.query_thread && !tt_os_switches(thread, &switches)) ||
	    !GetExitCodeThread(thread, &code) || code != STILL_ACTIVE)
		return -1;
	*out = (struct tt_schedstat_sample){.ns = tt_os_monotonic_ns(), .run_ns = run, .timeslices = switches};
	return 0;
}

int tt_os_counters_read(struct tt_os_counters *c, struct tt_schedstat_sample *out, int faults, uint64_t ran_ns)
{
	(void)faults;
	(void)ran_ns;
	return c->handle == -1 ? -1 : tt_os_counters_of((HANDLE)c->handle, out);
}

int tt_os_counters_read_own(uint32_t tid, struct tt_schedstat_sample *out)
{
	(void)tid;
	return tt_os_counters_of(GetCurrentThread(), out);
}

int tt_os_counters_read_other(uint32_t tid, struct tt_schedstat_sample *out)
{
	struct tt_os_counters c;
	if (tt_os_counters_open(&c, tid, -1) < 0)
		return -1;
	int read = tt_os_counters_read(&c, out, 1, 0);
	tt_os_counters_close(&c);
	return read;
}

int tt_os_steal_accounted(void)
{
	return 0;
}

/* ---- the process ---- */

uint32_t tt_os_process_id(void)
{
	return GetCurrentProcessId();
}

size_t tt_os_process_name(char *name, size_t size)
{
	struct tt_os_wide wide;
	if (tt_os_module_wide(NULL, &wide)) {
		if (size)
			name[0] = 0;
		return 0;
	}
	const wchar_t *base = wide.path;
	for (const wchar_t *p = wide.path; *p; p++)
		if (*p == L'\\' || *p == L'/')
			base = p + 1;
	size_t len = tt_os_utf8(base, name, size);
	tt_os_wide_done(&wide);
	return len;
}

/* ntdll's NtQueryInformationProcess, class ProcessBasicInformation (0). */
struct tt_os_basic_information {
	LONG exit_status;
	void *peb;
	ULONG_PTR affinity;
	LONG base_priority;
	ULONG_PTR process_id;
	ULONG_PTR parent_id; /* InheritedFromUniqueProcessId */
};
_Static_assert(sizeof(struct tt_os_basic_information) == 48, "the class's length, which ntdll demands");

uint32_t tt_os_parent_id(void)
{
	LONG(NTAPI *query)(HANDLE, ULONG, void *, ULONG, ULONG *) =
		(LONG(NTAPI *)(HANDLE, ULONG, void *, ULONG, ULONG *))(void (*)(void))GetProcAddress(
			GetModuleHandleA("ntdll.dll"), "NtQueryInformationProcess");
	struct tt_os_basic_information info;
	if (!query || query(GetCurrentProcess(), 0, &info, sizeof info, NULL) < 0)
		return 0;
	return (uint32_t)info.parent_id;
}

/* The next argument of a command line as the C runtime splits it (the program's name:
 * up to a space, or quoted, with no escapes; the others: 2n backslashes and a quote
 * are n backslashes and a quote that begins or ends a quoted part, 2n+1 of them are n
 * and a quote kept, "" inside quotes a quote kept) into `arg`, ended by a NUL; where
 * the line goes on. */
static const wchar_t *tt_os_next_arg(const wchar_t *at, wchar_t *arg, bool program)
{
	bool quoted = false;
	if (program) {
		for (; *at && (quoted || (*at != L' ' && *at != L'\t')); at++)
			if (*at == L'"')
				quoted = !quoted;
			else
				*arg++ = *at;
		*arg = 0;
		return at;
	}
	while (*at && (quoted || (*at != L' ' && *at != L'\t'))) {
		size_t slashes = 0;
		while (at[slashes] == L'\\')
			slashes++;
		if (at[slashes] != L'"') {
			for (size_t i = 0; i < slashes; i++)
				*arg++ = L'\\';
			at += slashes;
			if (slashes == 0)
				*arg++ = *at++;
			continue;
		}
		for (size_t i = 0; i < slashes / 2; i++)
			*arg++ = L'\\';
		at += slashes + 1;
		if (slashes % 2)
			*arg++ = L'"';
		else if (quoted && *at == L'"')
			*arg++ = *at++;
		else
			quoted = !quoted;
	}
	*arg = 0;
	return at;
}

size_t tt_os_command_line(char *line, size_t size)
{
	const wchar_t *at = GetCommandLineW();
	size_t len = 0, chars = wcslen(at) + 1;
	wchar_t *arg = HeapAlloc(GetProcessHeap(), 0, chars * sizeof *arg);
	char *utf8 = HeapAlloc(GetProcessHeap(), 0, 3 * chars);
	for (bool program = true; arg && utf8 && *at; program = false) {
		at = tt_os_next_arg(at, arg, program);
		int n = WideCharToMultiByte(CP_UTF8, 0, arg, -1, utf8, (int)(3 * chars), NULL, NULL);
		if (n <= 0 || (size_t)n > size - len)
			break;
		memcpy(line + len, utf8, (size_t)n);
		len += (size_t)n;
		while (*at == L' ' || *at == L'\t')
			at++;
	}
	HeapFree(GetProcessHeap(), 0, arg);
	HeapFree(GetProcessHeap(), 0, utf8);
	return len;
}

size_t tt_os_host_name(char *name, size_t size)
{
	DWORD n = (DWORD)size;
	if (!size || !GetComputerNameExA(ComputerNameDnsHostname, name, &n)) {
		if (size)
			name[0] = 0;
		return 0;
	}
	return n;
}

/* A CodeView record (the linker's, with --build-id for GNU ld): "RSDS", the GUID,
 * the age, then the PDB's path. */
struct tt_os_codeview {
	DWORD signature;
	uint8_t guid_age[20];
};

/* The module's build id (format.h's tt_module_info): its CodeView record's GUID and
 * age, else (mingw's ld writes none without --build-id) its header's stamp, into
 * `stamp`, or none (0 bytes) where the header has none either. Its length. */
static uint32_t tt_os_build_id(const uint8_t *base, const IMAGE_NT_HEADERS64 *nt,
			       uint8_t stamp[TT_PE_STAMP_SIZE], const uint8_t **id)
{
	const IMAGE_DATA_DIRECTORY *dir =
		&nt->OptionalHeader.DataDirectory[IMAGE_DIRECTORY_ENTRY_DEBUG];
	const IMAGE_DEBUG_DIRECTORY *debug = (const void *)(base + dir->VirtualAddress);
	size_t n = nt->OptionalHeader.NumberOfRvaAndSizes > IMAGE_DIRECTORY_ENTRY_DEBUG ? dir->Size / sizeof *debug : 0;
	for (size_t i = 0; i < n; i++) {
		if (debug[i].Type != IMAGE_DEBUG_TYPE_CODEVIEW || !debug[i].AddressOfRawData ||
		    debug[i].SizeOfData < sizeof(struct tt_os_codeview))
			continue;
		const struct tt_os_codeview *cv = (const void *)(base + debug[i].AddressOfRawData);
		if (cv->signature == 0x53445352) { /* "RSDS" */
			*id = cv->guid_age;
			return sizeof cv->guid_age;
		}
	}
	uint32_t fields[3] = {nt->FileHeader.TimeDateStamp, nt->OptionalHeader.SizeOfImage,
			      nt->OptionalHeader.CheckSum};
	memcpy(stamp, fields, TT_PE_STAMP_SIZE);
	*id = stamp;
	return fields[0] || fields[2] ? TT_PE_STAMP_SIZE : 0;
}

#define TT_OS_MODULES_MAX 1024

/* The loaded modules' handles (their image bases), TT_OS_MODULES_MAX at most: how many. */
static size_t tt_os_module_handles(HMODULE modules[TT_OS_MODULES_MAX])
{
	DWORD bytes = 0;
	if (!K32EnumProcessModules(GetCurrentProcess(), modules, TT_OS_MODULES_MAX * sizeof modules[0], &bytes))
		return 0;
	size_t n = bytes / sizeof modules[0];
	return n < TT_OS_MODULES_MAX ? n : TT_OS_MODULES_MAX;
}

/* A module mapped at `base`, its file at `wpath` (`chars` long, -1: to its NUL): `each`
 * called with each of its ranges (its executable sections) until one returns other than
 * 0, which it returns. */
static int tt_os_module_walk(const uint8_t *base, const wchar_t *wpath, int chars,
			     int (*each)(const struct tt_os_module *module, void *arg), void *arg)
{
	const IMAGE_DOS_HEADER *dos = (const void *)base;
	const IMAGE_NT_HEADERS64 *nt = (const void *)(base + dos->e_lfanew);
	if (dos->e_magic != IMAGE_DOS_SIGNATURE || nt->Signature != IMAGE_NT_SIGNATURE)
		return 0;
	/* (its path in UTF-8: on the stack where it fits, as at a crash; a longer one's from
	 * the heap) */
	char small[3 * MAX_PATH], *path = small;
	int bytes = WideCharToMultiByte(CP_UTF8, 0, wpath, chars, NULL, 0, NULL, NULL);
	if (bytes <= 0 || (bytes >= (int)sizeof small && !(path = HeapAlloc(GetProcessHeap(), 0, (size_t)bytes + 1))))
		return 0;
	path[WideCharToMultiByte(CP_UTF8, 0, wpath, chars, path, bytes, NULL, NULL) > 0 ? bytes : 0] = 0;
	int rc = 0;
	uint8_t stamp[TT_PE_STAMP_SIZE];
	const uint8_t *build_id;
	uint32_t build_id_len = tt_os_build_id(base, nt, stamp, &build_id);
	const IMAGE_SECTION_HEADER *sec = IMAGE_FIRST_SECTION(nt);
	for (unsigned s = 0; s < nt->FileHeader.NumberOfSections; s++) {
		/* (its data too: the call sites' descriptors, as Linux's loadable segments) */
		if (!(sec[s].Characteristics & IMAGE_SCN_MEM_READ) || (sec[s].Characteristics & IMAGE_SCN_MEM_DISCARDABLE))
			continue;
		struct tt_os_module module = {
			.path = path,
			.loaded_as = path,
			.base = (uint64_t)(uintptr_t)base,
			.start = (uint64_t)(uintptr_t)(base + sec[s].VirtualAddress),
			.end = (uint64_t)(uintptr_t)(base + sec[s].VirtualAddress + sec[s].Misc.VirtualSize),
			.file_offset = sec[s].PointerToRawData,
			.build_id = build_id,
			.build_id_len = build_id_len,
		};
		if ((rc = each(&module, arg)))
			break;
	}
	if (path != small)
		HeapFree(GetProcessHeap(), 0, path);
	return rc;
}

int tt_os_modules(int (*each)(const struct tt_os_module *module, void *arg), void *arg)
{
	HMODULE modules[TT_OS_MODULES_MAX];
	size_t n = tt_os_module_handles(modules);
	for (size_t m = 0; m < n; m++) {
		struct tt_os_wide wide;
		if (tt_os_module_wide(modules[m], &wide))
			continue;
		int rc = tt_os_module_walk((const uint8_t *)modules[m], wide.path, -1, each, arg);
		tt_os_wide_done(&wide);
		if (rc)
			return rc;
	}
	return 0;
}

/* ntdll's LdrRegisterDllNotification: what it tells of a module (loaded or unloaded
 * alike). */
struct tt_os_dll_notified {
	ULONG flags;
	const UNICODE_STRING *full_name;
	const UNICODE_STRING *base_name;
	void *base;
	ULONG image_size;
};
#define TT_OS_DLL_UNLOADED 2 /* LDR_DLL_NOTIFICATION_REASON_UNLOADED */

static void (*tt_os_unloaded)(struct tt_os_module_list *ranges, uint64_t low, uint64_t high, uint64_t tsc);
/* The loads and unloads the loader told (tt_os_modules_changes). */
static uint64_t tt_os_dll_events;

static VOID CALLBACK tt_os_dll_notification(ULONG reason, const struct tt_os_dll_notified *dll, PVOID unused)
{
	(void)unused;
	__atomic_add_fetch(&tt_os_dll_events, 1, __ATOMIC_RELEASE);
	if (reason != TT_OS_DLL_UNLOADED)
		return;
	uint64_t tsc = __rdtsc();
	struct tt_os_module_list ranges = {0};
	tt_os_module_walk(dll->base, dll->full_name->Buffer, (int)(dll->full_name->Length / sizeof(wchar_t)),
			  tt_os_module_list_add, &ranges);
	if (ranges.err || !ranges.count)
		free(ranges.data);
	else
		tt_os_unloaded(&ranges, (uintptr_t)dll->base, (uintptr_t)dll->base + dll->image_size, tsc);
}

int tt_os_on_unload(void (*unloaded)(struct tt_os_module_list *ranges, uint64_t low, uint64_t high,
				      uint64_t tsc))
{
	typedef VOID(CALLBACK * tt_os_notification_fn)(ULONG, const struct tt_os_dll_notified *, PVOID);
	LONG(NTAPI *subscribe)(ULONG, tt_os_notification_fn, PVOID, PVOID *) =
		(LONG(NTAPI *)(ULONG, tt_os_notification_fn, PVOID, PVOID *))(void (*)(void))GetProcAddress(
			GetModuleHandleA("ntdll.dll"), "LdrRegisterDllNotification");
	void *cookie;
	tt_os_unloaded = unloaded;
	if (!subscribe)
		return -ENOSYS;
	return subscribe(0, tt_os_dll_notification, NULL, &cookie) < 0 ? -EINVAL : 0;
}

uint64_t tt_os_modules_changes(void)
{
	HMODULE modules[TT_OS_MODULES_MAX];
	size_t n = tt_os_module_handles(modules);
	uint64_t hash = UINT64_C(14695981039346656037); /* (FNV-1a over the handles) */
	for (size_t m = 0; m < n; m++)
		hash = (hash ^ (uint64_t)(uintptr_t)modules[m]) * UINT64_C(1099511628211);
	/* (a library unloaded and loaded again where it was leaves the handles as they were) */
	return (hash ^ __atomic_load_n(&tt_os_dll_events, __ATOMIC_ACQUIRE)) * UINT64_C(1099511628211);
}

int tt_os_address_loaded(const void *at, const char **symbol)
{
	HMODULE module;
	*symbol = NULL;
	return GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				  at, &module) != 0;
}

int tt_os_address_module(const void *at, struct tt_os_address *where, char *buf, size_t cap)
{
	HMODULE module;
	struct tt_os_wide wide;
	if (!GetModuleHandleExW(GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
				at, &module))
		return 0;
	if (!tt_os_module_wide(module, &wide))
		tt_os_utf8(wide.path, buf, cap);
	else if (cap)
		buf[0] = 0;
	tt_os_wide_done(&wide);
	*where = (struct tt_os_address){.base = (uintptr_t)module, .loaded_as = buf};
	return 1;
}

const char *tt_os_module_file(const char *loaded_as, char *buf, size_t cap)
{
	(void)buf, (void)cap;
	const char *name = loaded_as;
	for (const char *p = loaded_as; *p; p++)
		if (*p == '\\' || *p == '/')
			name = p + 1;
	return name;
}

/* (mingw's C runtime has no open_memstream: a file of its own in the temporary
 * directory, deleted as its last handle closes, holds the text) */
FILE *tt_os_memstream_open(struct tt_os_memstream *m)
{
	wchar_t dir[MAX_PATH + 1], path[MAX_PATH + 1];
	*m = (struct tt_os_memstream){0};
	DWORD n = GetTempPathW(MAX_PATH + 1, dir);
	if (!n || n > MAX_PATH || !GetTempFileNameW(dir, L"tt", 0, path)) {
		errno = ENOENT;
		return NULL;
	}
	HANDLE h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
			       FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		DeleteFileW(path);
		errno = -tt_os_file_error(GetLastError());
		return NULL;
	}
	int fd = _open_osfhandle((intptr_t)h, _O_RDWR | _O_BINARY);
	if (fd < 0) {
		CloseHandle(h);
		return NULL;
	}
	m->stream = _fdopen(fd, "w+b");
	if (!m->stream)
		_close(fd);
	return m->stream;
}

int tt_os_memstream_close(struct tt_os_memstream *m, char **text, size_t *len)
{
	int err = fflush(m->stream) == 0 && !ferror(m->stream) ? 0 : -EIO;
	long size = err ? 0 : ftell(m->stream);
	char *read = NULL;
	if (!err && (size < 0 || !(read = malloc((size_t)size + 1))))
		err = -ENOMEM;
	if (!err) {
		rewind(m->stream);
		if (fread(read, 1, (size_t)size, m->stream) != (size_t)size)
			err = -EIO;
		else
			read[size] = 0;
	}
	fclose(m->stream);
	if (err) {
		free(read);
		read = NULL, size = 0;
	}
	*text = read;
	*len = (size_t)size;
	return err;
}
