/* Where a run's own file goes when another process's file has its name: one rule
 * for both systems (writer/output.c, modes/stream.c), on each system's file
 * functions. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "platform/platform.h"

#define TT_OS_NUMBERED_MAX 9999 /* (the numbers a default name tries; past them: -EEXIST) */

const char *tt_os_last_separator(const char *path)
{
	const char *slash = strrchr(path, '/');
#ifdef _WIN32
	const char *back = strrchr(path, '\\');
	slash = back > slash ? back : slash;
#endif
	return slash;
}

int tt_os_name_tag(char *path, size_t size, const char *tag)
{
	size_t len = strlen(path), n = strlen(tag);
	const char *sep = tt_os_last_separator(path);
	char *base = sep ? path + (sep - path) + 1 : path;
	char *dot = strrchr(base, '.');
	size_t at = dot && dot != base ? (size_t)(dot - path) : len;
	if (len + n >= size)
		return -ENAMETOOLONG;
	memmove(path + at + n, path + at, len - at + 1);
	memcpy(path + at, tag, n);
	return 0;
}

int tt_os_out_dir(const char *given, const char *there, const char *name, char *buf, size_t size, char *why,
		  size_t cap)
{
#ifdef _WIN32
	static const char separator[] = "\\";
#else
	static const char separator[] = "/";
#endif
	size_t len = strlen(given);
	int slash = len && (given[len - 1] == '/' || given[len - 1] == separator[0]);
	char dir[4096], ours[160];
	size_t n = strlen(there);
	/* (the directory without its trailing separators, as said and as a file "DIR/" is) */
	while (n > 1 && (there[n - 1] == '/' || there[n - 1] == separator[0]))
		n--;
	snprintf(dir, sizeof dir, "%.*s", (int)n, there);
	if (!slash && !tt_os_is_dir(dir))
		return 0;
	struct tt_os_file_stamp stamp;
	int err = tt_os_is_dir(dir) ? tt_os_dir_writable(dir) : tt_os_path_stamp(dir, &stamp) == 0 ? -ENOTDIR : -ENOENT;
	if (err)
		snprintf(ours, sizeof ours, "%s", strerror(-err));
	else if (!tt_os_dir_ours(dir, ours + 11, sizeof ours - 11)) {
		memcpy(ours, "not yours: ", 11);
		err = -EPERM;
	} else if (snprintf(buf, size, "%s%s%s", given, slash ? "" : separator, name) >= (int)size) {
		snprintf(ours, sizeof ours, "%s", strerror(ENAMETOOLONG));
		err = -ENAMETOOLONG;
	}
	if (err)
		snprintf(why, cap, "%s: %s", dir, ours);
	return err ? err : 1;
}

int tt_os_name_is(const char *path, const char *name)
{
	const char *base = tt_os_last_separator(path);
	return strcmp(base ? base + 1 : path, name) == 0;
}

/* `name` numbered `n` into `path`: "-N" before its extension (n 0: `name` itself), as
 * a run's file at the default name is where another run's of the same pid is there
 * (run->keep). 0 or -ENAMETOOLONG. */
static int tt_os_numbered(const char *name, char *path, size_t size, unsigned n)
{
	char tag[16];
	snprintf(tag, sizeof tag, "-%u", n);
	if (snprintf(path, size, "%s", name) >= (int)size)
		return -ENAMETOOLONG;
	return n ? tt_os_name_tag(path, size, tag) : 0;
}

/* The line that says the run's file went to `path`, numbered, not at `first`, where
 * another run's is kept (`older`: from before this run began). */
static void tt_os_said_kept(char *said, size_t size, const char *first, const char *path, int older)
{
	snprintf(said, size,
		 older ? "ticktrace: %s: a file of a run before this one is there (its process had this pid, "
			 "which the system gave again), kept: this one's is %s\n"
		       : "ticktrace: %s: a process with this pid (the system gave it again) put its trace "
			 "there since this one started, kept: this one's is %s\n",
		 first, path);
}

/* The first number (0: `path` itself) at which neither a file nor a live file
 * (NAME.live) is there, and in `first` what is there at `path` itself: the file, or
 * else the live file (a killed run's). */
