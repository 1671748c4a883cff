/* The programs a traced program starts (`ticktrace record` sets the variables:
 * record_protocol.h):
 *   - TICKTRACE_DETOUR_FOLLOW=0: they run without ticktrace: this library and the
 *     runtime (which record preloads before it) leave LD_PRELOAD, as the program's
 *     exec and its children see it, once the program has started (what else the
 *     user preloads stays);
 *   - TICKTRACE_DETOUR_ONCE=DIR: what the patcher has to say (functions refused,
 *     patterns that match nothing, the count) is said by the first process of each
 *     program alone, not by every shell and every child again: a marker in DIR,
 *     created exclusively, names each program (its device and inode) already heard. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "detour.h"

/* Whether `entry` of LD_PRELOAD is one of the files `ours` (this library, the runtime). */
static int tt__detour_is_ours(const char *entry, size_t len, const struct stat ours[2])
{
	char path[PATH_MAX];
	struct stat st;
	if (len >= sizeof path)
		return 0;
	memcpy(path, entry, len);
	path[len] = 0;
	if (stat(path, &st) != 0)
		return 0;
	for (int i = 0; i < 2; i++)
		if (st.st_dev == ours[i].st_dev && st.st_ino == ours[i].st_ino)
			return 1;
	return 0;
}

/* The file that holds `code`, in *st; 0, or -1 when it cannot be told. */
static int tt__detour_file_of(void *code, struct stat *st)
{
	Dl_info info;
	return dladdr(code, &info) && info.dli_fname && stat(info.dli_fname, st) == 0 ? 0 : -1;
}

void tt__detour_no_follow(void)
{
	const char *follow = getenv(TT_ENV_DETOUR_FOLLOW);
	const char *preload = getenv(TT_ENV_PRELOAD);
	struct stat ours[2];
	if (!follow || strcmp(follow, "0") != 0 || !preload ||
	    tt__detour_file_of((void *)(uintptr_t)tt__detour_no_follow, &ours[0]) != 0 ||
	    tt__detour_file_of((void *)(uintptr_t)tt__own_thread, &ours[1]) != 0)
		return;
	/* The loader splits LD_PRELOAD at spaces and colons; the others are kept in order. */
	size_t cap = strlen(preload) + 1, len = 0;
	char *kept = malloc(cap);
	if (!kept)
		return;
	for (const char *p = preload; *p;) {
		size_t n = strcspn(p, ": ");
		if (n && !tt__detour_is_ours(p, n, ours)) {
			if (len)
				kept[len++] = ':';
			memcpy(kept + len, p, n);
			len += n;
		}
		p += n;
		p += *p != 0;
	}
	kept[len] = 0;
	if (len)
		setenv(TT_ENV_PRELOAD, kept, 1);
	else
		unsetenv(TT_ENV_PRELOAD);
	free(kept);
}

/* Makes the marker `path`: 1, or 0 where it was there, -1 where it cannot be made. A
 * directory: made where the program has no descriptor left. */
static int tt__detour_marker_new(const char *path)
{
	if (mkdir(path, 0700) == 0)
		return 1;
	return errno == EEXIST ? 0 : -1;
}

int tt__detour_says(void)
{
	const char *dir = getenv(TT_ENV_DETOUR_ONCE);
	struct stat exe;
	char marker[PATH_MAX];
	if (!dir || !*dir || stat("/proc/self/exe", &exe) != 0)
		return 1;
	/* The first process of the run: the program itself. */
	snprintf(marker, sizeof marker, "%s/first", dir);
	int first = tt__detour_marker_new(marker) > 0;
	if (snprintf(marker, sizeof marker, "%s/program-%llx-%llx", dir,
		     (unsigned long long)exe.st_dev, (unsigned long long)exe.st_ino) >= (int)sizeof marker)
		return 1;
	if (tt__detour_marker_new(marker) == 0)
		return 0; /* (one that cannot be made: say it rather than lose it) */
	if (!first) {
		char exe_path[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
		exe_path[n > 0 ? n : 0] = 0;
		fprintf(tt__log(), "ticktrace: %s (pid %d), which the program started, is traced too:\n",
			exe_path, (int)getpid());
	}
	return 1;
}

/* Leaves the marker `name` in record's directory of the run (TT_ENV_DETOUR_ONCE). */
static void tt__detour_mark(const char *name)
{
	const char *dir = getenv(TT_ENV_DETOUR_ONCE);
	char marker[PATH_MAX];
	if (!dir || !*dir || snprintf(marker, sizeof marker, "%s/%s", dir, name) >= (int)sizeof marker)
		return;
	tt__detour_marker_new(marker);
}

void tt__detour_mark_patterns(const struct tt__detour *d)
{
	size_t p = 0;
	while (d->pattern_hits && p < d->npatterns && !d->pattern_hits[p])
		p++;
	tt__detour_mark(TT_DETOUR_LOOKED_MARKER);
	if (d->pattern_hits && p < d->npatterns)
		tt__detour_mark(TT_DETOUR_MATCHED_MARKER);
	if (d->out_of_fds) {
		tt__detour_mark(TT_DETOUR_EMFILE_MARKER);
		/* (which image of which process: record names each one that ran out, by the
		 * kernel's name for it, which asks for no descriptor) */
		char comm[17] = "", name[sizeof TT_DETOUR_EMFILE_MARKER + 40];
		prctl(PR_GET_NAME, comm);
		for (char *c = comm; *c; c++)
			*c = *c == '/' ? '_' : *c;
		const char *image = getenv(TT_ENV_EXEC_IMAGE);
		long pid = 0;
		unsigned n = 0;
		if (!image || sscanf(image, "%ld:%u", &pid, &n) != 2 || pid != (long)getpid())
			n = 0; /* (a child that inherited it: its first image) */
		snprintf(name, sizeof name, "%s/%010d.%05u-%s", TT_DETOUR_EMFILE_MARKER, (int)getpid(), n, comm);
		tt__detour_mark(name);
	}
}
