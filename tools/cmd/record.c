/* `ticktrace record`: runs a program with the detour library preloaded (which pulls
 * in the runtime), the functions to patch in TICKTRACE_DETOUR, then converts its raw
 * file or says how. */
#include "cmd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Files named one by one in a line of record's; of more, the first ones and a count
 * (a make check's run wrote 1,100 traces: a line of 60 KB, twice over). */
#define TT_REC_NAMED 16

/* The detour library: TICKTRACE_DETOUR_LIB, else the build tree's when this command
 * is the build tree's, else the installed one. */
static const char *tt_rec_library(void)
{
	const char *lib = getenv("TICKTRACE_DETOUR_LIB");
	if (lib && *lib)
		return lib;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		if (strcmp(self, TT_RECORD_TOOL_BUILD) == 0)
			return TT_RECORD_LIB_BUILD;
	}
	return TT_RECORD_LIB_INSTALL;
}

/* The file execvp would run for `name`: itself when it has a slash, else the first
 * executable file of that name in PATH; 0, or -1 when there is none. */
static int tt_rec_which(const char *name, char *path, size_t cap)
{
	if (strchr(name, '/'))
		return snprintf(path, cap, "%s", name) < (int)cap ? 0 : -1;
	const char *dirs = getenv("PATH");
	if (!dirs)
		dirs = "/bin:/usr/bin"; /* the C library's default */
	for (const char *d = dirs;; d++) {
		size_t n = strcspn(d, ":");
		struct stat st;
		/* (an empty entry is the working directory) */
		if (snprintf(path, cap, "%.*s/%s", (int)(n ? n : 1), n ? d : ".", name) < (int)cap &&
		    stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0)
			return 0;
		d += n;
		if (!*d)
			return -1;
	}
}

/* What an ELF file tells of the preload. */
struct tt_rec_elf {
	/* run without the dynamic loader (no PT_INTERP: static, or static-pie): nothing
	 * can be preloaded; the loader itself, run as a program, has none either, and
	 * loads the program it is given as usual */
	bool is_static;
	/* a sanitizer runtime it needs, which must come first of all libraries, preloads
	 * included (ASan stops the program otherwise): preloaded before the others */
	char first[64];
};

static const char *const tt_rec_first_runtimes[] = {
	"libasan.so", "libtsan.so", "libhwasan.so", "libclang_rt.asan", "libclang_rt.tsan",
	"libclang_rt.hwasan"};

/* Calls `each` with every string of tag `tag` (DT_NEEDED, DT_RUNPATH) of an ELF file's
 * dynamic section. */
static void tt_rec_dynamic(Elf *elf, int64_t tag, void (*each)(const char *, void *), void *arg)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr shdr;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; shdr.sh_entsize && i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *str;
			if (gelf_getdyn(data, (int)i, &dyn) && dyn.d_tag == tag &&
			    (str = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val)))
				each(str, arg);
		}
	}
}

/* The runtime the detour library needs, where its DT_RUNPATH finds it. */
struct tt_rec_runtime {
	const char *origin; /* the detour library's directory */
	char path[PATH_MAX]; /* "" until found */
};

static void tt_rec_runtime_in(const char *runpath, void *arg)
{
	struct tt_rec_runtime *r = arg;
	for (const char *p = runpath; *p && !r->path[0];) {
		size_t n = strcspn(p, ":");
		const char *origin = "$ORIGIN";
		bool at_origin = n >= strlen(origin) && strncmp(p, origin, strlen(origin)) == 0;
		if (at_origin)
			snprintf(r->path, sizeof r->path, "%s%.*s/libticktrace.so.0", r->origin,
				 (int)(n - strlen(origin)), p + strlen(origin));
		else
			snprintf(r->path, sizeof r->path, "%.*s/libticktrace.so.0", (int)n, p);
		if (access(r->path, R_OK) != 0)
			r->path[0] = 0;
		p += n;
		p += *p != 0;
	}
}

/* The runtime the detour library `lib` loads, in `path`, to preload before it: a
 * library's dependencies come after the program's (the C library) in the loader's
 * order, so the runtime's exec, fork and dlclose would never be the ones called.
 * "" when it cannot be told (then the library's DT_NEEDED still loads it). */
static void tt_rec_runtime(const char *lib, char *path, size_t cap)
{
	char origin[PATH_MAX];
	struct tt_rec_runtime r = {.origin = origin};
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	path[0] = 0;
	if (fd < 0 || !realpath(lib, origin)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	*strrchr(origin, '/') = 0;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf)
		tt_rec_dynamic(elf, DT_RUNPATH, tt_rec_runtime_in, &r);
	elf_end(elf);
	close(fd);
	snprintf(path, cap, "%s", r.path);
}

static void tt_rec_first_runtime(const char *needed, void *arg)
{
	struct tt_rec_elf *info = arg;
	for (size_t r = 0; r < sizeof tt_rec_first_runtimes / sizeof *tt_rec_first_runtimes; r++)
		if (strncmp(needed, tt_rec_first_runtimes[r], strlen(tt_rec_first_runtimes[r])) == 0)
			snprintf(info->first, sizeof info->first, "%s", needed);
}

static void tt_rec_elf_read(int fd, const char *path, struct tt_rec_elf *info)
{
	*info = (struct tt_rec_elf){0};
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr ehdr;
	size_t nphdr;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
	    (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN) || elf_getphdrnum(elf, &nphdr) != 0) {
		elf_end(elf);
		return;
	}
	info->is_static = true;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr phdr;
		if (gelf_getphdr(elf, (int)i, &phdr) && phdr.p_type == PT_INTERP)
			info->is_static = false;
	}
	const char *base = strrchr(path, '/');
	if (info->is_static && strncmp(base ? base + 1 : path, "ld-", 3) == 0)
		info->is_static = false;
	if (!info->is_static)
		tt_rec_dynamic(elf, DT_NEEDED, tt_rec_first_runtime, info);
	elf_end(elf);
}

/* The ELF file that will run for `program` (itself, or the interpreter its "#!" line
 * names, followed as the kernel does, and through `#!/usr/bin/env NAME` as env finds
 * NAME), read; in `path`. The number of "#!" lines followed, or -1 when it cannot be
 * told (exec then says why it fails). */
