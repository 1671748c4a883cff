/* PROCESS, MACHINE (src/base/clock.c reads it), and MODULES: the loadable segments of every module loaded, with its path
 * and build id, by which the tools name functions and read call sites offline. */
#include <errno.h>
#include <stdlib.h>

#include "writer/writer.h"

size_t tt__process_name(char name[TT__COMM_MAX])
{
	return tt_os_process_name(name, TT__COMM_MAX);
}

void tt__out_process(struct tt__out *out)
{
	static char cmdline[4096];
	char name[TT__COMM_MAX];
	size_t name_len = tt__process_name(name);
	struct tt_process_info info = {
		.pid = tt_os_process_id(),
		.ppid = tt_os_parent_id(),
		.name_len = (uint32_t)name_len,
		.cmdline_len = (uint32_t)tt_os_command_line(cmdline, sizeof cmdline),
	};
	tt__out_process_section(out, &info, name, cmdline);
	tt__out_machine(out, &tt__machine);
}


static void tt__ranges_add(struct tt__ranges *r, uint64_t start, uint64_t end)
{
	if (r->count == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		uint64_t(*grown)[2] = realloc(r->range, cap * sizeof *grown);
		if (!grown) {
			r->err = -ENOMEM;
			return;
		}
		r->range = grown;
		r->cap = cap;
	}
	r->range[r->count][0] = start;
	r->range[r->count++][1] = end;
}

int tt__add_loaded(const struct tt_os_module *module, void *data)
{
	tt__ranges_add(data, module->start, module->end);
	return 0;
}

bool tt__ranges_hold(const struct tt__ranges *r, uint64_t address)
{
	for (size_t i = 0; i < r->count; i++)
		if (address >= r->range[i][0] && address < r->range[i][1])
			return true;
	return false;
}
