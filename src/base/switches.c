/* A thread's own context switches, from the kernel: a perf event of one thread of
 * this process (a software "dummy" that counts nothing) with context_switch set writes a
 * PERF_RECORD_SWITCH into its ring each time the thread leaves its CPU or comes back,
 * with the time (the machine's CLOCK_MONOTONIC, even in a time namespace: moved into
 * the run's as read) and the CPU. Any thread may ask this of itself
 * with perf_event_paranoid up to 2; `inherit` is refused with a ring, so it is one
 * event per thread. */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/base.h"

/* 2^3 data pages: 1024 records, 512 switches out and in, which the drain (every
 * TT__SWITCHES_DRAIN_NS) empties long before a thread switches that often. A thread
 * asks for a quarter of it as it starts (mapping the ring is the dearest part of the
 * asking, ~0.6 us a page beside ~3 us); tt-sched gives the thread the larger one once
 * it fills half of that between two drains (64 switches out and in in 10 ms: 6,400 a
 * second). */
#define TT__SWITCHES_DATA_PAGES 8
#define TT__SWITCHES_SMALL_PAGES 2

/* A ring this close to full when read (5 switch records' room or less) may have
 * failed to take a switch: the kernel counts those it could not write, and tells
 * the count (PERF_RECORD_LOST) only before the next record it writes. */
#define TT__SWITCHES_UNSURE_BYTES 160
#define TT__SWITCHES_SAID UINT64_MAX

/* PERF_RECORD_SWITCH and PERF_RECORD_LOST end with sample_id (sample_id_all), whose
 * fields are those of sample_type in bit order: TID, TIME, CPU. */
struct tt__sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, reserved;
};

/* Thread `tid`'s switches into a ring of `data_pages`: its mapping, or NULL (*err). */
static void *tt__switches_ring(int tid, size_t data_pages, size_t *size, int *err, int *denied)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof attr,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		.context_switch = 1,
		.exclude_kernel = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
	};
	int fd = tt_os_perf_event_open(&attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	*denied = fd < 0 && errno != EMFILE && errno != ENFILE && errno != ENOMEM;
	*err = fd < 0 ? -errno : 0;
	if (fd < 0)
		return NULL;
	uint64_t id;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	*size = (1 + data_pages) * (size_t)sysconf(_SC_PAGESIZE);
	void *map = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	*err = map == MAP_FAILED ? -errno : 0;
	/* The mapping holds the event, which goes on recording into it: no descriptor
	 * is kept per thread. Closed only while it is still the event (in a table shared
	 * with the program, the program may have closed it meanwhile and opened its own
	 * file at the number). */
	uint64_t still;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &still) == 0 && still == id)
		close(fd);
	return *err ? NULL : map;
}

int tt__switches_open(struct tt__switches *s, int tid, int small, int *denied)
{
	*s = (struct tt__switches){0};
	int err;
	s->map = tt__switches_ring(tid, small ? TT__SWITCHES_SMALL_PAGES : TT__SWITCHES_DATA_PAGES,
				   &s->map_size, &err, denied);
	s->grown = !small;
	s->unsaid_at = s->told_at = TT__SWITCHES_SAID;
	return err;
}

int tt__switches_grow(struct tt__switches *s, int tid)
{
	if (!s->map || s->grown)
		return 0;
	const struct perf_event_mmap_page *meta = s->map;
	/* (a ring that lost switches was found full) */
	if (s->busiest < meta->data_size / 2)
		return 0;
	s->grown = 1;
	/* (before the small one is read for the last time: every switch from here on is
	 * in both, and those read from the small one are skipped in the larger) */
	int err, denied;
	s->larger = tt__switches_ring(tid, TT__SWITCHES_DATA_PAGES, &s->larger_size, &err, &denied);
	/* (mapped: it holds every switch from now on; on the kernel's clock) */
	s->larger_from = (uint64_t)(tt_os_monotonic_ns() - tt__machine.timens_monotonic_ns);
	return err ? err : 1;
}

void tt__switches_close(struct tt__switches *s)
{
	if (s->map)
		munmap(s->map, s->map_size);
	if (s->larger)
		munmap(s->larger, s->larger_size);
	s->map = s->larger = NULL;
}

/* `size` bytes at ring position `at`, which may wrap around the ring's end. */
static void tt__ring_copy(void *dst, const char *data, uint64_t data_size, uint64_t at, size_t size)
{
	uint64_t off = at & (data_size - 1);
	size_t first = size < data_size - off ? size : (size_t)(data_size - off);
	memcpy(dst, data + off, first);
	memcpy((char *)dst + first, data, size - first);
}

/* The larger ring takes over from the small one (which goes), from the small one's
 * last switch read: those it has before are skipped. */
