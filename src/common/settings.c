/* Settings the runtime reads from the environment (common.h; lifecycle/config.c and
 * the others that read them). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

void tt_in_dir(const char *path, const char *cwd, char *buf, size_t size)
{
	size_t len = path[0] == '/' ? 0 : strlen(cwd);
	const char *slash = len && cwd[len - 1] != '/' ? "/" : "";
	if (snprintf(buf, size, "%s%s%s", len ? cwd : "", slash, path) >= (int)size)
		snprintf(buf, size, "%s", path);
}

uint64_t tt_buffer_events(const char *text, FILE *err)
{
	if (!text)
		return TT_BUFFER_EVENTS_DEFAULT;
	char *end;
	errno = 0;
	unsigned long long events = strtoull(text, &end, 10);
	/* (strtoull takes "-5" as 2^64 - 5: beyond the range too) */
	if (errno || end == text || *end || events == 0 || events > TT_BUFFER_EVENTS_MAX) {
		fprintf(err, "ticktrace: TICKTRACE_BUFFER=%s is not a number of events from 1 to 2^36; "
			"using %" PRIu64 "\n", text, TT_BUFFER_EVENTS_DEFAULT);
		return TT_BUFFER_EVENTS_DEFAULT;
	}
	return events;
}

int tt_parse_size(const char *text, uint64_t *bytes)
{
	char *end;
	errno = 0;
	unsigned long long n = strtoull(text, &end, 10);
	int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 :
		    *end == 'G' || *end == 'g' ? 30 : 0;
	if (shift)
		end++;
	/* (strtoull takes "-5" as 2^64 - 5) */
	if (errno || end == text || *end || text[0] == '-' || n > (UINT64_MAX >> 30))
		return -1;
	*bytes = (uint64_t)n << shift;
	return 0;
}

int tt_parse_duration(const char *text, int64_t *ns)
{
	static const struct {
		const char *unit;
		int64_t ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"", 1}};
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	/* (decimal alone: strtod also takes hex floats, "0x10ms" as 16 ms, and leading
	 * spaces) */
	if (strspn(text, "0123456789.eE+-") != (size_t)(end - text))
		return -1;
	/* (NaN too; errno: an underflow here, an overflow a time past the range below) */
	if (end == text || !(v >= 0) || (errno && v < 1) || (!*end && v != 0))
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			double scaled = v * (double)units[i].ns;
			/* (not 0 but under half a nanosecond, which would be taken as 0: every
			 * scope a spike) */
			if (v > 0 && scaled < 0.5)
				return -1;
			/* (a time, but past the clock's range: the settings say it out of range) */
			if (scaled > 9.2e18) {
				*ns = INT64_MAX;
				return -ERANGE;
			}
			*ns = (int64_t)(scaled + 0.5);
			return 0;
		}
	}
	return -1;
}

bool tt_time_in_range(const char *var, const char *text, int64_t ns, FILE *err, const char *then)
{
	if (ns <= TT_TIME_SETTING_MAX_NS)
		return true;
	fprintf(err, "ticktrace: %s=%s is out of range: a time setting takes an hour (3600s) at "
		"most; %s\n", var, text, then);
	return false;
}

bool tt_setting_on(const char *var, const char *text, bool unset, const char *then, FILE *err)
{
	if (text && (strcmp(text, "0") == 0 || strcmp(text, "1") == 0))
		return text[0] == '1';
	if (text && *text)
		fprintf(err, "ticktrace: %s=%s is not 0 (off) or 1 (on); %s\n", var, text, then);
	return unset;
}

size_t tt_mode_index(const char *name, FILE *err)
{
	static const char *const names[TT_MODE_COUNT] = TT_MODES;
	for (size_t i = 0; name && *name && i < TT_MODE_COUNT; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	if (name && *name)
		fprintf(err, "ticktrace: TICKTRACE_MODE=%s is not %s, %s or %s; using %s\n", name, names[0],
			names[1], names[2], names[0]);
	return 0;
}
