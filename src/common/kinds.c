/* The record kinds' names in messages (common.h). */
#include "common.h"

static const char *const tt_kind_names[TT_REC_KIND_MAX + 1] = {
	[TT_REC_BEGIN_ARG] = "BEGIN_ARG", [TT_REC_INSTANT_ARG] = "INSTANT_ARG",
	[TT_REC_COUNTER] = "COUNTER", [TT_REC_FLOW_OUT] = "FLOW_OUT", [TT_REC_FLOW_IN] = "FLOW_IN",
	[TT_REC_DESCRIBE] = "DESCRIBE", [TT_REC_DROPPED] = "DROPPED",
	[TT_REC_SCOPE_VALUE] = "SCOPE_VALUE",
};

const char *tt_kind_name(unsigned kind)
{
	return kind <= TT_REC_KIND_MAX ? tt_kind_names[kind] : NULL;
}