static int tt_rec_inspect(const char *program, char *path, size_t cap, struct tt_rec_elf *info)
{
	if (tt_rec_which(program, path, cap) != 0)
		return -1;
	elf_version(EV_CURRENT);
	for (int depth = 0; depth < 5; depth++) { /* the kernel follows 4 interpreters */
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		char head[PATH_MAX + 2];
		ssize_t n = pread(fd, head, sizeof head - 1, 0);
		if (n >= 4 && memcmp(head, "\177ELF", 4) == 0) {
			tt_rec_elf_read(fd, path, info);
			close(fd);
			return depth;
		}
		close(fd);
		if (n < 2 || head[0] != '#' || head[1] != '!')
			return -1;
		head[n] = 0;
		char *interp = head + 2 + strspn(head + 2, " \t");
		char *arg = interp + strcspn(interp, " \t\n");
		bool has_arg = *arg == ' ' || *arg == '\t';
		*arg = 0;
		if (!*interp || strlen(interp) >= cap)
			return -1;
		/* The kernel gives env the rest of the line as one argument: a name with no
		 * option or space is a program env looks for in PATH. */
		const char *base = strrchr(interp, '/');
		if (has_arg && strcmp(base ? base + 1 : interp, "env") == 0) {
			arg += 1 + strspn(arg + 1, " \t");
			arg[strcspn(arg, "\n")] = 0;
			for (size_t end = strlen(arg); end && strchr(" \t\r", arg[end - 1]); end--)
				arg[end - 1] = 0;
			if (*arg && *arg != '-' && !strpbrk(arg, " \t")) {
				if (tt_rec_which(arg, path, cap) != 0)
					return -1;
				continue;
			}
		}
		memmove(path, interp, strlen(interp) + 1);
	}
	return -1;
}

/* -o made absolute against record's own directory, once: every process of the run
 * writes where the user asked, one that changed directory first (`make -C`, `cd dir;
 * prog`) too, whose relative name would be read from its own directory (its trace
 * lost where no such directory is). `out` as it is where it is absolute already or
 * the directory cannot be told. */
static const char *tt_rec_absolute(const char *out, char *buf, size_t cap)
{
	char cwd[PATH_MAX];
	tt_in_dir(out, getcwd(cwd, sizeof cwd) ? cwd : "", buf, cap);
	return buf;
}

/* In the child: the environment, then the program. LD_PRELOAD: the sanitizer runtime
 * the program needs (`first`, "" for none), the user's own, the runtime (`runtime`,
 * "" for none), then the detour library; none of it for a program that runs untraced
 * (`lib` NULL: a static one, whose `#!/usr/bin/env` would be traced alone). */
static _Noreturn void tt_rec_exec(const struct tt_rec_opts *o, const char *lib,
				     const char *runtime, const char *first,
				     const char *dir, const char *list, int failed)
{
	if (!lib)
		goto run;
	const char *old = getenv(TT_ENV_PRELOAD);
	char *preload = NULL;
	char *patterns = NULL;
	size_t len = 1;
	for (size_t i = 0; i < o->npatterns; i++)
		len += strlen(o->patterns[i]) + 1;
	patterns = calloc(1, len);
	if (!old)
		old = "";
	if (asprintf(&preload, "%s%s%s%s%s%s%s", first, *first ? ":" : "", old, *old ? ":" : "",
		     runtime, *runtime ? ":" : "", lib) < 0 ||
	    !patterns) {
		errno = ENOMEM;
		goto not_run;
	}
	for (size_t i = 0; i < o->npatterns; i++) {
		strcat(patterns, o->patterns[i]);
		strcat(patterns, "\n");
	}
	setenv(TT_ENV_PRELOAD, preload, 1);
	if (o->npatterns)
		setenv(TT_ENV_DETOUR, patterns, 1);
	else
		unsetenv(TT_ENV_DETOUR);
	char debug_dir[PATH_MAX];
	if (o->debug_dir && realpath(o->debug_dir, debug_dir))
		setenv(TT_ENV_DETOUR_DEBUG_DIR, debug_dir, 1);
	else
		unsetenv(TT_ENV_DETOUR_DEBUG_DIR);
	if (o->list) { /* the process ends before main: its raw file, if any, is the run's */
		char out[PATH_MAX + 16];
		snprintf(out, sizeof out, "%s/list.ttr", dir);
		setenv(TT_ENV_DETOUR_LIST, "1", 1);
		setenv(TT_ENV_OUT, out, 1);
	} else {
		char out[PATH_MAX];
		setenv(TT_ENV_OUT, tt_rec_absolute(o->out, out, sizeof out), 1);
	}
	/* Every call kept: a thread's records bounded by the run's memory budget alone,
	 * not by the runtime's default buffer (a 50 ms program lost half its calls), unless
	 * the user chose the buffer or the mode */
	if (!getenv(TT_ENV_BUFFER) && !getenv(TT_ENV_MODE))
		setenv(TT_ENV_BUFFER, TT_RECORD_BUFFER, 1);
	if (o->min_dur)
		setenv(TT_ENV_MIN_DUR, o->min_dur, 1);
	/* This process, the program: every other process of the run names its files
	 * with its pid. */
	char self[24];
	snprintf(self, sizeof self, "%d", (int)getpid());
	setenv(TT_ENV_PROGRAM_PID, self, 1);
	/* The buffers in a file that outlives the process: one killed (Ctrl-C, SIGTERM,
	 * SIGKILL), which writes no trace, leaves its events there. */
	if (!o->list)
		setenv(TT_ENV_LIVE, "1", 0);
	setenv(TT_ENV_LIST, list, 1);
	setenv(TT_ENV_DETOUR_ONCE, dir, 1);
	if (o->follow)
		unsetenv(TT_ENV_DETOUR_FOLLOW);
	else
		setenv(TT_ENV_DETOUR_FOLLOW, "0", 1);
run:
	execvp(o->argv[0], o->argv);
not_run:;
	int err = errno;
	ssize_t said = write(failed, "x", 1);
	(void)said; /* (a byte into an empty pipe: cannot fail) */
	fprintf(stderr, "ticktrace: record: cannot run %s: %s\n", o->argv[0], strerror(err));
	/* As a shell: 127 for a program not found, 126 for one found that cannot run. */
	_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
}

/* The directory the raw file goes into, checked before the run when its name can be
 * told then (no %p in it): a missing or unwritable one fails now, not after the
 * program ran to leave no trace. -o naming a directory (one there, or DIR/) is the
 * default name in it, as the runtime takes it: that directory checked. 0, or -1 said. */
