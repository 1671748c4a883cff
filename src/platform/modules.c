/* Both systems: the modules tt_os_modules finds, as the body of a MODULES section
 * (format.h), which both runtimes' writers write. One walk: a module loaded or
 * unloaded meanwhile cannot make the count and the entries disagree. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

static void tt_os_module_list_append(struct tt_os_module_list *list, const void *data, size_t size)
{
	if (list->err)
		return;
	if (list->len + size > list->cap) {
		size_t cap = list->cap ? 2 * list->cap : 4096;
		while (cap < list->len + size)
			cap *= 2;
		char *grown = realloc(list->data, cap);
		if (!grown) {
			list->err = -ENOMEM;
			return;
		}
		list->data = grown;
		list->cap = cap;
	}
	memcpy(list->data + list->len, data, size);
	list->len += size;
}

int tt_os_module_list_add(const struct tt_os_module *module, void *list)
{
	struct tt_module_info info = {
		.start = module->start,
		.end = module->end,
		.file_offset = module->file_offset,
		.path_len = (uint32_t)strlen(module->path),
		.build_id_len = module->build_id_len,
	};
	struct tt_os_module_list *l = list;
	tt_os_module_list_append(l, &info, sizeof info);
	tt_os_module_list_append(l, module->path, info.path_len);
	tt_os_module_list_append(l, module->build_id, module->build_id_len);
	l->count++;
	return 0;
}
