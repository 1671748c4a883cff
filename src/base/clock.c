/* Time: TSC readings are converted offline to CLOCK_MONOTONIC nanoseconds. The file
 * carries anchors (a TSC reading and the clocks, taken together) from start and from
 * dump; the tools interpolate between them. No sleeping calibration at start-up.
 * (The kernel's own factors in the perf mmap page were considered: on virtual
 * machines cap_user_time is often 0, and perf_event_open cost 9 ms here.) */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

struct tt_anchor tt__start_anchor;
struct tt_machine_info tt__machine;

size_t tt__read_file(const char *path, char *buf, size_t size)
{
	struct tt__fd opened; /* (closed only while still that file) */
	int fd = tt__fd_opened(open(path, O_RDONLY | O_CLOEXEC), &opened);
	if (fd < 0)
		return 0;
	size_t len = 0;
	ssize_t n;
	while (len < size && (n = read(fd, buf + len, size - len)) > 0)
		len += (size_t)n;
	tt__fd_close_opened(&opened);
	return len;
}

static int tt__kernel_uses_tsc(void)
{
	char name[32];
	size_t len = tt__read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource",
				   name, sizeof name);
	return len >= 3 && strncmp(name, "tsc", 3) == 0;
}

/* The time namespace's offsets ("monotonic SECONDS NANOSECONDS", "boottime ..."):
 * none where the kernel has no time namespaces. */
static void tt__read_timens(struct tt_machine_info *machine)
{
	char text[256];
	size_t len = tt__read_file("/proc/self/timens_offsets", text, sizeof text - 1);
	if (!len)
		return;
	text[len] = 0;
	machine->flags |= TT_MACHINE_TIMENS;
	for (char *line = text; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char clock[16];
		int64_t sec, nsec;
		if (sscanf(line, "%15s %" SCNd64 " %" SCNd64, clock, &sec, &nsec) != 3)
			continue;
		int64_t ns = sec * 1000000000 + nsec;
		if (strcmp(clock, "monotonic") == 0)
			machine->timens_monotonic_ns = ns;
		else if (strcmp(clock, "boottime") == 0)
			machine->timens_boottime_ns = ns;
	}
}

/* 16 bytes from the 32 hexadecimal digits of a /proc or /etc id (a UUID's dashes
 * skipped); left 0 where the text holds other than that. */
static void tt__read_id(const char *path, uint8_t id[16])
{
	char text[64];
	size_t len = tt__read_file(path, text, sizeof text);
	uint8_t bytes[16] = {0};
	size_t digits = 0;
	for (size_t i = 0; i < len && text[i] != '\n'; i++) {
		char c = text[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (c == '-')
			continue;
		if (v < 0 || digits == 32)
			return;
		bytes[digits / 2] |= (uint8_t)(v << (digits % 2 ? 0 : 4));
		digits++;
	}
	if (digits == 32)
		memcpy(id, bytes, 16);
}

static void tt__read_machine_ids(struct tt_machine_info *machine)
{
	tt__read_id("/proc/sys/kernel/random/boot_id", machine->boot_id);
	tt__read_id("/etc/machine-id", machine->machine_id);
}

void tt__clock_start(void)
{
	tt_os_anchor(&tt__start_anchor);
	tt__machine_start(&tt__machine, &tt__start_anchor);
	tt__read_timens(&tt__machine);
	tt__read_machine_ids(&tt__machine);
}

void tt__clock_fill_header(struct tt_file_header *header)
{
	tt__file_header_init(header, &tt__start_anchor);
	if (tt__kernel_uses_tsc())
		header->flags |= TT_FILE_TSC_RELIABLE;
}