static int tt_rec_out_dir(const char *out)
{
	struct stat st;
	size_t len = strlen(out);
	const char *slash = len && out[len - 1] != '/' && stat(out, &st) == 0 && S_ISDIR(st.st_mode) ?
				    out + len : strrchr(out, '/');
	if (!slash || memchr(out, '%', (size_t)(slash - out)))
		return 0;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
	if (stat(dir, &st) != 0 || (!S_ISDIR(st.st_mode) && (errno = ENOTDIR)) ||
	    access(dir, W_OK | X_OK) != 0) {
		fprintf(stderr, "ticktrace: record: cannot write the trace at %s: %s: %s\n", out, dir,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* The run's own directory (ticktrace-record.XXXXXX in TMPDIR): the list of trace
 * files its processes wrote (TICKTRACE_LIST), and the patcher's markers of programs
 * already heard (TICKTRACE_DETOUR_ONCE). Removed after the run. */
static int tt_rec_dir(char *dir, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	if (snprintf(dir, cap, "%s/ticktrace-record.XXXXXX", tmp && *tmp ? tmp : "/tmp") >= (int)cap ||
	    !mkdtemp(dir)) {
		fprintf(stderr, "ticktrace: record: cannot make a directory in %s: %s\n",
			tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return -1;
	}
	return 0;
}

static void tt_rec_dir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		for (struct dirent *e; (e = readdir(d));) {
			char inside[PATH_MAX];
			/* (the patcher's markers, and those in a marker: TT_DETOUR_EMFILE_MARKER's) */
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
			    unlinkat(dirfd(d), e->d_name, 0) != 0 &&
			    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0 && errno == ENOTEMPTY &&
			    snprintf(inside, sizeof inside, "%s/%s", dir, e->d_name) < (int)sizeof inside)
				tt_rec_dir_remove(inside);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* Whether `path` is a file of this run: a regular file of this user (a link, or
 * another user's file planted where the runtime writes, never is read); its stat. */
static bool tt_rec_ours(const char *path, struct stat *st)
{
	return lstat(path, st) == 0 && S_ISREG(st->st_mode) && st->st_uid == geteuid();
}

/* Whether `path` names a live file (TICKTRACE_LIVE's, NAME.live). */
static bool tt_rec_is_live(const char *path)
{
	size_t n = strlen(path);
	return n > 5 && strcmp(path + n - 5, ".live") == 0;
}

/* Whether a live file (TICKTRACE_LIVE) is left beside `path`: its process was killed
 * after it wrote `path` (a dump, or an exec'd image of the same name, with .execN
 * it has not), and the live file holds all it recorded. */
static bool tt_rec_live_beside(const char *path)
{
	char live[PATH_MAX + 8];
	struct stat st;
	return !tt_rec_is_live(path) &&
	       snprintf(live, sizeof live, "%s.live", path) < (int)sizeof live && tt_rec_ours(live, &st);
}

/* The header of the live file (or any trace) at `path`, once its process wrote it. */
static bool tt_rec_live_header(const char *path, struct tt_file_header *h)
{
	const char *why;
	int fd = tt_open_regular(path, &why);
	bool read = fd >= 0 && pread(fd, h, sizeof *h, 0) == (ssize_t)sizeof *h &&
		    memcmp(h->magic, TT_FILE_MAGIC, TT_FILE_MAGIC_LEN) == 0;
	if (fd >= 0)
		close(fd);
	return read;
}

/* Whether the live file at `path` (its name ending in .live) is gone since it was
 * listed: its process wrote its trace meanwhile and removed it (as a daemon's pane
 * commands do while record reports), or another removed it; neither was killed. Its
 * name becomes the trace's where that is there. */
static bool tt_rec_live_gone(char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 || errno != ENOENT)
		return false;
	size_t n = strlen(path);
	path[n - 5] = 0;
	if (!tt_rec_ours(path, &st))
		path[n - 5] = '.';
	return true;
}

/* The process that keeps the live file at `path`, as its header names it; 0 unknown.
 * `exited`: it returned, but its trace could not be written (TT_FILE_LIVE_EXITED). */
static pid_t tt_rec_live_pid(const char *path, bool *exited)
{
	struct tt_file_header h;
	bool read = tt_rec_live_header(path, &h);
	*exited = read && (h.flags & TT_FILE_LIVE_EXITED);
	return read && h.pid > 0 ? (pid_t)h.pid : 0;
}

/* The pid and the name of the process that wrote the file at `path` (its image's, the
 * kernel's comm: chmod, not the bash that forked it), from its header and PROCESS
 * section: whether they were read. */
static bool tt_rec_file_process(const char *path, pid_t *pid, char *name, size_t size)
{
	const char *why;
	struct tt_file_header h;
	struct tt_section_header sec;
	struct tt_process_info p;
	if (!tt_rec_live_header(path, &h))
		return false;
	int fd = tt_open_regular(path, &why);
	bool read = fd >= 0 && pread(fd, &sec, sizeof sec, h.header_size) == (ssize_t)sizeof sec &&
		    sec.type == TT_SEC_PROCESS &&
		    pread(fd, &p, sizeof p, h.header_size + sizeof sec) == (ssize_t)sizeof p && p.name_len &&
		    p.name_len < size &&
		    pread(fd, name, p.name_len, h.header_size + sizeof sec + sizeof p) == (ssize_t)p.name_len;
	if (fd >= 0)
		close(fd);
	if (read) {
		name[p.name_len] = 0;
		*pid = (pid_t)h.pid;
	}
	return read && name[0];
}

static int tt_rec_marker_entry(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

static int tt_rec_by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static const char *tt_rec_marker_name(const struct dirent *e)
{
	const char *dash = strchr(e->d_name, '-');
	return dash ? dash + 1 : e->d_name;
}

/* How many of the markers in `list` have list[i]'s name; 0 where one before it has. */
static size_t tt_rec_marker_times(struct dirent **list, int n, int i)
{
	size_t times = 0;
	for (int j = 0; j < n; j++)
		if (strcmp(tt_rec_marker_name(list[j]), tt_rec_marker_name(list[i])) == 0) {
			if (j < i)
				return 0;
			times++;
		}
	return times;
}

/* The images whose patcher ran out of descriptors, as the markers in `emfile` name them
 * (TT_DETOUR_EMFILE_MARKER's: in order, pid then image), each name once, with how
 * many where more than one: "env and xz", "sh, cc1 (3 processes) and as" (4 names at
 * most, then how many more); into `names`, "" where none is named. How many images. */
static size_t tt_rec_emfile_images(const char *emfile, char *names, size_t size)
{
	const size_t most = 4;
	struct dirent **list;
	int n = scandir(emfile, &list, tt_rec_marker_entry, tt_rec_by_name);
	size_t distinct = 0, shown = 0, len = 0;
	for (int i = 0; i < n; i++)
		distinct += tt_rec_marker_times(list, n, i) > 0;
	names[0] = 0;
	for (int i = 0; i < n && shown < most && len < size; i++) {
		size_t times = tt_rec_marker_times(list, n, i);
		if (!times)
			continue;
		shown++;
		const char *sep = shown == 1 ? "" : shown == distinct ? " and " : ", ";
		int w = snprintf(names + len, size - len, "%s%s", sep, tt_rec_marker_name(list[i]));
		len += w > 0 ? (size_t)w : 0;
		if (times > 1 && len < size)
			len += (size_t)snprintf(names + len, size - len, " (%zu processes)", times);
	}
	if (distinct > shown && len < size)
		snprintf(names + len, size - len, " and %zu more", distinct - shown);
	for (int i = 0; i < n; i++)
		free(list[i]);
	if (n >= 0)
		free(list);
	return n > 0 ? (size_t)n : 0;
}

/* The name of the program's last image (`program` its pid), as the run's files say it:
 * its live file's (the image that was killed or left), else its latest file's; else
 * `fallback` (record's argument: env, bash, where they exec'd xz, chmod). */
static const char *tt_rec_image_name(char **files, size_t nfiles, pid_t program, const char *fallback, char *name,
				     size_t size)
{
	struct timespec latest = {0};
	bool live_found = false, found = false;
	char got[256];
	for (size_t i = 0; program > 0 && i < nfiles; i++) {
		bool live = tt_rec_is_live(files[i]);
		struct stat st;
		pid_t pid;
		if ((live_found && !live) || !tt_rec_file_process(files[i], &pid, got, sizeof got) || pid != program ||
		    stat(files[i], &st) != 0)
			continue;
		if ((live && !live_found) || st.st_mtim.tv_sec > latest.tv_sec ||
		    (st.st_mtim.tv_sec == latest.tv_sec && st.st_mtim.tv_nsec >= latest.tv_nsec)) {
			snprintf(name, size, "%s", got);
			latest = st.st_mtim;
			found = true;
			live_found |= live;
		}
	}
	return found ? name : fallback;
}

/* Whether the live file at `path` holds nothing: its process, gone, was stopped as it
 * began recording, before its header or first descriptions were written (then no
 * thread had a buffer in it). A file no tool reads, removed. */
static bool tt_rec_live_empty(const char *path)
{
	struct tt_file_header h;
	if (!tt_rec_is_live(path))
		return false;
	if (!tt_rec_live_header(path, &h))
		return true;
	return !h.live_sections_end && (h.pid <= 0 || (kill((pid_t)h.pid, 0) < 0 && errno == ESRCH));
}

/* What the run's processes listed: their trace files and the logs of ticktrace's own
 * lines (tagged TT_LIST_LOG), each array NULL-free and `n` long. */
struct tt_rec_listed {
	char **files, **logs;
	size_t nfiles, nlogs;
	char **lost;        /* the traces processes could not write at exit (TT_LIST_LOST) */
	size_t nlost;
	char *refused;      /* "DIR: why": -o's directory not used (TT_LIST_REFUSED) */
};

static void tt_rec_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static void tt_rec_listed_free(struct tt_rec_listed *l)
{
	tt_rec_names_free(l->files, l->nfiles);
	tt_rec_names_free(l->logs, l->nlogs);
	tt_rec_names_free(l->lost, l->nlost);
	free(l->refused);
}

/* Adds `path` to `*paths` (`*n` of them, `seen` their stats) unless a file already
 * there is the same (by inode: a process that exec'd wrote the same file twice). */
static void tt_rec_add(char ***paths, struct stat **seen, size_t *n, const char *path,
		       const struct stat *st)
{
	for (size_t i = 0; i < *n; i++)
		if ((*seen)[i].st_dev == st->st_dev && (*seen)[i].st_ino == st->st_ino)
			return;
	char **more = realloc(*paths, (*n + 1) * sizeof(**paths));
	if (more)
		*paths = more;
	struct stat *more_seen = more ? realloc(*seen, (*n + 1) * sizeof(**seen)) : NULL;
	if (more_seen)
		*seen = more_seen;
	if (!more || !more_seen || !((*paths)[*n] = strdup(path)))
		return;
	(*seen)[(*n)++] = *st;
}

/* The trace files the run wrote: those its processes listed (live files too, which
 * one that was killed leaves; the runtime lists what it creates, under the names it
 * gave them), each once; and its logs that hold a line. Only files of this run
 * (tt_rec_ours). */
static void tt_rec_files(const char *list, struct tt_rec_listed *l)
{
	FILE *f = fopen(list, "re");
	char *line = NULL;
	size_t cap = 0;
	struct stat *seen = NULL, *seen_logs = NULL;
	*l = (struct tt_rec_listed){0};
	for (ssize_t len; f && (len = getline(&line, &cap, f)) >= 0;) {
		if (len && line[len - 1] == '\n')
			line[len - 1] = 0;
		struct stat st;
		size_t tag = strlen(TT_LIST_LOG);
		if (strncmp(line, TT_LIST_LOST, strlen(TT_LIST_LOST)) == 0) {
			/* (ERRNO PATH: kept as "PATH (why)") */
			char *path, **more = realloc(l->lost, (l->nlost + 1) * sizeof *more);
			long err = strtol(line + strlen(TT_LIST_LOST), &path, 10);
			path += *path == ' ';
			if (more && asprintf(&more[l->nlost], "%s (%s)", path, strerror((int)err)) >= 0)
				l->nlost++;
			l->lost = more ? more : l->lost;
			continue;
		}
		if (strncmp(line, TT_LIST_REFUSED, strlen(TT_LIST_REFUSED)) == 0) {
			if (!l->refused)
				l->refused = strdup(line + strlen(TT_LIST_REFUSED));
			continue;
		}
		if (strncmp(line, TT_LIST_LOG, tag) == 0) {
			if (tt_rec_ours(line + tag, &st) && st.st_size)
				tt_rec_add(&l->logs, &seen_logs, &l->nlogs, line + tag, &st);
			continue;
		}
		if (!tt_rec_ours(line, &st) || tt_rec_live_beside(line))
			continue;
		if (tt_rec_live_empty(line)) {
			fprintf(stderr, "ticktrace: record: removed %s: its process was stopped as it began "
				"recording, before it recorded anything\n", line);
			unlink(line);
			continue;
		}
		tt_rec_add(&l->files, &seen, &l->nfiles, line, &st);
	}
	free(line);
	free(seen);
	free(seen_logs);
	if (f)
		fclose(f);
}

/* The worst snapshots named in record's summary. */
#define TT_REC_WORST 3

/* A spike's snapshot, ranked as the runtime ranks them: duration over threshold. */
struct tt_rec_snapshot {
	char name[NAME_MAX + 1];
	int64_t dur, threshold;
};

static bool tt_rec_worse(const struct tt_rec_snapshot *a, const struct tt_rec_snapshot *b)
{
	return (__int128)a->dur * b->threshold > (__int128)b->dur * a->threshold;
}

/* The snapshots the run's processes wrote into TICKTRACE_SNAPSHOTS (a directory of
 * the run's, no %p): files of this user made since `since`, counted (their own lines
 * at exit are in their logs), the directory and the worst spikes' named. */
static void tt_rec_say_snapshots(const struct timespec *since)
{
	const char *dir = getenv("TICKTRACE_SNAPSHOTS");
	DIR *d = dir && *dir && !strchr(dir, '%') ? opendir(dir) : NULL;
	if (!d)
		return;
	size_t spikes = 0, triggers = 0, nworst = 0;
	struct tt_rec_snapshot worst[TT_REC_WORST];
	for (struct dirent *e; (e = readdir(d));) {
		size_t n = strlen(e->d_name);
		bool spike = strncmp(e->d_name, "spike-", 6) == 0;
		struct stat st;
		char path[PATH_MAX];
		if ((!spike && strncmp(e->d_name, "trigger-", 8) != 0) || n < 4 ||
		    strcmp(e->d_name + n - 4, ".ttr") != 0 ||
		    snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path ||
		    !tt_rec_ours(path, &st) || st.st_mtim.tv_sec < since->tv_sec ||
		    (st.st_mtim.tv_sec == since->tv_sec && st.st_mtim.tv_nsec < since->tv_nsec))
			continue;
		triggers += !spike;
		spikes += spike;
		struct tt_file f;
		struct tt_rec_snapshot s = {.dur = 0};
		if (spike && tt_file_open(&f, path) == 0 && f.snapshot) {
			snprintf(s.name, sizeof s.name, "%s", e->d_name);
			s.dur = f.snapshot->split.dur_ns;
			s.threshold = f.snapshot->info.threshold_ns > 0 ? f.snapshot->info.threshold_ns : 1;
		}
		if (spike)
			tt_file_close(&f);
		if (!s.dur)
			continue;
		/* (kept worst first) */
		size_t at = nworst;
		while (at && tt_rec_worse(&s, &worst[at - 1]))
			at--;
		if (at == TT_REC_WORST)
			continue;
		nworst += nworst < TT_REC_WORST;
		memmove(&worst[at + 1], &worst[at], (nworst - 1 - at) * sizeof *worst);
		worst[at] = s;
	}
	closedir(d);
	if (!spikes && !triggers)
		return;
	fprintf(stderr, "ticktrace: record: %zu snapshot%s in %s (TICKTRACE_SNAPSHOTS: %zu of spikes, "
		"%zu of triggers)", spikes + triggers, spikes + triggers == 1 ? "" : "s", dir, spikes,
		triggers);
	for (size_t i = 0; i < nworst; i++)
		fprintf(stderr, "%s %s (%.3f ms, %.1f times its threshold)", i ? "," : "; the worst:",
			worst[i].name, (double)worst[i].dur / 1e6,
			(double)worst[i].dur / (double)worst[i].threshold);
	fprintf(stderr, "\n");
}

/* What record's own stderr says of the run's files that its processes' lines may have
 * said only in their logs: -o's directory refused (`out` as given), traces not
 * written at exit. */
static void tt_rec_say_missing(const char *out, const struct tt_rec_listed *l)
{
	if (l->refused)
		fprintf(stderr, "ticktrace: record: -o %s names the directory %s: the trace is written "
			"at the default name instead, as named above\n", out, l->refused);
	if (!l->nlost)
		return;
	fprintf(stderr, "ticktrace: record: %zu process%s of the run could not write %s at "
		"exit, the write failed (%s said more):", l->nlost, l->nlost == 1 ? "" : "es", l->nlost == 1 ? "its trace" : "their traces",
		l->nlost == 1 ? "its line" : "their lines");
	for (size_t i = 0; i < l->nlost && i < TT_REC_NAMED; i++)
		fprintf(stderr, " %s", l->lost[i]);
	if (l->nlost > TT_REC_NAMED)
		fprintf(stderr, " and %zu more", l->nlost - TT_REC_NAMED);
	fprintf(stderr, "\n");
}

/* The logs that hold what ticktrace said in the run's processes, named as record's
 * last line: TICKTRACE_LOG's, or those beside the traces of processes whose stderr
 * was not a terminal (the program's own stderr stays as without ticktrace). */
static void tt_rec_say_logs(char **logs, size_t nlogs)
{
	if (!nlogs)
		return;
	const char *log = getenv("TICKTRACE_LOG");
	const char *why = log && *log && strcmp(log, "stderr") != 0 ? "(TICKTRACE_LOG)" :
		"(where a process's stderr is not a terminal, so that the program's own stays as "
		"without ticktrace; TICKTRACE_LOG=stderr puts them there all the same)";
	if (nlogs == 1) {
		fprintf(stderr, "ticktrace: record: ticktrace's lines are in %s %s\n", logs[0], why);
		return;
	}
	fprintf(stderr, "ticktrace: record: ticktrace's lines are in %zu logs %s:", nlogs, why);
	for (size_t i = 0; i < nlogs && i < TT_REC_NAMED; i++)
		fprintf(stderr, " %s", logs[i]);
	if (nlogs > TT_REC_NAMED)
		fprintf(stderr, " and %zu more", nlogs - TT_REC_NAMED);
	fprintf(stderr, "\n");
}

/* The files a pattern leaves to be named alone, at most: a run's program's own and its
 * exec'd images' (run.ttr, run.exec1.ttr), beside the others' run.ttr.PID. */
#define TT_REC_ALONE 4

static bool tt_rec_shell_plain(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (strchr("*?[]\\ \t\n'\"$`;&|<>(){}~#!", s[i]))
			return false;
	return true;
}

/* `s` as one word of the shell: as it is where nothing in it is the shell's, else
 * quoted ('...', a quote in it as '\''). */
static void tt_rec_shell_word(const char *s)
{
	if (tt_rec_shell_plain(s, strlen(s))) {
		fputs(s, stderr);
		return;
	}
	fputc('\'', stderr);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", stderr);
		else
			fputc(*s, stderr);
	fputc('\'', stderr);
}

/* Words of the shell that name every one of `files`: one directory, a pattern of their
 * names' common start, `*`, their common end, into `pattern`; where nothing ends it
 * (run.ttr.PID), `*[0-9]`, so that it names no log beside a file (run.ttr.PID.log),
 * and the few names that end otherwise (run.ttr) written before it. How many files it
 * names now that are not of `files` (another run's), or -1: none names them all. */
static long tt_rec_glob(char **files, size_t nfiles, char *pattern, size_t cap)
{
	const char *slash = strrchr(files[0], '/');
	size_t dir = slash ? (size_t)(slash - files[0]) + 1 : 0;
	size_t start = strlen(files[0]) - dir, end = start, shortest = start;
	for (size_t i = 1; i < nfiles; i++) {
		const char *a = files[0] + dir, *b = files[i] + dir;
		size_t na = strlen(a), nb = strlen(b), n = 0;
		if (strncmp(files[0], files[i], dir) != 0 || strchr(b, '/'))
			return -1;
		while (n < start && n < nb && a[n] == b[n])
			n++;
		start = n;
		for (n = 0; n < end && n < na && n < nb && a[na - 1 - n] == b[nb - 1 - n];)
			n++;
		end = n;
		shortest = nb < shortest ? nb : shortest;
	}
	/* (t.ttr and t.123.ttr: t.*.ttr names neither; t.*ttr both) */
	if (start + end > shortest)
		end = shortest - start;
	const char *name = files[0] + dir;
	/* (a pid's first digits are no part of the name: m-*.ttr, not m-21*.ttr) */
	while (start && name[start - 1] >= '0' && name[start - 1] <= '9')
		start--;
	size_t len = strlen(name);
	while (end && name[len - end] >= '0' && name[len - end] <= '9')
		end--;
	size_t head = dir + start, used = 0, alone = 0;
	if (!tt_rec_shell_plain(files[0], head) || !tt_rec_shell_plain(name + len - end, end))
		return -1;
	bool digit = end == 0;
	for (size_t i = 0; i < nfiles && digit; i++) {
		size_t n = strlen(files[i]);
		if (files[i][n - 1] >= '0' && files[i][n - 1] <= '9')
			continue;
		int w = snprintf(pattern + used, cap - used, "%s ", files[i]);
		if (++alone > TT_REC_ALONE || !tt_rec_shell_plain(files[i], n) || w < 0 ||
		    (size_t)w >= cap - used)
			return -1;
		used += (size_t)w;
	}
	const char *glob_at = pattern + used;
	int w = snprintf(pattern + used, cap - used, "%.*s*%s%s", (int)head, files[0],
			 name + len - end, digit ? "[0-9]" : "");
	if (w < 0 || (size_t)w >= cap - used)
		return -1;
	glob_t g;
	if (glob(glob_at, 0, NULL, &g) != 0)
		return -1;
	size_t listed = 0;
	for (size_t i = 0; i < g.gl_pathc; i++)
		for (size_t j = 0; j < nfiles; j++)
			if (strcmp(g.gl_pathv[i], files[j]) == 0) {
				listed++;
				break;
			}
	long others = listed + alone == nfiles ? (long)(g.gl_pathc - listed) : -1;
	globfree(&g);
	return others;
}

/* What the run wrote, every file named (of many, the first and a pattern that names
 * them all): converted (-c), or the command that would. */
/* `program`: the program's pid, 0 once it was killed (it exited otherwise); `image`:
 * its last image's name (tt_rec_image_name). */
static int tt_rec_report(const struct tt_rec_opts *o, char **files, size_t nfiles, int rc,
			 pid_t program, const char *image)
{
	char pattern[PATH_MAX + 2];
	bool many = nfiles > TT_REC_NAMED;
	long others = many ? tt_rec_glob(files, nfiles, pattern, sizeof pattern) : -1;
	bool globbed = others >= 0;
	if (many)
		fprintf(stderr, "ticktrace: recorded the program and those it started, %zu files, one each%s%s",
			nfiles, globbed ? ", " : "", globbed ? pattern : "");
	if (others > 0)
		fprintf(stderr, " (which names %ld more of other runs too)", others);
	if (many)
		fprintf(stderr, ":");
	else
		fprintf(stderr, "ticktrace: recorded %s", nfiles > 1 ? "the program and those it started, "
			"one file each:" : "");
	size_t killed = 0, running = 0, left = 0, unwritten = 0;
	for (size_t i = 0; i < nfiles; i++) {
		bool exited = false;
		pid_t pid = tt_rec_is_live(files[i]) ? tt_rec_live_pid(files[i], &exited) : -1;
		if (pid == 0 && tt_rec_live_gone(files[i]))
			pid = -1;
		if (pid >= 0 && exited)
			unwritten++;
		else if (pid >= 0 && program && pid == program)
			left++;
		else if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM))
			running++;
		else if (pid >= 0)
			killed++;
		if (i < TT_REC_NAMED)
			fprintf(stderr, "%s%s", nfiles > 1 ? " " : "", files[i]);
	}
	if (many)
		fprintf(stderr, " and %zu more", nfiles - TT_REC_NAMED);
	/* (each kind counted: "1 .live" of the killed said after two named, the program's
	 * uncounted, read as one in all) */
	if (left)
		fprintf(stderr, " (%zu .live: %s's, left by _exit before its trace was written (10 s at most: "
			"ticktrace(7), PROCESSES): its buffers hold what it recorded)", left, image);
	if (unwritten)
		fprintf(stderr, " (%zu .live of a process that exited but could not write its trace, as "
			"said below: its buffers hold what it recorded)", unwritten);
	if (killed)
		fprintf(stderr, " (%zu .live: the buffers of a process that wrote no trace: killed, or it could not)",
			killed);
	if (running)
		fprintf(stderr, " (%zu .live of a process that still runs, having outlived %s (a daemon): "
			"what it recorded so far; it writes its trace, named without .live, when it ends, "
			"and those it starts theirs)", running, image);
	if (!o->convert) {
		fprintf(stderr, "; see %s with: ticktrace convert",
			nfiles > 1 ? "them on one timeline" : "it");
		if (globbed)
			fprintf(stderr, " %s", pattern);
		else
			for (size_t i = 0; i < nfiles; i++) {
				fputc(' ', stderr);
				tt_rec_shell_word(files[i]);
			}
		fprintf(stderr, " -o trace.pftrace\n");
		return rc;
	}
	fprintf(stderr, "\n");
	struct tt_convert_opts c = {.inputs = files, .ninputs = nfiles, .output = o->convert,
				    .force = o->force, .thresholds.global = TT_AN_NO_THRESHOLD,
				    .debug_dir = o->debug_dir};
	if (tt_convert(&c, NULL) != 0)
		return rc ? rc : 1;
	return rc;
}

/* How often the run's processes that outlive the program are looked at, and for how
 * long at most, until they settle (tt_rec_settle). */
#define TT_REC_SETTLE_LOOK_NS 20000000L
#define TT_REC_SETTLE_MAX_NS 5000000000LL

/* A process as /proc/PID/stat tells it: whether it is below record. */
struct tt_rec_proc {
	pid_t pid, ppid;
	char state;
	bool below;
};

/* One look at the processes below record (their pids, sorted, into `*pids`, `*n` of
 * them): whether one of them is busy, running or waiting for a CPU, or in the disk's
 * sleep (R, D). The exited ones that were record's own reaped first. */
static int tt_rec_by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct tt_rec_proc *)a)->pid, y = ((const struct tt_rec_proc *)b)->pid;
	return (x > y) - (x < y);
}

