/* What glibc gives the tools and the floor that mingw-w64's C runtime lacks, for the
 * Windows build of `ticktrace.exe` alone: included before every file of it by the
 * compiler (`-include`, tools/meson.build), so that the code stays glibc's, without a
 * test of the system in it; `fnmatch.h` beside it stands for glibc's. Each as glibc's
 * does it, for the uses the tools make. */
#ifndef TT_LIBC_WINDOWS_H
#define TT_LIBC_WINDOWS_H

/* (mingw's time.h then declares gmtime_r; its stdio is C99's: %zu, %lld) */
#define _POSIX_THREAD_SAFE_FUNCTIONS 200112L
#define __USE_MINGW_ANSI_STDIO 1
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <wchar.h>

/* Paths are UTF-8, as on Linux (the command line's, made so by tt_os_utf8_args): the C
 * runtime's functions take the ANSI code page, so each that a path goes to is its
 * wide one's, the path turned to UTF-16 by tt_utf8_wide (NULL out of memory). (The
 * headers that declare them come first, above; `stat` is mingw's `_stat64`.) */
wchar_t *tt_utf8_wide(const char *path);
int tt_utf8_open(const char *path, int flags, ...);
int tt_utf8_stat(const char *path, struct _stat64 *st);
FILE *tt_utf8_fopen(const char *path, const char *mode);
int tt_utf8_unlink(const char *path);
#define open(...) tt_utf8_open(__VA_ARGS__)
#define _stat64(path, st) tt_utf8_stat(path, st)
#define fopen(path, mode) tt_utf8_fopen(path, mode)
#define unlink(path) tt_utf8_unlink(path)
/* A directory's entries by their UTF-8 names (mingw's opendir and readdir are the
 * ANSI code page's): a name of up to 260 UTF-16 units, 3 bytes each at most. */
struct tt_utf8_dirent {
	char d_name[3 * 260];
};
typedef struct tt_utf8_dir tt_utf8_dir;
tt_utf8_dir *tt_utf8_opendir(const char *path);
struct tt_utf8_dirent *tt_utf8_readdir(tt_utf8_dir *dir);
int tt_utf8_closedir(tt_utf8_dir *dir);
#define DIR tt_utf8_dir
#define dirent tt_utf8_dirent
#define opendir(path) tt_utf8_opendir(path)
#define readdir(dir) tt_utf8_readdir(dir)
#define closedir(dir) tt_utf8_closedir(dir)
/* write, its errors as Linux's: a full disk ENOSPC, a pipe closed at its reader's end
 * EPIPE (Windows' C runtime says EINVAL for both) */
int tt_write(int fd, const void *buf, unsigned int n);
#define write(...) tt_write(__VA_ARGS__)
/* getopt_long, its errors said as glibc's ("flame: unrecognized option '--folded'"), not
 * mingw's (the .exe's path, "unknown option -- folded") */
int tt_getopt_long(int argc, char *const *argv, const char *shorts, const struct option *longs, int *index);
#define getopt_long(...) tt_getopt_long(__VA_ARGS__)

/* No descriptor is inherited by a child (the tools start none), and no open of theirs
 * blocks: both flags mean nothing here. */
#define O_CLOEXEC 0
#define O_NONBLOCK 0

char *strndup(const char *s, size_t n);
void *memmem(const void *hay, size_t hay_len, const void *needle, size_t needle_len);
ssize_t getdelim(char **line, size_t *cap, int delim, FILE *f);
ssize_t pread(int fd, void *buf, size_t n, off_t offset);
void qsort_r(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *, void *), void *arg);
/* Linux's signal names, for a crashed Linux run's signal */
char *strsignal(int sig);
/* `*`, `?` and `[...]` (`[!...]`, ranges), a backslash quoting the next character; no flags */
int fnmatch(const char *pattern, const char *name, int flags);
#define FNM_NOMATCH 1
/* CLOCK_MONOTONIC (QueryPerformanceCounter) and CLOCK_REALTIME: winpthread's, which
 * mingw's time.h declares, is no library the runtime's DLL links */
int tt_clock_gettime(clockid_t clock, struct timespec *ts);
#define clock_gettime(...) tt_clock_gettime(__VA_ARGS__)
/* _SC_PAGESIZE and _SC_NPROCESSORS_ONLN alone */
#define _SC_PAGESIZE 30
#define _SC_NPROCESSORS_ONLN 84
long sysconf(int name);
/* (Windows' C runtime tells no link from its target) */
static inline int lstat(const char *path, struct stat *st)
{
	return stat(path, st);
}
/* (a Linux run's crash_signal: SIGINT and SIGTERM mingw's signal.h has, the same; and
 * the status 128 + SIGPIPE a closed pipe ends a command with, as Linux's) */
#define SIGHUP 1
#define SIGPIPE 13

#endif
