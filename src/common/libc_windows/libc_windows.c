/* glibc's functions that mingw-w64 lacks (libc_windows.h), for the Windows build of
 * the tools. */
#include <errno.h>
#include <io.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <windows.h>

#include "libc_windows.h"

wchar_t *tt_utf8_wide(const char *path)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, NULL, 0);
	wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
	if (n <= 0)
		errno = EINVAL; /* not UTF-8 */
	else if (!w)
		errno = ENOMEM;
	else if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, w, n) != n) {
		free(w);
		w = NULL;
		errno = EINVAL;
	}
	/* A path beyond MAX_PATH (less the 12 characters a directory keeps for its 8.3
	 * names) is taken whole with "\\?\" before its full form, as Linux takes one to
	 * PATH_MAX. */
	if (w && n > MAX_PATH - 12 && wcsncmp(w, L"\\\\?\\", 4) != 0) {
		DWORD full = GetFullPathNameW(w, 0, NULL, NULL);
		wchar_t *longer = full ? malloc((full + 8) * sizeof *longer) : NULL;
		if (longer && GetFullPathNameW(w, full, longer + 8, NULL) < full) {
			bool unc = longer[8] == L'\\' && longer[9] == L'\\';
			/* "\\?\C:\..." or, a share's, "\\?\UNC\server\..." */
			const wchar_t *lead = unc ? L"\\\\?\\UNC" : L"\\\\?\\";
			size_t skip = unc ? 1 : 0, lead_len = wcslen(lead);
			memmove(longer + lead_len, longer + 8 + skip, (wcslen(longer + 8 + skip) + 1) * sizeof *longer);
			memcpy(longer, lead, lead_len * sizeof *longer);
			free(w);
			w = longer;
		} else {
			free(longer);
		}
	}
	return w;
}

int tt_utf8_open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int mode = flags & O_CREAT ? va_arg(ap, int) : 0;
	va_end(ap);
	wchar_t *w = tt_utf8_wide(path);
	int fd = w ? _wopen(w, flags, mode) : -1;
	/* A directory: Linux opens it (and then finds it is no regular file); Windows
	 * denies it access, which would say "Permission denied". */
	int err = errno;
	DWORD attributes = fd < 0 && err == EACCES ? GetFileAttributesW(w) : INVALID_FILE_ATTRIBUTES;
	errno = attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) ? EISDIR : err;
	free(w);
	return fd;
}

int tt_utf8_stat(const char *path, struct _stat64 *st)
{
	wchar_t *w = tt_utf8_wide(path);
	if (!w)
		return -1;
	/* "dir/" is "dir", as on Linux (Windows' stat fails with the slash) */
	size_t len = wcslen(w);
	while (len > 1 && (w[len - 1] == L'/' || w[len - 1] == L'\\') && w[len - 2] != L':')
		w[--len] = L'\0';
	int rc = _wstat64(w, st);
	free(w);
	return rc;
}

FILE *tt_utf8_fopen(const char *path, const char *mode)
{
	wchar_t *w = tt_utf8_wide(path), *wmode = tt_utf8_wide(mode);
	FILE *f = w && wmode ? _wfopen(w, wmode) : NULL;
	free(w);
	free(wmode);
	return f;
}

int tt_utf8_unlink(const char *path)
{
	wchar_t *w = tt_utf8_wide(path);
	int rc = w ? _wunlink(w) : -1;
	free(w);
	return rc;
}

struct tt_utf8_dir {
	_WDIR *wide;
	struct tt_utf8_dirent entry;
};

tt_utf8_dir *tt_utf8_opendir(const char *path)
{
	wchar_t *w = tt_utf8_wide(path);
	tt_utf8_dir *dir = w ? malloc(sizeof *dir) : NULL;
	if (dir && !(dir->wide = _wopendir(w))) {
		free(dir);
		dir = NULL;
	} else if (w && !dir) {
		errno = ENOMEM;
	}
	free(w);
	return dir;
}

struct tt_utf8_dirent *tt_utf8_readdir(tt_utf8_dir *dir)
{
	struct _wdirent *e = _wreaddir(dir->wide);
	/* (every UTF-16 name fits: no name is skipped) */
	if (!e || !WideCharToMultiByte(CP_UTF8, 0, e->d_name, -1, dir->entry.d_name, sizeof dir->entry.d_name, NULL, NULL))
		return NULL;
	return &dir->entry;
}