static bool tt_rec_below(pid_t **pids, size_t *n)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	struct tt_rec_proc *all = NULL;
	size_t nall = 0, cap = 0;
	DIR *d = opendir("/proc");
	for (struct dirent *e; d && (e = readdir(d));) {
		char path[32], buf[512];
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || strlen(e->d_name) > 10)
			continue;
		snprintf(path, sizeof path, "/proc/%.10s/stat", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t got = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		buf[got > 0 ? got : 0] = 0;
		/* (after the name, which may hold any character: its last ')') */
		const char *name_end = strrchr(buf, ')');
		struct tt_rec_proc p = {.pid = (pid_t)atol(e->d_name)};
		int ppid;
		if (!name_end || sscanf(name_end + 1, " %c %d", &p.state, &ppid) != 2)
			continue;
		p.ppid = ppid;
		if (nall == cap) {
			cap = cap ? 2 * cap : 256;
			struct tt_rec_proc *more = realloc(all, cap * sizeof *all);
			if (!more)
				break;
			all = more;
		}
		all[nall++] = p;
	}
	if (d)
		closedir(d);
	/* (marked from record down, each pass a generation further; parents found by pid) */
	if (all)
		qsort(all, nall, sizeof *all, tt_rec_by_pid);
	bool busy = false, more = true;
	pid_t self = getpid();
	*n = 0;
	while (more) {
		more = false;
		for (size_t i = 0; i < nall; i++) {
			struct tt_rec_proc key = {.pid = all[i].ppid}, *parent;
			if (!all[i].below && (all[i].ppid == self ||
					      ((parent = bsearch(&key, all, nall, sizeof *all, tt_rec_by_pid)) &&
					       parent->below)))
				all[i].below = more = true;
		}
	}
	pid_t *listed = NULL;
	for (size_t i = 0; i < nall; i++) {
		if (!all[i].below)
			continue;
		busy |= all[i].state == 'R' || all[i].state == 'D';
		pid_t *grown = realloc(listed, (*n + 1) * sizeof *listed);
		if (!grown)
			break;
		listed = grown;
		listed[(*n)++] = all[i].pid;
	}
	free(all);
	free(*pids);
	*pids = listed;
	return busy;
}

