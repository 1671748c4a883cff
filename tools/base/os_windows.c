/* tools/base on Windows (base_internal.h; os_linux.c is Linux's): the input mapped
 * (CreateFileMapping, MapViewOfFile), the output's temporary file made beside it and
 * renamed into place without replacing (MoveFileExW), removed when Ctrl+C or a closed
 * console ends the command; a device or a pipe written in place. Paths are UTF-8, the
 * command line's taken as UTF-16 (tt_os_utf8_args), each opened as UTF-16
 * (tt_utf8_wide, libc_windows.h). */
#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "base_internal.h"

const uint8_t *tt_os_map(int fd, size_t size)
{
	HANDLE file = (HANDLE)_get_osfhandle(fd);
	HANDLE mapping = CreateFileMappingW(file, NULL, PAGE_READONLY, 0, 0, NULL);
	void *m = mapping ? MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, size) : NULL;
	if (mapping)
		CloseHandle(mapping); /* (the view keeps it) */
	if (!m)
		errno = GetLastError() == ERROR_NOT_ENOUGH_MEMORY ? ENOMEM : EIO;
	return m;
}

void tt_os_unmap(const uint8_t *p, size_t size)
{
	(void)size;
	UnmapViewOfFile(p);
}

void tt_os_release(const uint8_t *p, size_t n)
{
	/* Pages not locked leave the working set: what MADV_DONTNEED does to a read-only
	 * file's pages (it fails with ERROR_NOT_LOCKED, having done so). */
	VirtualUnlock((void *)p, n);
}

