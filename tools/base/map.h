/* A small open-addressing map from a 64-bit key to a 32-bit value: call-site addresses
 * to sites, thread indexes to threads. Grows with what it holds, never with events. */
#ifndef TT_MAP_H
#define TT_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tt_map {
	uint64_t *keys;
	uint32_t *values;
	size_t cap; /* a power of two, or 0 */
	size_t count;
};

/* 0, or -1 when out of memory. Replaces the value of an existing key. */
int tt_map_put(struct tt_map *m, uint64_t key, uint32_t value);
/* True and *value set when the key is present. */
bool tt_map_get(const struct tt_map *m, uint64_t key, uint32_t *value);
void tt_map_free(struct tt_map *m);

#endif