/* The run's processes that outlive the program (a daemon, a background job: record
 * is their subreaper, so they come to it as their parents end, never to init),
 * waited for until they settle: none there, or every one asleep at two looks in a
 * row, none started or ended between; TT_REC_SETTLE_MAX_NS at most (one that never
 * sleeps). A double-forking daemon's middle process, still working or writing its
 * trace as it exits, is not asleep, nor is one a loaded machine keeps waiting for a
 * CPU: what record then names is the daemon's live file, not the middle one's, which
 * becomes its trace (RECHECK39 F10). */
static void tt_rec_settle(void)
{
	pid_t *pids = NULL, *before = NULL;
	size_t n = 0, nbefore = 0;
	bool was_busy = true;
	struct timespec look = {0, TT_REC_SETTLE_LOOK_NS}, now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long end = now.tv_sec * 1000000000LL + now.tv_nsec + TT_REC_SETTLE_MAX_NS;
	for (;;) {
		bool busy = tt_rec_below(&pids, &n);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!n || (!busy && !was_busy && n == nbefore && memcmp(pids, before, n * sizeof *pids) == 0))
			break;
		if (now.tv_sec * 1000000000LL + now.tv_nsec >= end) {
			fprintf(stderr, "ticktrace: record: %zu process%s the program left behind still %s "
				"after %lld s: their files are named as they are now\n", n, n == 1 ? "" : "es",
				busy || was_busy ? "busy" : "starting or ending", TT_REC_SETTLE_MAX_NS / 1000000000);
			break;
		}
		was_busy = busy;
		free(before);
		before = pids;
		nbefore = n;
		pids = NULL;
		nanosleep(&look, NULL);
	}
	free(pids);
	free(before);
}

