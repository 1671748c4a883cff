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
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
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

/* The ring's records from its tail on, up to `cap` states; how many. */
static size_t tt__switches_read_ring(struct tt__switches *s, uint64_t skip_until, struct tt_sched_state *out,
				     size_t cap)
{
	struct perf_event_mmap_page *meta = s->map;
	const char *data = (const char *)s->map + meta->data_offset;
	uint64_t data_size = meta->data_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	if (head - tail > s->busiest)
		s->busiest = head - tail;
	size_t n = 0;
	while (tail < head && n < cap) {
		struct perf_event_header h;
		tt__ring_copy(&h, data, data_size, tail, sizeof h);
		if (h.size < sizeof h || h.size > head - tail)
			break; /* never from the kernel: leave the rest */
		struct tt__sample_id id;
		if (h.type == PERF_RECORD_SWITCH && h.size >= sizeof h + sizeof id) {
			tt__ring_copy(&id, data, data_size, tail + sizeof h, sizeof id);
			if (id.time > skip_until) {
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
			uint64_t lost;
			tt__ring_copy(&lost, data, data_size, tail + sizeof h + 8, sizeof lost);
			s->lost += lost;
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

size_t tt__switches_read(struct tt__switches *s, struct tt_sched_state *out, size_t cap)
{
	if (!s->map)
		return 0;
	size_t n = tt__switches_read_ring(s, 0, out, cap);
	if (!s->larger || n == cap)
		return n;
	/* The small ring read to its end: the larger one from there on (the small one's
	 * event ends with its mapping; what it wrote since is in the larger one too). */
	const struct perf_event_mmap_page *meta = s->map;
	if (__atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE) != meta->data_tail)
		return n;
	munmap(s->map, s->map_size);
	s->map = s->larger;
	s->map_size = s->larger_size;
	s->larger = NULL;
	return n + tt__switches_read_ring(s, s->last_time, out + n, cap - n);
}
