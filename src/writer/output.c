/* Where a file goes (TICKTRACE_OUT), and how it gets there: a new file is written
 * with no name, or under a temporary name (mode 0600, O_EXCL, so a symlink is never
 * followed), and named or renamed into place when complete; a device, a FIFO or one
 * of the program's descriptors by name is written in place. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "writer/writer.h"

/* TICKTRACE_OUT as the run began: a relative one (the default is) in the directory
 * the program was in then, which it may leave before the file is written (daemon(0,
 * 0) moves to /). TICKTRACE_LIST likewise, read then: a program may clear its
 * environment. A TICKTRACE_OUT the program sets itself later is its choice, and
 * taken (`tt__out_given`: the value the pattern was made from). */
static char tt__out_pattern[4096], tt__out_given[4096], tt__list_path[4096];
/* This process is not the run's first, though not forked by this image: not the
 * process TT_ENV_PROGRAM_PID names (record's program, or the first process of a run
 * without record, which sets it); or an image a
 * forked or vfork child exec'd (TT_ENV_EXEC_IMAGE). Its files are named apart, with
 * its pid, as a forked child's are. */
static int tt__out_apart;
/* When the run began (the precise clock: files' times may be finer than the coarse
 * one; an exec'd image's is its first image's), and the file this process put at its
 * TICKTRACE_OUT (a dump's, which the exit replaces): a file changed there since, not
 * its own, is another process's. */
static struct timespec tt__out_since;
static struct tt_os_run_file tt__placed;
static uint32_t tt__out_uid; /* the user the output was resolved as, at start (tt_os_user) */

/* A TICKTRACE_OUT that names a directory no file of the run's goes into, "DIR: why"
 * (tt_os_out_dir): the default name taken instead, said at start; "": none. */
static char tt__out_refused[4096 + 256];
/* The default name in the directory TICKTRACE_OUT was read from: where the run's file
 * goes where it cannot be made at the name given (tt__out_fall_back). */
static char tt__out_fallback[4096];

/* The pattern from TICKTRACE_OUT as it is now; returns the current directory. A
 * directory's (DIR, DIR/) is the default name in it, by the default's rules. */
/* `path` in `cwd` (the platform's rule of an absolute path), or as it is where the
 * two are too long. */
static void tt__in_dir(const char *path, const char *cwd, char *buf, size_t size)
{
	if (tt_os_path_in(cwd, path, buf, size) < 0)
		snprintf(buf, size, "%s", path);
}

static void tt__resolve_pattern(char *cwd, size_t size)
{
	/* (the platform's: Windows' in UTF-8, not the ANSI code page) */
	if (!tt_os_getenv(TT_ENV_OUT, tt__out_given, sizeof tt__out_given))
		tt__out_given[0] = 0;
	if (!tt_os_current_dir(cwd, size))
		cwd[0] = 0;
	const char *name = tt__out_given[0] ? tt__out_given : TT_OUT_DEFAULT;
	char named[4096], there[4096], in_dir[4096];
	tt__out_refused[0] = 0;
	if (tt__out_given[0] && tt__expand_pid(tt__out_given, named, sizeof named) == 0) {
		tt__in_dir(named, cwd, there, sizeof there);
		int in = tt_os_out_dir(tt__out_given, there, TT_OUT_DEFAULT, in_dir, sizeof in_dir, tt__out_refused,
				       sizeof tt__out_refused);
		name = in > 0 ? in_dir : in < 0 ? TT_OUT_DEFAULT : name;
	}
	tt__in_dir(name, cwd, tt__out_pattern, sizeof tt__out_pattern);
	tt__in_dir(TT_OUT_DEFAULT, cwd, tt__out_fallback, sizeof tt__out_fallback);
	tt__placed.keep = tt_os_name_is(tt__out_pattern, TT_OUT_DEFAULT);
}

/* The number this process's file at the default name takes, chosen as it first
 * names it (at start; a forked child's, an exec'd image's, as it first names its
 * own): where another run's of the same pid is there, the live file and the trace
 * named apart from it alike. */
static struct tt_os_out_number tt__out_number;

/* The run's file: the pattern expanded (tt__expand_path), numbered at the default name. */
static int tt__out_path(char *buf, size_t size)
{
	int err = tt__expand_path(tt__out_pattern, buf, size);
	if (err || !tt__placed.keep || tt__output_in_place(buf))
		return err;
	return tt_os_out_numbered(&tt__out_number, tt_os_process_id(), tt__exec_image, buf, size);
}