/* The program, while it runs: SIGTERM and SIGHUP sent to record go on to it, which
 * ends as it would alone, its trace then read as usual. */
static volatile sig_atomic_t tt_rec_child;

static void tt_rec_pass_on(int sig)
{
	if (tt_rec_child > 0)
		kill((pid_t)tt_rec_child, sig);
}

/* --list stops before the first image's main: `env NAME=VALUE... PROG` (how an
 * uninstalled build is run, LD_LIBRARY_PATH set) would list env's functions alone. The
 * index of PROG in argv, whose assignments record then makes itself; 0 where argv[0]
 * is not env, or env is given an option or no program (listed as it is). */
static size_t tt_rec_past_env(char **argv)
{
	const char *base = strrchr(argv[0], '/');
	if (strcmp(base ? base + 1 : argv[0], "env") != 0)
		return 0;
	size_t i = 1;
	if (argv[i] && strcmp(argv[i], "--") == 0)
		i++;
	while (argv[i] && argv[i][0] != '-' && strchr(argv[i], '=') && argv[i][0] != '=')
		i++;
	return argv[i] && argv[i][0] != '-' ? i : 0;
}

int tt_rec_run(const struct tt_rec_opts *given)
{
	struct tt_rec_opts run = *given;
	const struct tt_rec_opts *o = &run;
	size_t past_env = given->list ? tt_rec_past_env(given->argv) : 0;
	run.argv += past_env;
	const char *lib = tt_rec_library();
	if (access(lib, R_OK) != 0) {
		fprintf(stderr, "ticktrace: record: no detour library at %s (%s); set "
			"TICKTRACE_DETOUR_LIB\n", lib, strerror(errno));
		return 1;
	}
	char runs[PATH_MAX], runtime[PATH_MAX];
	tt_rec_runtime(lib, runtime, sizeof runtime);
	struct tt_rec_elf elf = {0};
	int scripts = tt_rec_inspect(o->argv[0], runs, sizeof runs, &elf);
	bool is_static = scripts >= 0 && elf.is_static;
	if (is_static && scripts == 0)
		fprintf(stderr, "ticktrace: record: %s is statically linked: nothing can be preloaded "
			"into it, so it runs untraced\n", o->argv[0]);
	else if (is_static)
		fprintf(stderr, "ticktrace: record: %s runs %s, which is statically linked: nothing can "
			"be preloaded into it, so it runs untraced\n", o->argv[0], runs);
	char dir[PATH_MAX], list[PATH_MAX + 8];
	if ((!is_static && tt_rec_out_dir(o->out) != 0) || tt_rec_dir(dir, sizeof dir) != 0)
		return 1;
	snprintf(list, sizeof list, "%s/files", dir);
	/* Ctrl-C is for the program: this waits for it, then converts what it wrote. */
	struct sigaction ignore = {.sa_handler = SIG_IGN}, old_int, old_quit, old_term, old_hup;
	struct sigaction pass_on = {.sa_handler = tt_rec_pass_on, .sa_flags = SA_RESTART};
	sigaction(SIGINT, &ignore, &old_int);
	sigaction(SIGQUIT, &ignore, &old_quit);
	/* (blocked until the child's pid is known, and in the child until it is its own) */
	sigset_t passed, old_mask;
	sigemptyset(&passed);
	sigaddset(&passed, SIGTERM);
	sigaddset(&passed, SIGHUP);
	sigprocmask(SIG_BLOCK, &passed, &old_mask);
	sigaction(SIGTERM, &pass_on, &old_term);
	sigaction(SIGHUP, &pass_on, &old_hup);
	/* Closed by a successful exec: a byte read from it says the program never ran,
	 * so that its own exit status 126 or 127 is not taken for that. */
	int ran[2] = {-1, -1};
	struct timespec started;
	clock_gettime(CLOCK_REALTIME, &started);
	/* (the run's orphans come to record: tt_rec_settle; the program does not inherit it) */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid_t pid = pipe2(ran, O_CLOEXEC) == 0 ? fork() : -1;
	if (pid < 0) {
		fprintf(stderr, "ticktrace: record: cannot start %s: %s\n", o->argv[0], strerror(errno));
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		if (ran[0] >= 0) {
			close(ran[0]);
			close(ran[1]);
		}
		tt_rec_dir_remove(dir);
		return 1;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		close(ran[0]);
		for (size_t i = 1; i < past_env; i++) /* (env's assignments, as env makes them) */
			if (strcmp(given->argv[i], "--") != 0)
				putenv(given->argv[i]);
		tt_rec_exec(o, is_static ? NULL : lib, runtime, elf.first, dir, list, ran[1]);
	}
	tt_rec_child = pid;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	close(ran[1]);
	char failed;
	ssize_t got;
	while ((got = read(ran[0], &failed, 1)) < 0 && errno == EINTR)
		;
	close(ran[0]);
	int status, rc = 1;
	int waited;
	/* (the run's orphans reaped as they end: record is their subreaper) */
	while (((waited = waitpid(-1, &status, 0)) < 0 && errno == EINTR) || (waited > 0 && waited != pid))
		;
	tt_rec_child = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (waited < 0) {
		fprintf(stderr, "ticktrace: record: waiting for %s: %s\n", o->argv[0], strerror(errno));
		goto out;
	}
	rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	/* (where it ran traced, named below by its last image, as its files say) */
	if (WIFSIGNALED(status) && (got == 1 || is_static || o->list))
		fprintf(stderr, "ticktrace: record: %s was killed by signal %d\n", o->argv[0],
			WTERMSIG(status));
	if (got == 1 || is_static || o->list)
		goto out; /* not run, run untraced (said so), or only listed */
	char matched[PATH_MAX + sizeof TT_DETOUR_MATCHED_MARKER + 1];
	char looked[PATH_MAX + sizeof TT_DETOUR_LOOKED_MARKER + 1];
	char emfile[PATH_MAX + sizeof TT_DETOUR_EMFILE_MARKER + 1];
	snprintf(matched, sizeof matched, "%s/" TT_DETOUR_MATCHED_MARKER, dir);
	snprintf(looked, sizeof looked, "%s/" TT_DETOUR_LOOKED_MARKER, dir);
	snprintf(emfile, sizeof emfile, "%s/" TT_DETOUR_EMFILE_MARKER, dir);
	const char *recording = getenv("TICKTRACE");
	tt_rec_settle();
	struct tt_rec_listed listed;
	tt_rec_files(list, &listed);
	char image_name[256];
	const char *image = tt_rec_image_name(listed.files, listed.nfiles, pid, o->argv[0], image_name,
					      sizeof image_name);
	if (WIFSIGNALED(status))
		fprintf(stderr, "ticktrace: record: %s was killed by signal %d\n", image, WTERMSIG(status));
	struct rlimit nofile = {0};
	getrlimit(RLIMIT_NOFILE, &nofile); /* (the program's: record's own, inherited) */
	char out_of_fds[512];
	size_t images = 0;
	if (o->npatterns && access(emfile, F_OK) == 0) {
		/* the program ran: its own status stands; named, each image that ran out (env
		 * may have, and the xz it exec'd lost its functions) */
		images = tt_rec_emfile_images(emfile, out_of_fds, sizeof out_of_fds);
		fprintf(stderr, "ticktrace: record: the patcher ran out of file descriptors (EMFILE) in "
			"%s before the -f patterns could be matched against all %s functions and patched "
			"(ulimit -n is %llu; the patcher holds one for each module it reads, the program "
			"none of them): %s calls may be missing; raise the limit, as `ulimit -n 1024`\n",
			out_of_fds[0] ? out_of_fds : o->argv[0], images > 1 ? "their" : "its",
			(unsigned long long)nofile.rlim_cur, images > 1 ? "their" : "its");
	} else if (o->npatterns && access(matched, F_OK) != 0) {
		/* (recording off: the patterns were never matched, and the missing trace is said) */
		if (access(looked, F_OK) == 0)
			fprintf(stderr, "ticktrace: record: no -f pattern matched a function of %s or a "
				"program it ran: the trace holds none of their calls (what each pattern "
				"missed is said %s)\n", o->argv[0],
				listed.nlogs ? "in ticktrace's lines, whose log is named below" : "above");
		else if (!recording || strcmp(recording, "0") != 0)
			fprintf(stderr, "ticktrace: record: %s ended before the -f patterns were matched "
				"against its functions: nothing was patched\n", o->argv[0]);
		rc = rc ? rc : 1;
	}
	char **files = listed.files;
	size_t nfiles = listed.nfiles;
	struct stat there;
	if (nfiles)
		rc = tt_rec_report(o, files, nfiles, rc, WIFSIGNALED(status) ? 0 : pid, image);
	else {
		/* (a file at a name with no %p that is not this run's: planted, never read) */
		fprintf(stderr, "ticktrace: record: %s wrote no trace at %s (TICKTRACE=0, it "
			"died before writing, or its write failed, which it says)%s\n", o->argv[0], o->out,
			lstat(o->out, &there) == 0 && !tt_rec_ours(o->out, &there) ?
				"; the file there is not one it wrote" : "");
		/* the program's status stands (the missing traces said and counted), unless
		 * -c asked for a conversion that cannot be made */
		if (o->convert)
			rc = rc ? rc : 1;
	}
	tt_rec_say_missing(o->out, &listed);
	tt_rec_say_snapshots(&started);
	tt_rec_say_logs(listed.logs, listed.nlogs);
	tt_rec_listed_free(&listed);
out:
	tt_rec_dir_remove(dir);
	return rc;
}
