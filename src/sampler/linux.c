/* Linux's choice of mechanism (perf events, or where perf is denied the timers), and
 * the executable segment that holds a profile, for tt_profile_write. */
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <unistd.h>

#include "sampler/sampler.h"

/* Denied, or below a small RLIMIT_NOFILE, where ticktrace keeps no descriptor in the
 * program's table (base/fds.c: the events' would take numbers the program needs). */
static bool perf_denied(int rc)
{
	return rc == -EACCES || rc == -EPERM || rc == -ENOSYS || (rc == -EMFILE && tt__fd_room() < 0);
}

/* Use perf; where it is denied, timers (time only); a hardware source the machine
 * lacks becomes time if the caller allowed it. */
int tt__mechanism_open(struct tt_profile *p)
{
	p->owner_tid = gettid();
	int rc = tt__perf_open(p);
	if (rc != 0 && p->source != TT_PROFILE_TIME &&
	    (p->flags & TT_PROFILE_ALLOW_TIME) && (rc == -ENODEV || perf_denied(rc))) {
		p->source = TT_PROFILE_TIME;
		p->interval = tt__profile_default_interval(TT_PROFILE_TIME);
		if (rc == -ENODEV)
			rc = tt__perf_open(p);
	}
	if (rc == 0) {
		p->mechanism = &tt__perf_mechanism;
		return 0;
	}
	if (!perf_denied(rc) || p->source != TT_PROFILE_TIME)
		return rc;
	rc = tt__timer_open(p);
	if (rc == 0)
		p->mechanism = &tt__timer_mechanism;
	return rc;
}

static int tt__find_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct tt__code_range *s = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || s->address < start ||
		    s->address >= start + ph->p_memsz)
			continue;
		s->start = start;
		s->end = start + ph->p_memsz;
		s->file_offset = ph->p_offset;
		if (info->dlpi_name[0]) { /* the executable has none: its file is /proc/self/exe */
			snprintf(s->path, sizeof(s->path), "%s", info->dlpi_name);
		} else {
			ssize_t n = readlink("/proc/self/exe", s->path, sizeof(s->path) - 1);
			s->path[n > 0 ? n : 0] = 0;
		}
		s->found = true;
		return 1;
	}
	return 0;
}

int tt_profile_write(struct tt_profile *p, FILE *out)
{
	struct tt__code_range seg = {.address = p->start};
	dl_iterate_phdr(tt__find_segment, &seg);
	if (!seg.found)
		return -ENOENT;
	return tt__profile_emit(p, out, &seg, NULL);
}