static void tt__switches_hand_over(struct tt__switches *s)
{
	munmap(s->map, s->map_size);
	s->map = s->larger;
	s->map_size = s->larger_size;
	s->larger = NULL;
	s->skip_until = s->last_time;
	s->unsaid_at = s->told_at = TT__SWITCHES_SAID; /* (its own read says) */
}

/* The ring's records from its tail on, up to `cap` states, up to the first switches
 * lost (s->lost: how many); how many states, *to_end set where it read every record
 * there was as it began. */
static size_t tt__switches_read_ring(struct tt__switches *s, struct tt_sched_state *out, size_t cap,
				     int *to_end)
{
	struct perf_event_mmap_page *meta = s->map;
	const char *data = (const char *)s->map + meta->data_offset;
	uint64_t data_size = meta->data_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	if (head - tail > s->busiest)
		s->busiest = head - tail;
	/* Full enough to have lost some: the kernel says how many at `head`, the next
	 * record it writes once there is room. */
	if (head - tail + TT__SWITCHES_UNSURE_BYTES > data_size)
		s->unsaid_at = head;
	size_t n = 0;
	while (tail < head && n < cap) {
		struct perf_event_header h;
		tt__ring_copy(&h, data, data_size, tail, sizeof h);
		if (h.size < sizeof h || h.size > head - tail)
			break; /* never from the kernel: leave the rest */
		/* (written after the ring was found full: any switch lost before is told) */
		if (tail >= s->unsaid_at)
			s->unsaid_at = TT__SWITCHES_SAID;
		int told = tail == s->told_at;
		if (tail >= s->told_at)
			s->told_at = TT__SWITCHES_SAID;
		struct tt__sample_id id;
		if (h.type == PERF_RECORD_SWITCH && h.size >= sizeof h + sizeof id) {
			tt__ring_copy(&id, data, data_size, tail + sizeof h, sizeof id);
			if (id.time > s->skip_until) {
				s->last_time = id.time;
				out[n++] = (struct tt_sched_state){
					/* (the machine's clock, into the run's: a time namespace's) */
					.ns = (int64_t)id.time + tt__machine.timens_monotonic_ns,
					.cpu = id.cpu,
					.what = !(h.misc & PERF_RECORD_MISC_SWITCH_OUT) ? TT_SCHED_RUNNING
						: h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT ? TT_SCHED_PREEMPTED
						: TT_SCHED_BLOCKED,
				};
			}
		} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
			/* The small ring lost what came after its last switch read: where that
			 * is after the larger one began, the larger one has them. */
			if (s->larger && s->last_time >= s->larger_from)
				break;
			uint64_t lost;
			tt__ring_copy(&lost, data, data_size, tail + sizeof h + 8, sizeof lost);
			s->lost += lost - (told && lost);
			s->gap = 1;
		}
		tail += h.size;
		if (s->gap)
			break; /* (the states after it come after a span not known) */
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	*to_end = tail == head;
	return n;
}

size_t tt__switches_read(struct tt__switches *s, struct tt_sched_state *out, size_t cap)
{
	if (!s->map)
		return 0;
	int to_end;
	size_t n = tt__switches_read_ring(s, out, cap, &to_end);
	if (!s->larger || n == cap || s->gap)
		return n;
	/* The small ring read to its end (or to switches the larger one has), and what it
	 * lost before the larger one began told: the larger one from there on (the small
	 * one's event ends with its mapping; what it wrote since is in the larger one too,
	 * and so is what it lost after its last switch read, where that is after the
	 * larger one began). */
	int taken_over = s->last_time >= s->larger_from;
	if (!taken_over && (!to_end || s->unsaid_at != TT__SWITCHES_SAID))
		return n;
	tt__switches_hand_over(s);
	return n + tt__switches_read_ring(s, out + n, cap - n, &to_end);
}

int tt__switches_unsaid(const struct tt__switches *s)
{
	/* (a larger ring still beside the small one after a read: the small one has not
	 * said what it lost before the larger one began) */
	if (!s->map || (s->unsaid_at == TT__SWITCHES_SAID && !s->larger))
		return 0;
	return s->told_at == s->unsaid_at && s->told_at != TT__SWITCHES_SAID ? 2 : 1;
}

void tt__switches_told(struct tt__switches *s)
{
	s->told_at = s->unsaid_at;
}

uint32_t tt__switches_refusal(int err, int *said)
{
	*said = 1;
	return TT_THREAD_NO_STATES_FLAGS(TT_NO_STATES_REFUSED, -err);
}

void tt__switches_flush(void)
{
	/* (the kernel writes each switch into its thread's ring as it happens) */
}
