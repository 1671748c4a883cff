/* Windows' choice of mechanism, the first of them: the kernel's profile of the
 * process (NtCreateProfile, NtSetIntervalProfile, NtStartProfile, NtStopProfile),
 * looked up in ntdll as it runs, since they are not in its import library and Wine's
 * ntdll lacks NtCreateProfile; and the executable section that holds a profile, for
 * tt_profile_write. Where the kernel's profile is missing or refused, the sampler
 * thread (suspend.c) serves. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "platform/platform.h"
#include "sampler/sampler.h"

/* ntdll's, as ReactOS and the Windows DDK declare them. KPROFILE_SOURCE's ProfileTime
 * is 0; a bucket's size is given by its log2 (2 to 30), the interval in 100 ns. */
#define TT__NT_PROFILE_TIME 0
#define TT__NT_MIN_BUCKET_SHIFT 2
#define TT__NT_MAX_BUCKET_SHIFT 30
typedef LONG(NTAPI *tt__nt_create_profile)(HANDLE *profile, HANDLE process, void *base,
					   SIZE_T size, ULONG bucket_shift, ULONG *buffer,
					   ULONG buffer_size, int source, KAFFINITY affinity);
typedef LONG(NTAPI *tt__nt_profile_call)(HANDLE profile);
typedef LONG(NTAPI *tt__nt_set_interval)(ULONG interval, int source);
typedef LONG(NTAPI *tt__nt_query_interval)(int source, ULONG *interval);

struct tt__ntdll {
	tt__nt_create_profile create;
	tt__nt_profile_call start, stop;
	tt__nt_set_interval set_interval;
	tt__nt_query_interval query_interval;
};

/* ntdll's profile functions; false where one is missing (Wine). */
static bool tt__ntdll_profile(struct tt__ntdll *nt)
{
	HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
	if (!ntdll)
		return false;
	/* (the functions' types are theirs: cast through a generic function pointer) */
	nt->create = (tt__nt_create_profile)(void (*)(void))GetProcAddress(ntdll, "NtCreateProfile");
	nt->start = (tt__nt_profile_call)(void (*)(void))GetProcAddress(ntdll, "NtStartProfile");
	nt->stop = (tt__nt_profile_call)(void (*)(void))GetProcAddress(ntdll, "NtStopProfile");
	nt->set_interval =
		(tt__nt_set_interval)(void (*)(void))GetProcAddress(ntdll, "NtSetIntervalProfile");
	nt->query_interval =
		(tt__nt_query_interval)(void (*)(void))GetProcAddress(ntdll, "NtQueryIntervalProfile");
	return nt->create && nt->start && nt->stop && nt->set_interval && nt->query_interval;
}

/* An NTSTATUS that failed, as an errno. */
static int tt__nt_errno(LONG status)
{
	switch ((ULONG)status) {
	case 0xC0000022: return -EACCES; /* STATUS_ACCESS_DENIED */
	case 0xC0000061: return -EPERM;  /* STATUS_PRIVILEGE_NOT_HELD */
	case 0xC000000D: return -EINVAL; /* STATUS_INVALID_PARAMETER */
	case 0xC0000017: return -ENOMEM; /* STATUS_NO_MEMORY */
	default: return -EIO;
	}
}

int tt__nt_profile_open(struct tt_profile *p)
{
	struct tt__ntdll nt;
	if (!tt__ntdll_profile(&nt))
		return -ENOSYS;
	if (p->shift < TT__NT_MIN_BUCKET_SHIFT || p->shift > TT__NT_MAX_BUCKET_SHIFT ||
	    p->nbuckets > UINT32_MAX / sizeof(ULONG))
		return -EINVAL;
	ULONG *buffer = calloc(p->nbuckets, sizeof(ULONG));
	if (!buffer)
		return -ENOMEM;
	DWORD_PTR process_cpus = 0, system_cpus = 0;
	GetProcessAffinityMask(GetCurrentProcess(), &process_cpus, &system_cpus);
	HANDLE handle = NULL;
	LONG status = nt.create(&handle, GetCurrentProcess(), (void *)p->start, p->size, p->shift,
				buffer, (ULONG)(p->nbuckets * sizeof(ULONG)), TT__NT_PROFILE_TIME,
				(KAFFINITY)process_cpus);
	if (status < 0) {
		free(buffer);
		return tt__nt_errno(status);
	}
	p->u.nt = (struct tt__nt_profile){.handle = handle, .buffer = (uint32_t *)buffer};
	return 0;
}