int tt_utf8_closedir(tt_utf8_dir *dir)
{
	int rc = _wclosedir(dir->wide);
	free(dir);
	return rc;
}

int tt_write(int fd, const void *buf, unsigned int n)
{
	/* WriteFile itself (every descriptor of the tools is binary, _fmode): the C
	 * runtime's _write keeps no reason for a failure, EINVAL for a full disk or a
	 * closed pipe */
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	DWORD written;
	if (h == INVALID_HANDLE_VALUE) {
		errno = EBADF;
		return -1;
	}
	if (WriteFile(h, buf, n, &written, NULL))
		return (int)written;
	DWORD error = GetLastError();
	errno = error == ERROR_DISK_FULL || error == ERROR_HANDLE_DISK_FULL ? ENOSPC :
		error == ERROR_NO_DATA || error == ERROR_BROKEN_PIPE || error == ERROR_PIPE_NOT_CONNECTED ? EPIPE :
									    EIO;
	return -1;
}

int tt_getopt_long(int argc, char *const *argv, const char *shorts, const struct option *longs, int *index)
{
	opterr = 0;
	int c = (getopt_long)(argc, argv, shorts, longs, index);
	if (c != '?' && c != ':')
		return c;
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	if (strncmp(arg, "--", 2) != 0) {
		const char *known = optopt ? strchr(shorts, optopt) : NULL;
		if (known)
			fprintf(stderr, "%s: option requires an argument -- '%c'\n", argv[0], optopt);
		else
			fprintf(stderr, "%s: invalid option -- '%c'\n", argv[0], optopt);
		return '?';
	}
	size_t len = strcspn(arg + 2, "=");
	const struct option *o = longs;
	while (o->name && (strlen(o->name) != len || strncmp(o->name, arg + 2, len) != 0))
		o++;
	if (!o->name)
		fprintf(stderr, "%s: unrecognized option '%s'\n", argv[0], arg);
	else if (arg[2 + len] == '=')
		fprintf(stderr, "%s: option '--%s' doesn't allow an argument\n", argv[0], o->name);
	else
		fprintf(stderr, "%s: option '--%s' requires an argument\n", argv[0], o->name);
	return '?';
}

char *strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *copy = malloc(len + 1);
	if (copy) {
		memcpy(copy, s, len);
		copy[len] = '\0';
	}
	return copy;
}

void *memmem(const void *hay, size_t hay_len, const void *needle, size_t needle_len)
{
	const char *p = hay, *end = p + hay_len;
	if (needle_len == 0)
		return (void *)hay;
	while ((size_t)(end - p) >= needle_len) {
		p = memchr(p, *(const char *)needle, (size_t)(end - p) - needle_len + 1);
		if (!p)
			return NULL;
		if (memcmp(p, needle, needle_len) == 0)
			return (void *)p;
		p++;
	}
	return NULL;
}

ssize_t getdelim(char **line, size_t *cap, int delim, FILE *f)
{
	size_t len = 0;
	for (int c; (c = getc(f)) != EOF;) {
		if (len + 2 > *cap) {
			size_t cap2 = *cap ? *cap * 2 : 128;
			char *p = realloc(*line, cap2);
			if (!p) {
				errno = ENOMEM;
				return -1;
			}
			*line = p;
			*cap = cap2;
		}
		(*line)[len++] = (char)c;
		if (c == delim)
			break;
	}
	if (len == 0)
		return -1;
	(*line)[len] = '\0';
	return (ssize_t)len;
}

ssize_t pread(int fd, void *buf, size_t n, off_t offset)
{
	HANDLE h = (HANDLE)_get_osfhandle(fd);
	OVERLAPPED at = {.Offset = (DWORD)((uint64_t)offset & 0xffffffff), .OffsetHigh = (DWORD)((uint64_t)offset >> 32)};
	DWORD got = 0;
	if (h == INVALID_HANDLE_VALUE || n > 0xffffffff) {
		errno = EINVAL;
		return -1;
	}
	if (!ReadFile(h, buf, (DWORD)n, &got, &at) && GetLastError() != ERROR_HANDLE_EOF) {
		errno = EIO;
		return -1;
	}
	return (ssize_t)got;
}