static unsigned tt_os_out_free(const char *path, char *first, size_t size)
{
	char name[4096], live[4096 + 8];
	struct tt_os_file_stamp stamp;
	for (unsigned n = 0; n <= TT_OS_NUMBERED_MAX; n++) {
		if (tt_os_numbered(path, name, sizeof name, n) < 0)
			return 0;
		snprintf(live, sizeof live, "%s.live", name);
		int file = tt_os_path_stamp(name, &stamp) != -ENOENT;
		if (!file && tt_os_path_stamp(live, &stamp) == -ENOENT)
			return n;
		if (!n)
			snprintf(first, size, "%s", file ? name : live);
	}
	return 0; /* (every number taken: the exit's numbering says where it went) */
}

int tt_os_out_numbered(struct tt_os_out_number *number, uint32_t pid, uint32_t image, char *path, size_t size)
{
	if (number->pid != pid || number->image != image) {
		number->n = tt_os_out_free(path, number->first, sizeof number->first);
		number->pid = pid;
		number->image = image;
		number->said = 0;
	}
	char name[4096];
	snprintf(name, sizeof name, "%s", path);
	return tt_os_numbered(name, path, size, number->n);
}

void tt_os_out_said(struct tt_os_out_number *number, uint32_t pid, uint32_t image, const char *path,
		    char *said, size_t size)
{
	said[0] = 0;
	if (!number->n || number->said || number->pid != pid || number->image != image)
		return;
	number->said = 1;
	tt_os_said_kept(said, size, number->first, path, 1);
}

/* `path` with this process's pid before its extension: beside a file of its name. */
static int tt_os_pid_tag(char *path, size_t size)
{
	char tag[24];
	snprintf(tag, sizeof tag, ".%u", (unsigned)tt_os_process_id());
	return tt_os_name_tag(path, size, tag);
}

/* `said`, begun (`n` bytes, snprintf's answer), ended with `path` where the file went
 * there (`err` 0), else emptied. */
static void tt_os_said_beside(char *said, size_t said_size, int n, const char *path, int err)
{
	if (!err && n >= 0 && (size_t)n < said_size)
		snprintf(said + n, said_size - (size_t)n, "%s\n", path);
	else
		said[0] = 0;
}

/* Whether two stamps are one file as it was: its number and its time (a number the
 * system gave again to another file is not). */
static int tt_os_same_stamp(const struct tt_os_file_stamp *a, const struct tt_os_file_stamp *b)
{
	return (a->dev || a->ino) && a->dev == b->dev && a->ino == b->ino && a->written_ns == b->written_ns;
}

/* Whether a file found at the run's name is the process's own, or (a name given, not
 * `keep`) the one there as the run began, or older than the run. */
static int tt_os_older_or_ours(const struct tt_os_file_stamp *there, const struct tt_os_run_file *run)
{
	return tt_os_same_stamp(there, &run->placed) ||
	       (!run->keep && (tt_os_same_stamp(there, &run->before) || there->written_ns < run->since_ns));
}

/* Whether the file at `path` may be replaced, held in `held` (handle -1: none) where
 * it is: a link (never followed); a file this process may not read, another user's,
 * judged by its time alone (no stream of this user's writes it); else one held (none
 * of another process's that writes it still), still the one at the name, and older
 * than the run or this process's own. */
static int tt_os_replaceable(const char *path, const struct tt_os_run_file *run, struct tt_os_file *held)
{
	struct tt_os_file_stamp there, now;
	int err = tt_os_file_open_held(path, held);
	if (err) {
		held->handle = -1; /* (nothing left open) */
		return (err == -ELOOP && !run->keep) ||
		       (err == -EACCES && tt_os_path_stamp(path, &there) == 0 && tt_os_older_or_ours(&there, run));
	}
	return tt_os_file_stamp(held, &there) == 0 && tt_os_path_stamp(path, &now) == 0 &&
	       now.ino == there.ino && now.dev == there.dev && tt_os_older_or_ours(&there, run);
}

/* Where nothing is, or over this process's own file, at `path` or else at its next
 * number: `path`-1, -2... before the extension (`path` rewritten), each name taken in
 * one step (a link where nothing is: never one another process took meanwhile). 0 or
 * -errno. */