static int tt__nt_profile_start(struct tt_profile *p)
{
	struct tt__ntdll nt;
	tt__ntdll_profile(&nt);
	/* The interval is the system's, for every profile of time: asked, then read back
	 * (the kernel keeps it within its bounds). */
	ULONG units = p->interval / 100 > UINT32_MAX ? UINT32_MAX : (ULONG)(p->interval / 100);
	nt.set_interval(units ? units : 1, TT__NT_PROFILE_TIME);
	if (nt.query_interval(TT__NT_PROFILE_TIME, &units) >= 0 && units)
		p->interval = (uint64_t)units * 100;
	p->u.nt.cpu_start_ns = (uint64_t)tt_os_process_cpu_ns();
	LONG status = nt.start(p->u.nt.handle);
	return status < 0 ? tt__nt_errno(status) : 0;
}

/* The kernel's counts are the profile's: they keep adding up across windows, as the
 * profile's do (32 bits each: 49 days of one bucket's samples at 1 ms). */
static void tt__nt_profile_collect(struct tt_profile *p)
{
	for (size_t i = 0; i < p->nbuckets; i++)
		__atomic_store_n(&p->counts[i],
				 __atomic_load_n(&p->u.nt.buffer[i], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

static int tt__nt_profile_stop(struct tt_profile *p)
{
	struct tt__ntdll nt;
	tt__ntdll_profile(&nt);
	LONG status = nt.stop(p->u.nt.handle);
	p->cpu_ns += (uint64_t)tt_os_process_cpu_ns() - p->u.nt.cpu_start_ns;
	tt__nt_profile_collect(p);
	return status < 0 ? tt__nt_errno(status) : 0;
}

/* The process's CPU time: the profile samples all of it. */
static uint64_t tt__nt_profile_cpu_ns(struct tt_profile *p)
{
	return p->cpu_ns + (p->running ? (uint64_t)tt_os_process_cpu_ns() - p->u.nt.cpu_start_ns : 0);
}

static void tt__nt_profile_close(struct tt_profile *p)
{
	CloseHandle(p->u.nt.handle);
	free(p->u.nt.buffer);
}

const struct tt__mechanism tt__nt_profile_mechanism = {
	.id = TT_PROFILE_NT_PROFILE,
	.start = tt__nt_profile_start,
	.stop = tt__nt_profile_stop,
	.collect = tt__nt_profile_collect,
	.cpu_ns = tt__nt_profile_cpu_ns,
	.close = tt__nt_profile_close,
};

/* Time alone (Windows gives no hardware source to a program unprivileged); every
 * thread through the kernel's profile where it serves; else, or for one thread, the
 * sampler thread. */
int tt__mechanism_open(struct tt_profile *p)
{
	p->owner_tid = (pid_t)GetCurrentThreadId();
	if (p->source != TT_PROFILE_TIME) {
		if (!(p->flags & TT_PROFILE_ALLOW_TIME))
			return -ENODEV;
		p->source = TT_PROFILE_TIME;
		p->interval = tt__profile_default_interval(TT_PROFILE_TIME);
	}
	if ((p->flags & TT_PROFILE_ALL_THREADS) && !tt__profile_no_kernel_sampler() &&
	    tt__nt_profile_open(p) == 0) {
		p->mechanism = &tt__nt_profile_mechanism;
		return 0;
	}
	int rc = tt__suspend_open(p);
	if (rc == 0)
		p->mechanism = &tt__suspend_mechanism;
	return rc;
}

static int tt__find_section(const struct tt_os_module *m, void *arg)
{
	struct tt__code_range *s = arg;
	if (s->address < m->start || s->address >= m->end)
		return 0;
	*s = (struct tt__code_range){s->address, (uintptr_t)m->start, (uintptr_t)m->end,
				  (uintptr_t)m->file_offset, "", true};
	snprintf(s->path, sizeof s->path, "%s", m->path);
	return 1;
}

int tt_profile_write(struct tt_profile *p, FILE *out)
{
	struct tt__code_range s = {.address = p->start};
	tt_os_modules(tt__find_section, &s);
	if (!s.found)
		return -ENOENT;
	return tt__profile_emit(p, out, &s,
				p->mechanism->id == TT_PROFILE_NT_PROFILE ? "nt-profile" : "sampler-thread");
}