struct tt_qsort_r {
	int (*cmp)(const void *, const void *, void *);
	void *arg;
};

/* (qsort_s hands its context first) */
static int tt_qsort_r_cmp(void *ctx, const void *a, const void *b)
{
	const struct tt_qsort_r *q = ctx;
	return q->cmp(a, b, q->arg);
}

void qsort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *), void *arg)
{
	struct tt_qsort_r q = {cmp, arg};
	qsort_s(base, n, size, tt_qsort_r_cmp, &q);
}

char *strsignal(int sig)
{
	static const char *const names[] = {
		[1] = "Hangup", [2] = "Interrupt", [3] = "Quit", [4] = "Illegal instruction",
		[5] = "Trace/breakpoint trap", [6] = "Aborted", [7] = "Bus error",
		[8] = "Floating point exception", [9] = "Killed", [10] = "User defined signal 1",
		[11] = "Segmentation fault", [12] = "User defined signal 2", [13] = "Broken pipe",
		[14] = "Alarm clock", [15] = "Terminated", [16] = "Stack fault",
		[24] = "CPU time limit exceeded", [25] = "File size limit exceeded",
		[31] = "Bad system call"};
	static char unknown[32];
	if (sig > 0 && sig < (int)(sizeof names / sizeof *names) && names[sig])
		return (char *)names[sig];
	snprintf(unknown, sizeof unknown, "Unknown signal %d", sig);
	return unknown;
}

int fnmatch(const char *pattern, const char *name, int flags)
{
	(void)flags;
	for (;; pattern++, name++) {
		switch (*pattern) {
		case '\0':
			return *name ? FNM_NOMATCH : 0;
		case '*':
			while (*pattern == '*')
				pattern++;
			for (;; name++) {
				if (fnmatch(pattern, name, flags) == 0)
					return 0;
				if (!*name)
					return FNM_NOMATCH;
			}
		case '?':
			if (!*name)
				return FNM_NOMATCH;
			break;
		case '[': {
			if (!*name)
				return FNM_NOMATCH;
			const char *p = pattern + 1;
			bool negate = *p == '!' || *p == '^', in = false;
			p += negate;
			for (bool first = true; *p && (*p != ']' || first); p++, first = false) {
				unsigned char lo = (unsigned char)*p, hi = lo;
				if (p[1] == '-' && p[2] && p[2] != ']') {
					hi = (unsigned char)p[2];
					p += 2;
				}
				if ((unsigned char)*name >= lo && (unsigned char)*name <= hi)
					in = true;
			}
			if (!*p) { /* no closing bracket: a plain '[' */
				if (*name != '[')
					return FNM_NOMATCH;
				break;
			}
			if (in == negate)
				return FNM_NOMATCH;
			pattern = p;
			break;
		}
		case '\\':
			if (pattern[1])
				pattern++;
			/* fall through */
		default:
			if (*pattern != *name)
				return FNM_NOMATCH;
		}
	}
}

long sysconf(int name)
{
	SYSTEM_INFO si;
	GetSystemInfo(&si);
	if (name == _SC_PAGESIZE)
		return (long)si.dwPageSize;
	if (name == _SC_NPROCESSORS_ONLN)
		return (long)si.dwNumberOfProcessors;
	errno = EINVAL;
	return -1;
}

int tt_clock_gettime(clockid_t clock, struct timespec *ts)
{
	if (clock == CLOCK_MONOTONIC) {
		LARGE_INTEGER now, hz;
		QueryPerformanceCounter(&now);
		QueryPerformanceFrequency(&hz);
		ts->tv_sec = (time_t)(now.QuadPart / hz.QuadPart);
		ts->tv_nsec = (long)(now.QuadPart % hz.QuadPart * 1000000000 / hz.QuadPart);
		return 0;
	}
	FILETIME ft; /* (100 ns since 1601) */
	GetSystemTimePreciseAsFileTime(&ft);
	uint64_t t = ((uint64_t)ft.dwHighDateTime << 32 | ft.dwLowDateTime) - UINT64_C(116444736000000000);
	ts->tv_sec = (time_t)(t / 10000000);
	ts->tv_nsec = (long)(t % 10000000 * 100);
	return 0;
}
