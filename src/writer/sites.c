/* The SITES, ARG_NAMES and FUNCS sections of Linux's writer: the sets' entries
 * (sections/sites.c) of each generation of the libraries unloaded since, each
 * described by the descriptor where it is, or the copy dlclose left (retired.c). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "writer/writer.h"

/* A site's descriptor in the generation viewed. Retired mutex held. */
static const struct tt_callsite *tt__site_in_view(uint64_t address, void *view)
{
	return tt__site_descriptor(address, view);
}

/* Every generation the set holds. Retired mutex held. */
static void tt__out_generations(struct tt__out *out, const struct tt__site_set *set,
				const struct tt__ranges *loaded)
{
	struct tt__names_view v = {.loaded = loaded, .seen = set->retired_seen};
	tt__out_site_sections(out, set, v.gen, tt__retired_until(v.gen), tt__site_in_view, &v);
	if (!set->retired_seen)
		return;
	static bool present[TT__RETIRED_MAX + 1]; /* (retired mutex held) */
	memset(present, 0, sizeof present);
	for (size_t i = 0; i < set->cap; i++)
		present[TT__GEN(set->slots[i])] = true;
	for (v.gen = 1; v.gen <= set->retired_seen; v.gen++)
		if (present[v.gen])
			tt__out_site_sections(out, set, v.gen, tt__retired_until(v.gen), tt__site_in_view, &v);
}

void tt__out_names(struct tt__out *out, const struct tt__site_set *set,
		   const struct tt__ranges *loaded)
{
	tt__lock(&tt__retired_lock);
	tt__out_generations(out, set, loaded);
	tt__unlock(&tt__retired_lock);
}

void tt__out_sites(struct tt__out *out, const struct tt__site_set *set)
{
	struct tt__ranges loaded = {0};
	tt_os_modules(tt__add_loaded, &loaded);
	tt__out_names(out, set, loaded.err ? NULL : &loaded);
	free(loaded.range);
}

int tt__collect_names(struct tt__site_set *set, const struct tt__thread_snapshot *snap)
{
	for (size_t c = 0; c < snap->chunks; c++)
		if (!tt__sites_add(set, NULL, snap->extents[c].begin, snap->extents[c].end, 0, tt__generation))
			return -ENOMEM;
	/* (its first scope's, which a window may leave out) */
	return tt__sites_add(set, NULL, &snap->opener, &snap->opener + 1, 0, tt__generation) ? 0 : -ENOMEM;
}
