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
 * TT__SWITCHES_DRAIN_NS) empties long before a thread switches that often. */
#define TT__SWITCHES_DATA_PAGES 8

/* PERF_RECORD_SWITCH and PERF_RECORD_LOST end with sample_id (sample_id_all), whose
 * fields are those of sample_type in bit order: TID, TIME, CPU. */
struct tt__sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, reserved;
};

int tt__switches_open(struct tt__switches *s, int tid, int *denied)
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
	s->map = NULL;
	s->lost = 0;
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	*denied = fd < 0 && errno != EMFILE && errno != ENFILE && errno != ENOMEM;
	if (fd < 0)
		return -errno;
	uint64_t id;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	s->map_size = (1 + TT__SWITCHES_DATA_PAGES) * page;
	void *map = mmap(NULL, s->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int err = map == MAP_FAILED ? -errno : 0;
	/* The mapping holds the event, which goes on recording into it: no descriptor
	 * is kept per thread. Closed only while it is still the event (in a table shared
	 * with the program, the program may have closed it meanwhile and opened its own
	 * file at the number). */
	uint64_t still;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &still) == 0 && still == id)
		close(fd);
	if (!err)
		s->map = map;
	return err;
}

void tt__switches_close(struct tt__switches *s)
{
	if (s->map)
		munmap(s->map, s->map_size);
	s->map = NULL;
}

/* `size` bytes at ring position `at`, which may wrap around the ring's end. */
static void tt__ring_copy(void *dst, const char *data, uint64_t data_size, uint64_t at, size_t size)
{
	uint64_t off = at & (data_size - 1);
	size_t first = size < data_size - off ? size : (size_t)(data_size - off);
	memcpy(dst, data + off, first);
	memcpy((char *)dst + first, data, size - first);
}

size_t tt__switches_read(struct tt__switches *s, struct tt_sched_state *out, size_t cap)
{
	if (!s->map)
		return 0;
	struct perf_event_mmap_page *meta = s->map;
	const char *data = (const char *)s->map + meta->data_offset;
	uint64_t data_size = meta->data_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	size_t n = 0;
	while (tail < head && n < cap) {
		struct perf_event_header h;
		tt__ring_copy(&h, data, data_size, tail, sizeof h);
		if (h.size < sizeof h || h.size > head - tail)
			break; /* never from the kernel: leave the rest */
		struct tt__sample_id id;
		if (h.type == PERF_RECORD_SWITCH && h.size >= sizeof h + sizeof id) {
			tt__ring_copy(&id, data, data_size, tail + sizeof h, sizeof id);
			out[n++] = (struct tt_sched_state){
				/* (the machine's clock, into the run's: a time namespace's) */
				.ns = (int64_t)id.time + tt__machine.timens_monotonic_ns,
				.cpu = id.cpu,
				.what = !(h.misc & PERF_RECORD_MISC_SWITCH_OUT) ? TT_SCHED_RUNNING
					: h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT ? TT_SCHED_PREEMPTED
					: TT_SCHED_BLOCKED,
			};
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
