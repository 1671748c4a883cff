#include "base.h"

#include <stdlib.h>

/* Values are stored plus one, so that zero marks an empty slot and keys may be any
 * 64-bit number, zero included. */
static size_t tt_map_slot(uint64_t key, size_t cap)
{
	return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (cap - 1);
}

static size_t tt_map_find(const struct tt_map *m, uint64_t key)
{
	size_t i = tt_map_slot(key, m->cap);
	while (m->values[i] != 0 && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int tt_map_grow(struct tt_map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	struct tt_map bigger = {
		.keys = malloc(cap * sizeof(uint64_t)),
		.values = calloc(cap, sizeof(uint32_t)),
		.cap = cap,
		.count = m->count,
	};
	if (!bigger.keys || !bigger.values) {
		tt_map_free(&bigger);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (m->values[i] == 0)
			continue;
		size_t j = tt_map_find(&bigger, m->keys[i]);
		bigger.keys[j] = m->keys[i];
		bigger.values[j] = m->values[i];
	}
	tt_map_free(m);
	*m = bigger;
	return 0;
}

int tt_map_put(struct tt_map *m, uint64_t key, uint32_t value)
{
	if ((m->count + 1) * 2 > m->cap && tt_map_grow(m) < 0)
		return -1;
	size_t i = tt_map_find(m, key);
	if (m->values[i] == 0)
		m->count++;
	m->keys[i] = key;
	m->values[i] = value + 1;
	return 0;
}

bool tt_map_get(const struct tt_map *m, uint64_t key, uint32_t *value)
{
	if (m->cap == 0)
		return false;
	size_t i = tt_map_find(m, key);
	if (m->values[i] == 0)
		return false;
	*value = m->values[i] - 1;
	return true;
}

void tt_map_del(struct tt_map *m, uint64_t key)
{
	if (m->cap == 0)
		return;
	size_t mask = m->cap - 1, i = tt_map_find(m, key);
	if (m->values[i] == 0)
		return;
	m->values[i] = 0;
	m->count--;
	/* the keys after it that probing would no longer reach move back into the gap */
	for (size_t j = (i + 1) & mask; m->values[j] != 0; j = (j + 1) & mask) {
		size_t home = tt_map_slot(m->keys[j], m->cap);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->values[i] = m->values[j];
			m->values[j] = 0;
			i = j;
		}
	}
}

void tt_map_free(struct tt_map *m)
{
	free(m->keys);
	free(m->values);
	*m = (struct tt_map){0};
}