char *tt_os_pages(size_t size)
{
	return VirtualAlloc(NULL, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

void tt_os_pages_free(char *p, size_t size)
{
	(void)size;
	if (p)
		VirtualFree(p, 0, MEM_RELEASE);
}

void tt_os_map_in(const uint8_t *p, size_t n)
{
	/* (PrefetchVirtualMemory reads the file in, but maps no page: each would fault) */
	SYSTEM_INFO si;
	GetSystemInfo(&si);
	tt_touch_pages(p, n, si.dwPageSize);
}

void tt_os_utf8_args(int *argc, char ***argv)
{
	/* The command line as Windows keeps it, UTF-16, in UTF-8: the ANSI code page's
	 * argv turns what it lacks into '?' or a look-alike ("worker-a" for "worker-α"). */
	int n;
	wchar_t **wide = CommandLineToArgvW(GetCommandLineW(), &n);
	char **args = wide ? calloc((size_t)n + 1, sizeof *args) : NULL;
	for (int i = 0; args && i < n; i++) {
		int len = WideCharToMultiByte(CP_UTF8, 0, wide[i], -1, NULL, 0, NULL, NULL);
		if (len <= 0 || !(args[i] = malloc((size_t)len)))
			args = NULL; /* (the process ends soon: the ANSI argv instead) */
		else
			WideCharToMultiByte(CP_UTF8, 0, wide[i], -1, args[i], len, NULL, NULL);
	}
	if (args) {
		*argc = n;
		*argv = args;
	}
	LocalFree(wide);
}

static int tt_errno_of(DWORD error)
{
	switch (error) {
	case ERROR_FILE_EXISTS:
	case ERROR_ALREADY_EXISTS: return EEXIST;
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND: return ENOENT;
	case ERROR_ACCESS_DENIED:
	case ERROR_SHARING_VIOLATION: return EACCES;
	case ERROR_NOT_ENOUGH_MEMORY: return ENOMEM;
	case ERROR_DISK_FULL: return ENOSPC;
	default: return EIO;
	}
}

/* What Ctrl+C, Ctrl+Break or a closed console removes before the command ends: the
 * output's temporary file, the shards of a split finished so far (the last named
 * first). Files are made deletable while open (FILE_SHARE_DELETE), so the handler's
 * thread removes them as the command goes on writing; a process ended by
 * TerminateProcess leaves its temporary file to the next command (its PID gone). */
static SRWLOCK tt_doomed_lock = SRWLOCK_INIT;
static char **tt_doomed;
static size_t tt_doomed_cap, tt_ndoomed;
/* held by tt_signals_hold: the handler waits for its release */
static SRWLOCK tt_doomed_held = SRWLOCK_INIT;

/* Ends the command as Linux's shell sees one the signal `sig` ended (128 + sig), its
 * temporary files removed. (the locks held: nothing is removed or added after) */
static void tt_doomed_end(int sig)
{
	AcquireSRWLockExclusive(&tt_doomed_held);
	AcquireSRWLockExclusive(&tt_doomed_lock);
	for (size_t i = tt_ndoomed; i-- > 0;) {
		wchar_t *w = tt_utf8_wide(tt_doomed[i]);
		if (w && !DeleteFileW(w))
			RemoveDirectoryW(w);
		free(w);
	}
	TerminateProcess(GetCurrentProcess(), 128 + sig);
}

static BOOL WINAPI tt_doomed_on_ctrl(DWORD event)
{
	/* 128 + SIGINT for Ctrl+C (and Ctrl+Break), 128 + SIGHUP for a console closed;
	 * Windows' default handler would end it with STATUS_CONTROL_C_EXIT, or (Wine) 0,
	 * which reads as success. */
	tt_doomed_end(event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT ? SIGINT : SIGHUP);
	return TRUE;
}

void tt_os_end_on_closed_pipe(int err)
{
	/* (the C runtime's write says EINVAL for it; the reason stays in _doserrno: Windows'
	 * ERROR_NO_DATA, Wine's ERROR_PIPE_NOT_CONNECTED) */
	unsigned long why = _doserrno;
	if (GetFileType((HANDLE)_get_osfhandle(1)) == FILE_TYPE_PIPE &&
	    (err == EPIPE || why == ERROR_NO_DATA || why == ERROR_BROKEN_PIPE || why == ERROR_PIPE_NOT_CONNECTED))
		tt_doomed_end(SIGPIPE);
}

void tt_signals_hold(void)
{
	AcquireSRWLockExclusive(&tt_doomed_held);
}

void tt_signals_release(void)
{
	ReleaseSRWLockExclusive(&tt_doomed_held);
}

int tt_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	return pthread_create(thread, NULL, fn, arg); /* (Ctrl+C comes to a thread of its own) */
}

void tt_remove_on_signal(const char *path)
{
	AcquireSRWLockExclusive(&tt_doomed_lock);
	char *copy = strdup(path);
	if (copy && tt_grow((void **)&tt_doomed, &tt_doomed_cap, tt_ndoomed + 1, sizeof *tt_doomed))
		tt_doomed[tt_ndoomed++] = copy;
	else
		free(copy);
	ReleaseSRWLockExclusive(&tt_doomed_lock);
}

void tt_keep_on_signal(const char *path)
{
	AcquireSRWLockExclusive(&tt_doomed_lock);
	for (size_t i = tt_ndoomed; i-- > 0;)
		if (strcmp(tt_doomed[i], path) == 0) {
			free(tt_doomed[i]);
			memmove(&tt_doomed[i], &tt_doomed[i + 1], (tt_ndoomed - 1 - i) * sizeof *tt_doomed);
			tt_ndoomed--;
			break;
		}
	ReleaseSRWLockExclusive(&tt_doomed_lock);
}

void tt_standard_fds(void)
{
	/* Every file the command opens, and its standard streams, in binary: a trace's
	 * bytes as they are, no "\r\n" for "\n" (Windows' C runtime translates by
	 * default). */
	_fmode = _O_BINARY;
	for (int fd = 0; fd <= 2; fd++)
		_setmode(fd, _O_BINARY);
	/* (-2: a process started without one, as a GUI program is) */
	tt_stdout_closed = _get_osfhandle(1) < 0;
	/* Ctrl+C ends every command as on Linux (exit 130), its temporary files removed. */
	SetConsoleCtrlHandler(tt_doomed_on_ctrl, TRUE);
	/* What it prints is UTF-8 (names, paths): a console shows it so. */
	SetConsoleOutputCP(CP_UTF8);
}

const char *tt_os_file_name(const char *path)
{
	const char *slash = strrchr(path, '/'), *backslash = strrchr(path, '\\');
	const char *last = slash > backslash ? slash : backslash;
	if (!last && path[0] && path[1] == ':')
		last = path + 1; /* "C:out.json": the drive's current directory */
	return last ? last + 1 : path;
}

bool tt_os_open_in_place(const char *path, int *fd)
{
	/* A device (NUL, CON) or a pipe: what is not a file on a disk. */
	wchar_t *w = tt_utf8_wide(path);
	HANDLE h = w ? CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL, OPEN_EXISTING,
				   FILE_ATTRIBUTE_NORMAL, NULL)
		     : INVALID_HANDLE_VALUE;
	free(w);
	if (h == INVALID_HANDLE_VALUE)
		return false;
	if (GetFileType(h) == FILE_TYPE_DISK) {
		CloseHandle(h);
		return false;
	}
	*fd = _open_osfhandle((intptr_t)h, _O_WRONLY | _O_BINARY);
	if (*fd < 0)
		CloseHandle(h);
	return true;
}