static int tt_os_place_numbered(struct tt_os_new_file *made, char *path, size_t size, struct tt_os_run_file *run)
{
	char name[4096];
	snprintf(name, sizeof name, "%s", path);
	int err = -EEXIST;
	/* (-EBUSY: this process's own there, which Windows cannot replace while another
	 * has it open: the next number, as for another's) */
	for (unsigned n = 0; (err == -EEXIST || err == -EBUSY) && n <= TT_OS_NUMBERED_MAX; n++) {
		if (tt_os_numbered(name, path, size, n) < 0)
			return -ENAMETOOLONG;
		err = tt_os_file_link(made, path);
		struct tt_os_file held;
		if (err == -EEXIST && tt_os_replaceable(path, run, &held))
			err = tt_os_file_replace(made, path, held.handle == -1 ? NULL : &held);
		else if (err == -EEXIST && held.handle != -1)
			tt_os_file_close(&held);
	}
	return err;
}

int tt_os_file_place(struct tt_os_new_file *made, char *path, size_t size, struct tt_os_run_file *run,
		     int pid_named, char *said, size_t said_size)
{
	struct tt_os_file_stamp mine, there;
	said[0] = 0;
	int err = tt_os_path_stamp(made->tmp, &mine);
	if (!err)
		err = tt_os_file_link(made, path);
	if (err == -EEXIST && run->keep) {
		/* (the default name: another run's file, its pid given again, is kept) */
		int older = tt_os_path_stamp(path, &there) == 0 && there.written_ns < run->since_ns;
		char first[4096];
		snprintf(first, sizeof first, "%s", path);
		err = tt_os_place_numbered(made, path, size, run);
		if (!err && strcmp(first, path) != 0)
			tt_os_said_kept(said, said_size, first, path, older);
	} else if (err == -EEXIST) {
		struct tt_os_file held;
		err = -EEXIST;
		if (tt_os_replaceable(path, run, &held))
			err = tt_os_file_replace(made, path, held.handle == -1 ? NULL : &held);
		else if (held.handle != -1)
			tt_os_file_close(&held);
		/* (Beside it: one that is another's, or that another took or keeps open
		 * meanwhile; or a file this user may not replace, another user's in a
		 * directory with the sticky bit, /tmp: the trace is never lost for it.) */
		int theirs = err == -EPERM || err == -EACCES;
		if (err == -EEXIST || err == -EBUSY || theirs) {
			const char *what = run->what ? run->what : "trace";
			const char *setting = run->setting ? run->setting : "TICKTRACE_OUT";
			/* (the line begun with the name taken, ended with this one's) */
			int n = theirs ? snprintf(said, said_size, "ticktrace: %s: another user's file is there, which "
						  "this user may not replace: this one's is ", path)
				: pid_named ? snprintf(said, said_size, "ticktrace: %s: a process of this run before this "
						       "one, with the same pid (the system reused it), put its %s there: "
						       "this one's is ", path, what)
					    : snprintf(said, said_size, "ticktrace: %s: another process put its %s there "
						       "since this one started (the same %s, without %%p): this one's "
						       "is ", path, what, setting);
			err = tt_os_pid_tag(path, size);
			if (!err)
				err = tt_os_file_put(made, path);
			tt_os_said_beside(said, said_size, n, path, err);
		}
	}
	if (!err)
		run->placed = mine;
	return err;
}

int tt_os_live_place(char *path, size_t size, struct tt_os_file *file, char *said, size_t said_size)
{
	static const char live[] = ".live";
	size_t len = strlen(path), n = sizeof live - 1;
	said[0] = 0;
	int err = tt_os_file_create(path, file);
	if (err == -EEXIST && len > n && strcmp(path + len - n, live) == 0) {
		struct tt_os_file there;
		int held = tt_os_file_open_held(path, &there);
		if (!held)
			tt_os_file_close(&there);
		/* (not held: a killed run's live file, whose events are to be read, or a
		 * file another user put there, of any kind) */
		const char *what =
			held == -EWOULDBLOCK ? "another process's live file is there (the same TICKTRACE_OUT, "
					       "without %p)"
			: held == -ELOOP ? "a link is there"
					 : "a file no process keeps as its live file is there (a killed run's, "
					   "or another's)";
		int said_n = snprintf(said, said_size, "ticktrace: %s: %s, left as it is: this one's live file is ",
				      path, what);
		path[len - n] = 0;
		err = tt_os_pid_tag(path, size - n);
		strcat(path, live);
		if (!err)
			err = tt_os_file_create(path, file);
		tt_os_said_beside(said, said_size, said_n, path, err);
	}
	if (!err)
		tt_os_file_hold(file); /* (none: this one's is only not kept apart) */
	return err;
}