/* The default name, where the run's file would go if it could not be made at the
 * name given: as tt__out_path, of tt__out_fallback. */
static int tt__fallback_path(char *buf, size_t size)
{
	int err = tt__expand_path(tt__out_fallback, buf, size);
	return err ? err : tt_os_out_numbered(&tt__out_number, tt_os_process_id(), tt__exec_image, buf, size);
}

/* Whether `err` (-errno) is the place's, which another directory may not have: not
 * there, not one, not to be written, full; not the file's (a size limit, EFBIG, is
 * everywhere), nor the process's (no descriptor, no memory). */
static bool tt__out_place_refused(int err)
{
	static const int place[] = {ENOENT, ENOTDIR, EACCES, EPERM, EROFS, ELOOP, ENAMETOOLONG, EISDIR,
				    ENOSPC, EDQUOT};
	for (size_t i = 0; i < sizeof place / sizeof place[0]; i++)
		if (err == -place[i])
			return true;
	return false;
}

int tt__out_fall_back(int err, const char *what, char *path, size_t size)
{
	char fallback[4096];
	if (!tt__out_place_refused(err) || tt__placed.keep || tt__output_in_place(path) || !tt__out_fallback[0] ||
	    tt__fallback_path(fallback, sizeof fallback) || strlen(fallback) >= size)
		return err;
	fprintf(tt__err, "ticktrace: TICKTRACE_OUT=%s: %s cannot be made there (%s): the trace goes to %s, "
		"the default name, instead\n", tt__out_given, what, strerror(-err), fallback);
	/* (the run's name from now on: its live file, stream, log and exit's trace alike) */
	snprintf(tt__out_pattern, sizeof tt__out_pattern, "%s", tt__out_fallback);
	tt__placed.keep = 1;
	snprintf(path, size, "%s", fallback);
	return 0;
}

/* What the image this process exec'd from told (TT_ENV_EXEC_IMAGE, "PID:N:APART:
 * SECONDS.NANOSECONDS", tt__exec_image_setting): this image's number, whether the
 * process is apart, and when its run began. A child that inherited it is another
 * process, its first image. */
static void tt__take_exec_image(void)
{
	const char *image = getenv(TT_ENV_EXEC_IMAGE);
	long pid;
	unsigned n;
	int apart;
	long long seconds;
	long nanoseconds;
	int fields = image ? sscanf(image, "%ld:%u:%d:%lld.%ld", &pid, &n, &apart, &seconds, &nanoseconds) : 0;
	if (fields != 5 || pid != (long)tt_os_process_id())
		return;
	tt__exec_image = n;
	tt__out_apart |= apart;
	tt__out_since = (struct timespec){.tv_sec = (time_t)seconds, .tv_nsec = nanoseconds};
}