int tt_os_create_tmp(char *tmpl)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *x = tmpl + strlen(tmpl) - 6;
	LARGE_INTEGER now;
	QueryPerformanceCounter(&now);
	uint64_t seed = (uint64_t)now.QuadPart ^ ((uint64_t)GetCurrentProcessId() << 32);
	for (int attempt = 0; attempt < 100; attempt++) {
		for (int i = 0; i < 6; i++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			x[i] = letters[(seed >> 33) % (sizeof letters - 1)];
		}
		/* (deletable while open: tt_doomed_on_ctrl) */
		wchar_t *w = tt_utf8_wide(tmpl);
		if (!w)
			return -1;
		HANDLE h = CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL, CREATE_NEW,
				       FILE_ATTRIBUTE_NORMAL, NULL);
		free(w);
		if (h != INVALID_HANDLE_VALUE) {
			int fd = _open_osfhandle((intptr_t)h, _O_WRONLY | _O_BINARY);
			if (fd < 0)
				CloseHandle(h);
			return fd;
		}
		if (GetLastError() != ERROR_FILE_EXISTS) {
			errno = tt_errno_of(GetLastError());
			return -1;
		}
	}
	errno = EEXIST;
	return -1;
}

bool tt_os_process_gone(long pid)
{
	HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, (DWORD)pid);
	if (!h)
		return GetLastError() == ERROR_INVALID_PARAMETER; /* no such process */
	bool gone = WaitForSingleObject(h, 0) == WAIT_OBJECT_0;
	CloseHandle(h);
	return gone;
}

int tt_os_close_tmp(int fd)
{
	return close(fd);
}

int tt_os_rename_tmp(const char *tmp, const char *path, bool replace)
{
	wchar_t *from = tt_utf8_wide(tmp), *to = tt_utf8_wide(path);
	int rc = 0;
	/* Without --force, a file that appeared meanwhile is not replaced. */
	if (!from || !to) {
		rc = -1; /* (errno said) */
	} else if (!MoveFileExW(from, to, replace ? MOVEFILE_REPLACE_EXISTING : 0)) {
		errno = tt_errno_of(GetLastError());
		rc = -1;
	}
	free(from);
	free(to);
	return rc;
}

FILE *tt_os_out_stream(struct tt_out *o)
{
	/* Straight into the output, after what its writer has written: Windows has no
	 * stream over functions of one's own (fopencookie). */
	tt_out_flush(o);
	tt_out_wait_idle(o);
	int fd = _dup(o->fd);
	FILE *stream = fd < 0 ? NULL : _fdopen(fd, "wb");
	if (!stream && fd >= 0)
		close(fd);
	return stream;
}

/* The volume and file index of an open handle (mingw's stat has no inode). */
static bool tt_file_id(HANDLE h, BY_HANDLE_FILE_INFORMATION *id)
{
	return h != INVALID_HANDLE_VALUE && GetFileInformationByHandle(h, id);
}

static HANDLE tt_open_to_look(const char *path)
{
	wchar_t *w = tt_utf8_wide(path);
	HANDLE h = w ? CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
				   OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL)
		     : INVALID_HANDLE_VALUE;
	free(w);
	return h;
}

bool tt_os_same_file(const char *path, const char *input)
{
	bool is_stdout = strcmp(path, "-") == 0;
	HANDLE out = is_stdout ? (HANDLE)_get_osfhandle(1) : tt_open_to_look(path);
	HANDLE in = tt_open_to_look(input);
	BY_HANDLE_FILE_INFORMATION a, b;
	bool same = tt_file_id(out, &a) && tt_file_id(in, &b) &&
		    a.dwVolumeSerialNumber == b.dwVolumeSerialNumber &&
		    a.nFileIndexHigh == b.nFileIndexHigh && a.nFileIndexLow == b.nFileIndexLow;
	if (!is_stdout && out != INVALID_HANDLE_VALUE)
		CloseHandle(out);
	if (in != INVALID_HANDLE_VALUE)
		CloseHandle(in);
	return same;
}