int tt__exec_image_setting(char *buf, size_t size, int vfork_child)
{
	int n = snprintf(buf, size, "%s=%d:%u:%d:%lld.%09ld", TT_ENV_EXEC_IMAGE, (int)tt_os_process_id(),
			 vfork_child ? 0 : tt__exec_image + 1, vfork_child || tt__forked || tt__out_apart,
			 (long long)tt__out_since.tv_sec, (long)tt__out_since.tv_nsec);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* TT_ENV_PROGRAM_PID=this pid and the run's start, in the environment its children
 * inherit (tt_os_env_set: not through setenv, which a program may define as its own:
 * bash then failed). Where it cannot be, its children take this process's names, as
 * before. */
static void tt__export_first(void)
{
	static char first[96];
	snprintf(first, sizeof first, "%s=%d:%lld.%09ld", TT_ENV_PROGRAM_PID, (int)tt_os_process_id(),
		 (long long)tt__out_since.tv_sec, (long)tt__out_since.tv_nsec);
	tt_os_env_set(first);
}

void tt__resolve_out(void)
{
	char cwd[4096];
	tt__out_uid = tt_os_user();
	tt__resolve_pattern(cwd, sizeof cwd);
	const char *list = getenv(TT_ENV_LIST);
	tt__list_path[0] = 0;
	if (list && *list)
		tt__in_dir(list, cwd, tt__list_path, sizeof tt__list_path);
	/* The file at the run's name now, then the start on the files' clock: a file
	 * stamped in the start's tick is older only where it was there at the start. */
	char path[4096];
	if (tt__out_path(path, sizeof path) != 0 || tt_os_path_stamp(path, &tt__placed.before) != 0)
		tt__placed.before = (struct tt_os_file_stamp){0};
	int64_t since = tt_os_file_clock_ns();
	tt__out_since = (struct timespec){.tv_sec = (time_t)(since / 1000000000), .tv_nsec = since % 1000000000};
	/* The run's first process, "PID[:SECONDS.NANOSECONDS]" (record gives the pid
	 * alone): a process of another pid is one the run started, however (posix_spawn
	 * and system exec inside the C library, unseen), and its files' age is judged by
	 * the run's start. */
	const char *program = getenv(TT_ENV_PROGRAM_PID);
	long pid = 0;
	long long seconds;
	long nanoseconds;
	int fields = program ? sscanf(program, "%ld:%lld.%ld", &pid, &seconds, &nanoseconds) : 0;
	tt__out_apart = fields >= 1 && pid > 0 && pid != (long)tt_os_process_id();
	if (tt__out_apart && fields == 3)
		tt__out_since = (struct timespec){.tv_sec = (time_t)seconds, .tv_nsec = nanoseconds};
	tt__take_exec_image();
	if (tt__out_apart || tt__exec_image) /* (its start is the run's first process's) */
		tt__placed.before = (struct tt_os_file_stamp){0};
	/* None, or this pid (record's program, an exec'd image of the first process):
	 * this is the first, which tells every descendant so. */
	if (!tt__out_apart && !tt__forked)
		tt__export_first();
	if (tt__out_refused[0] && !tt__out_apart && !tt__forked && !tt__exec_image &&
	    tt__out_path(path, sizeof path) == 0) {
		fprintf(tt__err, "ticktrace: TICKTRACE_OUT=%s names the directory %s: the trace is written "
			"at %s, the default name, instead\n", tt__out_given, tt__out_refused, path);
		tt__list_tagged(TT_LIST_REFUSED, tt__out_refused);
	}
}

int tt__default_path(char *buf, size_t size)
{
	char given[sizeof tt__out_given];
	const char *now = tt_os_getenv(TT_ENV_OUT, given, sizeof given);
	if (!tt__out_pattern[0]) {
		tt__resolve_out();
	} else if (now && *now && strcmp(now, tt__out_given) != 0) {
		char cwd[4096];
		tt__resolve_pattern(cwd, sizeof cwd);
	}
	return tt__out_path(buf, size);
}

/* The directory of an absolute `path` into dir; 0, or -1 where it has none. */
static int tt__dir_of(const char *path, char *dir, size_t size)
{
	/* (Windows' backslash too: a TICKTRACE_OUT of C:\traces\run.ttr in a folder not
	 * there was said only as the exit lost the run, outside test ot31w D2) */
	const char *slash = tt_os_last_separator(path);
	if (!slash)
		return -1;
	/* (a root keeps its separator: "/", "C:\") */
	int root = slash == path || slash[-1] == ':';
	snprintf(dir, size, "%.*s", (int)(slash - path) + root, path);
	return 0;
}

int tt__output_theirs(const char *path, char *why, size_t size)
{
	char dir[4096];
	uint32_t owner;
	int link;
	if (tt__dir_of(path, dir, sizeof dir) || tt_os_file_theirs(dir, path, &owner, &link) <= 0)
		return 0;
	snprintf(why, size, "another user's %s (uid %u) is there, in a directory with the sticky bit, "
		 "which only they may replace", link ? "link" : "file", (unsigned)owner);
	return 1;
}

void tt__check_out(void)
{
	char path[4096], dir[4096], why[160];
	if (tt__out_apart || tt__forked || tt__exec_image || !tt__out_given[0] ||
	    tt__default_path(path, sizeof path) || tt__output_in_place(path))
		return;
	if (tt__dir_of(path, dir, sizeof dir)) /* (made absolute at start) */
		return;
	uint32_t owner;
	int link, lost = -tt_os_dir_writable(dir), theirs = 0;
	if (!lost) {
		/* (the exit renames its file over it) */
		theirs = tt_os_file_theirs(dir, path, &owner, &link);
		lost = theirs == -EISDIR ? EISDIR : 0;
	}
	/* (where it goes then, as the exit falls back; none: too long a path) */
	char fallback[4096], then[sizeof fallback + 96] = " at exit";
	if (lost && tt__fallback_path(fallback, sizeof fallback) == 0)
		snprintf(then, sizeof then, " now: at exit, where it still cannot, it goes to %s, the default name, "
			 "instead", fallback);
	if (lost)
		fprintf(tt__err, "ticktrace: TICKTRACE_OUT=%s: %s%s%s: the trace cannot be written there%s\n", path,
			lost == EISDIR ? "" : dir, lost == EISDIR ? "" : ": ", strerror(lost), then);
	else if (theirs > 0) {
		/* (where the exit puts it: tt_os_file_place's rule) */
		char beside[sizeof path], tag[24], theirs_why[200];
		snprintf(beside, sizeof beside, "%s", path);
		snprintf(tag, sizeof tag, ".%d", (int)tt_os_process_id());
		if (tt_os_name_tag(beside, sizeof beside, tag) == 0 &&
		    tt__output_theirs(path, theirs_why, sizeof theirs_why))
			fprintf(tt__err, "ticktrace: TICKTRACE_OUT=%s: %s: the trace is written beside it "
				"at exit, as %s\n", path, theirs_why, beside);
	}
	/* (another user's directory, or their link to one: said as tt_os_dir_ours says it;
	 * the user's or root's open to every user, as a test makes one for another user's
	 * run, is not: the exit writes there as anywhere) */
	else if (tt_os_dir_theirs(dir, why, sizeof why))
		fprintf(tt__err, "ticktrace: TICKTRACE_OUT=%s: its directory is %s; the trace is written "
			"there at exit all the same\n", path, why);
}

void tt__out_lost_why(int err, char *buf, size_t size)
{
	uint32_t now = tt_os_user();
	if ((err != -EACCES && err != -EPERM) || now == tt__out_uid)
		return;
	snprintf(buf, size, " (the program changed its user since it started, uid %u then, %u "
			 "now: the trace is written at exit as the user it ends as; TICKTRACE_MODE=stream "
			 "makes its file as the run starts: ticktrace(7), PROCESSES)",
			 (unsigned)tt__out_uid, (unsigned)now);
}

int tt__out_is_apart(void)
{
	return tt__out_apart;
}

int tt__expand_pid(const char *pattern, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	for (const char *p = pattern; *p; p++) {
		int n;
		if (p[0] == '%' && p[1] == 'p') {
			n = snprintf(buf + len, size - len, "%d", (int)tt_os_process_id());
			p++;
		} else {
			n = snprintf(buf + len, size - len, "%c", *p);
		}
		if (n < 0 || (size_t)n >= size - len)
			return -ENAMETOOLONG;
		len += (size_t)n;
	}
	return 0;
}

int tt__expand_path(const char *pattern, char *buf, size_t size)
{
	int err = tt__expand_pid(pattern, buf, size);
	/* A device, a FIFO or a descriptor by name (/dev/null, /dev/stdout) is written in
	 * place by every process and image: a name made apart beside it would be a new
	 * file in /dev. */
	if (err || tt__output_in_place(buf))
		return err;
	size_t len = strlen(buf);
	/* An exec'd image, at the same pid: .execN before the extension, so that
	 * run.ttr's next image is run.exec1.ttr, found by *.ttr alike. */
	if (tt__exec_image) {
		char tag[24];
		snprintf(tag, sizeof tag, ".exec%u", tt__exec_image);
		if (tt_os_name_tag(buf, size, tag) < 0)
			return -ENAMETOOLONG;
		len = strlen(buf);
	}
	/* A process other than the run's first writes a file of its own, even where the
	 * name has no %p: a forked child, the images a forked or vfork child exec'd, or
	 * under record any process but its program (run.ttr.PID, run.exec1.ttr.PID). */
	if ((tt__forked || tt__out_apart) && !strstr(pattern, "%p")) {
		int n = snprintf(buf + len, size - len, ".%d", (int)tt_os_process_id());
		if (n < 0 || (size_t)n >= size - len)
			return -ENAMETOOLONG;
	}
	return 0;
}

/* Runs `write` on `out`, its file `fd` kept as ticktrace's for the write alone
 * (tt__fd_keep_brief: past the share, the program's table full but for it), and closes
 * it unless `named` (NULL), where it is left open for the caller to name: then the
 * kept file, which the caller closes. */
static int tt__write_fd(struct tt__fd_out *out, int fd, tt__file_writer write, void *arg,
			struct tt__fd *named)
{
	tt__fd_out_init(out);
	int err = tt__fd_keep_brief(&out->file, (struct tt_os_file){fd});
	if (err)
		return err;
	struct tt_os_writing writing;
	tt_os_writing_begin(&writing);
	err = write(&out->out, arg);
	tt_os_writing_end(&writing);
	if (named) {
		*named = out->file;
		return err;
	}
	int closed = tt__fd_close(&out->file);
	return err ? err : closed;
}

/* The descriptor a path names as the program's own: /dev/stdout, /dev/stderr,
 * /dev/fd/N, /proc/self/fd/N (thread-self, this pid); -1 for any other path. Written
 * through that descriptor, whatever it is (a file `prog > out` opened, a socket):
 * renaming over the name would replace /dev/stdout itself. */
static int tt__named_descriptor(const char *path)
{
	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	char self[32];
	snprintf(self, sizeof self, "/proc/%d/fd/", (int)tt_os_process_id());
	static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
	const char *number = NULL;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			number = path + strlen(dirs[i]);
	if (strncmp(path, self, strlen(self)) == 0)
		number = path + strlen(self);
	if (!number || *number < '0' || *number > '9')
		return -1;
	char *end;
	long fd = strtol(number, &end, 10);
	return *end || fd > INT_MAX ? -1 : (int)fd;
}

int tt__output_in_place(const char *path)
{
	return tt__named_descriptor(path) >= 0 || tt_os_is_device(path);
}

int tt__open_in_place(const char *path)
{
	int named = tt__named_descriptor(path);
	if (named >= 0) {
		/* (the program's own: its flags are left as they are; a copy in the table of
		 * a thread with one of its own) */
		int fd = tt__fd_of_program(named);
		return fd < 0 ? -errno : fd;
	}
	/* (not blocking: a FIFO whose reader takes nothing is given up, buffer.c, rather
	 * than the program waiting) */
	struct tt_os_file device;
	int err = tt_os_device_open(path, &device);
	return err ? err : (int)device.handle;
}

/* Whether the run's files named by `pattern` have the pid in their names: a file there
 * of a process of this run before this one had its pid, which the system reused. */
static bool tt__pid_named(const char *pattern)
{
	return tt__forked || tt__out_apart || strstr(pattern, "%p");
}

int tt__open_output(const char *pattern, char *path, size_t size, const char *what, const char *setting,
		    int *in_place)
{
	*in_place = tt__output_in_place(path);
	if (*in_place)
		return tt__open_in_place(path);
	struct tt_os_new_file made;
	struct tt_os_file file;
	int err = tt_os_file_new(path, 1, &file, &made);
	if (err)
		return err;
	/* (held while this process writes it: another run's given the same name goes
	 * beside it, as this one beside another's, by the trace's rule) */
	err = tt_os_file_hold(&file);
	if (!err)
		err = tt_os_file_name(&file, path, &made);
	if (!err && made.tmp[0]) {
		struct tt_os_run_file run = {.since_ns = (int64_t)tt__out_since.tv_sec * 1000000000 +
							 tt__out_since.tv_nsec,
					     .what = what, .setting = setting};
		char said[2 * 4096 + 256];
		err = tt_os_file_place(&made, path, size, &run, tt__pid_named(pattern), said, sizeof said);
		if (!err)
			fputs(said, tt__err);
	}
	if (err) {
		tt_os_file_discard(&made);
		tt_os_file_close(&file);
		return err;
	}
	return (int)file.handle;
}

/* Says where the run's file went where its number was chosen as the process began
 * (tt__out_path: another run's file was there then), once for the process. */
static void tt__say_numbered(const char *path)
{
	char line[2 * 4096 + 256];
	if (!tt__placed.keep)
		return;
	tt_os_out_said(&tt__out_number, tt_os_process_id(), tt__exec_image, path, line, sizeof line);
	fputs(line, tt__err);
}

/* The run's own file, under the name `tmp` (complete, or a stream's), put at `path`
 * by the platform's rule (tt_os_file_place: beside another process's, with the pid,
 * and said). 0 or -errno; `path` is where the file is. */
static int tt__place_run_file(struct tt_os_new_file *made, char *path, size_t size)
{
	char said[2 * 4096 + 256];
	/* (A name with the pid in it: a process of the run before this one had its pid,
	 * which the system reused.) */
	bool pid_named = tt__pid_named(tt__out_pattern);
	tt__placed.since_ns = (int64_t)tt__out_since.tv_sec * 1000000000 + tt__out_since.tv_nsec;
	int err = tt_os_file_place(made, path, size, &tt__placed, pid_named, said, sizeof said);
	if (!err && said[0])
		fputs(said, tt__err);
	else if (!err)
		tt__say_numbered(path);
	return err;
}

int tt__create_run_file(char *path, size_t size, int *in_place, struct tt__out *out,
			tt__file_writer first, void *arg)
{
	*in_place = tt__output_in_place(path);
	struct tt_os_new_file made = {0};
	struct tt_os_file opened;
	int fd = *in_place ? tt__open_in_place(path) : tt_os_file_new(path, 1, &opened, &made);
	if (!*in_place && !fd)
		fd = (int)opened.handle;
	int unnamed = made.unnamed;
	struct tt__fd *kept = &tt__fd_out(out)->file;
	int err = fd < 0 ? fd : tt__fd_keep(kept, (struct tt_os_file){fd});
	if (err) {
		tt_os_file_discard(&made);
		return err;
	}
	/* Its beginning written before it has the name: a run killed meanwhile leaves no
	 * file the tools cannot read (held while it is written: another process of the
	 * same name writes beside it). */
	if (!*in_place)
		err = tt_os_file_hold(&kept->file);
	if (!err)
		err = first(out, arg);
	if (!err && unnamed)
		err = tt_os_file_name(&kept->file, path, &made);
	if (!err && unnamed && !made.tmp[0]) { /* (named at once) */
		tt_os_file_stamp(&kept->file, &tt__placed.placed);
		tt__say_numbered(path);
	}
	if (!err && made.tmp[0])
		err = tt__place_run_file(&made, path, size);
	if (err) {
		tt_os_file_discard(&made);
		tt__fd_close(kept);
	}
	return err;
}

/* tt__write_placed, in the calling thread's table of descriptors. */
static int tt__write_placed_here(char *path, size_t run_size, bool fresh, tt__file_writer write, void *arg)
{
	struct tt__fd_out *out = malloc(sizeof *out);
	if (!out)
		return -ENOMEM;
	int err;
	/* A device or a pipe (TICKTRACE_OUT=/dev/null, a FIFO) is written in place:
	 * renaming over it would replace the device node. */
	if (tt__output_in_place(path)) {
		int fd = tt__open_in_place(path);
		err = fd < 0 ? fd : tt__write_fd(out, fd, write, arg, NULL);
		free(out);
		return err;
	}
	/* A file with no name while it is written: a run killed meanwhile leaves
	 * nothing behind. It is named beside PATH when complete, then renamed over it. */
	struct tt_os_new_file made;
	struct tt_os_file opened;
	err = tt_os_file_new(path, 1, &opened, &made);
	if (err) {
		free(out);
		return err;
	}
	int unnamed = made.unnamed;
	struct tt__fd kept = TT__FD_NONE;
	err = tt__write_fd(out, (int)opened.handle, write, arg, unnamed ? &kept : NULL);
	/* (Named through /proc/thread-self/fd/N: only while N is still the file written.) */
	if (!err && unnamed)
		err = tt__fd_ours(&kept) ? tt_os_file_name(&kept.file, path, &made) : -EBADF;
	if (!err && unnamed && !made.tmp[0] && run_size) { /* (named at once) */
		tt_os_file_stamp(&kept.file, &tt__placed.placed);
		tt__say_numbered(path);
	}
	int closed = tt__fd_close(&kept);
	if (!err)
		err = closed;
	if (!err && made.tmp[0])
		err = run_size ? tt__place_run_file(&made, path, run_size)
		      : fresh  ? tt_os_file_link(&made, path) /* (-EEXIST where a file is there) */
			       : tt_os_file_put(&made, path);
	if (err)
		tt_os_file_discard(&made);
	free(out);
	return err;
}

struct tt__apart {
	int (*job)(void *arg);
	void *arg;
	int err;
};

static void *tt__run_apart(void *apart)
{
	struct tt__apart *a = apart;
	a->err = tt__fd_private_table(NULL, 0);
	if (!a->err)
		a->err = a->job(a->arg);
	return NULL;
}

/* `job` (0 or -errno), run here; where the program holds every descriptor its limit
 * allows (one that leaks them, a low ulimit -n), again by a thread of ticktrace's
 * own, in a table of descriptors of its own where its copies of the program's are
 * let go: the trace is written all the same. */
static int tt__with_a_descriptor(int (*job)(void *arg), void *arg)
{
	int err = job(arg);
	if (err != -EMFILE)
		return err;
	struct tt__apart apart = {job, arg, err};
	struct tt_os_thread thread;
	if (tt__start_thread(&thread, tt__run_apart, &apart, 0) < 0)
		return err;
	tt_os_thread_join(&thread);
	return apart.err;
}

struct tt__placing {
	char *path;
	size_t run_size;
	bool fresh;
	tt__file_writer write;
	void *arg;
};

static int tt__write_placing(void *placing)
{
	struct tt__placing *p = placing;
	return tt__write_placed_here(p->path, p->run_size, p->fresh, p->write, p->arg);
}

/* tt__write_file_with, and with `run_size` the run's own file (tt__place_run_file,
 * `path` a buffer of that size, rewritten where the file went beside); `fresh`: only
 * where nothing is (tt__write_new_file_with). */
static int tt__write_placed(char *path, size_t run_size, bool fresh, tt__file_writer write, void *arg)
{
	struct tt__placing placing = {path, run_size, fresh, write, arg};
	return tt__with_a_descriptor(tt__write_placing, &placing);
}

int tt__write_file_with(const char *path, tt__file_writer write, void *arg)
{
	return tt__write_placed((char *)path, 0, false, write, arg);
}

int tt__write_new_file_with(const char *path, tt__file_writer write, void *arg)
{
	return tt__write_placed((char *)path, 0, true, write, arg);
}

int tt__write_run_file_with(char *path, size_t size, tt__file_writer write, void *arg)
{
	return tt__write_placed(path, size, false, write, arg);
}

int tt__write_default_file(void)
{
	char path[4096];
	int err = tt__default_path(path, sizeof path);
	if (!err)
		err = tt__write_run_file(path, sizeof path);
	if (err && tt__out_fall_back(err, "the trace", path, sizeof path) == 0)
		err = tt__write_run_file(path, sizeof path);
	if (!err && !tt__output_in_place(path))
		tt__list_written(path);
	return err;
}

int tt__nothing_to_write(void)
{
	/* (not the registry's list: mode stream recycles an exited thread's slot once written) */
	if (tt__out_given[0] || tt__registry_count() ||
	    __atomic_load_n(&tt__unregistered_drops, __ATOMIC_RELAXED))
		return 0;
	/* Said to a user at a terminal; a script or test suite reading the program's
	 * stderr (its --help, --version) gets it as it is without ticktrace. */
	if (isatty(STDERR_FILENO))
		fprintf(tt__err, "ticktrace: no event recorded: no trace written (TICKTRACE_OUT names a "
			"file to write anyway)\n");
	return 1;
}

/* One write at the list's end (tt_os_file_append): lines of processes writing at once
 * never mix. 0, or -EMFILE; a list that cannot take the line otherwise: the file is
 * written all the same. */
static int tt__append_line(void *line)
{
	const char *text = line;
	struct tt_os_writing writing;
	tt_os_writing_begin(&writing);
	int err = tt_os_file_append(tt__list_path, text, strlen(text));
	tt_os_writing_end(&writing);
	return err == -EMFILE ? err : 0;
}

/* The line TICKTRACE_LIST gets for `path`, after `tag`, into `line` (4096 + 4096 + 8
 * bytes): whether it could be made (a list set, a path it can hold). */
static bool tt__list_line(const char *tag, const char *path, char *line)
{
	size_t len = strlen(tag);
	if (!*tt__list_path)
		return false;
	memcpy(line, tag, len);
	if (path[0] != '/') {
		if (!tt_os_current_dir(line + len, 4096))
			return false;
		len += strlen(line + len);
		line[len++] = '/';
	}
	size_t n = strlen(path);
	if (n > 4096)
		return false;
	memcpy(line + len, path, n);
	len += n;
	line[len++] = '\n';
	line[len] = 0;
	return true;
}

void tt__list_written(const char *path)
{
	char line[4096 + 4096 + 8];
	if (tt__list_line("", path, line))
		tt__with_a_descriptor(tt__append_line, line);
}

void tt__list_tagged(const char *tag, const char *path)
{
	char line[4096 + 4096 + 8];
	/* (no thread started for a descriptor: a line may be said anywhere, a fault's too) */
	if (tt__list_line(tag, path, line))
		tt__append_line(line);
}
